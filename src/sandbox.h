/* sandbox.h -- what confines a worker process (docs/security.md).
 *
 * kbv prepares a sandbox in the parent (sandbox_prepare: a Landlock ruleset, a seccomp
 * program, resource limits) and the forked child enters it with async-signal-safe system
 * calls only (sandbox_enter), just before execve; everything it sets survives the exec.
 * Each layer is used where the kernel and kbv's privileges allow it, and the sandbox says
 * which did (sandbox_describe) so that a result records how its candidate was confined.
 *
 * Layers: resource limits (file size, data memory, CPU time, core dumps off, processes);
 * no new privileges; for root, an empty capability bounding set; file-system writes only
 * beneath the listed folders and no reads of the listed secrets (Landlock); no internet
 * sockets (a new network namespace where permitted, else seccomp); no ptrace,
 * process_vm_readv/writev or io_uring (seccomp). The PID and network namespaces are made by
 * proc_spawn (clone flags from sandbox_clone_flags).
 */
#ifndef KBV_SANDBOX_H
#define KBV_SANDBOX_H

#include <jansson.h>
#include <linux/filter.h>
#include <sys/resource.h>

#include "util.h"

#define KBV_SB_MAX 16

typedef struct kbv_sandbox_spec {
    int enable;                       /* 0: none of it (--no-sandbox) */
    const char *writable[KBV_SB_MAX]; /* folders the worker may write beneath */
    int nwritable;                    /* (and always the null-like devices and /dev/nvidia*) */
    const char *secret[KBV_SB_MAX];   /* files or folders the worker may not read */
    int nsecret;
    const char *scratch_base; /* entries named kbv-* here (other evaluations' scratch) are secret too */
    const char *own_scratch;  /* ... except this one */
    int drop_caps;            /* when root: no capabilities after exec */
    int gpu;                  /* the worker will use CUDA (Landlock only if CUDA works under it here) */
    long long max_file_bytes; /* RLIMIT_FSIZE; 0: unlimited */
    long long max_data_bytes; /* RLIMIT_DATA (host memory); 0: unlimited */
    long long max_cpu_s;      /* RLIMIT_CPU; 0: unlimited */
    long max_procs;           /* RLIMIT_NPROC headroom over the user's tasks now (not root); 0: none */
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
    struct rlimit fsize, data, cpu, nproc;
    int set_nproc;
    char fs_note[160]; /* why there is no Landlock */
} kbv_sandbox;

/* Build the sandbox for spec. Layers the machine cannot give are left out and noted; only
 * a failure of kbv itself (out of memory) is an error. */
int sandbox_prepare(kbv_sandbox *sb, const kbv_sandbox_spec *spec, kbv_err *err);
/* In the forked child, before execve: apply everything. ns: the namespaces clone() gave it
 * (with CLONE_NEWNS it mounts its own /proc). Async-signal-safe. Returns 0, or an
 * errno value for the step that failed. */
int sandbox_enter(const kbv_sandbox *sb, int ns);
/* The namespaces to ask clone() for (CLONE_NEWPID with CLONE_NEWNS for its own /proc,
 * CLONE_NEWNET), 0 when disabled. */
int sandbox_clone_flags(const kbv_sandbox *sb);
/* What applied, for the result: {"filesystem":..., "network":..., ...}. clone_got is the
 * set of namespace flags the spawn actually obtained. */
json_t *sandbox_describe(const kbv_sandbox *sb, int clone_got);
void sandbox_free(kbv_sandbox *sb);

/* Whether KBV_SANDBOX_SKIP names layer (diagnosis: landlock, seccomp, ns, pidns, netns, proc,
 * caps, limits, data, nnp, dumpable). */
int sandbox_skips(const char *layer);

/* Physical memory of the machine in bytes (0 if unknown). */
long long sandbox_phys_bytes(void);

#endif
