/* sandbox.c -- confinement of worker processes (see sandbox.h, docs/security.md).
 *
 * Design notes:
 * - Landlock is an allow-list. Writes: the listed folders only. Reads: the system's
 *   folders (kSystemRead), /proc's own entries and the worker's own process, the devices,
 *   the folders the worker's Python reads (asked of the worker binary once per process:
 *   kbv-worker --python-paths), the runtimes named by LD_LIBRARY_PATH and CUDA_HOME, the
 *   worker binary and the listed files and folders; nothing else (/tmp, /home, /root, /var,
 *   other results databases and scratch folders). Paths are resolved first, since a rule
 *   names what a path resolves to. The secrets are a second line: an allowed folder with a
 *   secret beneath it gets rules for every entry of every folder on the way down to the
 *   secret except the next step towards it (a path complement; entries created there later
 *   are unreadable, which is what other evaluations' scratch folders need).
 * - Landlock ABI 6 scopes: no signal and no abstract UNIX socket reaches a process outside
 *   the worker's own domain (kbv, the other worker, anything else of the user's), which
 *   matters where there is no PID namespace (kbv not root).
 * - The seccomp program is built with libseccomp in the parent and only installed (one
 *   prctl) in the child, where nothing may allocate.
 * - Namespaces are probed once per process (a forked child tries unshare()); proc_spawn
 *   asks clone() for them and falls back to a plain fork.
 * - The memory cgroups' home is found once per process too (memcg_prepare); each worker gets
 *   its own cgroup there, which proc_spawn makes, joins the worker to and removes.
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
#include <time.h>
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

/* The process's own /proc entries, which only it can name: all of a /proc of its own (ns has
 * CLONE_NEWNS: it shows only the worker's processes), else its own /proc/PID (not the other
 * processes' entries of the host's /proc, kbv's among them); and its threads' entries
 * writable. Async-signal-safe. Returns 0 or an errno value. */
static int child_proc_rules(int ruleset_fd, unsigned long long handled, int ns) {
    int e = ns & CLONE_NEWNS ? child_rule(ruleset_fd, handled, "/proc", FS_READ, 0) : child_rule(ruleset_fd, handled, "/proc/self", FS_READ, 1);
    return e ? e : child_rule(ruleset_fd, handled, "/proc/self/task", TASK_RIGHTS, 1);
}

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

#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

/* struct landlock_ruleset_attr as of Landlock ABI 6 (Debian 12's header has only the first
 * field); the kernel takes a shorter size from an older ABI. */
typedef struct ll_attr {
    unsigned long long handled_access_fs, handled_access_net, scoped;
} ll_attr;

/* Read beneath these, where they exist: the system and its runtime installations (CUDA in
 * /usr/local, the driver's libraries in /usr/lib/x86_64-linux-gnu and /usr/share/nvidia, its
 * settings in /etc, its persistence daemon's socket folder). /lib* and /bin are links into
 * /usr on most systems. /proc and /dev are granted entry by entry (build_landlock). */
static const char *const kSystemRead[] = {
    "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/opt", "/sys", "/run/nvidia-persistenced"};
/* ... but never these beneath them: root's files that root without capabilities, as their
 * owner, could still read. */
static const char *const kSystemSecret[] = {"/etc/shadow",    "/etc/shadow-", "/etc/gshadow",     "/etc/gshadow-",        "/etc/sudoers",
                                            "/etc/sudoers.d", "/etc/ssh",     "/etc/ssl/private", "/etc/security/opasswd"};
#define NSYS_SECRET ((int)(sizeof kSystemSecret / sizeof *kSystemSecret))

typedef struct ll_build {
    int fd;
    unsigned long long handled, write_rights;
    char secret[KBV_SB_MAX + NSYS_SECRET][PATH_MAX];
    int nsecret;
    char base[PATH_MAX], own[PATH_MAX]; /* the scratch base and this evaluation's scratch, resolved */
    int failed;                         /* rules the kernel refused */
} ll_build;

