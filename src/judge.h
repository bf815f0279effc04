/* judge.h -- compare a candidate's output tensor with the reference's, in C.
 *
 * This is issue #2's KernelBench-like rule: |cand - ref| <= atol + rtol * |ref| elementwise,
 * atol = rtol = 1e-4 for float32/float64 and 1e-2 for float16/bfloat16 (KernelBench's
 * get_tolerance_for_precision), exact equality for integers and bools; NaN and infinity
 * must sit at the same positions with the same sign. Unlike torch.allclose in KernelBench,
 * rtol scales the *reference* magnitude, so a candidate cannot widen its own tolerance.
 * The calibrated oracle of issue #3 replaces the tolerance, not this interface.
 */
#ifndef KBV_JUDGE_H
#define KBV_JUDGE_H

#include <stdint.h>

#include "tensor.h"

typedef struct judge_tol {
    double atol; /* absolute tolerance, in the output's units */
    double rtol; /* relative tolerance, a fraction of |reference| */
} judge_tol;

typedef struct judge_cmp {
    int passed;
    char reason[256];      /* empty when passed; else the first thing that differed */
    double max_abs_err;    /* max |cand - ref| over finite pairs */
    double max_rel_err;    /* max |cand - ref| / |ref| over finite pairs with ref != 0 */
    int64_t n_bad;         /* elements outside tolerance (including NaN/Inf mismatches) */
    int64_t first_bad;     /* C-order index of the first, -1 if none */
} judge_cmp;

judge_tol judge_default_tol(kbv_dtype dt);
int judge_compare(const kbv_tensor *ref, const kbv_tensor *cand, judge_tol tol, judge_cmp *out);

#endif
