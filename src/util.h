/* util.h -- error values, strings, files and scratch folders shared by kbv and kbv-worker.
 *
 * Errors are values: a function that can fail returns 0 on success and -1 on failure and
 * fills a kbv_err with a one-line message naming what failed. Nothing here exits.
 */
#ifndef KBV_UTIL_H
#define KBV_UTIL_H

#define KBV_VERSION "0.2.0" /* kbv's version, in results and `kbv version` */

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct kbv_err {
    char msg[1024]; /* one line, NUL-terminated; empty when no error was set */
} kbv_err;

#if defined(__GNUC__)
#define KBV_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define KBV_PRINTF(a, b)
#endif

/* Fill err (if non-NULL) and return -1, so callers can write `return kbv_seterr(...)`. */
int kbv_seterr(kbv_err *err, const char *fmt, ...) KBV_PRINTF(2, 3);
/* One line on stderr (the commands' errors and notes): whatever it quotes (a path, a file's
 * bytes, SQLite's, Python's or a server's text) has its control characters shown as '?', so it
 * stays one line. */
void kbv_say(const char *fmt, ...) KBV_PRINTF(1, 2);
/* Prefix an already-set message: "prefix: old message". Returns -1. */
int kbv_wraperr(kbv_err *err, const char *fmt, ...) KBV_PRINTF(2, 3);

/* Growable byte string, always NUL-terminated. len excludes the terminator. */
typedef struct kbv_buf {
    char *data;
    size_t len;
    size_t cap;
} kbv_buf;

void kbv_buf_init(kbv_buf *b);
void kbv_buf_free(kbv_buf *b);
int kbv_buf_append(kbv_buf *b, const void *data, size_t n);
int kbv_buf_printf(kbv_buf *b, const char *fmt, ...) KBV_PRINTF(2, 3);

/* Read a whole file into *out (NUL-terminated, caller frees); *len gets its size. */
int kbv_read_file(const char *path, char **out, size_t *len, kbv_err *err);
/* Write s as text for a terminal or a text file: every control character but newline and tab
 * (C0, DEL, and C1 encoded as UTF-8) becomes \xNN, so that bytes that came from a worker
 * cannot move the cursor, retitle a window or recolour what follows. */
void kbv_fputs_safe(const char *s, FILE *f);
/* Write all of data to fd, retrying on EINTR and short writes. */
int kbv_write_all(int fd, const void *data, size_t n);
/* Read exactly n bytes from fd; returns -1 on error or early EOF. */
int kbv_read_full(int fd, void *data, size_t n);

/* Create a fresh private folder under base (or $TMPDIR, or /tmp) named kbv-XXXXXX. */
int kbv_mkscratch(const char *base, char *out, size_t outlen, kbv_err *err);
/* The folder scratch goes under: base if given, else $TMPDIR, else /tmp. */
const char *kbv_scratch_base(const char *base);
/* Remove a folder tree; follows no symbolic links. Returns 0 if it is gone. */
int kbv_rmtree(const char *path);
/* This process (and what it starts after) runs `by` nicer than it did, at most 19: 0, or -1
 * with errno set (a process may always raise its own nice value, so -1 is unexpected). */
int kbv_nicer(int by);
/* Run argv (argv[0] found in PATH, or a path) with stdin on /dev/null and wait for it: its
 * stdout into out and its stderr into errout (each capped at 16 MiB; NULL discards). Returns
 * its exit status, or -1 with err set when it could not run or a signal ended it. */
int kbv_run_cmd(char *const argv[], kbv_buf *out, kbv_buf *errout, kbv_err *err);
/* CPU seconds, user + system, of a struct rusage (getrusage, wait4). */
struct rusage;
double kbv_rusage_seconds(const struct rusage *u);
/* kbv_rusage_seconds of getrusage(who) (RUSAGE_SELF, RUSAGE_CHILDREN); -1 where it fails. */
double kbv_cpu_seconds(int who);
/* Bytes the files beneath path take on disk (their blocks; links not followed). */
long long kbv_tree_bytes(const char *path);

/* SHA-256 of a source file's bytes as 64 lowercase hex digits (out must hold 65 bytes). A
 * folder, anything but a regular file (a pipe, /dev/zero) and a file over KBV_SOURCE_MAX
 * bytes are errors, so a problem or candidate path can never make kbv read without end. */
#define KBV_SOURCE_MAX (64 << 20)
int kbv_sha256_file(const char *path, char out[65], kbv_err *err);
int kbv_sha256_hex(const void *data, size_t n, char out[65]);