static void add_rule_fd(ll_build *b, int fd, unsigned long long access) {
    struct stat st;
    if (fstat(fd, &st) < 0 || S_ISLNK(st.st_mode)) return;
    if (!S_ISDIR(st.st_mode)) access &= FS_FILE_ONLY;
    struct landlock_path_beneath_attr pb = {.allowed_access = access & b->handled, .parent_fd = fd};
    if (pb.allowed_access && syscall(SYS_landlock_add_rule, b->fd, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0) b->failed++;
}

static void add_rule(ll_build *b, const char *path, unsigned long long access) {
    int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return; /* gone, or not ours to see: no rule, so no access */
    add_rule_fd(b, fd, access);
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

/* path is a secret or lies beneath one, or lies in another evaluation's kbv-* folder. */
static int is_hidden(const ll_build *b, const char *path) {
    for (int i = 0; i < b->nsecret; i++)
        if (starts_dir(path, b->secret[i])) return 1;
    if (!b->base[0] || !starts_dir(path, b->base) || strcmp(path, b->base) == 0) return 0;
    const char *rest = path + strlen(b->base) + (strcmp(b->base, "/") != 0);
    return strncmp(rest, "kbv-", 4) == 0 && !(b->own[0] && starts_dir(path, b->own));
}

/* Read rules for everything beneath dir except the secrets (a path complement). */
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

/* An entry of the allow-list: reads beneath path (or of the file), resolved, except any
 * secret within it (walk); nothing for a relative path, "/" or a hidden path. */
static void allow_read(ll_build *b, const char *path) {
    char real[PATH_MAX];
    if (path[0] != '/' || !realpath(path, real)) return; /* absent or unreachable: no rule, no access */
    if (strcmp(real, "/") == 0 || is_hidden(b, real)) return;
    if (is_ancestor(b, real)) walk(b, real, 0);
    else add_rule(b, real, FS_READ);
}

/* A candidate's folder: its listing and the Python sources in it (the first SOURCES_MAX), so
 * that a candidate may import a module beside it; not its other files (a results database or
 * a manifest kept with the candidates). */
#define SOURCES_MAX 4096

static void allow_sources(ll_build *b, const char *dir) {
    char real[PATH_MAX], path[PATH_MAX];
    if (dir[0] != '/' || !realpath(dir, real) || strcmp(real, "/") == 0 || is_hidden(b, real)) return;
    add_rule(b, real, LANDLOCK_ACCESS_FS_READ_DIR);
    DIR *d = opendir(real);
    struct dirent *e;
    int n = 0;
    while (d && n < SOURCES_MAX && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".py") != 0) continue;
        if (snprintf(path, sizeof path, "%s/%s", real, e->d_name) >= (int)sizeof path || is_hidden(b, path)) continue;
        int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) add_rule_fd(b, fd, LANDLOCK_ACCESS_FS_READ_FILE), n++; /* not a link's target */
        if (fd >= 0) close(fd);
    }
    if (d) closedir(d);
}

/* The entries of ':'-separated list on the allow-list. */
static void allow_read_list(ll_build *b, const char *list) {
    for (const char *p = list; p && *p;) {
        size_t n = strcspn(p, ":");
        char dir[PATH_MAX];
        if (n < sizeof dir) {
            snprintf(dir, sizeof dir, "%.*s", (int)n, p);
            allow_read(b, dir);
        }
        p += n + (p[n] != '\0');
    }
}

/* /proc's own entries (cpuinfo, meminfo, sys/, driver/nvidia/, ...), not its processes: the
 * worker's own is granted in the child (child_proc_rules). Opened once and held for the
 * process's life, since a rule holds an inode and procfs makes a new one for an entry whose
 * dentry was dropped. Links (self, mounts, net) need no rule: they resolve into the worker's
 * own entry. */
static int proc_pin[256], nproc_pin = -1;

static void proc_entries(void) {
    if (nproc_pin >= 0) return;
    nproc_pin = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    char path[300];
    while (d && (e = readdir(d)) && nproc_pin < (int)(sizeof proc_pin / sizeof *proc_pin)) {
        if ((e->d_name[0] >= '0' && e->d_name[0] <= '9') || e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "/proc/%s", e->d_name);
        int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && !S_ISLNK(st.st_mode)) proc_pin[nproc_pin++] = fd;
        else if (fd >= 0) close(fd);
    }
    if (d) closedir(d);
}

