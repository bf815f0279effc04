/* kbv-worker -- runs one problem or candidate for kbv, in a process of its own.
 *
 * It embeds CPython, imports torch, and then obeys commands that kbv writes on fd 3,
 * answering each with one reply line on fd 4 (src/proto.h, docs/protocol.md). Tensors come
 * and go as .kbt files and cross into torch through DLPack (dl.c); the only Python it runs
 * is the problem's and candidate's own code plus the torch calls needed to build and call
 * a module. It holds no reference outputs when it runs a candidate: kbv judges outputs.
 * It exits when its command pipe closes or on "quit"; it never decides a verdict.
 *
 * This file is the program only: arguments, start-up, the hello, and the command loop,
 * which looks each command up in proto.c's table (its fields, its guard step) and calls its
 * handler from the table below. The handlers live in the files named there (worker.h lists
 * their layers); a command proto.c does not list is refused before any handler runs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <malloc.h>
#include <sys/prctl.h>

#include "../gpu/audit.h"
#include "../gpu/gpu.h"
#include "../proto.h"
#include "bench.h"
#include "fail.h"
#include "forward.h"
#include "guard.h"
#include "inputs.h"
#include "inspect.h"
#include "loader_py_fastbuild.h"
#include "pycache.h"
#include "model.h"
#include "paper.h"
#include "standard.h"
#include "worker.h"

static void reply(json_t *msg) {
    kbv_err err;
    if (!msg || proto_send(PROTO_REPLY_FD, msg, &err) < 0) {
        fprintf(stderr, "kbv-worker: cannot reply: %s\n", msg ? err.msg : "out of memory");
        _exit(70);
    }
    json_decref(msg);
}

/* quit: the reply, then out at once, skipping interpreter and CUDA teardown. */
static json_t *cmd_quit(worker *w, const json_t *cmd) {
    (void)w, (void)cmd;
    reply(proto_ok());
    fflush(NULL);
    _exit(0);
}

/* A command's handler: its reply (NULL only when out of memory). */
typedef json_t *(*cmd_fn)(worker *w, const json_t *cmd);

/* Each command of proto.c's table and its handler. */
static const struct {
    const char *op;
    cmd_fn run;
} handlers[] = {
    {"load_problem", cmd_load_problem},
    {"inspect", cmd_inspect},
    {"load_candidate", cmd_load_candidate},
    {"build", cmd_build},
    {"probe", cmd_probe},
    {"gen_inputs", cmd_gen_inputs},
    {"forward", cmd_forward},
    {"save_state", cmd_save_state},
    {"load_state", cmd_load_state},
    {"redraw_weights", cmd_redraw_weights},
    {"standard", cmd_standard},
    {"standard_time", cmd_standard_time},
    {"paper", cmd_paper},
    {"paper_time", cmd_paper_time},
    {"paper_memory", cmd_paper_memory},
    {"bench_setup", cmd_bench_setup},
    {"bench", cmd_bench},
    {"bench_save", cmd_bench_save},
    {"bench_launch", cmd_bench_launch},
    {"bench_sync", cmd_bench_sync},
    {"partial_probe", cmd_partial_probe},
    {"partial_save", cmd_partial_save},
    {"audit", cmd_audit},
    {"memo_probe", cmd_memo_probe},
    {"quit", cmd_quit},
};

static cmd_fn handler(const char *op) {
    for (size_t i = 0; op && i < sizeof handlers / sizeof *handlers; i++)
        if (strcmp(handlers[i].op, op) == 0) return handlers[i].run;
    return NULL;
}

/* --list-commands: "OP FIELD FIELD..." per command of proto.c's table that has a handler. */
static void list_commands(FILE *f) {
    for (int i = 0; i < proto_ncommands; i++) {
        const proto_command *pc = &proto_commands[i];
        if (!handler(pc->op)) continue;
        fputs(pc->op, f);
        for (int k = 0; k < PROTO_MAX_FIELDS && pc->fields[k]; k++) fprintf(f, " %s", pc->fields[k]);
        fputc('\n', f);
    }
}

