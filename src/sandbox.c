/* sandbox.c -- confinement of worker processes (see sandbox.h, docs/security.md).
 *
 * Design notes:
 * - Landlock is an allow-list. Writes: the listed folders only. Reads: everything but the
 *   secrets, which takes rules for every entry of every folder on the way down to a secret
 *   except the next step towards it (a path complement); reading a folder's listing stays
 *   allowed along the way. Entries created later in those folders are unreadable, which is
 *   what other evaluations' scratch folders need; symbolic links get no rule (a path is
 *   checked where it resolves).
 * - The seccomp program is built with libseccomp in the parent and only installed (one
 *   prctl) in the child, where nothing may allocate.
 * - Namespaces are probed once per process (a forked child tries unshare()); proc_spawn
 *   asks clone() for them and falls back to a plain fork.
 */
#include "sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

#define FS_READ      (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define FS_FILE_ONLY (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE)

static long ll_create(const struct landlock_ruleset_attr *a, size_t size, unsigned flags) {
    return syscall(SYS_landlock_create_ruleset, a, size, flags);
}

long long sandbox_phys_bytes(void) {
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (long long)pages * size : 0;
}

/* ---- namespaces: can this process make them? (asked once) ---- */

/* A mount namespace's own /proc, for a process that is PID 1 of a new PID namespace: the
 * host's /proc there shows other processes, and CUDA cannot name its threads in it (libcuda
 * writes /proc/self/task/<gettid()>/comm, and gettid() counts in the new namespace; on the
 * H200 cuInit then fails with CUDA_ERROR_OPERATING_SYSTEM). The kernel-wide parts that root
 * could write without capabilities are bound read-only over it, as container runtimes do.
 * Async-signal-safe. */
static int mount_own_proc(void) {
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) return -1;
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) return -1;
    static const char *const ro[] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"};
    for (size_t i = 0; i < sizeof ro / sizeof *ro; i++) {
        if (mount(ro[i], ro[i], NULL, MS_BIND | MS_REC, NULL) < 0) {
            if (errno == ENOENT) continue;
            return -1;
        }
        if (mount(NULL, ro[i], NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) return -1;
    }
    return 0;
}

/* Landlock rule for path with access (limited to what the ruleset handles); in the child, so
 * that it names this process's entries. A rule holds an inode, and procfs makes a new inode
 * for an entry whose dentry was dropped: keep (an O_PATH descriptor left open across exec)
 * pins the entry for the worker's life. Async-signal-safe. Returns 0 or an errno value. */
static int child_rule(int ruleset_fd, unsigned long long handled, const char *path, unsigned long long access, int keep) {
    access &= handled;
    if (!access) return 0;
    int fd = open(path, O_PATH | (keep ? 0 : O_CLOEXEC));
    if (fd < 0) return errno;
    struct landlock_path_beneath_attr pb = {.allowed_access = access, .parent_fd = fd};
    int e = syscall(SYS_landlock_add_rule, ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0 ? errno : 0;
    if (!keep || e) close(fd);
    return e;
}

/* The worker's own threads' entries stay writable: CUDA names its threads there (above). */
#define TASK_RIGHTS (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_READ_DIR)

static int probe_namespaces(void) {
    static int probed = -1;
    if (probed >= 0) return probed;
    probed = 0;
    pid_t pid = fork();
    if (pid == 0) {
        if (unshare(CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC) < 0) _exit(1);
        if (unshare(CLONE_NEWNS) < 0) _exit(2);
        pid_t init = fork(); /* PID 1 of the new namespace mounts its /proc */
        if (init == 0) _exit(mount_own_proc() == 0 ? 0 : 1);
        int st;
        _exit(init > 0 && waitpid(init, &st, 0) == init && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 2);
    }
    int st;
    if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) != 1)
        probed = CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | (WEXITSTATUS(st) == 0 ? CLONE_NEWNS : 0);
    return probed;
}

/* ---- Landlock ---- */

typedef struct ll_build {
    int fd;
    unsigned long long handled, write_rights;
    char secret[KBV_SB_MAX][PATH_MAX];
    int nsecret;
    char base[PATH_MAX], own[PATH_MAX]; /* the scratch base and this evaluation's scratch, resolved */
    int failed;                         /* rules the kernel refused */
} ll_build;