/* The folders the worker's Python reads (kbv-worker --python-paths: its prefixes, sys.path,
 * its libraries' folders; src/worker/py.c), asked once per process and worker binary. The
 * worker runs no candidate code for it, with the variables that choose its libraries. */
static int python_dirs(const char *worker, const char **out, kbv_err *err) {
    static char asked[PATH_MAX], *text;
    if (text && strcmp(asked, worker) == 0) return *out = text, 0;
    free(text);
    text = NULL;
    static const char *const pass[] = {"PATH", "LD_LIBRARY_PATH", "ASAN_OPTIONS", "UBSAN_OPTIONS"};
    char *envp[sizeof pass / sizeof *pass + 1];
    int ne = 0;
    for (size_t i = 0; i < sizeof pass / sizeof *pass; i++)
        if (getenv(pass[i]) && asprintf(&envp[ne], "%s=%s", pass[i], getenv(pass[i])) >= 0) ne++;
    envp[ne] = NULL;
    int fds[2] = {-1, -1};
    pid_t pid = pipe2(fds, O_CLOEXEC) == 0 ? fork() : -1;
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
        char *argv[] = {(char *)worker, "--python-paths", NULL};
        if (nul >= 0 && dup2(nul, 0) == 0 && dup2(fds[1], 1) == 1 && dup2(nul, 2) == 2) execve(worker, argv, envp);
        _exit(127);
    }
    int e = errno;
    for (int i = 0; i < ne; i++) free(envp[i]);
    if (fds[1] >= 0) close(fds[1]);
    if (pid < 0) {
        if (fds[0] >= 0) close(fds[0]);
        return kbv_seterr(err, "asking %s for its Python's folders: %s", worker, strerror(e));
    }
    kbv_buf buf;
    kbv_buf_init(&buf);
    double deadline = kbv_now() + 60; /* a wedged worker must not hang kbv */
    char chunk[4096];
    int eof = 0, oom = 0;
    while (!eof && !oom && kbv_now() < deadline && buf.len < (1u << 20)) {
        struct pollfd pf = {.fd = fds[0], .events = POLLIN};
        int ready = poll(&pf, 1, 1000);
        if (ready < 0 && errno != EINTR) break;
        if (ready <= 0) continue;
        ssize_t n = read(fds[0], chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) eof = 1;
        else if (kbv_buf_append(&buf, chunk, (size_t)n) < 0) oom = 1;
    }
    close(fds[0]);
    if (!eof) kill(pid, SIGKILL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (oom || kbv_buf_append(&buf, "", 0) < 0) {
        kbv_buf_free(&buf);
        return kbv_seterr(err, "out of memory");
    }
    if (!eof || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        kbv_buf_free(&buf);
        return kbv_seterr(err, "%s --python-paths %s (the sandbox needs the folders of the worker's Python)", worker,
                          !eof                   ? "did not finish within 60 s or printed more than 1 MiB"
                          : !WIFEXITED(st)       ? "was killed by a signal"
                          : WEXITSTATUS(st) == 2 ? "does not know the option (a worker older than kbv)"
                                                 : "failed");
    }
    text = buf.data;
    snprintf(asked, sizeof asked, "%s", worker);
    return *out = text, 0;
}

