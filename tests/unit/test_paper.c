/* test_paper.c -- the paper protocol's pure parts (src/paper.c, result.c, reply.c, eval.c):
 * its tolerance per dtype, the non-finite rule that drops a variant, its verdict from trials
 * and variants, the "paper" JSON object's exact fields, the decoding of its replies, and the
 * protocol names. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "evalctx.h"

/* pp and its cases as paper_check leaves them: passed trials of 5, and variant k passed
 * (1), failed (0), skipped (-1) or not run (-2). */
static int setup(kbv_paper *pp, kbv_case *cases, int trials_passed, const int var[KBV_PAPER_VARIANTS]) {
    memset(pp, 0, sizeof *pp);
    pp->trials = 5, pp->trials_passed = trials_passed;
    int n = 0;
    for (int t = 0; t < 5; t++) {
        kbv_case *kc = &cases[n++];
        memset(kc, 0, sizeof *kc);
        snprintf(kc->distribution, sizeof kc->distribution, "nominal");
        kc->evaluated = 1, kc->passed = t < trials_passed, kc->klass = -1;
    }
    for (int k = 0; k < KBV_PAPER_VARIANTS; k++) {
        pp->variants[k].scale = kbv_paper_scales[k];
        if (var[k] == -2) continue;
        pp->variants_run = 1;
        kbv_case *kc = &cases[n++];
        memset(kc, 0, sizeof *kc);
        snprintf(kc->distribution, sizeof kc->distribution, "%s", k == 0 ? "nominal" : "scaled");
        kc->klass = -1;
        if (var[k] == -1) {
            pp->variants[k].skipped = kc->skipped = 1;
            continue;
        }
        pp->variants[k].evaluated = kc->evaluated = 1;
        pp->variants[k].passed = kc->passed = var[k];
    }
    return n;
}

static void verdicts(void) {
    kbv_paper pp;
    kbv_case cases[9];
    int n = setup(&pp, cases, 5, (int[]){1, 1, 1, 1});
    paper_verdict(&pp, cases, n);
    CHECK(pp.correct && pp.standard_correct && pp.hidden_correct && pp.status == KBV_VERIFIED);
    /* exact on non-negative inputs, wrong on negative ones: KernelBench's trials pass, x-1 fails */
    n = setup(&pp, cases, 5, (int[]){1, 1, 1, 0});
    paper_verdict(&pp, cases, n);
    CHECK(!pp.correct && pp.standard_correct && !pp.hidden_correct && pp.status == KBV_OVERFIT);
    /* a fresh draw of the problem's own inputs failing is incorrect, not overfit */
    n = setup(&pp, cases, 5, (int[]){0, 1, 1, 1});
    paper_verdict(&pp, cases, n);
    CHECK(!pp.correct && !pp.hidden_correct && pp.status == KBV_INCORRECT);
    /* a dropped variant does not count */
    n = setup(&pp, cases, 5, (int[]){1, -1, 1, 1});
    paper_verdict(&pp, cases, n);
    CHECK(pp.correct && pp.hidden_correct && pp.status == KBV_VERIFIED);
    /* a failed trial: the variants never run (hidden_correct means nothing: JSON null) */
    n = setup(&pp, cases, 4, (int[]){-2, -2, -2, -2});
    paper_verdict(&pp, cases, n);
    CHECK(!pp.correct && !pp.standard_correct && !pp.variants_run && pp.status == KBV_INCORRECT);
}

