/* proto.h -- the control protocol between kbv and kbv-worker.
 *
 * Messages are single lines of JSON (one object, '\n'-terminated, at most
 * PROTO_MAX_LINE bytes). kbv writes commands on the worker's fd 3; the worker writes
 * replies on its fd 4. Tensor data never travels here: it goes through .kbt files in the
 * scratch folder (tensor.h). The commands and replies are listed in docs/protocol.md.
 * This file only frames, parses and validates; it does not run anything.
 */
#ifndef KBV_PROTO_H
#define KBV_PROTO_H

#include <jansson.h>
#include <stddef.h>

#include "util.h"

#define PROTO_VERSION  1
#define PROTO_CMD_FD   3 /* worker reads commands here */
#define PROTO_REPLY_FD 4 /* worker writes replies here */
#define PROTO_MAX_LINE (1u << 20)

/* Accumulates bytes from a stream and hands out complete lines. Linear in the stream's
 * length however it is cut into reads and lines: handed-out lines are dropped from the
 * front lazily, and a partial line is searched for '\n' only in its new bytes. */
typedef struct proto_reader {
    char *buf;
    size_t start, len, cap; /* bytes: buf[start, len) is not handed out yet */
    size_t scanned;         /* bytes from start known to hold no '\n' */
    int overflow;           /* set once a line longer than PROTO_MAX_LINE was seen */
} proto_reader;

void proto_reader_init(proto_reader *r);
void proto_reader_free(proto_reader *r);
/* Append raw bytes read from the stream. */
int proto_reader_feed(proto_reader *r, const char *data, size_t n);
/* Take the next complete line (without '\n') into *line (caller frees); 1 if one was
 * taken, 0 if none is complete yet, -1 on an over-long line. */
int proto_reader_next(proto_reader *r, char **line, size_t *len);

/* Parse one line into a JSON object that has a string "op" (a command) or a boolean
 * "ok" (a reply). Anything else is a protocol error with a message saying what. */
int proto_parse(const char *line, size_t len, json_t **out, kbv_err *err);

/* Write msg as one line on fd. */
int proto_send(int fd, const json_t *msg, kbv_err *err);

/* Field access with type checks; each returns -1 and fills err if absent or mistyped. */
int proto_get_str(const json_t *msg, const char *key, const char **out, kbv_err *err);
int proto_get_int(const json_t *msg, const char *key, long long *out, kbv_err *err);

/* The commands kbv sends and the fields each may carry (docs/protocol.md; a test checks the
 * document against this table). The worker binds one handler to each (src/worker/main.c)
 * and refuses a command with a field not listed here; kbv builds no other command. step is
 * the guard's name for what runs during it (src/worker/guard.h). */
#define PROTO_MAX_FIELDS 8
typedef struct proto_command {
    const char *op;
    const char *step;                     /* "load", "build", "forward" or "timing" */
    const char *fields[PROTO_MAX_FIELDS]; /* besides "op"; NULL-terminated */
} proto_command;

extern const proto_command proto_commands[];
extern const int proto_ncommands;
/* The entry for op, or NULL. */
const proto_command *proto_command_find(const char *op);
/* 0 when every key of cmd is "op" or a field of its command; -1 (err names the first other
 * key, or the unknown op) otherwise. */
int proto_check_command(const json_t *cmd, kbv_err *err);

/* Standard replies. */
json_t *proto_ok(void);
/* kind: "load", "python", "cuda", "protocol", "io", "usage". */
json_t *proto_fail(const char *kind, const char *message, const char *traceback);

#endif