static int build_landlock(kbv_sandbox *sb, const kbv_sandbox_spec *s, kbv_err *err) {
    int abi = (int)ll_create(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 1) {
        snprintf(sb->fs_note, sizeof sb->fs_note, "Landlock is not available in this kernel (%s)", strerror(errno));
        return 0;
    }
    int reads = !s->read_all && !sandbox_skips("reads");
    if (!reads) snprintf(sb->read_note, sizeof sb->read_note, "%s", s->read_all ? "not asked for" : "left out (KBV_SANDBOX_SKIP)");
    const char *pydirs = NULL;
    if (reads && s->worker && python_dirs(s->worker, &pydirs, err) < 0) return -1;
    ll_build b = {.fd = -1};
    b.write_rights = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                     LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
                     LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
    if (abi >= 2) b.write_rights |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3) b.write_rights |= LANDLOCK_ACCESS_FS_TRUNCATE;
    for (int i = 0; i < s->nsecret && b.nsecret < KBV_SB_MAX; i++, b.nsecret++) /* one not made yet keeps its name */
        if (!realpath(s->secret[i], b.secret[b.nsecret])) snprintf(b.secret[b.nsecret], PATH_MAX, "%s", s->secret[i]);
    for (int i = 0; reads && i < NSYS_SECRET; i++, b.nsecret++)
        if (!realpath(kSystemSecret[i], b.secret[b.nsecret])) snprintf(b.secret[b.nsecret], PATH_MAX, "%s", kSystemSecret[i]);
    if (s->scratch_base && !realpath(s->scratch_base, b.base)) snprintf(b.base, PATH_MAX, "%s", s->scratch_base);
    if (s->own_scratch && !realpath(s->own_scratch, b.own)) snprintf(b.own, PATH_MAX, "%s", s->own_scratch);
    /* Without the allow-list, reads are confined only where there is something to hide. */
    int hide = reads || b.nsecret > 0 || s->scratch_base;
    b.handled = b.write_rights | (hide ? FS_READ : 0);
    ll_attr attr = {.handled_access_fs = b.handled};
    size_t attr_size = sizeof attr.handled_access_fs;
    if (sandbox_skips("scope")) snprintf(sb->scope_note, sizeof sb->scope_note, "left out (KBV_SANDBOX_SKIP)");
    else if (abi < 6) snprintf(sb->scope_note, sizeof sb->scope_note, "Landlock ABI %d (scoping needs 6)", abi);
    else attr.scoped = LANDLOCK_SCOPE_SIGNAL | LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET, attr_size = sizeof attr;
    b.fd = (int)ll_create((const struct landlock_ruleset_attr *)&attr, attr_size, 0);
    if (b.fd < 0) {
        snprintf(sb->fs_note, sizeof sb->fs_note, "landlock_create_ruleset: %s", strerror(errno));
        return 0;
    }
    int high = fcntl(b.fd, F_DUPFD_CLOEXEC, 16); /* clear of the numbers the child dup2()s onto */
    close(b.fd);
    if (high < 0) {
        snprintf(sb->fs_note, sizeof sb->fs_note, "fcntl: %s", strerror(errno));
        return 0;
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
     * /dev/shm would let a candidate leave files for a later evaluation, or read another's
     * scratch there). */
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
    if (reads) { /* the allow-list */
        for (size_t i = 0; i < sizeof kSystemRead / sizeof *kSystemRead; i++) allow_read(&b, kSystemRead[i]);
        proc_entries();
        for (int i = 0; i < nproc_pin; i++) add_rule_fd(&b, proc_pin[i], FS_READ);
        for (const char *p = pydirs; p && *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] != '\0')) {
            char dir[PATH_MAX];
            size_t n = strcspn(p, "\n");
            if (n < sizeof dir) snprintf(dir, sizeof dir, "%.*s", (int)n, p), allow_read(&b, dir);
        }
        /* The runtimes the worker is told to use (session.c passes these variables on). */
        allow_read_list(&b, getenv("LD_LIBRARY_PATH"));
        if (getenv("CUDA_HOME")) allow_read(&b, getenv("CUDA_HOME"));
        if (s->worker) allow_read(&b, s->worker); /* the file, not its folder: results databases often lie beside it */
        for (int i = 0; i < s->nreadable; i++) allow_read(&b, s->readable[i]);
        if (s->source_dir) allow_sources(&b, s->source_dir);
    } else if (hide) {
        walk(&b, "/", 0);
    }
    if (b.failed) {
        snprintf(sb->fs_note, sizeof sb->fs_note, "%d Landlock rule(s) were refused", b.failed);
        close(b.fd);
        return 0;
    }
    sb->ruleset_fd = b.fd;
    sb->landlock_abi = abi;
    sb->ll_handled = b.handled;
    sb->ll_scoped = attr.scoped;
    return 0;
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
            if (child_proc_rules(ruleset_fd, handled, 0) == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
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
            rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)domains[i], 0));
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

/* ---- the memory cgroup ---- */

/* The file's first bytes (at most n - 1), NUL-terminated: their count, or -1 (errno). */
static ssize_t cg_read(const char *dir, const char *file, char *buf, size_t n) {
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t r;
    do r = read(fd, buf, n - 1);
    while (r < 0 && errno == EINTR);
    int e = errno;
    close(fd);
    if (r < 0) return errno = e, -1;
    buf[r] = '\0';
    return r;
}

