/* forward.h -- the forward command: one call of the built model on the current inputs. */
#ifndef KBV_WORKER_FORWARD_H
#define KBV_WORKER_FORWARD_H

#include "worker.h"

json_t *cmd_forward(worker *w, const json_t *cmd);

#endif