static json_t *hello(worker *w, const char *device) {
    json_t *r = proto_ok();
    char ver[64] = "", gpu[256] = "";
    PyObject *v = PyObject_GetAttrString(w->dl.torch, "__version__");
    py_str(v, ver, sizeof ver);
    Py_XDECREF(v);
    json_object_set_new(r, "proto", json_integer(PROTO_VERSION));
    json_object_set_new(r, "pid", json_integer(getpid()));
    json_object_set_new(r, "python", json_string(Py_GetVersion()));
    json_object_set_new(r, "torch", json_string(ver));
    json_object_set_new(r, "device", json_string(device));
    int avail = 0;
    PyObject *cudamod = PyObject_GetAttrString(w->dl.torch, "cuda");
    PyObject *a = cudamod ? PyObject_CallMethod(cudamod, "is_available", NULL) : NULL;
    avail = a && PyObject_IsTrue(a) == 1;
    Py_XDECREF(a), Py_XDECREF(cudamod);
    PyErr_Clear();
    json_object_set_new(r, "cuda_available", json_boolean(avail));
    kbv_err err;
    if (w->cuda && gpu_device_name(gpu, sizeof gpu, &err) == 0) json_object_set_new(r, "gpu", json_string(gpu));
    return r;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: kbv-worker --device cpu|cuda [--role NAME] [--private]\n"
            "       kbv-worker --list-commands\n"
            "       kbv-worker --python-paths\n"
            "       kbv-worker --build-pch ROOT\n"
            "       kbv-worker --build-pycache ROOT [always]\n"
            "  Started by kbv, not by hand: reads JSON commands on fd %d, replies on fd %d.\n"
            "  --role is shown in ps; --private makes the process non-dumpable (no /proc/PID/mem, no ptrace).\n"
            "  --list-commands prints the commands it obeys, one a line: OP FIELD FIELD...\n"
            "  --python-paths prints the folders its Python reads (prefixes, sys.path, its libraries), one a line:\n"
            "    kbv lets the worker read beneath them (docs/security.md).\n"
            "  --build-pch builds kbv's precompiled torch headers under ROOT (run by kbv, never with a\n"
            "    candidate; flag sets from KBV_PCH_CFLAGS; docs/build.md).\n"
            "  --build-pycache compiles the bytecode of the packages a worker imports into a read-only\n"
            "    tree under ROOT where the installed ones have none (or always), and prints its path\n"
            "    (an empty line: none needed). Run by kbv, never with a candidate; docs/build.md.\n"
            "  See docs/protocol.md.\n",
            PROTO_CMD_FD, PROTO_REPLY_FD);
}

