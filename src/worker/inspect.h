/* inspect.h -- the inspect command: static inspection of a candidate's source. */
#ifndef KBV_WORKER_INSPECT_H
#define KBV_WORKER_INSPECT_H

#include "worker.h"

json_t *cmd_inspect(worker *w, const json_t *cmd);

#endif