/* Write s to the file: 0, or an errno value. */
static int cg_write(const char *dir, const char *file, const char *s) {
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    ssize_t n = (ssize_t)strlen(s), w;
    do w = write(fd, s, (size_t)n);
    while (w < 0 && errno == EINTR);
    int e = w == n ? 0 : w < 0 ? errno : EIO;
    if (close(fd) < 0 && !e) e = errno;
    return e;
}

/* word is one of the words of list (separated by spaces, commas or newlines). */
static int has_word(const char *list, const char *word) {
    size_t n = strlen(word);
    for (const char *p = list; *p; p += strcspn(p, " ,\n"), p += *p != '\0') {
        size_t k = strcspn(p, " ,\n");
        if (k == n && strncmp(p, word, n) == 0) return 1;
    }
    return 0;
}

/* The value after "key " in a flat-keyed file's text (memory.events, memory.oom_control). */
static long long keyed(const char *text, const char *key) {
    size_t n = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p += p != NULL)
        if (strncmp(p, key, n) == 0 && p[n] == ' ') return atoll(p + n + 1);
    return -1;
}

/* Where kbv's cgroup of hierarchy v2 (or v1's memory hierarchy) is in this mount namespace:
 * the mount point of that hierarchy joined with kbv's path in it (/proc/self/cgroup, less the
 * mount's own root). 0, or -1 with why. */
static int cg_self_dir(int v2, char *dir, size_t n, char *why, size_t wn) {
    char cg[PATH_MAX] = "", line[PATH_MAX + 128];
    FILE *f = fopen("/proc/self/cgroup", "re");
    while (f && fgets(line, sizeof line, f)) { /* "0::/path" (v2), "4:memory:/path" (v1) */
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        *c1 = *c2 = '\0';
        if (v2 ? strcmp(line, "0") == 0 && c2 == c1 + 1 : has_word(c1 + 1, "memory")) snprintf(cg, sizeof cg, "%s", c2 + 1);
    }
    if (f) fclose(f);
    const char *kind = v2 ? "cgroup v2" : "cgroup v1 (memory)";
    if (!cg[0]) return snprintf(why, wn, "%s: kbv is in no such cgroup (/proc/self/cgroup)", kind), -1;
    char mnt[PATH_MAX] = "", root[PATH_MAX] = "";
    f = fopen("/proc/self/mountinfo", "re");
    while (f && fgets(line, sizeof line, f)) { /* "ID PARENT M:N ROOT MOUNTPOINT OPTS ... - FSTYPE SOURCE SUPEROPTS" */
        char *dash = strstr(line, " - "), r[PATH_MAX], m[PATH_MAX], type[32], src[64], super[512] = "";
        if (!dash || sscanf(line, "%*s %*s %*s %4095s %4095s", r, m) != 2 || sscanf(dash + 3, "%31s %63s %511s", type, src, super) < 2) continue;
        if (strchr(m, '\\')) continue; /* an escaped name: not one kbv would make */
        if (v2 ? strcmp(type, "cgroup2") == 0 : strcmp(type, "cgroup") == 0 && has_word(super, "memory"))
            snprintf(root, sizeof root, "%s", r), snprintf(mnt, sizeof mnt, "%s", m);
    }
    if (f) fclose(f);
    if (!mnt[0]) return snprintf(why, wn, "%s: not mounted", kind), -1;
    const char *rest = cg;
    if (strcmp(root, "/") != 0) {
        size_t k = strlen(root);
        if (strncmp(cg, root, k) != 0 || (cg[k] != '/' && cg[k] != '\0'))
            return snprintf(why, wn, "%s: kbv's cgroup %s is outside the mounted part (%s)", kind, cg, root), -1;
        rest = cg + k;
    }
    if (snprintf(dir, n, "%s%s", mnt, strcmp(rest, "/") == 0 ? "" : rest) >= (int)n) return snprintf(why, wn, "%s: path too long", kind), -1;
    return 0;
}

