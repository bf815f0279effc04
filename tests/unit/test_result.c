/* test_result.c -- result.c: the JSON contract's fields and types. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "result.h"

int main(void) {
    kbv_result r;
    result_init(&r);
    r.status = KBV_INCORRECT;
    snprintf(r.problem.path, sizeof r.problem.path, "/p/relu.py");
    snprintf(r.problem.name, sizeof r.problem.name, "relu");
    snprintf(r.device, sizeof r.device, "cpu");
    r.seed = UINT64_C(18446744073709551615);
    kbv_case *c = result_add_case(&r);
    snprintf(c->distribution, sizeof c->distribution, "nominal");
    c->seed = 5, c->evaluated = 1, c->passed = 0, c->max_abs_err = 0.5, c->atol = 1e-4;
    snprintf(c->detail, sizeof c->detail, "output 0: element 3 is 1, expected 0");
    result_add_finding(&r, FIND_OUTPUT_TRUNCATED, NULL, "wrote %d bytes", 12);
    result_add_error(&r, "first");
    result_add_error(&r, "second");
    r.candidate_stdout = strdup("bad utf8 \xff here");
    json_t *j = result_to_json(&r);
    CHECK(j != NULL);
    CHECK_STR(json_string_value(json_object_get(j, "status")), "incorrect");
    CHECK_STR(json_string_value(json_object_get(j, "seed")), "18446744073709551615");
    json_t *cs = json_object_get(j, "cases");
    CHECK(json_array_size(cs) == 1);
    json_t *c0 = json_array_get(cs, 0);
    CHECK_STR(json_string_value(json_object_get(c0, "distribution")), "nominal");
    CHECK(json_is_false(json_object_get(c0, "passed")));
    CHECK(json_real_value(json_object_get(c0, "max_abs_err")) == 0.5);
    CHECK(json_is_real(json_object_get(c0, "max_rel_err")));
    json_t *f0 = json_array_get(json_object_get(j, "flags"), 0);
    CHECK_STR(json_string_value(json_object_get(f0, "id")), "output_truncated");
    CHECK_STR(json_string_value(json_object_get(f0, "severity")), "info");
    CHECK_STR(json_string_value(json_object_get(f0, "message")), "wrote 12 bytes");
    CHECK_STR(json_string_value(json_object_get(j, "errors")), "first\nsecond");
    CHECK_STR(json_string_value(json_object_get(json_object_get(j, "output"), "candidate_stdout")), "bad utf8 ? here");
    CHECK(json_is_null(json_object_get(json_object_get(j, "problem"), "sha256")));
    json_decref(j);
    /* Timing: every field present; a noise of infinity (stopped before it was estimated) and
     * an infinite error are null, never a missing key. */
    r.perf.measured = 1;
    snprintf(r.perf.clock, sizeof r.perf.clock, "cuda_events");
    snprintf(r.perf.stop, sizeof r.perf.stop, "max_time");
    r.perf.noise = INFINITY;
    r.perf.rounds = 18;
    r.perf.cand = (kbv_times){18, 2.0, 1.9, 2.1, 2.0};
    r.perf.ref = (kbv_times){18, 3.0, 2.9, 3.1, 3.0};
    r.perf.speedup = (kbv_ratio){1, 1.5, 1.4, 1.6};
    r.memory.peak_cand = 64 << 20, r.memory.peak_ref = 32 << 20;
    c->max_abs_err = INFINITY;
    j = result_to_json(&r);
    CHECK(json_is_null(json_object_get(json_array_get(json_object_get(j, "cases"), 0), "max_abs_err")));
    json_t *tm = json_object_get(j, "timing");
    CHECK(json_is_object(tm) && json_is_null(json_object_get(tm, "noise")) && json_integer_value(json_object_get(tm, "rounds")) == 18);
    CHECK(json_real_value(json_object_get(json_object_get(j, "speedup"), "value")) == 1.5);
    CHECK(json_real_value(json_array_get(json_object_get(json_object_get(j, "speedup"), "ci95"), 1)) == 1.6);
    CHECK(json_integer_value(json_object_get(json_object_get(json_object_get(j, "time_ms"), "candidate"), "samples")) == 18);
    CHECK(json_is_null(json_object_get(json_object_get(j, "time_ms"), "reference_strict")));
    CHECK(json_real_value(json_object_get(json_object_get(j, "memory"), "peak_ratio")) == 2.0);
    CHECK(json_is_null(json_object_get(json_object_get(j, "memory"), "persistent_ratio")));
    CHECK(json_is_object(json_object_get(j, "audit")));
    CHECK(json_is_null(json_object_get(json_object_get(j, "audit"), "candidate"))); /* no audit (the CPU): no share */
    json_decref(j);
    /* the candidate's audit gets its authored share; the kept audit itself is not changed */
    r.audit_cand = json_pack("{s:I, s:I, s:i}", "authored_ns", (json_int_t)900, "library_ns", (json_int_t)8100, "authored_kernels", 1);
    j = result_to_json(&r);
    const json_t *ac = json_object_get(json_object_get(j, "audit"), "candidate");
    CHECK(fabs(json_real_value(json_object_get(ac, "authored_share")) - 0.1) < 1e-12);
    CHECK(json_integer_value(json_object_get(ac, "library_ns")) == 8100);
    CHECK(json_object_get(r.audit_cand, "authored_share") == NULL);
    json_decref(j);
    json_object_set_new(r.audit_cand, "authored_ns", json_integer(0)), json_object_set_new(r.audit_cand, "library_ns", json_integer(0));
    j = result_to_json(&r); /* a call that ran no kernel: null */
    CHECK(json_is_null(json_object_get(json_object_get(json_object_get(j, "audit"), "candidate"), "authored_share")));
    json_decref(j);
    for (int s = 0; s < KBV_STATUS_COUNT; s++) CHECK(strcmp(kbv_status_name((kbv_status)s), "unknown") != 0);
    CHECK_STR(kbv_status_name(KBV_COMPILE_ERROR), "compile_error");
    result_free(&r);
    CHECK_DONE("test_result");
}