static void tolerances(void) {
    CHECK(paper_tolerance(KBV_DT_F32) == 1e-3 && paper_tolerance(KBV_DT_F64) == 1e-3);
    CHECK(paper_tolerance(KBV_DT_F16) == 1e-2 && paper_tolerance(KBV_DT_BF16) == 1e-2);
    kbv_tensor t;
    kbv_err err;
    int64_t shape[1] = {3};
    CHECK(kbv_tensor_alloc(&t, KBV_DT_F32, 1, shape, &err) == 0);
    float *f = t.data;
    f[0] = 1, f[1] = -2, f[2] = 0;
    CHECK(paper_finite(&t));
    f[1] = NAN;
    CHECK(!paper_finite(&t));
    f[1] = -INFINITY;
    CHECK(!paper_finite(&t));
    kbv_tensor_free(&t);
    CHECK(kbv_tensor_alloc(&t, KBV_DT_I64, 1, shape, &err) == 0);
    CHECK(paper_finite(&t)); /* integers always are */
    kbv_tensor_free(&t);
    CHECK(kbv_paper_scales[0] == 1 && kbv_paper_scales[1] == 3 && kbv_paper_scales[2] == 0.01 && kbv_paper_scales[3] == -1);
}

static void json_object_shape(void) {
    kbv_result r;
    result_init(&r);
    snprintf(r.protocol, sizeof r.protocol, "all");
    json_t *j = result_to_json(&r);
    CHECK(json_object_get(j, "paper") == NULL); /* absent when the protocol did not run */
    json_decref(j);
    kbv_paper *pp = &r.paper;
    kbv_case cases[9];
    int n = setup(pp, cases, 5, (int[]){1, -1, 1, 0});
    paper_verdict(pp, cases, n);
    pp->ran = 1, pp->tolerance = 1e-3, pp->judged = 1, pp->max_abs_err = 2;
    snprintf(pp->variants[1].detail, sizeof pp->variants[1].detail, "dropped: the reference output contains NaN/Inf");
    snprintf(pp->detail, sizeof pp->detail, "variant x-1: wrong");
    pp->peak_cand = pp->peak_ref = -1;
    j = result_to_json(&r);
    json_t *p = json_object_get(j, "paper");
    static const char *const keys[] = {"correct", "status", "tolerance", "trials", "trials_passed", "standard_correct", "hidden_correct", "variants",
                                       "time_ms", "speedup", "speedup_fp32", "memory", "max_abs_err", "detail"};
    CHECK(json_object_size(p) == sizeof keys / sizeof *keys);
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) CHECK(json_object_get(p, keys[i]) != NULL);
    CHECK(json_is_false(json_object_get(p, "correct")) && json_is_true(json_object_get(p, "standard_correct")));
    CHECK(json_is_false(json_object_get(p, "hidden_correct")));
    CHECK_STR(json_string_value(json_object_get(p, "status")), "overfit");
    CHECK(json_number_value(json_object_get(p, "tolerance")) == 1e-3 && json_integer_value(json_object_get(p, "trials")) == 5);
    json_t *v = json_object_get(p, "variants");
    CHECK(json_array_size(v) == 4);
    CHECK(json_number_value(json_object_get(json_array_get(v, 3), "scale")) == -1);
    CHECK(json_is_false(json_object_get(json_array_get(v, 3), "passed")));
    CHECK(json_is_null(json_object_get(json_array_get(v, 1), "passed")) && json_is_true(json_object_get(json_array_get(v, 1), "skipped")));
    CHECK(json_is_string(json_object_get(json_array_get(v, 1), "detail")) && json_is_null(json_object_get(json_array_get(v, 0), "detail")));
    CHECK(json_is_null(json_object_get(p, "time_ms")) && json_is_null(json_object_get(p, "speedup")));
    json_t *mem = json_object_get(p, "memory");
    CHECK(json_object_size(mem) == 3 && json_is_null(json_object_get(mem, "ratio")) && json_is_null(json_object_get(mem, "candidate_peak_bytes")));
    CHECK(json_number_value(json_object_get(p, "max_abs_err")) == 2);
    json_decref(j);
    /* correct and timed: the speedups are the baselines' means over the candidate's, the memory ratio baseline / candidate */
    n = setup(pp, cases, 5, (int[]){1, 1, 1, 1});
    paper_verdict(pp, cases, n);
    pp->ran = 1, pp->timed = 1, pp->warmup = 3, pp->time_trials = 100;
    pp->time_cand_ms = 2, pp->time_tf32_ms = 1, pp->time_fp32_ms = 4;
    pp->peak_cand = 400, pp->peak_ref = 100;
    j = result_to_json(&r);
    p = json_object_get(j, "paper");
    CHECK(json_is_null(json_object_get(p, "hidden_correct")) == 0 && json_is_true(json_object_get(p, "correct")));
    CHECK_NEAR(json_number_value(json_object_get(p, "speedup")), 0.5, 1e-12);
    CHECK_NEAR(json_number_value(json_object_get(p, "speedup_fp32")), 2, 1e-12);
    json_t *tm = json_object_get(p, "time_ms");
    CHECK(json_object_size(tm) == 5 && json_integer_value(json_object_get(tm, "warmup")) == 3 && json_integer_value(json_object_get(tm, "trials")) == 100);
    CHECK_NEAR(json_number_value(json_object_get(tm, "baseline_fp32")), 4, 1e-12);
    mem = json_object_get(p, "memory");
    CHECK(json_integer_value(json_object_get(mem, "candidate_peak_bytes")) == 400 && json_integer_value(json_object_get(mem, "baseline_peak_bytes")) == 100);
    CHECK_NEAR(json_number_value(json_object_get(mem, "ratio")), 0.25, 1e-12);
    CHECK(json_is_null(json_object_get(p, "max_abs_err"))); /* nothing judged in this setup */
    json_decref(j);
    result_free(&r);
}

