/* fuzz_manifest.c -- libFuzzer target for the manifest parser (manifest_parse in run.c).
 *
 * The first input byte picks the manifest's name, and so its format: JSON Lines (.jsonl,
 * .json, .ndjson), CSV (.csv, or no known extension: sniffed), TSV (.tsv); the rest is the
 * file's text. Besides the sanitizers, the result is checked against run.h's contract: on
 * success at least one entry, each with a non-empty problem and candidate under the
 * manifest's folder, a model, sample and level of -1 or more, and increasing line numbers
 * within the text; on failure no entries and a message naming the manifest.
 * Build and run: `make fuzz`, `make fuzz-run` (docs/RELIABILITY.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

#define FAIL(...) (fprintf(stderr, "fuzz_manifest: " __VA_ARGS__), fputc('\n', stderr), abort())

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *names[] = {"m/runs.jsonl", "m/runs.csv", "m/runs.tsv", "m/runs.json", "m/runs.ndjson", "m/runs.txt", "m/runs"};
    if (size < 1) return 0;
    const char *name = names[data[0] % (sizeof names / sizeof *names)];
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    int lines = 1;
    for (size_t i = 0; i < len; i++) lines += text[i] == '\n';

    run_item *items = (run_item *)1; /* must be overwritten */
    int n = -1;
    kbv_err err = {{0}};
    int rc = manifest_parse(text, len, name, "m", &items, &n, &err);
    if (rc < 0) {
        if (items || n != 0) FAIL("failure left %d entries", n);
        if (strncmp(err.msg, name, strlen(name)) != 0) FAIL("message does not name the manifest: %s", err.msg);
        return 0;
    }
    if (rc != 0 || !items || n < 1) FAIL("success with rc %d and %d entries", rc, n);
    int last = 0;
    for (int i = 0; i < n; i++) {
        const run_item *it = &items[i];
        if (!memchr(it->problem, '\0', sizeof it->problem) || !memchr(it->candidate, '\0', sizeof it->candidate) ||
            !memchr(it->model, '\0', sizeof it->model))
            FAIL("entry %d: unterminated string", i);
        if (!it->problem[0] || !it->candidate[0] || !it->model[0]) FAIL("entry %d: empty problem, candidate or model", i);
        if ((it->problem[0] != '/' && strncmp(it->problem, "m/", 2) != 0) ||
            (it->candidate[0] != '/' && strncmp(it->candidate, "m/", 2) != 0))
            FAIL("entry %d: path not resolved against the manifest's folder", i);
        if (it->sample < -1 || it->level < -1) FAIL("entry %d: sample %d, level %d", i, it->sample, it->level);
        if (it->line <= last || it->line > lines) FAIL("entry %d: line %d after %d (of %d)", i, it->line, last, lines);
        last = it->line;
    }
    free(items);
    return 0;
}
