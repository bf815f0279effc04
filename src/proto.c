/* proto.c -- framing and validation of kbv <-> kbv-worker control messages.
 *
 * The worker runs untrusted code that can write anything to the reply fd, so the reader
 * must survive garbage: bounded lines, strict JSON, an object with a known shape.
 */
#include "proto.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void proto_reader_init(proto_reader *r) { memset(r, 0, sizeof *r); }

void proto_reader_free(proto_reader *r) {
    free(r->buf);
    memset(r, 0, sizeof *r);
}

int proto_reader_feed(proto_reader *r, const char *data, size_t n) {
    if (r->overflow) return 0; /* the stream is already judged broken; drop input */
    /* Drop the lines handed out once they are at least as long as what is left, so each
     * byte is moved at most once on average. */
    if (r->start && r->start >= r->len - r->start) {
        memmove(r->buf, r->buf + r->start, r->len - r->start);
        r->len -= r->start, r->start = 0;
    }
    if (r->len + n + 1 > r->cap) {
        size_t cap = r->cap ? r->cap : 4096;
        while (cap < r->len + n + 1) cap *= 2;
        char *p = realloc(r->buf, cap);
        if (!p) return -1;
        r->buf = p, r->cap = cap;
    }
    if (n) memcpy(r->buf + r->len, data, n);
    r->len += n;
    /* A partial line that is already too long can never become a valid message. */
    if (r->len - r->start > PROTO_MAX_LINE && !memchr(r->buf + r->start + r->scanned, '\n', PROTO_MAX_LINE + 1 - r->scanned)) {
        r->overflow = 1;
        free(r->buf);
        r->buf = NULL, r->start = r->len = r->cap = r->scanned = 0;
    }
    return 0;
}

int proto_reader_next(proto_reader *r, char **line, size_t *len) {
    if (r->overflow) return -1;
    size_t pending = r->len - r->start;
    char *head = pending ? r->buf + r->start : NULL;
    char *nl = pending > r->scanned ? memchr(head + r->scanned, '\n', pending - r->scanned) : NULL;
    if (!nl) {
        r->scanned = pending;
        if (pending > PROTO_MAX_LINE) {
            r->overflow = 1;
            return -1;
        }
        return 0;
    }
    size_t n = (size_t)(nl - head);
    if (n > PROTO_MAX_LINE) {
        r->overflow = 1;
        return -1;
    }
    char *out = malloc(n + 1);
    if (!out) return -1;
    memcpy(out, head, n);
    out[n] = '\0';
    r->start += n + 1, r->scanned = 0;
    if (r->start == r->len) r->start = r->len = 0;
    *line = out;
    if (len) *len = n;
    return 1;
}

int proto_parse(const char *line, size_t len, json_t **out, kbv_err *err) {
    *out = NULL;
    if (len > PROTO_MAX_LINE) return kbv_seterr(err, "message longer than %u bytes", PROTO_MAX_LINE);
    json_error_t je;
    json_t *msg = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
    if (!msg) return kbv_seterr(err, "malformed message (%s at byte %d)", je.text, je.position);
    if (!json_is_object(msg)) {
        json_decref(msg);
        return kbv_seterr(err, "message is not a JSON object");
    }
    json_t *op = json_object_get(msg, "op"), *ok = json_object_get(msg, "ok");
    if (!(op && json_is_string(op)) && !(ok && json_is_boolean(ok))) {
        json_decref(msg);
        return kbv_seterr(err, "message has neither a string \"op\" nor a boolean \"ok\"");
    }
    if (ok && json_is_false(ok)) {
        json_t *kind = json_object_get(msg, "kind"), *m = json_object_get(msg, "message");
        if (!json_is_string(kind) || !json_is_string(m)) {
            json_decref(msg);
            return kbv_seterr(err, "failure reply lacks string \"kind\" and \"message\"");
        }
    }
    *out = msg;
    return 0;
}

