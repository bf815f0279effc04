/* inputs.h -- the problem's inputs: the probe, a case's inputs (gen_inputs), and the
 * nominal inputs get_inputs() makes. */
#ifndef KBV_WORKER_INPUTS_H
#define KBV_WORKER_INPUTS_H

#include "../gen_host.h"
#include "../tensor.h"
#include "worker.h"

json_t *cmd_probe(worker *w, const json_t *cmd);
json_t *cmd_gen_inputs(worker *w, const json_t *cmd);

/* get_inputs() under a torch seed, as a new list (NULL with the Python error pending). */
PyObject *nominal_inputs(worker *w, unsigned long long seed);
/* The same on the device, as call arguments (a new tuple; NULL with the error pending). */
PyObject *nominal_args(worker *w, unsigned long long seed);
/* A case's inputs from their specs: a new tuple in *out, or NULL and a failure reply. */
json_t *make_inputs(worker *w, const json_t *specs, long long seed, PyObject **out);
/* A tensor of the plan's values (gen.h: the same bits on the CPU and the GPU) on the worker's
 * device, with the shape sh; with mask, zero where it is nonzero; with sym, each trailing
 * square matrix symmetric. A new reference, or NULL with *err set. */
PyObject *gen_tensor(worker *w, const kbv_gen_plan *g, int nd, const int64_t *sh, const kbv_tensor *mask, int sym, kbv_err *err);
/* Fingerprints of the current inputs (w->inputs), as hex strings (null for non-tensors). */
json_t *input_prints(worker *w, kbv_err *err);

#endif
