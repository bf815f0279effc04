/* proc.h -- worker processes: spawn, talk, time out, kill, capture output.
 *
 * A kbv_proc is one child started in its own session and process group, with its control
 * pipes on fds 3 (commands) and 4 (replies), stdin on /dev/null, and stdout/stderr read by
 * kbv into size-capped captures (first and last bytes kept, the middle counted). The child
 * gets SIGKILL if kbv dies (PR_SET_PDEATHSIG). kbv is a child subreaper, so processes a
 * worker leaves behind become kbv's children and proc_kill() reaps them too. A sandboxed
 * worker gets a memory cgroup of its own where the machine allows (sandbox.h), joined before
 * it runs anything and removed once it is reaped. A worker's folder can be watched against a
 * budget (proc_watch_scratch): measured at most once a second while kbv waits for any worker,
 * and the worker killed once it holds more.
 * This file knows nothing about Python or tensors.
 */
#ifndef KBV_PROC_H
#define KBV_PROC_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#include "proto.h"
#include "sandbox.h"
#include "util.h"

/* A worker whose processes (in its PID namespace, or session) or their threads outnumber
 * these is killed: a fork or thread storm. */
#define PROC_MAX_FAMILY  1024
#define PROC_MAX_THREADS 4096

/* The walk that measures a watched folder (proc_tree_usage) goes at most this deep, and stops
 * after this many entries; a watched folder with more entries is over its budget (they are
 * the file system's inodes). */
#define PROC_SCRATCH_MAX_DEPTH   64
#define PROC_SCRATCH_MAX_ENTRIES 100000

typedef struct kbv_capture {
    kbv_buf head; /* the first cap bytes */
    char *tail;   /* ring of the last tail_cap bytes after head filled */
    size_t tail_cap, tail_len, tail_pos;
    size_t cap;   /* bytes kept in head */
    size_t total; /* bytes the child wrote in all */
} kbv_capture;

typedef struct kbv_proc {
    pid_t pid;    /* child pid, also its process-group and session id; 0 when none */
    int cmd_fd;   /* kbv writes commands here (child's fd 3) */
    int reply_fd; /* kbv reads replies here (child's fd 4) */
    int out_fd, err_fd;
    proto_reader reader;
    kbv_capture out, err;
    int exited;           /* 1 once waitpid collected the child */
    int namespaces;       /* CLONE_NEWPID / CLONE_NEWNET flags the child was started with */
    char killed_why[160]; /* why kbv killed it on its own initiative (a process storm, a stop), or empty */
    int wstatus;          /* its wait status when exited */
    double cpu_s;         /* once exited: its CPU seconds and those of the descendants it waited for (wait4) */
    char role[16];        /* who it is, for diagnostics and the step profile ("reference", ...) */
    kbv_memcg memcg;      /* its memory cgroup (memcg.applied 0: none, memcg.why says why) */
    struct {              /* its folder, watched against a budget (proc_watch_scratch) */
        char dir[PATH_MAX];  /* "" when not watched */
        long long budget;    /* bytes it may hold beneath dir; 0: no budget */
        long long peak;      /* the most bytes measured beneath dir */
        long long entries;   /* entries beneath dir at that measurement */
        double next;         /* kbv_now() at which it is measured next */
        int over;            /* 1 once kbv found it over the budget and killed the worker */
        char why[200];       /* "wrote X MiB beneath its folder, over its budget of Y MiB" */
    } scratch;
} kbv_proc;

typedef enum proc_result {
    PROC_OK = 0,   /* a reply arrived */
    PROC_TIMEOUT,  /* no reply within the time allowed */
    PROC_DIED,     /* the child exited or was killed (see wstatus) */
    PROC_PROTOCOL, /* the child wrote something that is not a valid message */
    PROC_ERROR     /* kbv itself failed (err says how) */
} proc_result;

/* Make the calling process a child subreaper and ignore SIGPIPE (call once, at start-up). */
int proc_init_reaper(kbv_err *err);

