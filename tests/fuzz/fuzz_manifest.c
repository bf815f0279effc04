/* fuzz_manifest.c -- libFuzzer target for the manifest parser (manifest_parse in run.c).
 *
 * The first input byte picks the manifest's name, and so its format: JSON Lines (.jsonl,
 * .json, .ndjson), CSV (.csv, or no known extension: sniffed), TSV (.tsv). With its high bit
 * clear the rest is the file's text. With it set the rest describes entries (fields, their
 * bytes, sample and level as any 64-bit integer) that are written out as a well-formed
 * manifest of that format first -- the JSON library is not instrumented, so raw bytes
 * rarely reach its valid inputs -- and a manifest that parses must give those entries back
 * exactly.
 *
 * Besides the sanitizers, every result is checked against run.h's contract: on success at
 * least one entry, each with a non-empty problem and candidate under the manifest's folder,
 * a model, sample and level of -1 or more, and increasing line numbers within the text; on
 * failure no entries and a message naming the manifest.
 * Build and run: `make fuzz`, `make fuzz-run` (docs/RELIABILITY.md).
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

#define FAIL(...) (fprintf(stderr, "fuzz_manifest: " __VA_ARGS__), fputc('\n', stderr), abort())

/* One entry as generated: strings of printable ASCII and tabs (no line breaks or NULs). */
typedef struct entry {
    char problem[80], candidate[80], model[300];
    int has_model, has_sample, has_level;
    long long sample, level;
} entry;

#define MAX_ENTRIES 16

typedef struct cursor {
    const uint8_t *p;
    size_t n;
} cursor;

static uint8_t take(cursor *c) {
    if (!c->n) return 0;
    c->n--;
    return *c->p++;
}

static void take_str(cursor *c, char *out, size_t cap, size_t most, int first) {
    size_t len = take(c) % (most + 1);
    if (len >= cap) len = cap - 1;
    for (size_t i = 0; i < len; i++) {
        uint8_t b = take(c) % 96;
        out[i] = b == 95 ? '\t' : (char)(' ' + b);
    }
    out[len] = '\0';
    /* A line starting with blanks or '#' reads as indentation or a comment. */
    if (first && (out[0] == ' ' || out[0] == '\t' || out[0] == '#')) out[0] = '_';
}

static long long take_int(cursor *c, int wide) {
    if (!wide) return (int8_t)take(c);
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | take(c);
    return (long long)v;
}

/* A CSV/TSV field, quoted where it holds the separator or a quote (as Python's csv does). */
static void put_field(kbv_buf *b, const char *f, char sep) {
    if (!strchr(f, sep) && !strchr(f, '"')) {
        kbv_buf_append(b, f, strlen(f));
        return;
    }
    kbv_buf_append(b, "\"", 1);
    for (; *f; f++) kbv_buf_append(b, *f == '"' ? "\"\"" : f, 1 + (*f == '"'));
    kbv_buf_append(b, "\"", 1);
}

/* Entries from the input, written as a manifest of the given kind; returns how many. */
static int generate(cursor *c, int json, char sep, entry *e, kbv_buf *out) {
    int n = 0;
    if (!json) kbv_buf_printf(out, "problem%ccandidate%cmodel%csample%clevel\n", sep, sep, sep, sep);
    while (c->n && n < MAX_ENTRIES) {
        entry *x = &e[n++];
        uint8_t flags = take(c);
        x->has_model = flags & 1, x->has_sample = flags & 2, x->has_level = flags & 4;
        take_str(c, x->problem, sizeof x->problem, 63, 1);
        take_str(c, x->candidate, sizeof x->candidate, 63, 0);
        if ((flags & 8) && x->problem[0]) x->problem[0] = '/';
        x->model[0] = '\0';
        if (x->has_model) take_str(c, x->model, sizeof x->model, flags & 16 ? 255 : 31, 0);
        x->sample = x->has_sample ? take_int(c, flags & 32) : -1;
        x->level = x->has_level ? take_int(c, flags & 64) : -1;
        if (json) {
            json_t *o = json_pack("{s:s, s:s}", "problem", x->problem, "candidate", x->candidate);
            if (x->has_model) json_object_set_new(o, "model", json_string(x->model));
            if (x->has_sample) json_object_set_new(o, "sample", json_integer(x->sample));
            if (x->has_level) json_object_set_new(o, "level", json_integer(x->level));
            char *line = json_dumps(o, JSON_COMPACT);
            kbv_buf_printf(out, "%s\n", line);
            free(line), json_decref(o);
        } else {
            char num[32];
            kbv_buf row;
            kbv_buf_init(&row);
            put_field(&row, x->problem, sep), kbv_buf_append(&row, &sep, 1);
            put_field(&row, x->candidate, sep), kbv_buf_append(&row, &sep, 1);
            put_field(&row, x->model, sep), kbv_buf_append(&row, &sep, 1);
            snprintf(num, sizeof num, "%lld", x->sample);
            if (x->has_sample) kbv_buf_append(&row, num, strlen(num));
            kbv_buf_append(&row, &sep, 1);
            snprintf(num, sizeof num, "%lld", x->level);
            if (x->has_level) kbv_buf_append(&row, num, strlen(num));
            /* A row of blanks, or whose first other character is '#', is a blank line or a
             * comment (as in the other formats): not an entry. */
            const char *t = row.data;
            while (*t == ' ' || *t == '\t') t++;
            if (!*t || *t == '#') n--;
            else kbv_buf_printf(out, "%s\n", row.data);
            kbv_buf_free(&row);
        }
    }
    return n;
}

