/* standard.h -- the standard command: KernelBench's own check and timing. */
#ifndef KBV_WORKER_STANDARD_H
#define KBV_WORKER_STANDARD_H

#include "worker.h"

json_t *cmd_standard(worker *w, const json_t *cmd);
json_t *cmd_standard_time(worker *w, const json_t *cmd);

#endif
