/* admit.h -- admission control for `kbv run --jobs` (docs/results.md, "Admission").
 *
 * An evaluation starts only when the scratch space and the host memory it will need fit what
 * is free, less what the evaluations already running have reserved and not used yet; with
 * none running it always starts (one too big for the machine then runs alone, and succeeds or
 * fails on its own). What an evaluation needs is known per problem, from the parent `kbv run`,
 * which samples every running evaluation every ADMIT_TICK_S: the resident memory of its child
 * kbv and workers (/proc), the bytes of its scratch folder (found as a worker's working folder)
 * and of the reference outputs it keeps for the run (refcache.c). The problem's first
 * evaluation that runs all of its cases sets its need; before that, a conservative default,
 * and one evaluation of the problem at a time (admit_unmeasured_busy) until the first one's
 * cases have run (then twice what it used so far: admit_need_running): the default can be far
 * too small, and the samples of one problem usually come in a row.
 * Nothing here starts, runs or judges anything, or reads any file but sizes and /proc.
 */
#ifndef KBV_ADMIT_H
#define KBV_ADMIT_H

#include <limits.h>
#include <sys/types.h>

#include "util.h"

#define ADMIT_DEFAULT_SCRATCH (4LL << 30)   /* a problem not measured yet: scratch bytes */
#define ADMIT_DEFAULT_MEMORY  (4LL << 30)   /* ... and host memory bytes */
#define ADMIT_COMPILE_BYTES   (256LL << 20) /* a compiled extension, when the compile cache is on the scratch's file system */
#define ADMIT_SLACK_BYTES     (64LL << 20)  /* added to a measured need, with a quarter more: what sampling missed */
#define ADMIT_TICK_S          0.25          /* seconds between samples */
#define ADMIT_AHEAD_SCRATCH   (512LL << 20) /* a compile-ahead worker not measured yet: its folder (TMPDIR: the compilers' temporaries) */
#define ADMIT_AHEAD_MEMORY    (3LL << 30)   /* ... and its worker with the compilers it starts */
#define ADMIT_UNKNOWN         LLONG_MAX     /* free bytes that could not be read: no limit applied */
#define ADMIT_PROVISIONAL     2             /* a problem's need from its first evaluation's cases: times this (admit_need_running) */

typedef struct admit_bytes {
    long long scratch, memory; /* bytes */
} admit_bytes;

/* What a problem's evaluations were seen to use (peaks, bytes). */
typedef struct admit_problem {
    long long own;                  /* an evaluation's scratch folder */
    long long kept;                 /* the reference outputs it kept for the run (refcache.c) */
    long long memory;               /* resident memory of its child kbv and workers together */
    int scratch_known, memory_known; /* measured on an evaluation that ran all of its cases */
    int measured;                    /* an evaluation that ran all of its cases has ended */
} admit_problem;

/* A running evaluation as the parent sees it (one per slot; pid 0: the slot is free). */
typedef struct admit_eval {
    pid_t pid;              /* its child kbv */
    int problem;            /* index into kbv_admit.problems */
    admit_bytes reserved;   /* its need when it was admitted */
    admit_bytes used;       /* at the last sample */
    char scratch[PATH_MAX]; /* its scratch folder once seen, else "" */
    long long own_peak, kept_peak, mem_peak;
    int samples;
} admit_eval;

typedef struct kbv_admit {
    char base[PATH_MAX];      /* the scratch base, resolved */
    char ref_cache[PATH_MAX]; /* the run's folder of kept reference sides, resolved, or "" */
    int tmpfs;                /* the scratch file system is memory: scratch needs count as memory too */
    long long compile;        /* ADMIT_COMPILE_BYTES, or 0 when the compile cache is elsewhere */
    admit_problem *problems;
    const char (*sha)[65]; /* per problem: its file's SHA-256 (names its kept folder), not owned */
    int nproblems;
    admit_problem ahead; /* what compile-ahead workers were seen to use (the most of any, run.c) */
} kbv_admit;