/* A generated entry given back: the same fields, resolved against the folder "m". */
static void compare(const entry *x, const run_item *it, int i) {
    char want[200];
    snprintf(want, sizeof want, x->problem[0] == '/' ? "%s" : "m/%s", x->problem);
    if (strcmp(it->problem, want) != 0) FAIL("entry %d: problem '%s', written '%s'", i, it->problem, x->problem);
    snprintf(want, sizeof want, x->candidate[0] == '/' ? "%s" : "m/%s", x->candidate);
    if (strcmp(it->candidate, want) != 0) FAIL("entry %d: candidate '%s', written '%s'", i, it->candidate, x->candidate);
    const char *model = x->model[0] ? x->model : "default";
    if (strcmp(it->model, model) != 0) FAIL("entry %d: model '%s', written '%s'", i, it->model, model);
    if (it->sample != x->sample || it->level != x->level)
        FAIL("entry %d: sample %d and level %d, written %lld and %lld", i, it->sample, it->level, x->sample, x->level);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *names[] = {"m/runs.jsonl", "m/runs.csv", "m/runs.tsv", "m/runs.json", "m/runs.ndjson", "m/runs.txt", "m/runs"};
    if (size < 1) return 0;
    int pick = data[0] & 0x7f;
    const char *name = names[pick % (sizeof names / sizeof *names)];
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    entry gen[MAX_ENTRIES];
    int ngen = -1;
    kbv_buf doc;
    kbv_buf_init(&doc);
    if (data[0] & 0x80) {
        const char *ext = strrchr(name, '.');
        int json = ext && strstr(".jsonl.json.ndjson", ext) != NULL;
        cursor c = {data + 1, size - 1};
        ngen = generate(&c, json, ext && strcmp(ext, ".tsv") == 0 ? '\t' : ',', gen, &doc);
        text = doc.data ? doc.data : "", len = doc.len;
    }
    int lines = 1;
    for (size_t i = 0; i < len; i++) lines += text[i] == '\n';

    run_item *items = (run_item *)1; /* must be overwritten */
    int n = -1;
    kbv_err err = {{0}};
    int rc = manifest_parse(text, len, name, "m", &items, &n, &err);
    if (rc < 0) {
        if (items || n != 0) FAIL("failure left %d entries", n);
        if (strncmp(err.msg, name, strlen(name)) != 0) FAIL("message does not name the manifest: %s", err.msg);
        kbv_buf_free(&doc);
        return 0;
    }
    if (rc != 0 || !items || n < 1) FAIL("success with rc %d and %d entries", rc, n);
    if (ngen >= 0 && n != ngen) FAIL("%d entries written, %d read", ngen, n);
    int last = 0;
    for (int i = 0; i < n; i++) {
        const run_item *it = &items[i];
        if (!memchr(it->problem, '\0', sizeof it->problem) || !memchr(it->candidate, '\0', sizeof it->candidate) ||
            !memchr(it->model, '\0', sizeof it->model))
            FAIL("entry %d: unterminated string", i);
        if (!it->problem[0] || !it->candidate[0] || !it->model[0]) FAIL("entry %d: empty problem, candidate or model", i);
        if ((it->problem[0] != '/' && strncmp(it->problem, "m/", 2) != 0) || (it->candidate[0] != '/' && strncmp(it->candidate, "m/", 2) != 0))
            FAIL("entry %d: path not resolved against the manifest's folder", i);
        if (it->sample < -1 || it->level < -1) FAIL("entry %d: sample %d, level %d", i, it->sample, it->level);
        if (it->line <= last || it->line > lines) FAIL("entry %d: line %d after %d (of %d)", i, it->line, last, lines);
        last = it->line;
        if (ngen >= 0) compare(&gen[i], it, i);
    }
    free(items);
    kbv_buf_free(&doc);
    return 0;
}
