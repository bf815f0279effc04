/* test_proto.c -- proto.c: framing, split reads, over-long lines, and garbage. */
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "proto.h"

int main(void) {
    proto_reader r;
    proto_reader_init(&r);
    char *line;
    size_t len;
    /* A message split across reads comes out whole, and two in one read come out apart. */
    proto_reader_feed(&r, "{\"ok\":tr", 8);
    CHECK(proto_reader_next(&r, &line, &len) == 0);
    proto_reader_feed(&r, "ue}\n{\"op\":\"quit\"}\n", 18);
    CHECK(proto_reader_next(&r, &line, &len) == 1);
    CHECK_STR(line, "{\"ok\":true}");
    kbv_err err = {{0}};
    json_t *m;
    CHECK(proto_parse(line, len, &m, &err) == 0 && json_is_true(json_object_get(m, "ok")));
    json_decref(m), free(line);
    CHECK(proto_reader_next(&r, &line, &len) == 1);
    CHECK(proto_parse(line, len, &m, &err) == 0);
    const char *op;
    CHECK(proto_get_str(m, "op", &op, &err) == 0);
    CHECK_STR(op, "quit");
    long long v;
    CHECK(proto_get_int(m, "seed", &v, &err) == -1);
    CHECK(strstr(err.msg, "seed") != NULL);
    json_decref(m), free(line);
    CHECK(proto_reader_next(&r, &line, &len) == 0);
    proto_reader_free(&r);

    /* Lines taken while more arrives: the reader drops handed-out lines lazily and searches
     * a partial line only in its new bytes; the lines still come out whole and in order. */
    proto_reader_init(&r);
    proto_reader_feed(&r, "a\nbb\nc", 6);
    CHECK(proto_reader_next(&r, &line, &len) == 1 && len == 1);
    free(line);
    proto_reader_feed(&r, "cc\nd", 4);
    CHECK(proto_reader_next(&r, &line, &len) == 1);
    CHECK_STR(line, "bb");
    free(line);
    CHECK(proto_reader_next(&r, &line, &len) == 1);
    CHECK_STR(line, "ccc");
    free(line);
    CHECK(proto_reader_next(&r, &line, &len) == 0);
    proto_reader_feed(&r, "\n", 1);
    CHECK(proto_reader_next(&r, &line, &len) == 1);
    CHECK_STR(line, "d");
    free(line);
    CHECK(r.start == 0 && r.len == 0);
    kbv_buf stream;
    kbv_buf_init(&stream);
    for (int i = 0; i < 20000; i++) kbv_buf_printf(&stream, "%d%.*s\n", i, i % 37, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
    int next = 0, wrong = 0;
    for (size_t off = 0; off < stream.len; off += 7) {
        proto_reader_feed(&r, stream.data + off, stream.len - off < 7 ? stream.len - off : 7);
        while (proto_reader_next(&r, &line, &len) == 1) {
            char want[64];
            snprintf(want, sizeof want, "%d%.*s", next, next % 37, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
            wrong += strcmp(line, want) != 0 || len != strlen(want);
            next++, free(line);
        }
    }
    CHECK(next == 20000 && wrong == 0);
    kbv_buf_free(&stream);
    proto_reader_free(&r);

    /* Garbage of every kind is a protocol error with a reason, never a crash. */
    const char *bad[] = {"",        "garbage", "[1,2]", "{\"ok\":1}", "{\"op\":5}", "{\"ok\":false}", "{\"ok\":true,\"ok\":false}", "{\"ok\":true",
                         "\xff\xfe"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK(proto_parse(bad[i], strlen(bad[i]), &m, &err) == -1);
        CHECK(m == NULL && err.msg[0]);
    }
    CHECK(proto_parse("{\"ok\":false,\"kind\":\"load\",\"message\":\"m\"}", 40, &m, &err) == 0);
    json_decref(m);

    /* An over-long line without a newline is refused once it passes the limit. */
    proto_reader_init(&r);
    char *big = malloc(PROTO_MAX_LINE / 4);
    memset(big, 'x', PROTO_MAX_LINE / 4);
    for (int i = 0; i < 5; i++) proto_reader_feed(&r, big, PROTO_MAX_LINE / 4);
    CHECK(proto_reader_next(&r, &line, &len) == -1);
    CHECK(r.overflow == 1 && r.len == 0); /* and it stopped buffering */
    proto_reader_free(&r);
    free(big);

    /* proto_send writes exactly one line. */
    int fds[2];
    CHECK(pipe(fds) == 0);
    json_t *msg = json_pack("{s:s, s:I}", "op", "build", "seed", (json_int_t)42);
    CHECK(proto_send(fds[1], msg, &err) == 0);
    json_decref(msg);
    char buf[128] = {0};
    ssize_t n = read(fds[0], buf, sizeof buf - 1);
    CHECK(n > 0 && buf[n - 1] == '\n' && strchr(buf, '\n') == buf + n - 1);
    close(fds[0]), close(fds[1]);
    CHECK_DONE("test_proto");
}
