/* judge.h -- compare a candidate's outputs with the reference's, in C.
 *
 * Two rules live here. The verified protocol's (docs/correctness.md): against a float64
 * oracle, a candidate may err up to K times what PyTorch itself errs on the same inputs
 * with TF32 on, plus a floor per dtype, normwise and elementwise, with NaN/Inf where the
 * oracle has them. And KernelBench's allclose, for the standard protocol. Nothing here
 * decides a verdict: cases.c combines the comparisons into cases, verdict.c the cases into a status.
 */
#ifndef KBV_JUDGE_H
#define KBV_JUDGE_H

#include <stddef.h>
#include <stdint.h>

#include "tensor.h"

#define JUDGE_K 4.0 /* a candidate may err up to K times PyTorch's own (TF32) error */

typedef enum judge_class { JUDGE_FP32 = 0, JUDGE_TF32, JUDGE_HALF, JUDGE_WRONG } judge_class;
const char *judge_class_name(judge_class c);

/* How far a run is from the oracle: normwise relative error and largest absolute error,
 * over elements where the oracle is finite. */
typedef struct judge_err {
    double norm_rel;            /* ||x - o||_2 / ||o||_2 (0 when both are 0) */
    double max_abs;             /* max |x_i - o_i| */
    double max_rel;             /* max |x_i - o_i| / |o_i| over o_i != 0 */
    int64_t nonfinite_mismatch; /* positions where NaN/Inf differ from the oracle's */
} judge_err;

/* PyTorch's own errors on one output of one case, and the tolerance they imply. */
typedef struct judge_calib {
    kbv_dtype dtype;  /* the reference's native output dtype */
    double rms;       /* RMS of the oracle's finite values */
    judge_err tf32;   /* the baseline as timed (TF32 on; on the CPU the plain run) */
    judge_err strict; /* fp32 with TF32 off */
    double floor;     /* per-dtype floor (judge_floor), normwise and elementwise */
    double tol_norm;  /* K * tf32.norm_rel + floor */
    double tol_abs;   /* K * tf32.max_abs, plus floor * (|o_i| + rms) per element */
} judge_calib;

typedef struct judge_result {
    int passed;
    judge_class klass;
    judge_err err;
    char reason[256];
} judge_result;

/* The floor per output dtype: fp32 1e-5, fp64 1e-12, fp16 2e-3, bf16 1.6e-2. float32's is what
 * a plain float32 kernel may lose to the order of its additions where PyTorch's own order loses
 * almost nothing: a row sum added left to right (about sqrt(n) ulps: 1e-5 is n = 30 000), or an
 * element dominated by one large addend with many small ones added to it one at a time (a
 * bias first, then a K-term dot product). Half precision loses 100 times more. */
double judge_floor(kbv_dtype dt);
/* Below this normwise error a float32 output that fails is not called half precision
 * (JUDGE_WRONG, not JUDGE_HALF): float16 rounding alone gives about 2.8e-4 (its unit
 * roundoff 2^-11 over sqrt(3)). */
#define JUDGE_HALF_MIN 5e-5
void judge_error(const kbv_tensor *oracle, const kbv_tensor *x, judge_err *e);
/* Build the calibration from the oracle, the TF32 baseline and the strict fp32 run. */
void judge_calibrate(const kbv_tensor *oracle, const kbv_tensor *tf32, const kbv_tensor *strict, judge_calib *c);
/* Judge a candidate output against the oracle under calibration c. Integer and bool
 * outputs must equal the strict or the TF32 run exactly (pass either as a reference). */
void judge_calibrated(const kbv_tensor *oracle, const kbv_tensor *strict, const kbv_tensor *tf32, const judge_calib *c, const kbv_tensor *cand,
                      judge_result *r);
/* A hidden case is valid when the oracle output is finite and not degenerate (more than one
 * element, all equal), unless the nominal case's output was so too. Returns 1 if valid and
 * otherwise fills why. */
int judge_valid_case(const kbv_tensor *oracle, int nominal_nonfinite, int nominal_degenerate, char *why, size_t whylen);
/* The two facts validity needs of an output: NaN or Inf anywhere, and one value everywhere
 * (more than one element, all equal as doubles; a NaN makes it not constant). kbv check
 * gets them from the worker, computed where the output is, instead of the output itself. */
typedef struct judge_facts {
    int nonfinite, constant;
    double value; /* the constant, when constant */
} judge_facts;
void judge_facts_of(const kbv_tensor *t, judge_facts *f);
int judge_valid_facts(const judge_facts *f, int nominal_nonfinite, int nominal_degenerate, char *why, size_t whylen);
int judge_is_degenerate(const kbv_tensor *t);
int judge_has_nonfinite(const kbv_tensor *t);
/* KernelBench's allclose(ref, new, atol=tol, rtol=tol): |ref - new| <= tol + tol * |new|,
 * NaN anywhere fails. Returns 1 when close; fills max_abs. */
int judge_kernelbench_allclose(const kbv_tensor *ref, const kbv_tensor *cand, double tol, double *max_abs, char *why, size_t whylen);

#endif