/* A seed derived from a secret one (SHA-256 of a tag, the secret and label): one-way, so the
 * seeds a candidate's worker sees do not give away the run's seed (docs/security.md). */
uint64_t kbv_derive_seed(uint64_t secret, uint64_t label);

/* From /proc/PID/stat (pid as text): the session id and the number of threads. 0, or -1
 * when the process is gone or unreadable. */
int kbv_proc_stat(const char *pid, long *session, long *threads);

/* Monotonic clock in seconds. */
double kbv_now(void);
/* 64 random bits from the kernel's generator. */
int kbv_random_u64(uint64_t *out);
/* SplitMix64: a fixed bijective mixer used to derive per-case seeds from the run seed. */
uint64_t kbv_mix64(uint64_t x);

/* Absolute, normalised path of an existing file (realpath); out holds PATH_MAX bytes. */
int kbv_abspath(const char *path, char *out, size_t outlen, kbv_err *err);
/* Base name without folder and without a trailing ".py". */
void kbv_stem(const char *path, char *out, size_t outlen);

/* Independent pieces of work run at once (cases.c judges a large output's passes so): tasks
 * 0 to n - 2 on threads of their own, with every signal blocked, and the last on the caller's;
 * with par 0, or where a thread cannot be made, on the caller's in order. A task's fn NULL is
 * skipped. Returns once every task has returned. Each task must touch only what no other one
 * writes: which thread ran what changes no result. At most KBV_PARALLEL_MAX tasks. Tasks
 * compute only: they start no process, take no lock and write no file. */
#define KBV_PARALLEL_MAX 8
typedef struct kbv_task {
    void (*fn)(void *arg);
    void *arg;
} kbv_task;
void kbv_parallel(const kbv_task *tasks, int n, int par);
/* One task started on a thread of its own (signals blocked there) and joined later, while the
 * caller does other work that touches nothing the task writes. Where no thread can be made, it
 * runs at once on the caller's. The task struct lives in *a until kbv_async_join, which every
 * kbv_async_start must be matched by (a zeroed kbv_async joins as nothing). */
typedef struct kbv_async {
    kbv_task task;
    pthread_t th;
    int started;
} kbv_async;
void kbv_async_start(kbv_async *a, void (*fn)(void *arg), void *arg);
void kbv_async_join(kbv_async *a);

/* A GPU shared by several evaluations (`kbv run --jobs N` on one GPU): a readers-writer
 * lock on a file, writer first. Timing holds it exclusive, from kbv_gpulock_set(l, 2) until
 * it is set otherwise, so no other evaluation's kernels run while a call is timed. Work that
 * may share the GPU (loading, the correctness cases) asks for it shared with
 * kbv_gpulock_set(l, 1), and holds it only for each worker command (kbv_gpulock_enter/_leave
 * around it, session.c): not while the worker starts, kbv judges, or a candidate compiles.
 * So a writer waits for the shared holders' current commands to end, not their phases (on
 * the H200 a phase's shared hold made timings wait 125 s per evaluation: BENCHMARKS.md), and
 * new shared holders wait behind it (the second file, PATH.turn, is the turnstile). With no
 * path the lock is off and every call returns 0 at once. */
typedef struct kbv_gpulock {
    int main_fd, turn_fd; /* -1: lock off */
    int held;             /* 0 none, 1 shared, 2 exclusive */
    int want;             /* what kbv_gpulock_set asked: 1 takes it shared for each command */
    double waited_s;      /* total time spent waiting for it */
} kbv_gpulock;
#define KBV_GPULOCK_OFF \
    { .main_fd = -1, .turn_fd = -1 } /* an initialiser: no lock until kbv_gpulock_open */

int kbv_gpulock_open(kbv_gpulock *l, const char *path, kbv_err *err);
/* mode 0 releases; 2 takes it exclusive now (releasing what is held first); 1 releases an
 * exclusive hold and asks for shared holds around each later command (kbv_gpulock_enter). */
int kbv_gpulock_set(kbv_gpulock *l, int mode, kbv_err *err);
/* Around one worker command: under mode 1, take it shared (waiting behind a writer) and
 * release it after; under 0 and 2, nothing. */
int kbv_gpulock_enter(kbv_gpulock *l, kbv_err *err);
void kbv_gpulock_leave(kbv_gpulock *l);
void kbv_gpulock_close(kbv_gpulock *l);

#endif