/* Start argv[0] (a path) with envp in cwd; output captures keep cap bytes each. sb (or
 * NULL) is the sandbox the child enters before execve; its namespaces are asked of clone()
 * and p->namespaces says which the child got. */
struct kbv_sandbox;
int proc_spawn(kbv_proc *p, char *const argv[], char *const envp[], const char *cwd, size_t cap, const struct kbv_sandbox *sb, kbv_err *err);
/* Send msg (if non-NULL) and wait up to timeout_s seconds for one reply. */
proc_result proc_request(kbv_proc *p, const json_t *msg, double timeout_s, json_t **reply, kbv_err *err);
/* Kill the child's process group and any orphan it left, wait for them, drain output. */
void proc_kill(kbv_proc *p);
/* Ask politely (close the command pipe), wait up to grace_s, then proc_kill. */
void proc_finish(kbv_proc *p, double grace_s);
void proc_free(kbv_proc *p);

/* What entries beneath a folder hold. */
typedef struct proc_usage {
    long long bytes;   /* st_blocks * 512 summed over every entry (links not followed) */
    long long entries; /* entries seen, at most PROC_SCRATCH_MAX_ENTRIES + 1 */
    long long deep;    /* folders below PROC_SCRATCH_MAX_DEPTH, not entered */
} proc_usage;

/* Measure dir's tree with openat/fstatat, within the bounds above. 0, or -1 (dir cannot be
 * opened). A folder kbv may not enter (mode 000, kbv not root) is made 0700 first. */
int proc_tree_usage(const char *dir, proc_usage *u);
/* Whether u is over budget bytes (or over PROC_SCRATCH_MAX_ENTRIES entries): 1 with why
 * ("wrote X MiB beneath its folder, over its budget of Y MiB"), 0 when not or budget is 0. */
int proc_usage_over(const proc_usage *u, long long budget, char *why, size_t n);
/* Watch p's folder dir (an absolute path) against budget bytes (0: measured only, no budget). */
void proc_watch_scratch(kbv_proc *p, const char *dir, long long budget);
/* The time the child's live threads have run on a CPU or waited for one (ready to run), in
 * seconds, from the kernel's scheduler accounting (/proc/PID/task/TID/schedstat, its first
 * two fields in nanoseconds; the child cannot write it); -1 where unreadable. Threads that
 * ended are not counted (a lower figure, never a higher one). */
double proc_busy_seconds(const kbv_proc *p);
/* The CPU time, user and system, of the child and of the descendants it has waited for
 * (ninja, nvcc and the compilers a build runs), in seconds: from /proc/PID/stat (utime,
 * stime, cutime, cstime; kernel accounting the child cannot write) while it runs, from
 * wait4 once it exited; -1 where unreadable. Descendants still running are not counted. */
double proc_cpu_seconds(const kbv_proc *p);
/* The same four fields of /proc/PID/stat for any process: seconds, or -1. */
double proc_stat_cpu_seconds(long pid);
/* Measure p's watched folder now: 1 when it is over its budget (p->scratch.why says how),
 * 0 when not (or not watched). Updates the peak. */
int proc_scratch_measure(kbv_proc *p);

/* "exited with status 3", "killed by signal 11 (Segmentation fault)". */
void proc_describe_status(int wstatus, char *out, size_t outlen);
/* Captured output as text: head, a "[... N bytes omitted ...]" line, tail. Caller frees. */
char *proc_capture_text(const kbv_capture *c);

/* Capture primitives (exposed for tests). */
void proc_capture_init(kbv_capture *c, size_t cap);
void proc_capture_add(kbv_capture *c, const char *data, size_t n);
void proc_capture_free(kbv_capture *c);

/* The state letter and parent of process pid, from /proc/PID/stat (its name, which may hold
 * anything, skipped); state may be NULL. 0, or -1 when it cannot be read. */
int proc_stat_parent(long pid, char *state, long *ppid);

#endif
