/* sandbox.h -- what confines a worker process (docs/security.md).
 *
 * kbv prepares a sandbox in the parent (sandbox_prepare: a Landlock ruleset, a seccomp
 * program, resource limits) and the forked child enters it with async-signal-safe system
 * calls only (sandbox_enter), just before execve; everything it sets survives the exec.
 * Each layer is used where the kernel and kbv's privileges allow it, and the sandbox says
 * which did (sandbox_describe) so that a result records how its candidate was confined.
 *
 * Layers: resource limits (file size, data memory, CPU time, core dumps off, processes); a
 * memory cgroup of its own, limited to the data limit (kbv_memcg, below);
 * no new privileges; for root, an empty capability bounding set; Landlock: file-system
 * writes only beneath the listed folders, reads only beneath an allow-list (the system and
 * runtime installations, the worker's Python, the listed files and folders) and never of
 * the listed secrets, no signals to and no abstract UNIX sockets of processes outside the
 * worker's own domain; no internet sockets (a new network namespace where permitted, else
 * seccomp); no ptrace, process_vm_readv/writev or io_uring (seccomp). The PID and network
 * namespaces are made by proc_spawn (clone flags from sandbox_clone_flags).
 */
#ifndef KBV_SANDBOX_H
#define KBV_SANDBOX_H

#include <jansson.h>
#include <limits.h>
#include <linux/filter.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "util.h"

#define KBV_SB_MAX 16

typedef struct kbv_sandbox_spec {
    int enable;                       /* 0: none of it (--no-sandbox) */
    const char *writable[KBV_SB_MAX]; /* folders the worker may write (and read) beneath */
    int nwritable;                    /* (and always the null-like devices and /dev/nvidia*) */
    const char *readable[KBV_SB_MAX]; /* files or folders it may read (beneath): its problem and candidate files, shared inputs */
    int nreadable;                    /* (and always the system's, see sandbox.c's kSystemRead, and the worker's Python) */
    const char *source_dir;           /* the candidate's folder: its listing and its Python sources (*.py) readable, not its other files */
    const char *worker;               /* the worker binary: readable, and asked once per process for its Python's folders */
    int read_all;                     /* reads are not confined, Landlock handles writes only (sb_probe --no-hide) */
    const char *secret[KBV_SB_MAX];   /* files or folders the worker may not read, even beneath an allowed folder */
    int nsecret;
    const char *scratch_base; /* entries named kbv-* here (other evaluations' scratch) are secret too */
    const char *own_scratch;  /* ... except this one */
    int drop_caps;            /* when root: no capabilities after exec */
    int gpu;                  /* the worker will use CUDA (Landlock only if CUDA works under it here) */
    long long max_file_bytes; /* RLIMIT_FSIZE; 0: unlimited */
    long long max_data_bytes; /* RLIMIT_DATA (host memory); 0: unlimited */
    long long max_cpu_s;      /* RLIMIT_CPU; 0: unlimited */
    long max_procs;           /* RLIMIT_NPROC headroom over the user's tasks now (not root); 0: none */
    long long max_memcg_bytes; /* the limit of the worker's memory cgroup (kbv_memcg); 0: no cgroup */
} kbv_sandbox_spec;

typedef struct kbv_sandbox {
    int enable;
    int ruleset_fd; /* Landlock ruleset, -1: none */
    int landlock_abi;
    struct sock_fprog prog; /* seccomp filter (filter NULL: none) */
    int seccomp_net;        /* the filter refuses internet sockets */
    int drop_caps, nnp;
    int clone_flags;               /* namespaces proc_spawn should try */
    unsigned long long ll_handled; /* the access rights the Landlock ruleset handles */
    unsigned long long ll_scoped;  /* its scopes (signals, abstract UNIX sockets; Landlock ABI 6) */
    struct rlimit fsize, data, cpu, nproc;
    int set_nproc;
    char fs_note[160];   /* why there is no Landlock */
    char read_note[96];  /* why reads are not confined to the allow-list ("" when they are) */
    char scope_note[96]; /* why the ruleset has no scopes ("" when it has) */
    int memcg_version;            /* where workers' memory cgroups are made: cgroup 1 or 2; 0: nowhere */
    char memcg_home[PATH_MAX];    /* ... the cgroup folder they are made in */
    long long memcg_limit;        /* their limit in bytes */
    char memcg_note[240];         /* why there are none (memcg_version 0) */
} kbv_sandbox;

