/* values.h -- values leaving the worker: a call's result as a sequence, descriptors and
 * .kbt files, fingerprints. */
#ifndef KBV_WORKER_VALUES_H
#define KBV_WORKER_VALUES_H

#include <stdint.h>

#include "../tensor.h"
#include "worker.h"

/* forward's result as a sequence of values: a tensor alone becomes a 1-tuple. NULL (and
 * *why set) for anything but a tensor, a tuple or a list. Steals out. */
PyObject *output_seq(worker *w, PyObject *out, char *why, size_t whylen);
/* A Python scalar as JSON, or NULL if it is not one. */
json_t *scalar_to_json(PyObject *o);
/* A tensor descriptor (docs/protocol.md) for the file at path holding t. */
json_t *tensor_desc(const char *path, const kbv_tensor *t);
/* Save each element of a sequence of tensors/scalars as PREFIX<i>.kbt: a reply with
 * "values", or a failure reply; kind names who is at fault, what the values. */
json_t *save_values(worker *w, PyObject *seq, const char *prefix, const char *kind, const char *what);
/* A 64-bit fingerprint of a tensor's bytes, computed where they live. */
int fingerprint(worker *w, PyObject *t, uint64_t *fp, kbv_err *err);
/* Fingerprints of a sequence's tensors as hex strings (null for other values); NULL on error. */
json_t *seq_prints(worker *w, PyObject *seq, kbv_err *err);

#endif
