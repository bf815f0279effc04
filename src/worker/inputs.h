/* inputs.h -- the problem's inputs: the probe, a case's inputs (gen_inputs), and the
 * nominal inputs get_inputs() makes. */
#ifndef KBV_WORKER_INPUTS_H
#define KBV_WORKER_INPUTS_H

#include "worker.h"

json_t *cmd_probe(worker *w, const json_t *cmd);
json_t *cmd_gen_inputs(worker *w, const json_t *cmd);

/* get_inputs() under a torch seed, as a new list (NULL with the Python error pending). */
PyObject *nominal_inputs(worker *w, unsigned long long seed);
/* The same on the device, as call arguments (a new tuple; NULL with the error pending). */
PyObject *nominal_args(worker *w, unsigned long long seed);
/* A case's inputs from their specs: a new tuple in *out, or NULL and a failure reply. */
json_t *make_inputs(worker *w, const json_t *specs, long long seed, PyObject **out);
/* Fingerprints of the current inputs (w->inputs), as hex strings (null for non-tensors). */
json_t *input_prints(worker *w, kbv_err *err);

#endif