int proto_send(int fd, const json_t *msg, kbv_err *err) {
    char *s = json_dumps(msg, JSON_COMPACT | JSON_ENSURE_ASCII);
    if (!s) return kbv_seterr(err, "cannot encode message");
    size_t n = strlen(s);
    if (n > PROTO_MAX_LINE) {
        free(s);
        return kbv_seterr(err, "message of %zu bytes exceeds the protocol limit", n);
    }
    int rc = kbv_write_all(fd, s, n);
    if (rc == 0) rc = kbv_write_all(fd, "\n", 1);
    int e = errno;
    free(s);
    return rc < 0 ? kbv_seterr(err, "cannot send message: %s", strerror(e)) : 0;
}

int proto_get_str(const json_t *msg, const char *key, const char **out, kbv_err *err) {
    json_t *v = json_object_get(msg, key);
    if (!json_is_string(v)) return kbv_seterr(err, "field \"%s\" missing or not a string", key);
    *out = json_string_value(v);
    return 0;
}

int proto_get_int(const json_t *msg, const char *key, long long *out, kbv_err *err) {
    json_t *v = json_object_get(msg, key);
    if (!json_is_integer(v)) return kbv_seterr(err, "field \"%s\" missing or not an integer", key);
    *out = (long long)json_integer_value(v);
    return 0;
}

const proto_command proto_commands[] = {
    {"load_problem", "load", {"path"}},
    {"inspect", "load", {"path"}},
    {"load_candidate", "load", {"path"}},
    {"build", "build", {"model", "seed"}},
    {"probe", "load", {"seeds", "mask_prefix"}},
    {"gen_inputs", "load", {"seed", "inputs"}},
    {"forward", "forward", {"prefix", "precision", "tf32", "poison", "poison_bytes", "save"}},
    {"save_state", "load", {"prefix"}},
    {"load_state", "load", {"state"}},
    {"redraw_weights", "load", {"seed", "prefix", "restore"}},
    {"standard", "forward", {"prefix", "first", "trials"}},
    {"standard_time", "timing", {"time_trials"}},
    {"paper", "forward", {"prefix", "first", "trials", "scale"}},
    {"paper_time", "timing", {"model", "trials", "tf32"}},
    {"paper_memory", "timing", {"model"}},
    {"bench_setup", "timing", {"sets", "fresh", "checks"}},
    {"bench", "timing", {"arm", "n", "warmup_s", "tf32", "prime", "fresh", "check"}},
    {"bench_save", "timing", {"prefix", "index"}},
    {"bench_launch", "timing", {"arm", "calls", "tf32"}},
    {"bench_sync", "timing", {NULL}},
    {"audit", "timing", {"authored"}},
    {"memo_probe", "load", {NULL}},
    {"partial_probe", "load", {"kind", "seed", "input"}},
    {"partial_save", "load", {"prefix"}},
    {"quit", "load", {NULL}},
};
const int proto_ncommands = (int)(sizeof proto_commands / sizeof *proto_commands);

const proto_command *proto_command_find(const char *op) {
    for (int i = 0; op && i < proto_ncommands; i++)
        if (strcmp(proto_commands[i].op, op) == 0) return &proto_commands[i];
    return NULL;
}

int proto_check_command(const json_t *cmd, kbv_err *err) {
    const char *op = json_string_value(json_object_get(cmd, "op")), *key;
    const proto_command *pc = proto_command_find(op);
    if (!pc) return kbv_seterr(err, "unknown command %.40s", op ? op : "(no op)");
    json_t *v;
    json_object_foreach((json_t *)cmd, key, v) {
        int known = strcmp(key, "op") == 0 || strcmp(key, "nonce") == 0; /* every command's */
        for (int i = 0; !known && i < PROTO_MAX_FIELDS && pc->fields[i]; i++) known = strcmp(pc->fields[i], key) == 0;
        if (!known) return kbv_seterr(err, "%s: unknown field %.40s", op, key);
    }
    return 0;
}

json_t *proto_ok(void) { return json_pack("{s:b}", "ok", 1); }

json_t *proto_fail(const char *kind, const char *message, const char *traceback) {
    json_t *m = json_pack("{s:b, s:s, s:s}", "ok", 0, "kind", kind, "message", message ? message : "");
    if (m && traceback && *traceback) json_object_set_new(m, "traceback", json_string(traceback));
    return m;
}
