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

/* ---- the verified protocol's calibrated rule (docs/correctness.md) -------------------- */

#define JUDGE_K 4.0 /* a candidate may err up to K times PyTorch's own (TF32) error */

typedef enum judge_class { JUDGE_FP32 = 0, JUDGE_TF32, JUDGE_HALF, JUDGE_WRONG } judge_class;
const char *judge_class_name(judge_class c);

/* How far a run is from the oracle: normwise relative error and largest absolute error,
 * over elements where the oracle is finite. */
typedef struct judge_err {
    double norm_rel;   /* ||x - o||_2 / ||o||_2 (0 when both are 0) */
    double max_abs;    /* max |x_i - o_i| */
    double max_rel;    /* max |x_i - o_i| / |o_i| over o_i != 0 */
    int64_t nonfinite_mismatch; /* positions where NaN/Inf differ from the oracle's */
} judge_err;

/* PyTorch's own errors on one output of one case, and the tolerance they imply. */
typedef struct judge_calib {
    kbv_dtype dtype;   /* the reference's native output dtype */
    double rms;        /* RMS of the oracle's finite values */
    judge_err tf32;    /* the baseline as timed (TF32 on; on the CPU the plain run) */
    judge_err strict;  /* fp32 with TF32 off */
    double floor;      /* per-dtype floor: fp32 1e-6, fp64 1e-12, fp16 2e-3, bf16 1.6e-2 */
    double tol_norm;   /* K * tf32.norm_rel + floor */
    double tol_abs;    /* K * tf32.max_abs, plus floor * (|o_i| + rms) per element */
} judge_calib;

typedef struct judge_result {
    int passed;
    judge_class klass;
    judge_err err;
    char reason[256];
} judge_result;

double judge_floor(kbv_dtype dt);
void judge_error(const kbv_tensor *oracle, const kbv_tensor *x, judge_err *e);
/* Build the calibration from the oracle, the TF32 baseline and the strict fp32 run. */
void judge_calibrate(const kbv_tensor *oracle, const kbv_tensor *tf32, const kbv_tensor *strict, judge_calib *c);
/* Judge a candidate output against the oracle under calibration c. Integer and bool
 * outputs must equal the strict or the TF32 run exactly (pass either as a reference). */
void judge_calibrated(const kbv_tensor *oracle, const kbv_tensor *strict, const kbv_tensor *tf32, const judge_calib *c,
                      const kbv_tensor *cand, judge_result *r);
/* A hidden case is valid when the oracle output is finite and not degenerate (more than one
 * element, all equal), unless the nominal case's output was so too. Returns 1 if valid and
 * otherwise fills why. */
int judge_valid_case(const kbv_tensor *oracle, int nominal_nonfinite, int nominal_degenerate, char *why, size_t whylen);
int judge_is_degenerate(const kbv_tensor *t);
int judge_has_nonfinite(const kbv_tensor *t);
/* KernelBench's allclose(ref, new, atol=tol, rtol=tol): |ref - new| <= tol + tol * |new|,
 * NaN anywhere fails. Returns 1 when close; fills max_abs. */
int judge_kernelbench_allclose(const kbv_tensor *ref, const kbv_tensor *cand, double tol, double *max_abs, char *why, size_t whylen);
