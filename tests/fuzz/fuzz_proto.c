/* fuzz_proto.c -- libFuzzer target for the control-message reader and parser (proto.c).
 *
 * The input is a stream the worker could have written on its reply fd. Its first bytes pick
 * how the stream is cut into reads and whether it is repeated (to cross PROTO_MAX_LINE, which
 * a 4 KiB input cannot reach alone); the rest is the stream. Every complete line goes through
 * proto_parse and the field getters. Besides the sanitizers, the reader is checked against
 * the stream itself: the lines it hands out, each followed by '\n', must be exactly the
 * stream's bytes in order, and it may refuse only a line longer than PROTO_MAX_LINE.
 * Build and run: `make fuzz`, `make fuzz-run` (docs/RELIABILITY.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

#define FAIL(...) (fprintf(stderr, "fuzz_proto: " __VA_ARGS__), fputc('\n', stderr), abort())

/* The stream: body repeated reps times, read through a virtual offset. */
typedef struct stream {
    const uint8_t *body;
    size_t n, reps, total;
} stream;

static uint8_t stream_at(const stream *s, size_t i) { return s->body[i % s->n]; }

/* Copy n stream bytes from offset i into dst. */
static void stream_copy(const stream *s, size_t i, char *dst, size_t n) {
    while (n) {
        size_t o = i % s->n, k = s->n - o < n ? s->n - o : n;
        memcpy(dst, s->body + o, k);
        dst += k, i += k, n -= k;
    }
}

/* Whether n stream bytes from offset i equal p. */
static int stream_equal(const stream *s, size_t i, const char *p, size_t n) {
    while (n) {
        size_t o = i % s->n, k = s->n - o < n ? s->n - o : n;
        if (memcmp(p, s->body + o, k) != 0) return 0;
        p += k, i += k, n -= k;
    }
    return 1;
}

/* Offset of the first '\n' in stream bytes [i, end), or end. */
static size_t stream_newline(const stream *s, size_t i, size_t end) {
    while (i < end) {
        size_t o = i % s->n, k = s->n - o < end - i ? s->n - o : end - i;
        const uint8_t *nl = memchr(s->body + o, '\n', k);
        if (nl) return i + (size_t)(nl - (s->body + o));
        i += k;
    }
    return end;
}

static void exercise(const char *line, size_t len) {
    json_t *m = NULL;
    kbv_err err = {{0}};
    if (proto_parse(line, len, &m, &err) < 0) {
        if (m || !err.msg[0]) FAIL("proto_parse failed without a message or left *out set");
        return;
    }
    if (!json_is_object(m)) FAIL("proto_parse accepted a non-object");
    static const char *keys[] = {"op", "ok", "kind", "message", "seed", "n", "traceback", ""};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const char *s = NULL;
        long long v = 0;
        kbv_err e2 = {{0}};
        if (proto_get_str(m, keys[i], &s, &e2) == 0) {
            if (!s) FAIL("proto_get_str returned 0 and NULL");
            (void)strlen(s);
        } else if (!e2.msg[0]) FAIL("proto_get_str failed without a message");
        e2.msg[0] = '\0';
        if (proto_get_int(m, keys[i], &v, &e2) < 0 && !e2.msg[0]) FAIL("proto_get_int failed without a message");
    }
    /* Every key the message has, too. */
    const char *k;
    json_t *v;
    json_object_foreach(m, k, v) {
        const char *s;
        long long x;
        (void)v;
        proto_get_str(m, k, &s, &err);
        proto_get_int(m, k, &x, &err);
    }
    json_decref(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    /* data[0]: low 4 bits = how many chunk-size bytes follow (0: the whole stream in one
     * read); data[1]: >= 0xf0 repeats the body (0xf0 -> 64 times ... 0xff -> 1024 times). */
    size_t nsizes = data[0] & 15, rep = data[1];
    if (size < 2 + nsizes) return 0;
    const uint8_t *sizes = data + 2;
    stream s = {.body = data + 2 + nsizes, .n = size - 2 - nsizes, .reps = 1};
    if (s.n == 0) return 0;
    if (rep >= 0xf0) s.reps = (rep - 0xef) * 64;
    /* Just past the limit (at most PROTO_MAX_LINE + 64 KiB + n bytes): enough to overflow. */
    size_t most = (PROTO_MAX_LINE + 65536) / s.n + 1;
    if (s.reps > most) s.reps = most;
    s.total = s.n * s.reps;

    proto_reader r;
    proto_reader_init(&r);
    size_t cap = 4096 > s.n ? 4096 : s.n; /* the largest read */
    char *chunk = malloc(cap);
    if (!chunk) return 0;
    size_t fed = 0, taken = 0; /* stream bytes fed; stream bytes handed out as lines + '\n' */
    int refused = 0, lines = 0;
    for (size_t k = 0; fed < s.total; k++) {
        /* Chunk sizes 1..255 (scaled up for long repeated streams), cycled; a size of 0 is
         * an empty read, then one byte. */
        size_t want = nsizes ? sizes[k % nsizes] : s.total;
        if (want == 0) {
            if (proto_reader_feed(&r, chunk, 0) < 0) FAIL("proto_reader_feed: out of memory");
            want = 1;
        }
        if (s.reps > 1) want *= 64;
        if (want > s.total - fed) want = s.total - fed;
        if (want > cap) want = cap;
        stream_copy(&s, fed, chunk, want);
        if (proto_reader_feed(&r, chunk, want) < 0) FAIL("proto_reader_feed: out of memory");
        fed += want;
        for (;;) {
            char *line = NULL;
            size_t len = 0;
            int got = proto_reader_next(&r, &line, &len);
            if (got == 0) break;
            if (got < 0) {
                /* Only a line of more than PROTO_MAX_LINE bytes may be refused. */
                size_t end = fed < taken + PROTO_MAX_LINE + 1 ? fed : taken + PROTO_MAX_LINE + 1;
                size_t nl = stream_newline(&s, taken, end);
                if (nl < end) FAIL("refused a line of %zu bytes", nl - taken);
                if (fed - taken <= PROTO_MAX_LINE) FAIL("refused a partial line of %zu bytes", fed - taken);
                if (proto_reader_next(&r, &line, &len) != -1) FAIL("a refused stream recovered");
                refused = 1;
                break;
            }
            if (len > PROTO_MAX_LINE) FAIL("handed out a line of %zu bytes", len);
            if (taken + len + 1 > fed) FAIL("handed out more than was fed");
            if (!stream_equal(&s, taken, line, len)) FAIL("a line differs from the stream");
            if (stream_at(&s, taken + len) != '\n' || line[len] != '\0') FAIL("line not cut at a newline");
            taken += len + 1;
            if (++lines <= 1024) exercise(line, len); /* a repeated body repeats its lines */
            free(line);
        }
        if (refused) break;
    }
    if (!refused) {
        /* What is left buffered is the unterminated tail, and it holds no newline. */
        size_t held = r.len - r.start;
        if (held != s.total - taken) FAIL("reader holds %zu bytes, expected %zu", held, s.total - taken);
        if (held && memchr(r.buf + r.start, '\n', held)) FAIL("a complete line was left in the reader");
    }
    free(chunk);
    proto_reader_free(&r);
    return 0;
}