/* A cgroup v2 folder whose limits a worker moved out from beneath it would escape. */
static const char *cg_limited(const char *dir) {
    static const char *const files[] = {"memory.max", "memory.high", "memory.swap.max", "pids.max", "cpu.max"};
    char buf[128];
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (cg_read(dir, files[i], buf, sizeof buf) > 0 && strncmp(buf, "max", 3) != 0) return files[i];
    return NULL;
}

/* cgroup v2: kbv's own cgroup where the memory controller is enabled for its children (or
 * kbv may enable it: only where the cgroup holds no process, the root of a namespace), else
 * the nearest cgroup above it where it is, provided no cgroup on the way down to kbv has a
 * limit of its own (memory, pids, cpu) that a worker moved beside them would escape. */
static int memcg_home_v2(char *home, size_t n, char *why, size_t wn) {
    char dir[PATH_MAX], buf[512];
    if (cg_self_dir(1, dir, sizeof dir, why, wn) < 0) return -1;
    if (cg_read(dir, "cgroup.controllers", buf, sizeof buf) < 0) return snprintf(why, wn, "cgroup v2: %s: %s", dir, strerror(errno)), -1;
    if (!has_word(buf, "memory")) return snprintf(why, wn, "cgroup v2: no memory controller in kbv's cgroup %s", dir), -1;
    char cur[PATH_MAX];
    snprintf(cur, sizeof cur, "%s", dir);
    for (int self = 1;; self = 0) {
        if (cg_read(cur, "cgroup.subtree_control", buf, sizeof buf) >= 0 &&
            (has_word(buf, "memory") || (self && cg_write(cur, "cgroup.subtree_control", "+memory") == 0)))
            return snprintf(home, n, "%s", cur), 0;
        const char *lim = cg_limited(cur);
        if (lim) {
            snprintf(why, wn, "cgroup v2: the memory controller is not enabled for the children of %s, and a worker's cgroup beside it would escape its %s",
                     cur, lim);
            return -1;
        }
        char *slash = strrchr(cur, '/');
        if (!slash || slash == cur) break;
        *slash = '\0';
        if (cg_read(cur, "cgroup.controllers", buf, sizeof buf) < 0) break; /* above the mount */
    }
    return snprintf(why, wn, "cgroup v2: the memory controller is not enabled for the children of kbv's cgroup %s or a cgroup above it", dir), -1;
}

/* cgroup v1: beneath kbv's own cgroup of the memory hierarchy. */
static int memcg_home_v1(char *home, size_t n, char *why, size_t wn) {
    char dir[PATH_MAX], buf[64];
    if (cg_self_dir(0, dir, sizeof dir, why, wn) < 0) return -1;
    if (cg_read(dir, "memory.limit_in_bytes", buf, sizeof buf) < 0) return snprintf(why, wn, "cgroup v1: %s: %s", dir, strerror(errno)), -1;
    return snprintf(home, n, "%s", dir), 0;
}

/* Folders kbv-PID-N in home whose kbv is gone (a kbv killed before it removed them), left a
 * minute ago or more: removed (an rmdir removes only a cgroup without processes). */
static void memcg_sweep(const char *home) {
    DIR *d = opendir(home);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        int pid;
        unsigned k;
        char end;
        struct stat st;
        if (sscanf(e->d_name, "kbv-%d-%u%c", &pid, &k, &end) != 2 || pid <= 0 || pid == getpid()) continue;
        if (kill(pid, 0) == 0 || errno != ESRCH) continue;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) || time(NULL) - st.st_mtime < 60) continue;
        unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
    }
    if (d) closedir(d);
}

/* Where this process makes workers' memory cgroups: found once, v2 before v1. */
static void memcg_prepare(kbv_sandbox *sb, const kbv_sandbox_spec *spec) {
    static int found = -1, version;
    static char home[PATH_MAX], why[240];
    if (spec->max_memcg_bytes <= 0) {
        snprintf(sb->memcg_note, sizeof sb->memcg_note, "no memory limit (--max-memory 0)");
        return;
    }
    if (sandbox_skips("memcg")) {
        snprintf(sb->memcg_note, sizeof sb->memcg_note, "left out (KBV_SANDBOX_SKIP)");
        return;
    }
    if (found < 0) {
        char why2[120];
        found = 0;
        if (memcg_home_v2(home, sizeof home, why, sizeof why) == 0) found = 1, version = 2;
        else if (memcg_home_v1(home, sizeof home, why2, sizeof why2) == 0) found = 1, version = 1;
        else {
            size_t k = strlen(why);
            snprintf(why + k, sizeof why - k, "; %s", why2);
        }
        if (found) memcg_sweep(home);
    }
    if (!found) {
        snprintf(sb->memcg_note, sizeof sb->memcg_note, "%s", why);
        return;
    }
    sb->memcg_version = version;
    snprintf(sb->memcg_home, sizeof sb->memcg_home, "%s", home);
    sb->memcg_limit = spec->max_memcg_bytes;
}