/* Build the sandbox for spec. Layers the machine cannot give are left out and noted; only
 * a failure of kbv itself (out of memory, a worker binary that cannot say where its Python
 * is) is an error. */
int sandbox_prepare(kbv_sandbox *sb, const kbv_sandbox_spec *spec, kbv_err *err);
/* In the forked child, before execve: apply everything. ns: the namespaces clone() gave it
 * (with CLONE_NEWNS it mounts its own /proc). Async-signal-safe. Returns 0, or an
 * errno value for the step that failed. */
int sandbox_enter(const kbv_sandbox *sb, int ns);
/* The namespaces to ask clone() for (CLONE_NEWPID with CLONE_NEWNS for its own /proc,
 * CLONE_NEWNET), 0 when disabled. */
int sandbox_clone_flags(const kbv_sandbox *sb);
/* What applied, for the result: {"filesystem":..., "reads":..., "scope":..., "network":...,
 * ...}. clone_got is the set of namespace flags the spawn actually obtained. */
json_t *sandbox_describe(const kbv_sandbox *sb, int clone_got);
void sandbox_free(kbv_sandbox *sb);

/* Whether KBV_SANDBOX_SKIP names layer (diagnosis: landlock, reads, scope, seccomp, ns, pidns,
 * netns, ipcns, proc, caps, limits, data, nnp, dumpable). */
int sandbox_skips(const char *layer);

/* ---- a worker's memory cgroup ----
 * So that memory a worker holds outside its heap (memfds, System V shared memory, tmpfs
 * files) counts against --max-memory, which RLIMIT_DATA alone does not. Made in the parent
 * before clone() (sandbox_memcg_create), the worker moved into it by the parent while the
 * child waits before anything else (sandbox_memcg_attach: the child may be PID 1 of its own
 * namespace, so its own pid would not do), removed once the worker is reaped, after whatever
 * is left in it was killed (sandbox_memcg_remove). cgroup v2 where the memory controller is
 * enabled for the children of kbv's cgroup (docs/security.md says where else), cgroup v1's
 * memory hierarchy beneath kbv's cgroup otherwise. */
typedef struct kbv_memcg {
    int version;          /* 1 or 2 while path is made; 0: none */
    char path[PATH_MAX];  /* the worker's cgroup folder; "" once removed (or never made) */
    int applied;          /* the worker was moved into it */
    long long limit_bytes; /* memory.max / memory.limit_in_bytes */
    int swap_limited;     /* swap counted too: memory.swap.max 0 (v2), memory.memsw.limit_in_bytes (v1) */
    char why[300];        /* why it did not apply (applied 0) */
    /* evidence, kept after removal (sandbox_memcg_read) */
    long long oom_kills;  /* v2 memory.events oom_kill, v1 memory.oom_control oom_kill */
    long long limit_hits; /* v2 memory.events max, v1 memory(.memsw).failcnt */
    long long peak_bytes; /* v2 memory.peak, v1 memory(.memsw).max_usage_in_bytes; 0: unknown */
} kbv_memcg;

/* In the parent: make the cgroup for a worker of sb (or note why not in cg->why). */
void sandbox_memcg_create(const kbv_sandbox *sb, kbv_memcg *cg);
/* In the parent, with the child (host pid) waiting: move it in; cg->applied, or cg->why. */
void sandbox_memcg_attach(kbv_memcg *cg, pid_t pid);
/* Read the evidence counters (while the cgroup exists; the last values stay). */
void sandbox_memcg_read(kbv_memcg *cg);
/* Kill what is left in it, remove it (the counters read first). */
void sandbox_memcg_remove(kbv_memcg *cg);
/* {"applied": true, "version", "limit_bytes", "swap_limited"} or {"applied": false, "why"}. */
json_t *sandbox_memcg_describe(const kbv_memcg *cg);

/* Physical memory of the machine in bytes (0 if unknown). */
long long sandbox_phys_bytes(void);

#endif
