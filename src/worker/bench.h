/* bench.h -- the timing commands: bench_setup, bench, bench_save, bench_launch, bench_sync, audit, memo_probe, partial_probe, partial_save (docs/timing.md). */
#ifndef KBV_WORKER_BENCH_H
#define KBV_WORKER_BENCH_H

#include "worker.h"

json_t *cmd_bench_setup(worker *w, const json_t *cmd);
json_t *cmd_bench(worker *w, const json_t *cmd);
json_t *cmd_audit(worker *w, const json_t *cmd);
json_t *cmd_memo_probe(worker *w, const json_t *cmd);
json_t *cmd_bench_save(worker *w, const json_t *cmd);
json_t *cmd_bench_launch(worker *w, const json_t *cmd);
json_t *cmd_bench_sync(worker *w, const json_t *cmd);
json_t *cmd_partial_probe(worker *w, const json_t *cmd);
json_t *cmd_partial_save(worker *w, const json_t *cmd);

#endif
