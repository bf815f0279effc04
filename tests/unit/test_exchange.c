/* test_exchange.c -- exchange.c's pure logic: ids and keys, format detection, an entry's
 * fields and verdict, the samples of a file in order, and the baseline lookup. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "exchange.h"

static json_t *parse(const char *text) {
    json_error_t je;
    json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (!j) fprintf(stderr, "test_exchange: bad test JSON: %s\n", je.text);
    return j;
}

/* The format detected for text, or -1 (err set). */
static int detect(const char *text, kbv_err *err) {
    json_t *j = parse(text);
    exchange_format f;
    err->msg[0] = '\0';
    int rc = exchange_detect(j, &f, err);
    json_decref(j);
    if (rc < 0) CHECK(err->msg[0] != '\0');
    return rc < 0 ? -1 : (int)f;
}

/* One entry read as sample sid of problem 7 (sid -1: any): its status, or NULL (err set). */
static const char *entry(const char *text, int sid, exchange_entry *out, kbv_err *err) {
    json_t *j = parse(text);
    err->msg[0] = '\0';
    int rc = exchange_entry_read(j, 7, sid, "entry", out, err);
    json_decref(j); /* out->entry is not used after this */
    return rc < 0 ? NULL : out->status;
}

int main(void) {
    kbv_err err;
    exchange_entry e;

    /* Ids: digits only, no sign, space or leading zero, within the bounds. */
    CHECK(exchange_parse_id("19", 1, EXCHANGE_ID_MAX) == 19);
    CHECK(exchange_parse_id("0", 0, 10) == 0);
    CHECK(exchange_parse_id("0", 1, 10) == -1);
    CHECK(exchange_parse_id("019", 1, 100) == -1);
    CHECK(exchange_parse_id("+1", 1, 100) == -1);
    CHECK(exchange_parse_id("-1", 0, 100) == -1);
    CHECK(exchange_parse_id(" 1", 1, 100) == -1);
    CHECK(exchange_parse_id("", 0, 100) == -1);
    CHECK(exchange_parse_id("1234567", 0, 99999999) == -1);
    CHECK(exchange_parse_id("999999", 1, EXCHANGE_ID_MAX) == 999999);

    /* The paper's keys "P_S", split at the last '_'. */
    int p = 0, s = 0;
    CHECK(exchange_parse_key("19_3", &p, &s) == 0 && p == 19 && s == 3);
    CHECK(exchange_parse_key("100_0", &p, &s) == 0 && p == 100 && s == 0);
    CHECK(exchange_parse_key("19", &p, &s) < 0);
    CHECK(exchange_parse_key("_3", &p, &s) < 0);
    CHECK(exchange_parse_key("19_", &p, &s) < 0);
    CHECK(exchange_parse_key("1_2_3", &p, &s) < 0);
    CHECK(exchange_parse_key("0_1", &p, &s) < 0); /* problem ids are 1-based */
    CHECK(exchange_parse_key("a_1", &p, &s) < 0);

    /* A problem file's id: KernelBench's "P_Name.py". */
    CHECK(exchange_problem_id("/k/level1/19_ReLU.py") == 19);
    CHECK(exchange_problem_id("1_Square_matrix_multiplication_.py") == 1);
    CHECK(exchange_problem_id("19_ReLU") == 19);
    CHECK(exchange_problem_id("/k/19_x/relu.py") == -1);
    CHECK(exchange_problem_id("examples/problems/matmul_fp32.py") == -1);
    CHECK(exchange_problem_id("19_") == -1);
    CHECK(exchange_problem_id("level1/problem_19") == -1);

    /* Formats. */
    const char *sample = "{\"sample_id\": 0, \"compiled\": true, \"correctness\": true, \"metadata\": {}, \"runtime\": 1.5, \"runtime_stats\": {}}";
    char text[1024];
    snprintf(text, sizeof text, "{\"1\": [%s], \"19\": [%s]}", sample, sample);
    CHECK(detect(text, &err) == EXCHANGE_KERNELBENCH);
    snprintf(text, sizeof text, "{\"1\": %s, \"19\": %s}", sample, sample);
    CHECK(detect(text, &err) == EXCHANGE_KERNELBENCH_LEGACY);
    snprintf(text, sizeof text, "{\"1_0\": %s, \"19_0\": %s}", sample, sample);
    CHECK(detect(text, &err) == EXCHANGE_KBV_PAPER);
    snprintf(text, sizeof text, "{\"1\": [%s], \"2_0\": %s}", sample, sample);
    CHECK(detect(text, &err) == -1 && strstr(err.msg, "mixes formats"));
    snprintf(text, sizeof text, "{\"1\": %s, \"2_0\": %s}", sample, sample); /* legacy and paper */
    CHECK(detect(text, &err) == -1 && strstr(err.msg, "mixes formats"));
    CHECK(detect("[]", &err) == -1 && strstr(err.msg, "a list"));
    CHECK(detect("{}", &err) == -1 && strstr(err.msg, "no results"));
    CHECK(detect("{\"abc\": []}", &err) == -1 && strstr(err.msg, "\"abc\""));
    CHECK(detect("{\"1\": 3}", &err) == -1 && strstr(err.msg, "a number"));
    CHECK(detect("{\"1_0\": []}", &err) == -1); /* a list under a paper key */

    /* An entry's verdict in kbv's names. */
    CHECK_STR(entry(sample, -1, &e, &err), "verified");
    CHECK(e.compiled && e.correct && e.runtime_ms == 1.5 && e.peak_bytes < 0 && e.sid == 0 && e.pid == 7);
    CHECK_STR(entry("{\"sample_id\": 2, \"compiled\": false, \"correctness\": true}", -1, &e, &err), "compile_error");
    CHECK(!e.correct); /* correct only when compiled */
    CHECK_STR(entry("{\"sample_id\": 2, \"compiled\": true, \"correctness\": false, \"metadata\": {\"runtime_error\": \"x\"}}", 2, &e, &err),
              "runtime_error");
    CHECK_STR(entry("{\"sample_id\": 2, \"compiled\": true, \"correctness\": false, \"metadata\": {\"eval_status\": \"timeout\"}}", 2, &e, &err),
              "timeout");
    CHECK_STR(
        entry("{\"sample_id\": 2, \"compiled\": true, \"correctness\": false, \"metadata\": {\"eval_status\": \"eval_exception\"}}", 2, &e, &err),
        "runtime_error");
    CHECK_STR(entry("{\"sample_id\": 2, \"compiled\": true, \"correctness\": false, \"metadata\": {\"correctness_issue\": \"Output mismatch\"}}", 2,
                    &e, &err),
              "incorrect");
    /* Not measured: -1.0, null, absent, 0; peak_memory read as bytes. */
    CHECK(entry("{\"sample_id\": 0, \"compiled\": true, \"correctness\": true, \"runtime\": -1.0, \"peak_memory\": 4096}", 0, &e, &err) &&
          e.runtime_ms < 0 && e.peak_bytes == 4096);
    CHECK(entry("{\"sample_id\": 0, \"compiled\": true, \"correctness\": true, \"runtime\": null}", 0, &e, &err) && e.runtime_ms < 0);
    CHECK(entry("{\"sample_id\": 0, \"compiled\": true, \"correctness\": true, \"runtime\": 0}", 0, &e, &err) && e.runtime_ms < 0);
    /* Bad fields: named in the message. */
    CHECK(!entry("{\"sample_id\": 0, \"compiled\": true, \"correctness\": \"yes\"}", -1, &e, &err) && strstr(err.msg, "\"correctness\""));
    CHECK(!entry("{\"sample_id\": 0, \"correctness\": true}", -1, &e, &err) && strstr(err.msg, "no \"compiled\""));
    CHECK(!entry("{\"compiled\": true, \"correctness\": true}", -1, &e, &err) && strstr(err.msg, "sample_id"));
    CHECK(!entry("{\"sample_id\": -1, \"compiled\": true, \"correctness\": true}", -1, &e, &err));
    CHECK(!entry("{\"sample_id\": 1.5, \"compiled\": true, \"correctness\": true}", -1, &e, &err));
    CHECK(!entry("{\"sample_id\": 3, \"compiled\": true, \"correctness\": true}", 2, &e, &err) && strstr(err.msg, "its key says sample 2"));
    CHECK(!entry("{\"sample_id\": 0, \"compiled\": true, \"correctness\": true, \"runtime\": \"1.0\"}", -1, &e, &err) &&
          strstr(err.msg, "\"runtime\""));
    CHECK(!entry("{\"sample_id\": 0, \"compiled\": true, \"correctness\": true, \"runtime\": 1e300}", -1, &e, &err) &&
          strstr(err.msg, "out of range"));
    CHECK(!entry("{\"sample_id\": 0, \"compiled\": true, \"correctness\": true, \"metadata\": []}", -1, &e, &err) && strstr(err.msg, "\"metadata\""));
    CHECK(!entry("{\"sample_id\": 0, \"compiled\": true, \"correctness\": true, \"memory_stats\": 1}", -1, &e, &err));
    CHECK(!entry("[1]", -1, &e, &err) && strstr(err.msg, "must be an object"));
    /* An entry larger than EXCHANGE_ENTRY_MAX. */
    json_t *big = parse(sample);
    char *pad = malloc(EXCHANGE_ENTRY_MAX + 1);
    memset(pad, 'x', EXCHANGE_ENTRY_MAX);
    pad[EXCHANGE_ENTRY_MAX] = '\0';
    json_object_set_new(json_object_get(big, "metadata"), "traceback", json_string(pad));
    free(pad);
    CHECK(exchange_entry_read(big, 1, -1, "big", &e, &err) < 0 && strstr(err.msg, "larger than"));
    json_decref(big);

    /* The samples of a file: sorted by problem then sample; a pair given twice is an error. */
    json_t *root = parse("{\"19\": [{\"sample_id\": 1, \"compiled\": true, \"correctness\": false},"
                         " {\"sample_id\": 0, \"compiled\": true, \"correctness\": true}],"
                         " \"2\": [{\"sample_id\": 0, \"compiled\": false, \"correctness\": false}]}");
    exchange_entry *all = NULL;
    int n = 0;
    CHECK(exchange_entries(root, EXCHANGE_KERNELBENCH, &all, &n, &err) == 0 && n == 3);
    CHECK(all && all[0].pid == 2 && all[1].pid == 19 && all[1].sid == 0 && all[2].sid == 1);
    CHECK(all && strcmp(all[0].status, "compile_error") == 0 && all[1].correct && !all[2].correct);
    free(all);
    json_decref(root);
    root = parse("{\"19\": [{\"sample_id\": 0, \"compiled\": true, \"correctness\": false},"
                 " {\"sample_id\": 0, \"compiled\": true, \"correctness\": true}]}");
    CHECK(exchange_entries(root, EXCHANGE_KERNELBENCH, &all, &n, &err) < 0 && all == NULL && strstr(err.msg, "given twice"));
    json_decref(root);
    root = parse("{\"19\": []}");
    CHECK(exchange_entries(root, EXCHANGE_KERNELBENCH, &all, &n, &err) < 0 && strstr(err.msg, "no samples"));
    json_decref(root);
    root = parse("{\"19\": [{\"sample_id\": 0, \"compiled\": true, \"correctness\": true}, 5]}");
    CHECK(exchange_entries(root, EXCHANGE_KERNELBENCH, &all, &n, &err) < 0 && strstr(err.msg, "entry \"19\", sample 1"));
    json_decref(root);
    root = parse("{\"4_1\": {\"sample_id\": 1, \"compiled\": true, \"correctness\": true, \"peak_memory\": 10}}");
    CHECK(exchange_entries(root, EXCHANGE_KBV_PAPER, &all, &n, &err) == 0 && n == 1 && all[0].pid == 4 && all[0].sid == 1 && all[0].peak_bytes == 10);
    free(all);
    json_decref(root);

    /* The baseline: by file name, else by the problem id of the names; null entries and null
     * means are no baseline; two names of one id are an error. */
    json_t *b = parse("{\"level1\": {\"19_ReLU.py\": {\"mean\": 0.5, \"peak_memory\": 1024}, \"23_Softmax.py\": null,"
                      " \"24_LogSoftmax.py\": {\"mean\": null}, \"30_A.py\": {\"mean\": 1}, \"30_B.py\": {\"mean\": 2},"
                      " \"40_Bad.py\": {\"mean\": \"fast\"}}, \"level2\": []}");
    double ms = 0, peak = 0;
    CHECK(exchange_baseline(b, 1, 19, NULL, &ms, &peak, &err) == 1 && ms == 0.5 && peak == 1024);
    CHECK(exchange_baseline(b, 1, 19, "19_ReLU.py", &ms, &peak, &err) == 1 && ms == 0.5);
    CHECK(exchange_baseline(b, 1, 23, NULL, &ms, &peak, &err) == 1 && ms == 0 && peak < 0);
    CHECK(exchange_baseline(b, 1, 24, NULL, &ms, &peak, &err) == 1 && ms == 0);
    CHECK(exchange_baseline(b, 1, 99, NULL, &ms, &peak, &err) == 0);
    CHECK(exchange_baseline(b, 1, 30, NULL, &ms, &peak, &err) < 0 && strstr(err.msg, "two entries"));
    CHECK(exchange_baseline(b, 1, 30, "30_B.py", &ms, &peak, &err) == 1 && ms == 2);
    CHECK(exchange_baseline(b, 1, 40, NULL, &ms, &peak, &err) < 0 && strstr(err.msg, "\"mean\""));
    CHECK(exchange_baseline(b, 2, 1, NULL, &ms, &peak, &err) < 0 && strstr(err.msg, "level2"));
    CHECK(exchange_baseline(b, 3, 1, NULL, &ms, &peak, &err) < 0 && strstr(err.msg, "missing"));
    json_decref(b);

    CHECK_STR(exchange_format_name(EXCHANGE_KERNELBENCH), "kernelbench");
    CHECK_STR(exchange_format_name(EXCHANGE_KERNELBENCH_LEGACY), "kernelbench_legacy");
    CHECK_STR(exchange_format_name(EXCHANGE_KBV_PAPER), "kbv_paper");
    CHECK_DONE("test_exchange");
}