static void add_rule(ll_build *b, const char *path, unsigned long long access) {
    int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return; /* gone, or not ours to see: no rule, so no access */
    struct stat st;
    if (fstat(fd, &st) == 0 && !S_ISLNK(st.st_mode)) {
        if (!S_ISDIR(st.st_mode)) access &= FS_FILE_ONLY;
        struct landlock_path_beneath_attr pb = {.allowed_access = access & b->handled, .parent_fd = fd};
        if (pb.allowed_access && syscall(SYS_landlock_add_rule, b->fd, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0) b->failed++;
    }
    close(fd);
}

static int starts_dir(const char *path, const char *dir) { /* path is dir or beneath it */
    size_t n = strlen(dir);
    if (n == 1 && dir[0] == '/') return 1;
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static int is_secret(const ll_build *b, const char *path, const char *dir, const char *name) {
    for (int i = 0; i < b->nsecret; i++)
        if (strcmp(path, b->secret[i]) == 0) return 1;
    if (b->base[0] && strncmp(name, "kbv-", 4) == 0 && strcmp(dir, b->base) == 0) return !b->own[0] || strcmp(path, b->own) != 0;
    return 0;
}

static int is_ancestor(const ll_build *b, const char *path) { /* a secret lies strictly beneath */
    for (int i = 0; i < b->nsecret; i++)
        if (strcmp(path, b->secret[i]) != 0 && starts_dir(b->secret[i], path)) return 1;
    return b->base[0] && starts_dir(b->base, path);
}

/* Read rules for everything beneath dir except the secrets. */
static void walk(ll_build *b, const char *dir, int depth) {
    add_rule(b, dir, LANDLOCK_ACCESS_FS_READ_DIR);
    DIR *d = depth < 64 ? opendir(dir) : NULL;
    if (!d) return;
    struct dirent *e;
    char path[PATH_MAX];
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (snprintf(path, sizeof path, "%s%s%s", dir, strcmp(dir, "/") == 0 ? "" : "/", e->d_name) >= (int)sizeof path) continue;
        if (is_secret(b, path, dir, e->d_name)) continue;
        if (is_ancestor(b, path)) walk(b, path, depth + 1);
        else add_rule(b, path, FS_READ);
    }
    closedir(d);
}

static void build_landlock(kbv_sandbox *sb, const kbv_sandbox_spec *s) {
    int abi = (int)ll_create(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 1) {
        snprintf(sb->fs_note, sizeof sb->fs_note, "Landlock is not available in this kernel (%s)", strerror(errno));
        return;
    }
    ll_build b = {.fd = -1};
    b.write_rights = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                     LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
                     LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
    if (abi >= 2) b.write_rights |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3) b.write_rights |= LANDLOCK_ACCESS_FS_TRUNCATE;
    for (int i = 0; i < s->nsecret && b.nsecret < KBV_SB_MAX; i++, b.nsecret++) /* one not made yet keeps its name */
        if (!realpath(s->secret[i], b.secret[b.nsecret])) snprintf(b.secret[b.nsecret], PATH_MAX, "%s", s->secret[i]);
    if (s->scratch_base && !realpath(s->scratch_base, b.base)) snprintf(b.base, PATH_MAX, "%s", s->scratch_base);
    if (s->own_scratch && !realpath(s->own_scratch, b.own)) snprintf(b.own, PATH_MAX, "%s", s->own_scratch);
    int hide = b.nsecret > 0 || s->scratch_base;
    b.handled = b.write_rights | (hide ? FS_READ : 0);
    struct landlock_ruleset_attr attr = {.handled_access_fs = b.handled};
    b.fd = (int)ll_create(&attr, sizeof attr, 0);
    if (b.fd < 0) {
        snprintf(sb->fs_note, sizeof sb->fs_note, "landlock_create_ruleset: %s", strerror(errno));
        return;
    }
    int high = fcntl(b.fd, F_DUPFD_CLOEXEC, 16); /* clear of the numbers the child dup2()s onto */
    close(b.fd);
    if (high < 0) {
        snprintf(sb->fs_note, sizeof sb->fs_note, "fcntl: %s", strerror(errno));
        return;
    }
    b.fd = high;
    for (int i = 0; i < s->nwritable; i++) add_rule(&b, s->writable[i], b.write_rights | FS_READ);
    const char *extra = getenv("KBV_SANDBOX_WRITABLE"); /* diagnosis: more writable folders, ':'-separated */
    for (const char *p = extra; p && *p;) {
        size_t n = strcspn(p, ":");
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%.*s", (int)n, p);
        add_rule(&b, dir, b.write_rights | FS_READ);
        p += n + (p[n] != '\0');
    }
    /* Devices opened read-write: the null-like ones and the GPU's (not /dev as a whole:
     * /dev/shm would let a candidate leave files for a later evaluation). */
    static const char *devs[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"};
    for (size_t i = 0; i < sizeof devs / sizeof *devs; i++) add_rule(&b, devs[i], LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE);
    DIR *dd = opendir("/dev");
    struct dirent *de;
    char dpath[PATH_MAX];
    while (dd && (de = readdir(dd)))
        if (strncmp(de->d_name, "nvidia", 6) == 0) { /* nvidia0.., nvidiactl, nvidia-uvm, nvidia-caps/ */
            snprintf(dpath, sizeof dpath, "/dev/%s", de->d_name);
            add_rule(&b, dpath, LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_DIR);
        }
    if (dd) closedir(dd);
    if (hide) walk(&b, "/", 0);
    if (b.failed) {
        snprintf(sb->fs_note, sizeof sb->fs_note, "%d Landlock rule(s) were refused", b.failed);
        close(b.fd);
        return;
    }
    sb->ruleset_fd = b.fd;
    sb->landlock_abi = abi;
    sb->ll_handled = b.handled;
}

/* Whether CUDA initialises under a Landlock ruleset, asked once per process in a throwaway
 * child (cuInit and the primary context of device 0). The NVIDIA driver's library opens and
 * creates files of its own; where it needs one kbv's rules do not grant, a GPU worker is
 * better off without Landlock than unable to run (docs/security.md). */
typedef int (*cu_fn1)(unsigned);
typedef int (*cu_dev_fn)(int *, int);
typedef int (*cu_ctx_fn)(void **, int);

static int cuda_under_landlock(int ruleset_fd, unsigned long long handled, char *why, size_t n) {
    static int verdict = -1;
    static char saved[120];
    if (verdict < 0) {
        int fds[2], r = -3;
        if (pipe2(fds, O_CLOEXEC) < 0) return snprintf(why, n, "pipe: %s", strerror(errno)), 0;
        pid_t pid = fork();
        if (pid == 0) {
            close(fds[0]);
            r = -1;
            if (child_rule(ruleset_fd, handled, "/proc/self/task", TASK_RIGHTS, 1) == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
                syscall(SYS_landlock_restrict_self, ruleset_fd, 0) == 0) {
                void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
                cu_fn1 init = lib ? (cu_fn1)dlsym(lib, "cuInit") : NULL;
                cu_dev_fn get = lib ? (cu_dev_fn)dlsym(lib, "cuDeviceGet") : NULL;
                cu_ctx_fn ctx = lib ? (cu_ctx_fn)dlsym(lib, "cuDevicePrimaryCtxRetain") : NULL;
                int dev = 0;
                void *c = NULL;
                r = !init || !get || !ctx ? -2 : init(0);
                if (r == 0 && (r = get(&dev, 0)) == 0) r = ctx(&c, dev);
            }
            if (write(fds[1], &r, sizeof r) < 0) _exit(1);
            _exit(0);
        }
        close(fds[1]);
        /* A wedged driver must not hang kbv: the child gets a minute, then is killed. */
        struct pollfd pf = {.fd = fds[0], .events = POLLIN};
        int st, ready = pid > 0 ? poll(&pf, 1, 60000) : 0;
        if (ready <= 0 || read(fds[0], &r, sizeof r) != sizeof r) r = -3;
        close(fds[0]);
        if (pid > 0 && ready <= 0) kill(pid, SIGKILL);
        if (pid > 0) waitpid(pid, &st, 0);
        /* No driver library here: Landlock is not what stops CUDA, keep it. */
        verdict = r == 0 || r == -2;
        if (r == -1) snprintf(saved, sizeof saved, "the self-test could not enter Landlock");
        else if (r == -3) snprintf(saved, sizeof saved, "the self-test did not report within 60 s");
        else snprintf(saved, sizeof saved, "cuInit or the primary context failed with CUresult %d under it", r);
    }
    snprintf(why, n, "%s", saved);
    return verdict;
}

/* ---- seccomp ---- */

static int build_seccomp(kbv_sandbox *sb, int refuse_inet, kbv_err *err) {
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) return kbv_seterr(err, "seccomp_init failed");
    int rc = 0;
#if !defined(__SANITIZE_ADDRESS__) /* LeakSanitizer stops the process's threads with ptrace */
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ptrace), 0);
#endif
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(process_vm_readv), 0);
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(process_vm_writev), 0);
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(io_uring_setup), 0);
    /* The kernel's keyrings outlive the process and are shared by the user's processes: a key
     * left by one evaluation is read by the next. */
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(add_key), 0);
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(request_key), 0);
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(keyctl), 0);
    /* No user namespace (in one, an unprivileged process is root and may unshare the rest):
     * unshare and clone with CLONE_NEWUSER are refused; clone3, whose flags seccomp cannot read,
     * answers ENOSYS, and the C library falls back to clone. */
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    if (refuse_inet) {
        static const int domains[] = {AF_INET, AF_INET6, AF_PACKET};
        for (int i = 0; i < 3; i++)
            rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)domains[i]));
    }
    int fd = rc == 0 ? memfd_create("kbv-seccomp", MFD_CLOEXEC) : -1;
    if (fd >= 0 && seccomp_export_bpf(ctx, fd) == 0) {
        off_t n = lseek(fd, 0, SEEK_END);
        void *buf = n > 0 ? malloc((size_t)n) : NULL;
        if (buf && pread(fd, buf, (size_t)n, 0) == n) {
            sb->prog.filter = buf;
            sb->prog.len = (unsigned short)((size_t)n / sizeof(struct sock_filter));
            sb->seccomp_net = refuse_inet;
        } else free(buf);
    }
    if (fd >= 0) close(fd);
    seccomp_release(ctx);
    if (!sb->prog.filter) return kbv_seterr(err, "building the seccomp filter failed");
    return 0;
}

