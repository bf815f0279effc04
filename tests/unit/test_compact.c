/* test_compact.c -- cases_compact_kept (cases.c): a case kept for re-checks gives up its TF32
 * and strict runs' float data, and every judgement made from it afterwards is the one the
 * whole case gives, to the bit: passing and failing float outputs (norm and elementwise),
 * NaN placement, the fp32-oracle fallback, and integer outputs (which keep their runs). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "evalctx.h"

enum { M = 3000 };

static void fill(kbv_tensor *t, kbv_dtype dt, double (*f)(int, int), int salt) {
    kbv_err err;
    int64_t shape[2] = {M / 30, 30};
    CHECK(kbv_tensor_alloc(t, dt, 2, shape, &err) == 0);
    for (int i = 0; i < M; i++) {
        double v = f(i, salt);
        if (dt == KBV_DT_F32) ((float *)t->data)[i] = (float)v;
        else if (dt == KBV_DT_F64) ((double *)t->data)[i] = v;
        else ((int64_t *)t->data)[i] = (int64_t)v;
    }
}

static double wave(int i, int salt) { /* salt 0: exact; 1: TF32-sized error; 2: fp32-sized */
    double o = sin(i * 0.37) * 10 + (i % 50 == 0 ? 1e3 : 0);
    if (i == 7) o = NAN;
    return salt == 1 ? o * (1 + ((i % 7) - 3) * 1e-4) : salt == 2 ? o * (1 + ((i % 5) - 2) * 1e-7) : o;
}
static double ints(int i, int salt) { return (double)((i * 7919) % 1000) + (salt == 3 && i == 99 ? 1 : 0); }

/* One case: output 0 float32 (oracle float64), output 1 int64. */
static void make_case(ref_runs *rr) {
    memset(rr, 0, sizeof *rr);
    run_out *runs[3] = {&rr->oracle, &rr->tf32, &rr->strict};
    for (int r = 0; r < 3; r++) {
        runs[r]->n = 2;
        runs[r]->t = calloc(2, sizeof(kbv_tensor));
        fill(&runs[r]->t[0], r == 0 ? KBV_DT_F64 : KBV_DT_F32, wave, r == 0 ? 0 : r == 1 ? 1 : 2);
        fill(&runs[r]->t[1], KBV_DT_I64, ints, 0);
    }
}

/* Candidates: honest fp32, TF32-sized, bf16-sized (norm fails), one element off (the
 * elementwise bound), a NaN moved, and the integer output right or off by one. */
static double cand_val(int i, int kind) {
    double o = wave(i, 0);
    switch (kind) {
    case 0: return wave(i, 2);
    case 1: return o * (1 + ((i % 11) - 5) * 0.8e-4);
    case 2: return o * (1 + ((i % 11) - 5) * 8e-4);
    case 3: return i == M / 2 + 1 ? o + 5 : wave(i, 2);
    default: return i == 7 ? 1.0 : i == 8 ? NAN : wave(i, 2);
    }
}

static void judge_all(const eval_ctx *c, ref_runs *rr, judge_result jr[7], judge_calib cal[7]) {
    for (int kind = 0; kind < 5; kind++) {
        kbv_tensor x;
        kbv_err err;
        int64_t shape[2] = {M / 30, 30};
        CHECK(kbv_tensor_alloc(&x, KBV_DT_F32, 2, shape, &err) == 0);
        for (int i = 0; i < M; i++) ((float *)x.data)[i] = (float)cand_val(i, kind);
        cases_judge_output(c, rr, 0, &x, &cal[kind], &jr[kind]);
        kbv_tensor_free(&x);
    }
    for (int salt = 0; salt < 2; salt++) {
        kbv_tensor x;
        fill(&x, KBV_DT_I64, ints, salt ? 3 : 0);
        cases_judge_output(c, rr, 1, &x, &cal[5 + salt], &jr[5 + salt]);
        kbv_tensor_free(&x);
    }
}

int main(void) {
    for (int fallback = 0; fallback < 2; fallback++) {
        eval_ctx c;
        memset(&c, 0, sizeof c);
        c.oracle_fallback = fallback;
        ref_runs whole, kept;
        make_case(&whole), make_case(&kept);
        judge_result a[7], b[7];
        judge_calib ca[7], cb[7];
        memset(a, 0, sizeof a), memset(b, 0, sizeof b), memset(ca, 0, sizeof ca), memset(cb, 0, sizeof cb);
        judge_all(&c, &whole, a, ca);
        /* the same judgements from the kept case: once before compacting (the calibration
         * computed by a judgement, as for the timing's input sets), once not (hidden checks) */
        if (fallback) judge_all(&c, &kept, b, cb);
        size_t f32 = kept.tf32.t[0].nbytes, i64 = kept.tf32.t[1].nbytes;
        cases_compact_kept(&kept);
        CHECK(kept.tf32.t[0].data == NULL && kept.strict.t[0].data == NULL);
        CHECK(kept.tf32.t[0].nbytes == f32 && kept.strict.t[0].nbytes == f32 && kept.tf32.t[0].ndim == 2 && kept.tf32.t[0].shape[1] == 30);
        CHECK(kept.tf32.t[0].dtype == KBV_DT_F32 && kept.strict.t[0].strides[0] == 30);
        CHECK(kept.tf32.t[1].data != NULL && kept.strict.t[1].data != NULL && kept.tf32.t[1].nbytes == i64);
        CHECK(kept.oracle.t[0].data != NULL && kept.oracle.t[1].data != NULL);
        cases_compact_kept(&kept); /* twice: nothing more to free, nothing breaks */
        memset(b, 0, sizeof b), memset(cb, 0, sizeof cb);
        judge_all(&c, &kept, b, cb);
        for (int k = 0; k < 7; k++) {
            CHECK(memcmp(&a[k], &b[k], sizeof a[k]) == 0);
            CHECK(memcmp(&ca[k], &cb[k], sizeof ca[k]) == 0);
        }
        /* the judgements themselves are the ones the rule gives */
        CHECK(a[0].passed && a[1].passed && !a[2].passed && !a[3].passed && !a[4].passed);
        CHECK(strstr(a[3].reason, "elementwise") != NULL && a[4].err.nonfinite_mismatch == 2);
        CHECK(a[5].passed && !b[6].passed && strstr(b[6].reason, "integer output differs") != NULL);
        ref_runs_free(&whole), ref_runs_free(&kept);
    }
    CHECK_DONE("test_compact");
}