void sandbox_memcg_create(const kbv_sandbox *sb, kbv_memcg *cg) {
    static unsigned counter;
    memset(cg, 0, sizeof *cg);
    if (!sb || !sb->enable) {
        snprintf(cg->why, sizeof cg->why, "no sandbox");
        return;
    }
    if (!sb->memcg_version) {
        snprintf(cg->why, sizeof cg->why, "%s", sb->memcg_note);
        return;
    }
    if (snprintf(cg->path, sizeof cg->path, "%s/kbv-%d-%u", sb->memcg_home, (int)getpid(), ++counter) >= (int)sizeof cg->path) {
        snprintf(cg->why, sizeof cg->why, "cgroup path too long");
        cg->path[0] = '\0';
        return;
    }
    if (mkdir(cg->path, 0755) < 0) {
        snprintf(cg->why, sizeof cg->why, "mkdir %s: %s", cg->path, strerror(errno));
        cg->path[0] = '\0';
        return;
    }
    cg->version = sb->memcg_version;
    cg->limit_bytes = sb->memcg_limit;
    char lim[32];
    snprintf(lim, sizeof lim, "%lld", sb->memcg_limit);
    int e;
    if (cg->version == 2) {
        e = cg_write(cg->path, "memory.max", lim);
        if (!e) cg->swap_limited = cg_write(cg->path, "memory.swap.max", "0") == 0;
        if (!e) cg_write(cg->path, "memory.oom.group", "1"); /* the whole worker goes, not one of its processes */
    } else {
        e = cg_write(cg->path, "memory.limit_in_bytes", lim); /* memsw (memory + swap) may not be below it: set second */
        if (!e) cg->swap_limited = cg_write(cg->path, "memory.memsw.limit_in_bytes", lim) == 0;
    }
    if (e) {
        snprintf(cg->why, sizeof cg->why, "setting the limit of %s: %s", cg->path, strerror(e));
        rmdir(cg->path);
        cg->path[0] = '\0';
        cg->version = 0;
    }
}

void sandbox_memcg_attach(kbv_memcg *cg, pid_t pid) {
    if (!cg->path[0]) return;
    char s[32];
    snprintf(s, sizeof s, "%d", (int)pid);
    int e = cg_write(cg->path, "cgroup.procs", s);
    if (!e) {
        cg->applied = 1;
        return;
    }
    snprintf(cg->why, sizeof cg->why, "moving the worker into %s: %s", cg->path, strerror(e));
    rmdir(cg->path);
    cg->path[0] = '\0';
}

void sandbox_memcg_read(kbv_memcg *cg) {
    if (!cg->path[0] || !cg->applied) return;
    char buf[1024];
    long long v;
    if (cg->version == 2) {
        if (cg_read(cg->path, "memory.events", buf, sizeof buf) > 0) {
            if ((v = keyed(buf, "oom_kill")) > cg->oom_kills) cg->oom_kills = v;
            if ((v = keyed(buf, "max")) > cg->limit_hits) cg->limit_hits = v;
        }
        if (cg_read(cg->path, "memory.peak", buf, sizeof buf) > 0 && (v = atoll(buf)) > cg->peak_bytes) cg->peak_bytes = v;
    } else {
        if (cg_read(cg->path, "memory.oom_control", buf, sizeof buf) > 0 && (v = keyed(buf, "oom_kill")) > cg->oom_kills) cg->oom_kills = v;
        if (cg_read(cg->path, cg->swap_limited ? "memory.memsw.failcnt" : "memory.failcnt", buf, sizeof buf) > 0 && (v = atoll(buf)) > cg->limit_hits)
            cg->limit_hits = v;
        if (cg_read(cg->path, cg->swap_limited ? "memory.memsw.max_usage_in_bytes" : "memory.max_usage_in_bytes", buf, sizeof buf) > 0 &&
            (v = atoll(buf)) > cg->peak_bytes)
            cg->peak_bytes = v;
    }
}