/* scratch_base as eval_opts has it (NULL: $TMPDIR or /tmp); ref_cache "" when none; cache_dir
 * the compile cache (it need not exist yet). 0, or -1 (out of memory). */
int admit_init(kbv_admit *a, const char *scratch_base, const char *ref_cache, const char *cache_dir, int nproblems, const char (*sha)[65],
               kbv_err *err);
void admit_free(kbv_admit *a);
/* What an evaluation of problem p will need: measured (with slack), or the defaults. */
admit_bytes admit_need(const kbv_admit *a, int p);
/* Free scratch bytes (statvfs) and memory bytes (MemAvailable, and the memory cgroup's room
 * when it has a limit); ADMIT_UNKNOWN where unreadable. */
admit_bytes admit_available(const kbv_admit *a);
/* What is left for a new evaluation: free less what the running ones reserved and have not
 * used. One that uses more than it reserved counts at what it uses (free already lacks it). */
admit_bytes admit_left(admit_bytes free, const admit_eval *ev, int nev);
/* Whether an evaluation of problem p must wait for its problem's first measurement: p is not
 * measured yet (no evaluation of it that ran all of its cases has ended), one of its
 * evaluations is running in ev, and none has published the problem's reference side yet
 * (refcache.c: its cases ran; a run without the kept reference sides has no such sign). So a
 * problem not measured yet runs one evaluation at a time, each under the default, until the
 * running one's cases have run; then admit_check decides, with admit_need_running's need. */
int admit_unmeasured_busy(const kbv_admit *a, const admit_eval *ev, int nev, int p);
/* What the next evaluation of problem p will need with ev running: admit_need, except for a
 * problem not measured yet whose reference side a running evaluation of it has published:
 * then ADMIT_PROVISIONAL times what its running evaluations were seen to use so far (its
 * timing and standard steps are still to come), with slack, and at least admit_need's. */
admit_bytes admit_need_running(const kbv_admit *a, const admit_eval *ev, int nev, int p);
enum { ADMIT_YES, ADMIT_WAIT_SCRATCH, ADMIT_WAIT_MEMORY, ADMIT_WAIT_MEASURE };
/* Whether need fits in left (ADMIT_YES) or what it waits for. */
int admit_check(admit_bytes need, admit_bytes left);
/* Whether the next evaluation, of problem p with need, starts now (ADMIT_YES) or what it waits
 * for: its problem's first measurement (admit_unmeasured_busy), else room (admit_check), unless
 * nothing is running (running 0: it always starts). left: admit_left of what is free. */
int admit_decide(const kbv_admit *a, const admit_eval *ev, int nev, int p, admit_bytes need, admit_bytes left, int running);
/* Sample every running evaluation of ev: its process tree's memory, its scratch folder. */
void admit_sample(const kbv_admit *a, admit_eval *ev, int nev);
/* An evaluation ended: fold what it used into its problem's figures. complete: it ran all of
 * its cases (verified, incorrect, overfit or hack); maxrss_bytes: its wait4() ru_maxrss. */
void admit_record(kbv_admit *a, const admit_eval *e, int complete, long long maxrss_bytes);
/* What a compile-ahead worker (`kbv run --compile-jobs`: a candidate's worker that only loads
 * it, building its extension into the compile cache) will need: the most one was seen to use,
 * with slack, else ADMIT_AHEAD_*; plus the build in the compile cache when that is on the
 * scratch's file system. It is sampled like an evaluation (admit_sample, problem index any). */
admit_bytes admit_ahead_need(const kbv_admit *a);
/* A compile-ahead worker ended: fold what it used into a->ahead. */
void admit_ahead_record(kbv_admit *a, const admit_eval *e, long long maxrss_bytes);
/* "3.2 GiB" */
void admit_format(long long bytes, char *out, size_t n);

#endif