/* ---- limits ---- */

static long user_tasks(uid_t uid) { /* tasks (threads) of uid now: what RLIMIT_NPROC counts */
    DIR *d = opendir("/proc");
    if (!d) return -1;
    long n = 0;
    struct dirent *e;
    char path[64];
    while ((e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        struct stat st;
        snprintf(path, sizeof path, "/proc/%.20s", e->d_name);
        if (stat(path, &st) < 0 || st.st_uid != uid) continue;
        long sid, threads;
        if (kbv_proc_stat(e->d_name, &sid, &threads) < 0) continue;
        n += threads;
    }
    closedir(d);
    return n;
}

static struct rlimit lim(long long v) {
    struct rlimit r = {RLIM_INFINITY, RLIM_INFINITY};
    if (v > 0) r.rlim_cur = r.rlim_max = (rlim_t)v;
    return r;
}

/* KBV_SANDBOX_SKIP=layer,...: leave layers out, to find which one a machine cannot take
 * (diagnosis only; docs/security.md). */
int sandbox_skips(const char *layer) {
    const char *s = getenv("KBV_SANDBOX_SKIP");
    size_t n = strlen(layer);
    for (const char *p = s; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] != '\0'))
        if (strncmp(p, layer, n) == 0 && (p[n] == ',' || p[n] == '\0')) return 1;
    return 0;
}

