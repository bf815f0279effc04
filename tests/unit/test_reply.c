/* test_reply.c -- reply.c: every reply decoded into its struct, and what the decoder refuses
 * (wrong types, out-of-range numbers, over-long or foreign strings, unknown finding ids,
 * oversized arrays, malformed fingerprints). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "reply.h"

/* Decode text as the reply to op: the decoder's return value (r freed when it failed). */
static int dec(const char *op, const char *text, kbv_reply *r, kbv_err *err) {
    json_error_t je;
    json_t *m = json_loads(text, 0, &je);
    if (!m) {
        fprintf(stderr, "test_reply: bad test JSON %s: %s\n", text, je.text);
        return -2;
    }
    int rc = reply_decode(op, m, r, err);
    json_decref(m);
    return rc;
}

static void refused(const char *op, const char *text, const char *field) {
    kbv_reply r;
    kbv_err err = {{0}};
    int rc = dec(op, text, &r, &err);
    CHECK(rc == -1);
    if (rc == -1 && !strstr(err.msg, field)) fprintf(stderr, "test_reply: %s refused for \"%s\", expected the field %s\n", text, err.msg, field);
    CHECK(rc != -1 || strstr(err.msg, field) != NULL);
    if (rc == 0) reply_free(&r);
}

int main(void) {
    kbv_reply r;
    kbv_err err = {{0}};

    /* forward: values, aliases, fingerprints, the worker's times, a guard finding */
    CHECK(dec("forward",
              "{\"ok\":true,\"values\":[{\"kind\":\"tensor\",\"path\":\"/s/o0.kbt\",\"dtype\":\"float32\"},{\"kind\":\"scalar\",\"value\":2.5}],"
              "\"aliases\":[[0,1]],\"inputs_after\":[\"00000000000000ff\",null],\"wall_s\":0.25,\"save_s\":0.5,"
              "\"guard\":[{\"id\":\"thread_after_call\",\"severity\":\"hack\",\"detail\":\"a thread\",\"step\":\"forward\"}]}",
              &r, &err) == 0);
    CHECK(r.ok && r.values.present && r.values.n == 2);
    CHECK(r.values.v[0].is_tensor && strcmp(r.values.v[0].path, "/s/o0.kbt") == 0);
    CHECK(!r.values.v[1].is_tensor && r.values.v[1].value == 2.5);
    CHECK(r.naliases == 1 && r.aliases[0][0] == 0 && r.aliases[0][1] == 1);
    CHECK(r.after.present && r.after.n == 2 && r.after.has[0] && r.after.fp[0] == 0xff && !r.after.has[1]);
    CHECK(r.ntimes == 2 && strcmp(r.times[0].key, "wall_s") == 0 && r.times[0].s == 0.25);
    CHECK(r.nguard == 1 && r.guard[0].id == FIND_THREAD_AFTER_CALL && strcmp(r.guard[0].detail, "a thread") == 0);
    /* the fingerprints round-trip through kbv's own JSON */
    json_t *pj = reply_prints_to_json(&r.after);
    reply_prints p2;
    CHECK(reply_prints_from_json(pj, &p2, &err) == 0 && reply_prints_equal(&p2, &r.after));
    reply_prints_free(&p2), json_decref(pj);
    reply_free(&r);
    /* cpu_s is kbv's own measurement of the worker (steps_s): a reply's is not taken */
    CHECK(dec("forward", "{\"ok\":true,\"values\":[],\"cpu_s\":0.001,\"wall_s\":0.5}", &r, &err) == 0);
    CHECK(r.ntimes == 1 && strcmp(r.times[0].key, "wall_s") == 0);
    reply_free(&r);

    /* redraw_weights: the counts, and the state when it was saved */
    CHECK(dec("redraw_weights",
              "{\"ok\":true,\"redrawn\":3,\"kept\":1,\"state\":[{\"kind\":\"tensor\",\"path\":\"/s/w0.kbt\",\"dtype\":\"float32\","
              "\"name\":\"scale\"}]}",
              &r, &err) == 0);
    CHECK(r.redrawn == 3 && r.kept == 1 && r.state.present && r.state.n == 1 && strcmp(r.state.v[0].name, "scale") == 0);
    reply_free(&r);
    CHECK(dec("redraw_weights", "{\"ok\":true,\"redrawn\":0,\"kept\":0}", &r, &err) == 0 && !r.state.present);
    reply_free(&r);
    refused("redraw_weights", "{\"ok\":true,\"redrawn\":-1,\"kept\":0}", "redrawn");
    refused("redraw_weights", "{\"ok\":true,\"redrawn\":1,\"kept\":\"x\"}", "kept");

    /* a failure reply keeps kind, message and traceback */
    CHECK(dec("forward", "{\"ok\":false,\"kind\":\"python\",\"message\":\"boom\",\"traceback\":\"tb\"}", &r, &err) == 0);
    CHECK(!r.ok && strcmp(r.kind, "python") == 0 && strcmp(r.message, "boom") == 0 && r.traceback && strcmp(r.traceback, "tb") == 0);
    reply_free(&r);

    /* bench and audit */
    CHECK(dec("bench", "{\"ok\":true,\"ms\":[0.5,0.25],\"throttled\":1,\"held\":3,\"fresh\":true,\"warmup_last_ms\":0.4}", &r, &err) == 0);
    CHECK(r.nms == 2 && r.ms[1] == 0.25 && r.throttled == 1 && r.held == 3 && r.fresh && r.has_warmup_last);
    reply_free(&r);
    CHECK(dec("bench_save", "{\"ok\":true,\"values\":[{\"kind\":\"tensor\",\"path\":\"/s/timed3_0.kbt\"}],\"set\":1}", &r, &err) == 0);
    CHECK(r.has_set && r.set == 1 && r.values.n == 1 && r.values.v[0].is_tensor);
    reply_free(&r);
    CHECK(dec("audit",
              "{\"ok\":true,\"markers\":true,\"dropped\":0,\"kernels_per_call\":2,\"authored_kernels\":0,\"after_stop\":1,"
              "\"authored_ns\":300,\"library_ns\":2700,\"after_stop_kernels\":[{\"name\":\"k\",\"ns_after_stop\":900}],\"kernels\":[{\"name\":\"k\","
              "\"authored\":false,\"count\":1,\"ns\":5}],"
              "\"peak_bytes\":4096,\"torch_peak_bytes\":-1}",
              &r, &err) == 0);
    CHECK(r.audit.markers && r.audit.after_stop == 1 && strcmp(r.audit.first_after_stop.name, "k") == 0 &&
          r.audit.first_after_stop.ns_after_stop == 900);
    CHECK(r.audit.peak_bytes == 4096 && r.audit.has_torch_peak && r.audit.torch_peak_bytes == -1);
    CHECK(r.audit.authored_ns == 300 && r.audit.library_ns == 2700); /* the authored share's two times */
    CHECK(json_integer_value(json_object_get(r.audit.doc, "kernels_per_call")) == 2);
    CHECK(json_array_size(json_object_get(r.audit.doc, "kernels")) == 1);
    reply_free(&r);

    /* probe and declarations */
    CHECK(dec("probe",
              "{\"ok\":true,\"inputs\":[{\"kind\":\"tensor\",\"dtype\":\"float32\",\"shape\":[2,3],\"consistent\":true,\"fixed\":false,"
              "\"nonfinite\":false,\"symmetric\":false,\"zeros\":0,\"probes\":3,\"min\":-1.5,\"max\":null},{\"kind\":\"scalar\",\"value\":4}]}",
              &r, &err) == 0);
    CHECK(r.ninputs == 2 && r.inputs[0].is_tensor && r.inputs[0].ndim == 2 && r.inputs[0].shape[1] == 3);
    CHECK(r.inputs[0].has_min && r.inputs[0].min == -1.5 && !r.inputs[0].has_max && !r.inputs[1].is_tensor);
    CHECK(json_array_size(r.probe_doc) == 2);
    reply_free(&r);
    CHECK(dec("load_problem", "{\"ok\":true,\"constraints\":{\"1\":{\"domain\":\"positive\",\"range\":[0,2]}}}", &r, &err) == 0);
    CHECK(r.ndecl == 2 && !r.decl[0].present && r.decl[1].positive && r.decl[1].has_range && r.decl[1].range[1] == 2);
    reply_free(&r);

    /* the inspector's findings take the catalogue's severity; kernels are kept */
    CHECK(dec("inspect",
              "{\"ok\":true,\"inspect\":{\"load_inline\":true,\"kernels\":[\"relu_kernel\"],\"launched\":[],\"triton_kernels\":[],"
              "\"findings\":[{\"id\":\"static_threads\",\"severity\":\"info\",\"line\":3,\"detail\":\"imports threading\"}]}}",
              &r, &err) == 0);
    CHECK(r.inspect.nkernels == 1 && strcmp(r.inspect.kernels[0], "relu_kernel") == 0);
    CHECK(r.inspect.nfindings == 1 && r.inspect.findings[0].id == FIND_STATIC_THREADS && r.inspect.findings[0].line == 3);
    CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(r.inspect.doc, "findings"), 0), "severity")), "suspect");
    reply_free(&r);

    /* refused */
    refused("forward", "{\"ok\":\"yes\"}", "ok");
    refused("forward", "{\"ok\":true,\"values\":{}}", "values");
    refused("forward", "{\"ok\":true,\"values\":[{\"kind\":\"tensor\"}]}", "values");
    refused("forward", "{\"ok\":true,\"inputs_after\":[\"xyz\"]}", "fingerprints");
    refused("forward", "{\"ok\":true,\"inputs_after\":[\"00000000000000FF\"]}", "fingerprints");
    refused("forward", "{\"ok\":true,\"aliases\":[[0]]}", "aliases");
    refused("forward", "{\"ok\":true,\"count\":-1}", "count");
    refused("forward", "{\"ok\":true,\"guard\":[{\"id\":\"made_up\",\"detail\":\"x\",\"step\":\"forward\"}]}", "guard");
    refused("forward", "{\"ok\":true,\"guard\":[{\"id\":\"value_cache\",\"detail\":\"x\",\"step\":\"forward\"}]}", "guard");
    refused("forward", "{\"ok\":true,\"guard\":[{\"id\":\"Bad-Id\",\"detail\":\"x\",\"step\":\"forward\"}]}", "id");
    refused("forward", "{\"ok\":false,\"kind\":\"py thon\",\"message\":\"m\"}", "kind");
    refused("bench", "{\"ok\":true,\"ms\":[\"1\"]}", "ms");
    refused("bench", "{\"ok\":true,\"held\":1e3}", "held");
    refused("audit", "{\"ok\":true,\"after_stop_kernels\":[{\"ns_after_stop\":1}]}", "after_stop_kernels");
    refused("inspect", "{\"ok\":true,\"inspect\":{\"findings\":[{\"id\":\"identity_output\",\"detail\":\"x\"}]}}", "inspect");
    /* an array longer than the cap, and a path longer than PATH_MAX */
    {
        kbv_buf b;
        kbv_buf_init(&b);
        kbv_buf_append(&b, "{\"ok\":true,\"guard\":[", 20);
        for (int i = 0; i <= REPLY_MAX_GUARD; i++) kbv_buf_append(&b, i ? ",{}" : "{}", i ? 3 : 2);
        kbv_buf_append(&b, "]}", 3);
        refused("forward", b.data, "guard");
        kbv_buf_free(&b);
        char *big = malloc(PATH_MAX + 200);
        int n = snprintf(big, 100, "{\"ok\":true,\"values\":[{\"kind\":\"tensor\",\"path\":\"");
        memset(big + n, 'a', PATH_MAX + 10);
        strcpy(big + n + PATH_MAX + 10, "\"}]}");
        refused("forward", big, "path");
        free(big);
    }
    /* unknown fields are ignored; every documented op has a field list */
    CHECK(dec("load_candidate", "{\"ok\":true,\"extra\":1}", &r, &err) == 0);
    reply_free(&r);
    CHECK(reply_fields("forward") != NULL && reply_fields("*") != NULL && reply_fields("nope") == NULL);

    CHECK_DONE("test_reply");
}
