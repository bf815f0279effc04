/* judge_passes.c -- what a case's judging passes cost on one large output (`make bench-judge`,
 * N elements, default 2^26), over a float64 oracle and four float32 runs (TF32, strict and the
 * candidate's two): one pass after the other, and as cases.c runs them. There the reference
 * side's passes (the calibration, then the oracle's fingerprint) run on a thread while the
 * candidate's worker runs the case, so what the evaluation waits for after the candidate's two
 * runs is two waves: the runs' difference beside the first run's fingerprint, then the two
 * judgements. Exits 1 if the two ways give any figure that differs in a bit: no pass reads what
 * another writes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_host.h"
#include "judge.h"
#include "util.h"

static kbv_tensor o, tf, st, x1, x2;
typedef struct figures {
    judge_calib cal;
    judge_result jr1, jr2;
    judge_err diff;
    uint64_t fp1, fpo;
} figures;
static figures fig;

static void calibrate(void *a) { (void)a, judge_calibrate(&o, &tf, &st, &fig.cal); }
static void diff(void *a) { (void)a, judge_error(&x1, &x2, &fig.diff); }
static void fp1(void *a) { (void)a, fig.fp1 = gen_fingerprint_host(x1.data, x1.nbytes); }
static void fpo(void *a) { (void)a, fig.fpo = gen_fingerprint_host(o.data, o.nbytes); }
static void judge1(void *a) { (void)a, judge_calibrated(&o, &st, &tf, &fig.cal, &x1, &fig.jr1); }
static void judge2(void *a) { (void)a, judge_calibrated(&o, &st, &tf, &fig.cal, &x2, &fig.jr2); }

int main(int argc, char **argv) {
    long long n = argc > 1 ? atoll(argv[1]) : 1LL << 26;
    if (n < 1) return fprintf(stderr, "usage: judge_passes [ELEMENTS]\n"), 2;
    int64_t shape[1] = {n};
    kbv_err err;
    if (kbv_tensor_alloc(&o, KBV_DT_F64, 1, shape, &err) < 0 || kbv_tensor_alloc(&tf, KBV_DT_F32, 1, shape, &err) < 0 ||
        kbv_tensor_alloc(&st, KBV_DT_F32, 1, shape, &err) < 0 || kbv_tensor_alloc(&x1, KBV_DT_F32, 1, shape, &err) < 0 ||
        kbv_tensor_alloc(&x2, KBV_DT_F32, 1, shape, &err) < 0)
        return fprintf(stderr, "judge_passes: %s\n", err.msg), 2;
    double *od = o.data;
    float *td = tf.data, *sd = st.data, *d1 = x1.data, *d2 = x2.data;
    for (long long i = 0; i < n; i++) { /* an oracle, and runs off by a TF32-like and two fp32-like errors */
        double v = 3 * sin((double)i * 1e-3) + 1e-3 * (double)(i % 7);
        od[i] = v, td[i] = (float)(v * (1 + 1e-4 * cos((double)i))), sd[i] = (float)v;
        d1[i] = (float)(v * (1 + 2e-6 * sin((double)i * 0.7))), d2[i] = (float)(v * (1 - 2e-6 * cos((double)i * 0.3)));
    }
    figures seq = {0};
    double one = 0, ref_side = 0, after = 0;
    for (int par = 0; par < 2; par++) {
        memset(&fig, 0, sizeof fig);
        double t0 = kbv_now();
        calibrate(NULL), fpo(NULL); /* on kbv_async's thread in cases.c, beside the candidate's runs */
        double t1 = kbv_now();
        const kbv_task wave1[2] = {{diff, NULL}, {fp1, NULL}}, wave2[2] = {{judge2, NULL}, {judge1, NULL}};
        kbv_parallel(wave1, 2, par);
        kbv_parallel(wave2, 2, par);
        double t2 = kbv_now();
        if (!par) seq = fig, one = t2 - t0;
        else ref_side = t1 - t0, after = t2 - t1;
    }
    int same = memcmp(&seq.cal, &fig.cal, sizeof fig.cal) == 0 && memcmp(&seq.jr1, &fig.jr1, sizeof fig.jr1) == 0 &&
               memcmp(&seq.jr2, &fig.jr2, sizeof fig.jr2) == 0 && memcmp(&seq.diff, &fig.diff, sizeof fig.diff) == 0 && seq.fp1 == fig.fp1 &&
               seq.fpo == fig.fpo;
    printf("%lld elements (a float64 oracle of %.0f MiB): one pass after the other %.3f s; as kbv runs them, the reference side %.3f s "
           "(beside the candidate's runs), then %.3f s after them; first run %s (relative error %.6g), figures %s\n",
           n, (double)o.nbytes / (1 << 20), one, ref_side, after, fig.jr1.passed ? "passes" : "fails", fig.jr1.err.norm_rel,
           same ? "the same to the bit" : "DIFFER");
    kbv_tensor_free(&o), kbv_tensor_free(&tf), kbv_tensor_free(&st), kbv_tensor_free(&x1), kbv_tensor_free(&x2);
    return same ? 0 : 1;
}