int sandbox_prepare(kbv_sandbox *sb, const kbv_sandbox_spec *spec, kbv_err *err) {
    memset(sb, 0, sizeof *sb);
    sb->ruleset_fd = -1;
    sb->enable = spec->enable;
    if (!spec->enable) return 0;
    sb->fsize = lim(sandbox_skips("limits") ? 0 : spec->max_file_bytes);
#if defined(__SANITIZE_ADDRESS__) /* AddressSanitizer reserves terabytes of shadow memory */
    sb->data = lim(0);
#else
    sb->data = lim(sandbox_skips("limits") || sandbox_skips("data") ? 0 : spec->max_data_bytes);
#endif
    sb->cpu = lim(sandbox_skips("limits") ? 0 : spec->max_cpu_s);
    if (spec->max_procs > 0 && geteuid() != 0) { /* root is exempt from RLIMIT_NPROC */
        long now = user_tasks(geteuid());
        if (now >= 0) sb->nproc = lim(now + spec->max_procs), sb->set_nproc = 1;
    }
    sb->nnp = !sandbox_skips("nnp");
    sb->drop_caps = spec->drop_caps && geteuid() == 0 && !sandbox_skips("caps");
    /* A PID namespace needs its own /proc (a mount namespace) for CUDA: with the host's, cuInit
     * fails on the H200 (GPU run of 2026-12-01, docs/security.md). Where kbv may not mount one,
     * a GPU worker gets no PID namespace; a CPU worker keeps it with the host's /proc. */
    int full = getenv("KBV_SANDBOX_GPU_FULL") != NULL;
    int ns = sandbox_skips("ns") ? 0 : probe_namespaces();
    if (sandbox_skips("pidns")) ns &= ~(CLONE_NEWPID | CLONE_NEWNS);
    if (sandbox_skips("netns")) ns &= ~CLONE_NEWNET;
    if (sandbox_skips("ipcns")) ns &= ~CLONE_NEWIPC; /* System V IPC and message queues: none survives, none is shared */
    if (sandbox_skips("proc")) ns &= ~CLONE_NEWNS;
    if (spec->gpu && !full && !(ns & CLONE_NEWNS)) ns &= ~CLONE_NEWPID;
    sb->clone_flags = ns;
    if (sandbox_skips("landlock")) snprintf(sb->fs_note, sizeof sb->fs_note, "left out (KBV_SANDBOX_SKIP)");
    else build_landlock(sb, spec);
    char why[120];
    if (sb->ruleset_fd >= 0 && spec->gpu && !full && !cuda_under_landlock(sb->ruleset_fd, sb->ll_handled, why, sizeof why)) {
        snprintf(sb->fs_note, sizeof sb->fs_note, "CUDA does not initialise under Landlock on this machine (%s)", why);
        close(sb->ruleset_fd);
        sb->ruleset_fd = -1;
    }
    if (sandbox_skips("seccomp")) return 0;
    if (build_seccomp(sb, !(sb->clone_flags & CLONE_NEWNET), err) < 0) {
        sandbox_free(sb);
        return -1;
    }
    return 0;
}