int main(int argc, char **argv) {
    const char *device = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = argv[++i];
        else if (strcmp(argv[i], "--role") == 0 && i + 1 < argc) i++; /* shown in ps; no effect */
        else if (strcmp(argv[i], "--private") == 0) {
            /* The reference's memory holds the outputs: not readable through /proc or ptrace
             * by a same-user process (docs/security.md). */
            prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return usage(stdout), 0;
        else if (strcmp(argv[i], "--list-commands") == 0) return list_commands(stdout), 0;
        else if (strcmp(argv[i], "--python-paths") == 0) {
            kbv_err err = {{0}};
            if (py_print_paths(stdout, &err) == 0) _exit(0); /* no interpreter teardown, as on quit */
            fprintf(stderr, "kbv-worker: %s\n", err.msg);
            return 70;
        }
        else if (strcmp(argv[i], "--build-pycache") == 0 && i + 1 < argc) {
            kbv_err err = {{0}};
            int always = i + 2 < argc && strcmp(argv[i + 2], "always") == 0;
            if (py_start(&err) == 0 && pycache_build(argv[i + 1], always, &err) == 0) _exit(0);
            fprintf(stderr, "kbv-worker: %s\n", err.msg);
            return 70;
        }
        else if (strcmp(argv[i], "--build-pch") == 0 && i + 1 < argc) {
            kbv_err err = {{0}};
            if (py_start(&err) == 0 && fastbuild_make_pch(argv[i + 1], getenv("KBV_PCH_CFLAGS"), &err) == 0) _exit(0);
            fprintf(stderr, "kbv-worker: %s\n", err.msg);
            return 70;
        }
        else return usage(stderr), 2;
    }
    if (!device || (strcmp(device, "cpu") != 0 && strcmp(device, "cuda") != 0)) return usage(stderr), 2;
    worker w = {0};
    w.cuda = strcmp(device, "cuda") == 0;
    /* Fixed malloc thresholds: glibc's dynamic ones depend on what a process freed before, so
     * two workers running the same code would take large buffers from the heap in one and
     * from fresh (page-faulting) mmaps in the other, and time differently. */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    kbv_err err = {{0}};
    if (py_start(&err) < 0) {
        reply(proto_fail("worker", err.msg, NULL));
        return 70;
    }
    guard_install();
    /* faulthandler prints the Python stack on a fatal signal, as evidence for "crash". */
    PyObject *fh = PyImport_ImportModule("faulthandler");
    PyObject *r = fh ? PyObject_CallMethod(fh, "enable", NULL) : NULL;
    Py_XDECREF(r), Py_XDECREF(fh);
    PyErr_Clear();
    /* CUPTI before torch: every device allocation from the first one on is recorded. */
    if (w.cuda && audit_available()) {
        if (audit_start(&err) < 0) {
            reply(proto_fail("cuda", err.msg, NULL));
            return 70;
        }
        w.audit = 1;
    }
    if (dl_init(&w.dl, w.cuda, &err) < 0) {
        reply(proto_fail("worker", err.msg, NULL));
        return 70;
    }
    r = PyObject_CallMethod(w.dl.torch, "set_grad_enabled", "O", Py_False);
    Py_XDECREF(r);
    PyErr_Clear();
    if (w.cuda && gpu_init(0, &err) < 0) {
        reply(proto_fail("cuda", err.msg, NULL));
        return 70;
    }
    reply(hello(&w, device));
    proto_reader rd;
    proto_reader_init(&rd);
    char chunk[4096];
    for (;;) {
        char *line;
        size_t len;
        int got = proto_reader_next(&rd, &line, &len);
        if (got < 0) return 65;
        if (got == 0) {
            ssize_t n = read(PROTO_CMD_FD, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return 0; /* kbv closed the pipe or died */
            proto_reader_feed(&rd, chunk, (size_t)n);
            continue;
        }
        json_t *cmd;
        if (proto_parse(line, len, &cmd, &err) < 0) {
            free(line);
            reply(proto_fail("protocol", err.msg, NULL));
            continue;
        }
        free(line);
        const char *op = json_string_value(json_object_get(cmd, "op"));
        const proto_command *pc = proto_command_find(op);
        cmd_fn run = pc ? handler(pc->op) : NULL;
        json_t *res;
        if (op) guard_step(pc ? pc->step : "load");
        if (!op) res = proto_fail("protocol", "command has no op", NULL);
        else if (!run) res = fail_text("protocol", "unknown op %s", op);
        else if (proto_check_command(cmd, &err) < 0) res = proto_fail("protocol", err.msg, NULL);
        else res = run(&w, cmd);
        /* kbv's nonce back, so that a reply written by anything else on fd 4 ahead of this one
         * (not knowing the command's nonce) is seen as the protocol violation it is */
        const json_t *nonce = json_object_get(cmd, "nonce");
        if (res && json_is_string(nonce)) json_object_set(res, "nonce", (json_t *)nonce);
        json_decref(cmd);
        json_t *g = res ? guard_take(&w) : NULL;
        if (g) json_object_set_new(res, "guard", g);
        reply(res);
    }
}
