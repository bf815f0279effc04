/* paper.h -- the paper commands: KernelBench-Verified's check, timing and memory, as published. */
#ifndef KBV_WORKER_PAPER_H
#define KBV_WORKER_PAPER_H

#include "worker.h"

json_t *cmd_paper(worker *w, const json_t *cmd);
json_t *cmd_paper_time(worker *w, const json_t *cmd);
json_t *cmd_paper_memory(worker *w, const json_t *cmd);
int kernelbench_trial_seeds(worker *w, long long first, long long n, long long *seeds);

#endif
