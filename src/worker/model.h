/* model.h -- the commands that load the problem and the candidate and build a model from
 * them, and the model's state between workers. */
#ifndef KBV_WORKER_MODEL_H
#define KBV_WORKER_MODEL_H

#include "worker.h"

json_t *cmd_load_problem(worker *w, const json_t *cmd);
json_t *cmd_load_candidate(worker *w, const json_t *cmd);
json_t *cmd_build(worker *w, const json_t *cmd);
json_t *cmd_save_state(worker *w, const json_t *cmd);
json_t *cmd_load_state(worker *w, const json_t *cmd);
json_t *cmd_redraw_weights(worker *w, const json_t *cmd);

/* class(*get_init_inputs()) on the device, with torch seeded before both calls (KernelBench's
 * order); the class is the problem's Model, or with cand the candidate loader's class.
 * Returns a new reference, or NULL with the Python error pending and *at_init set when
 * get_init_inputs() itself failed (the problem's fault, not the class's). */
PyObject *construct(worker *w, int cand, unsigned long long seed, int *at_init);

#endif