/* SIGKILL to every process in the cgroup: cgroup.kill (v2, Linux 5.14), else one by one. */
static void memcg_kill_all(const kbv_memcg *cg) {
    if (cg->version == 2 && cg_write(cg->path, "cgroup.kill", "1") == 0) return;
    char buf[4096];
    if (cg_read(cg->path, "cgroup.procs", buf, sizeof buf) <= 0) return;
    for (char *p = buf; *p; p += strcspn(p, "\n"), p += *p != '\0') {
        int pid = atoi(p);
        if (pid > 0) kill(pid, SIGKILL);
    }
}

void sandbox_memcg_remove(kbv_memcg *cg) {
    if (!cg->path[0]) return;
    sandbox_memcg_read(cg);
    for (int i = 0; i < 200; i++) { /* what was killed leaves it as it exits */
        if (rmdir(cg->path) == 0 || errno != EBUSY) break;
        memcg_kill_all(cg);
        usleep(5000);
    }
    cg->path[0] = '\0';
}

json_t *sandbox_memcg_describe(const kbv_memcg *cg) {
    if (!cg->applied) return json_pack("{s:b, s:s}", "applied", 0, "why", cg->why[0] ? cg->why : "not made");
    return json_pack("{s:b, s:i, s:I, s:b}", "applied", 1, "version", cg->version, "limit_bytes", (json_int_t)cg->limit_bytes, "swap_limited",
                     cg->swap_limited);
}

int sandbox_prepare(kbv_sandbox *sb, const kbv_sandbox_spec *spec, kbv_err *err) {
    memset(sb, 0, sizeof *sb);
    sb->ruleset_fd = -1;
    sb->enable = spec->enable;
    if (!spec->enable) return 0;
    memcg_prepare(sb, spec);
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
    else if (build_landlock(sb, spec, err) < 0) return -1;
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
    if (sb->ruleset_fd >= 0 && (e = child_proc_rules(sb->ruleset_fd, sb->ll_handled, ns)) != 0) return e;
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
    char fs[200], reads[160], scope[160];
    if (sb->ruleset_fd >= 0) snprintf(fs, sizeof fs, "landlock (ABI %d)", sb->landlock_abi);
    else snprintf(fs, sizeof fs, "none: %s", sb->fs_note);
    if (sb->ruleset_fd < 0) snprintf(reads, sizeof reads, "unconfined: no Landlock");
    else if (sb->read_note[0])
        snprintf(reads, sizeof reads, "%s: %s", sb->ll_handled & LANDLOCK_ACCESS_FS_READ_FILE ? "all but secrets" : "unconfined", sb->read_note);
    else snprintf(reads, sizeof reads, "allow-list");
    if (sb->ruleset_fd < 0) snprintf(scope, sizeof scope, "none: no Landlock");
    else if (!sb->ll_scoped) snprintf(scope, sizeof scope, "none: %s", sb->scope_note);
    else snprintf(scope, sizeof scope, "signals, abstract unix sockets");
    const char *net = clone_got & CLONE_NEWNET ? "namespace" : sb->seccomp_net ? "seccomp" : "none";
    json_t *lims = json_pack("{s:o, s:o, s:o, s:o}", "file_bytes", lim_json(sb->fsize), "data_bytes", lim_json(sb->data), "cpu_s", lim_json(sb->cpu),
                             "tasks", sb->set_nproc ? lim_json(sb->nproc) : json_null());
    return json_pack("{s:b, s:s, s:s, s:s, s:s, s:b, s:b, s:s, s:b, s:s, s:o}", "enabled", 1, "filesystem", fs, "reads", reads, "scope", scope,
                     "network", net, "pid_namespace", (clone_got & CLONE_NEWPID) != 0, "ipc_namespace", (clone_got & CLONE_NEWIPC) != 0, "proc",
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