static void replies(void) {
    kbv_reply rep;
    kbv_err err;
    json_t *m = json_pack("{s:b, s:I}", "ok", 1, "torch_peak_bytes", (json_int_t)12345);
    CHECK(reply_decode("paper_memory", m, &rep, &err) == 0 && rep.audit.has_torch_peak && rep.audit.torch_peak_bytes == 12345);
    reply_free(&rep);
    json_decref(m);
    m = json_pack("{s:b}", "ok", 1); /* the CPU: no figure */
    CHECK(reply_decode("paper_memory", m, &rep, &err) == 0 && !rep.audit.has_torch_peak);
    reply_free(&rep);
    json_decref(m);
    m = json_pack("{s:b, s:i}", "ok", 1, "torch_peak_bytes", -5);
    CHECK(reply_decode("paper_memory", m, &rep, &err) < 0);
    json_decref(m);
    m = json_pack("{s:b, s:{s:f, s:i}}", "ok", 1, "time_ms", "reference", 1.5, "trials", 100);
    CHECK(reply_decode("paper_time", m, &rep, &err) == 0 && rep.has_time && rep.time_ref_ms == 1.5 && rep.time_trials == 100);
    reply_free(&rep);
    json_decref(m);
    m = json_pack("{s:b, s:[{s:i, s:[], s:[]}]}", "ok", 1, "trials", "seed", 7, "ref", "new");
    CHECK(reply_decode("paper", m, &rep, &err) == 0 && rep.ntrials == 1 && rep.trials[0].seed == 7);
    reply_free(&rep);
    json_decref(m);
    CHECK(reply_fields("paper") && reply_fields("paper_time") && reply_fields("paper_memory"));
    CHECK(proto_command_find("paper") && proto_command_find("paper_time") && proto_command_find("paper_memory"));
}

static void names(void) {
    CHECK_STR(eval_protocol_name(EVAL_VERIFIED), "verified");
    CHECK_STR(eval_protocol_name(EVAL_STANDARD), "standard");
    CHECK_STR(eval_protocol_name(EVAL_PAPER), "paper");
    CHECK_STR(eval_protocol_name(EVAL_BOTH), "both");
    CHECK_STR(eval_protocol_name(EVAL_ALL), "all");
    CHECK(EVAL_ALL == (EVAL_VERIFIED | EVAL_STANDARD | EVAL_PAPER));
}

int main(void) {
    verdicts();
    tolerances();
    json_object_shape();
    replies();
    names();
    CHECK_DONE("test_paper");
}
