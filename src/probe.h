/* probe.h -- what kbv learns about a problem's inputs from get_inputs() under several
 * seeds: dtype and shape, integer ranges, the share of true booleans, exact zeros that sit
 * at the same positions in every draw (triangular, banded, padded inputs), symmetry, the
 * range of float values, and inputs that do not change with the seed at all (fixed).
 * Runs in the reference worker on host copies of the tensors; the JSON form goes to kbv,
 * which plans the cases from it (plan.c). Does not generate anything.
 */
#ifndef KBV_PROBE_H
#define KBV_PROBE_H

#include <jansson.h>
#include <stdint.h>

#include "tensor.h"

typedef struct probe_input {
    int nprobes;    /* tensors added so far */
    int consistent; /* 1 while every probe had the same dtype and shape */
    kbv_dtype dtype;
    int ndim;
    int64_t shape[KBV_MAX_DIMS];
    uint64_t first_fp;       /* fingerprint of the first probe's bytes */
    int fixed;               /* 1 while every probe's bytes equal the first's */
    double min, max;         /* over finite values of every probe */
    int64_t n_true, n_total; /* bool: counts of true and of elements */
    int nonfinite;           /* some probe held NaN or Inf */
    int symmetric;           /* 1 while every probe is symmetric in its last two dims */
    uint8_t *zeros;          /* float inputs: 1 where every probe so far was exactly 0 */
    int64_t zero_count;      /* positions set in zeros */
} probe_input;

void probe_init(probe_input *p);
void probe_free(probe_input *p);
void probe_add(probe_input *p, const kbv_tensor *t);
/* {"dtype","shape","fixed","min","max","true_fraction","nonfinite","symmetric","zeros"} */
json_t *probe_to_json(const probe_input *p);

#endif
