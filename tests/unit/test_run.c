/* test_run.c -- run.c: the manifest parser (JSON Lines, CSV, TSV), manifest_load against
 * manifest_parse, and the inputs the fuzzer (tests/fuzz/fuzz_manifest.c) turned up. */
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "run.h"

/* Parse text as the manifest `name` in folder "m"; returns the entry count or -1. */
static int parse(const char *name, const char *text, size_t len, run_item **items, kbv_err *err) {
    int n = -1;
    err->msg[0] = '\0';
    int rc = manifest_parse(text, len, name, "m", items, &n, err);
    if (rc < 0) CHECK(*items == NULL && n == 0 && err->msg[0]);
    return rc < 0 ? -1 : n;
}
#define PARSE(name, lit, items, err) parse((name), (lit), sizeof(lit) - 1, (items), (err))

int main(void) {
    kbv_err err;
    run_item *it;

    /* JSON Lines: paths under the manifest's folder (absolute ones kept), defaults. */
    CHECK(PARSE("r.jsonl",
                "# comment\n\n{\"problem\": \"p.py\", \"candidate\": \"/abs/c.py\", \"model\": \"gpt\", \"sample\": 3, "
                "\"level\": 1}\r\n  {\"problem\": \"q.py\", \"candidate\": \"d.py\"}",
                &it, &err) == 2);
    CHECK_STR(it[0].problem, "m/p.py");
    CHECK_STR(it[0].candidate, "/abs/c.py");
    CHECK_STR(it[0].model, "gpt");
    CHECK(it[0].sample == 3 && it[0].level == 1 && it[0].line == 3);
    CHECK_STR(it[1].model, "default");
    CHECK(it[1].sample == -1 && it[1].level == -1 && it[1].line == 4);
    free(it);

    /* CSV: columns in any order, quotes with "" escapes, empty optional fields. */
    CHECK(PARSE("r.csv", "level,candidate,problem,sample\n2,\"a,\"\"b\"\".py\",p.py,\n", &it, &err) == 1);
    CHECK_STR(it[0].candidate, "m/a,\"b\".py");
    CHECK(it[0].level == 2 && it[0].sample == -1);
    free(it);
    /* TSV, by extension and sniffed from a tab in a .csv header; JSON sniffed in a .csv. */
    CHECK(PARSE("r.tsv", "problem\tcandidate\tmodel\np, 1.py\tc.py\tclaude\n", &it, &err) == 1);
    CHECK_STR(it[0].problem, "m/p, 1.py");
    free(it);
    CHECK(PARSE("r.csv", "candidate\tproblem\nc.py\tp.py\n", &it, &err) == 1);
    CHECK_STR(it[0].problem, "m/p.py");
    free(it);
    CHECK(PARSE("r.csv", "{\"problem\": \"p.py\", \"candidate\": \"c.py\"}\n", &it, &err) == 1);
    free(it);

    /* Malformed manifests: file and line, and nothing returned. */
    CHECK(PARSE("r.jsonl", "{\"problem\": \"p.py\", \"candidate\": \"c.py\"}\n[1]\n", &it, &err) == -1);
    CHECK(strstr(err.msg, "r.jsonl:2: not a JSON object") != NULL);
    CHECK(PARSE("r.csv", "p.py,c.py\n", &it, &err) == -1);
    CHECK(strstr(err.msg, "r.csv:1: a CSV/TSV manifest starts with a header") != NULL);
    CHECK(PARSE("r.csv", "problem,candidate,sample\np.py,c.py,-1\n", &it, &err) == -1);
    CHECK(strstr(err.msg, "r.csv:2: 'sample' and 'level'") != NULL);
    CHECK(PARSE("r.jsonl", "# nothing\n", &it, &err) == -1);
    CHECK(strstr(err.msg, "no evaluations") != NULL);
    CHECK(PARSE("r.jsonl", "", &it, &err) == -1);

    /* Found by fuzz_manifest: a JSON sample or level below 0 was taken as is (-1 means "not
     * given"), and one beyond int wrapped (2^32 became sample 0). Now both are refused, as
     * in CSV. */
    const char *bad_ints[] = {"{\"problem\":\"p\",\"candidate\":\"c\",\"sample\":-5}", "{\"problem\":\"p\",\"candidate\":\"c\",\"sample\":-1}",
                              "{\"problem\":\"p\",\"candidate\":\"c\",\"level\":4294967296}",
                              "{\"problem\":\"p\",\"candidate\":\"c\",\"sample\":1000000001}"};
    for (size_t i = 0; i < sizeof bad_ints / sizeof *bad_ints; i++) {
        CHECK(parse("r.jsonl", bad_ints[i], strlen(bad_ints[i]), &it, &err) == -1);
        CHECK(strstr(err.msg, "r.jsonl:1: 'sample' and 'level' must be integers from 0 to 1000000000") != NULL);
    }
    CHECK(PARSE("r.jsonl", "{\"problem\":\"p\",\"candidate\":\"c\",\"sample\":1000000000,\"level\":0}", &it, &err) == 1);
    CHECK(it[0].sample == 1000000000 && it[0].level == 0);
    free(it);

    /* A NUL byte used to end the manifest silently (later entries were dropped). */
    CHECK(PARSE("r.jsonl", "{\"problem\":\"p\",\"candidate\":\"c\"}\n#\0\n{\"problem\":\"q\",\"candidate\":\"d\"}\n", &it, &err) == -1);
    CHECK(strstr(err.msg, "r.jsonl:2: a NUL byte") != NULL);

    /* A model name longer than run_item.model used to be cut short (two models could merge). */
    char line[512], model[200];
    memset(model, 'm', sizeof model);
    model[sizeof it->model - 1] = '\0';
    snprintf(line, sizeof line, "{\"problem\":\"p\",\"candidate\":\"c\",\"model\":\"%s\"}", model);
    CHECK(parse("r.jsonl", line, strlen(line), &it, &err) == 1);
    CHECK(strlen(it[0].model) == sizeof it->model - 1);
    free(it);
    model[sizeof it->model - 1] = 'm', model[sizeof it->model] = '\0';
    snprintf(line, sizeof line, "problem,candidate,model\np,c,%s\n", model);
    CHECK(parse("r.csv", line, strlen(line), &it, &err) == -1);
    CHECK(strstr(err.msg, "r.csv:2: 'model' is longer than 127 bytes") != NULL);

    /* Found by fuzz_manifest: in TSV a leading tab was skipped as indentation, so a row with
     * an empty first column was read one column to the left (here: model "p.py", problem
     * "c.py", candidate "1"). A tab is a separator; spaces are still indentation, and a line
     * of blanks is still blank. */
    CHECK(PARSE("r.tsv", "model\tproblem\tcandidate\tlevel\n\tp.py\tc.py\t1\n  gpt\tq.py\td.py\t\n\t\t\t\n", &it, &err) == 2);
    CHECK_STR(it[0].model, "default");
    CHECK_STR(it[0].problem, "m/p.py");
    CHECK_STR(it[0].candidate, "m/c.py");
    CHECK(it[0].level == 1);
    CHECK_STR(it[1].model, "gpt");
    CHECK(it[1].level == -1);
    free(it);
    CHECK(PARSE("r.csv", "model\tproblem\tcandidate\n\tp.py\tc.py\n", &it, &err) == 1); /* sniffed TSV too */
    CHECK_STR(it[0].problem, "m/p.py");
    free(it);
    CHECK(PARSE("r.tsv", "problem\tcandidate\n\tc.py\n", &it, &err) == -1);
    CHECK(strstr(err.msg, "r.tsv:2: needs 'problem' and 'candidate'") != NULL);

    /* manifest_load: the same parser, relative paths from the file's folder. */
    char dir[4096], path[4200];
    CHECK(kbv_mkscratch(NULL, dir, sizeof dir, &err) == 0);
    snprintf(path, sizeof path, "%s/runs.csv", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) fputs("problem,candidate\np.py,c.py\n", f), fclose(f);
    int n = 0;
    CHECK(manifest_load(path, &it, &n, &err) == 0 && n == 1);
    if (n == 1) {
        char want[4200];
        snprintf(want, sizeof want, "%s/p.py", dir);
        CHECK_STR(it[0].problem, want);
    }
    free(it);
    snprintf(path, sizeof path, "%s/none.jsonl", dir);
    CHECK(manifest_load(path, &it, &n, &err) == -1 && it == NULL && n == 0);
    CHECK(strstr(err.msg, "manifest") != NULL);
    kbv_rmtree(dir);

    /* kbv slurm's snapshot: written as JSON Lines and read back (from another folder), the
     * same entries: paths, quotes, commas and defaults; sample and level only where given. */
    static const char csv[] = "problem,candidate,model,sample,level\n"
                              "/abs/p.py,\"a,\"\"b\"\".py\",,,\n"
                              "q.py,/abs/c d.py,gpt,4,2\n"
                              "r.py,e.py,\"m\\x\",0,\n";
    run_item *back = NULL;
    int na = -1; /* kbv slurm's manifest folder is absolute, so are the paths it resolves */
    CHECK(manifest_parse(csv, sizeof csv - 1, "r.csv", "/base", &it, &na, &err) == 0 && na == 3);
    CHECK_STR(it[1].problem, "/base/q.py");
    kbv_buf b;
    kbv_buf_init(&b);
    CHECK(manifest_write_jsonl(it, 3, &b, &err) == 0);
    int nb = -1;
    CHECK(b.data && manifest_parse(b.data, b.len, "snap/manifest.jsonl", "/elsewhere", &back, &nb, &err) == 0 && nb == 3);
    for (int i = 0; back && i < 3 && nb == 3; i++) {
        CHECK_STR(back[i].problem, it[i].problem);
        CHECK_STR(back[i].candidate, it[i].candidate);
        CHECK_STR(back[i].model, it[i].model);
        CHECK(back[i].sample == it[i].sample && back[i].level == it[i].level);
    }
    CHECK(it[0].sample == -1 && it[0].level == -1 && it[2].sample == 0 && it[2].level == -1);
    CHECK(b.data && strstr(b.data, "\"sample\":-1") == NULL && strstr(b.data, "\"line\"") == NULL);
    free(back), free(it), kbv_buf_free(&b);
    /* an entry JSON cannot hold (not UTF-8): named, nothing written as if it were fine */
    static const char latin1[] = "problem,candidate\np.py,caf\xe9.py\n";
    CHECK(PARSE("r.csv", latin1, &it, &err) == 1);
    kbv_buf_init(&b);
    CHECK(manifest_write_jsonl(it, 1, &b, &err) == -1 && strstr(err.msg, "line 2") && strstr(err.msg, "UTF-8"));
    free(it), kbv_buf_free(&b);
    CHECK_DONE("test_run");
}