int sandbox_clone_flags(const kbv_sandbox *sb) { return sb->enable ? sb->clone_flags : 0; }

int sandbox_enter(const kbv_sandbox *sb, int ns) {
    if (!sb || !sb->enable) return 0;
    int e;
    if ((ns & CLONE_NEWNS) && mount_own_proc() < 0) return errno; /* PID 1 of its namespace: its own /proc */
    if (sb->ruleset_fd >= 0) {
        /* The parent's read rule for /proc names the host's; a new one names this process's. */
        if ((ns & CLONE_NEWNS) && (e = child_rule(sb->ruleset_fd, sb->ll_handled, "/proc", FS_READ, 0)) != 0) return e;
        if ((e = child_rule(sb->ruleset_fd, sb->ll_handled, "/proc/self/task", TASK_RIGHTS, 1)) != 0) return e;
    }
    if (setrlimit(RLIMIT_FSIZE, &sb->fsize) < 0 || setrlimit(RLIMIT_DATA, &sb->data) < 0 || setrlimit(RLIMIT_CPU, &sb->cpu) < 0) return errno;
    if (sb->set_nproc && setrlimit(RLIMIT_NPROC, &sb->nproc) < 0) return errno;
    if ((sb->nnp || sb->ruleset_fd >= 0 || sb->prog.filter) && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) return errno;
    if (sb->drop_caps) {
        for (int cap = 0; cap <= 63; cap++)
            if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL) return errno;
    }
    if (sb->ruleset_fd >= 0 && syscall(SYS_landlock_restrict_self, sb->ruleset_fd, 0) < 0) return errno;
    if (sb->prog.filter && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &sb->prog, 0, 0) < 0) return errno;
    return 0;
}

static json_t *lim_json(struct rlimit r) { return r.rlim_cur == RLIM_INFINITY ? json_null() : json_integer((json_int_t)r.rlim_cur); }

json_t *sandbox_describe(const kbv_sandbox *sb, int clone_got) {
    if (!sb->enable) return json_pack("{s:b}", "enabled", 0);
    char fs[200];
    if (sb->ruleset_fd >= 0) snprintf(fs, sizeof fs, "landlock (ABI %d)", sb->landlock_abi);
    else snprintf(fs, sizeof fs, "none: %s", sb->fs_note);
    const char *net = clone_got & CLONE_NEWNET ? "namespace" : sb->seccomp_net ? "seccomp" : "none";
    json_t *lims = json_pack("{s:o, s:o, s:o, s:o}", "file_bytes", lim_json(sb->fsize), "data_bytes", lim_json(sb->data), "cpu_s", lim_json(sb->cpu),
                             "tasks", sb->set_nproc ? lim_json(sb->nproc) : json_null());
    return json_pack("{s:b, s:s, s:s, s:b, s:b, s:s, s:b, s:s, s:o}", "enabled", 1, "filesystem", fs, "network", net, "pid_namespace",
                     (clone_got & CLONE_NEWPID) != 0, "ipc_namespace", (clone_got & CLONE_NEWIPC) != 0, "proc",
                     clone_got & CLONE_NEWNS ? "own" : "host's", "seccomp", sb->prog.filter != NULL, "capabilities",
                     sb->drop_caps    ? "dropped"
                     : geteuid() == 0 ? "kept"
                                      : "none (not root)",
                     "limits", lims);
}

void sandbox_free(kbv_sandbox *sb) {
    if (sb->ruleset_fd >= 0) close(sb->ruleset_fd);
    sb->ruleset_fd = -1;
    free(sb->prog.filter);
    sb->prog.filter = NULL;
}
