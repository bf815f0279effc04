/* sb_probe.c -- can a process under kbv's sandbox initialise CUDA? A diagnosis tool for
 * docs/security.md "On a GPU", built by `make test-gpu`.
 *
 *   sb_probe [--no-hide] [--quiet]
 *
 * It prepares the sandbox as kbv does for a worker (sandbox_prepare with the GPU flag; the
 * environment variables KBV_SANDBOX_SKIP, KBV_SANDBOX_GPU_FULL and KBV_SANDBOX_WRITABLE act
 * as they do for kbv), spawns a child with the same clone flags, enters the sandbox there and
 * calls cuInit, cuDeviceGet and cuCtxCreate through the driver library. Every file or socket
 * call of the child that fails with EACCES/EPERM (or ENOENT under /proc and /dev) is
 * printed, since Landlock and the namespaces say nothing of what they refuse: the probe
 * defines open(), openat(), ... itself, and libcuda binds to those.
 *
 *   --no-hide     no secrets and no read allow-list: Landlock handles writes only
 *
 * Prints one line "probe: <config> ns=<flags> landlock=<abi> cuInit=<r> ctx=<r>", exit 0
 * when CUDA came up. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox.h"

static int logging, quiet;

static void note(const char *call, const char *path, int e) {
    if (!logging || quiet) return;
    if (e == EACCES || e == EPERM || (e == ENOENT && path && (strncmp(path, "/proc", 5) == 0 || strncmp(path, "/dev", 4) == 0))) {
        char line[600];
        int n = snprintf(line, sizeof line, "probe:   %s(%s): %s\n", call, path ? path : "?", strerror(e));
        if (n > 0 && write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1) < 0) return;
    }
}

static int do_openat(const char *call, int dir, const char *path, int flags, mode_t mode) {
    int fd = (int)syscall(SYS_openat, dir, path, flags, mode);
    if (fd < 0) note(call, path, errno);
    return fd;
}

#define MODE_ARG(flags, mode)                  \
    do {                                       \
        if ((flags) & (O_CREAT | O_TMPFILE)) { \
            va_list ap;                        \
            va_start(ap, flags);               \
            mode = va_arg(ap, mode_t);         \
            va_end(ap);                        \
        }                                      \
    } while (0)

int open(const char *path, int flags, ...) {
    mode_t mode = 0;
    MODE_ARG(flags, mode);
    return do_openat("open", AT_FDCWD, path, flags, mode);
}
int open64(const char *path, int flags, ...) {
    mode_t mode = 0;
    MODE_ARG(flags, mode);
    return do_openat("open64", AT_FDCWD, path, flags, mode);
}
int openat(int dir, const char *path, int flags, ...) {
    mode_t mode = 0;
    MODE_ARG(flags, mode);
    return do_openat("openat", dir, path, flags, mode);
}
int openat64(int dir, const char *path, int flags, ...) {
    mode_t mode = 0;
    MODE_ARG(flags, mode);
    return do_openat("openat64", dir, path, flags, mode);
}
int __open_2(const char *path, int flags) { return do_openat("__open_2", AT_FDCWD, path, flags, 0); }
int __open64_2(const char *path, int flags) { return do_openat("__open64_2", AT_FDCWD, path, flags, 0); }

int mkdir(const char *path, mode_t mode) {
    int r = (int)syscall(SYS_mkdirat, AT_FDCWD, path, mode);
    if (r < 0) note("mkdir", path, errno);
    return r;
}
int unlink(const char *path) {
    int r = (int)syscall(SYS_unlinkat, AT_FDCWD, path, 0);
    if (r < 0) note("unlink", path, errno);
    return r;
}
int mknod(const char *path, mode_t mode, dev_t dev) {
    int r = (int)syscall(SYS_mknodat, AT_FDCWD, path, mode, dev);
    if (r < 0) note("mknod", path, errno);
    return r;
}
int rename(const char *a, const char *b) {
    int r = (int)syscall(SYS_renameat, AT_FDCWD, a, AT_FDCWD, b);
    if (r < 0) note("rename", b, errno);
    return r;
}
int mkdirat(int dir, const char *path, mode_t mode) {
    int r = (int)syscall(SYS_mkdirat, dir, path, mode);
    if (r < 0) note("mkdirat", path, errno);
    return r;
}
int unlinkat(int dir, const char *path, int flags) {
    int r = (int)syscall(SYS_unlinkat, dir, path, flags);
    if (r < 0) note("unlinkat", path, errno);
    return r;
}
int rmdir(const char *path) {
    int r = (int)syscall(SYS_unlinkat, AT_FDCWD, path, AT_REMOVEDIR);
    if (r < 0) note("rmdir", path, errno);
    return r;
}
int mknodat(int dir, const char *path, mode_t mode, dev_t dev) {
    int r = (int)syscall(SYS_mknodat, dir, path, mode, dev);
    if (r < 0) note("mknodat", path, errno);
    return r;
}
int __xmknod(int ver, const char *path, mode_t mode, dev_t *dev) { /* what pre-2.33 glibc's mknod() called */
    (void)ver;
    int r = (int)syscall(SYS_mknodat, AT_FDCWD, path, mode, *dev);
    if (r < 0) note("__xmknod", path, errno);
    return r;
}
int __xmknodat(int ver, int dir, const char *path, mode_t mode, dev_t *dev) {
    (void)ver;
    int r = (int)syscall(SYS_mknodat, dir, path, mode, *dev);
    if (r < 0) note("__xmknodat", path, errno);
    return r;
}
int chmod(const char *path, mode_t mode) {
    int r = (int)syscall(SYS_fchmodat, AT_FDCWD, path, mode);
    if (r < 0) note("chmod", path, errno);
    return r;
}
int truncate(const char *path, off_t len) {
    int r = (int)syscall(SYS_truncate, path, len);
    if (r < 0) note("truncate", path, errno);
    return r;
}
int ftruncate(int fd, off_t len) {
    int r = (int)syscall(SYS_ftruncate, fd, len);
    if (r < 0) note("ftruncate", "(fd)", errno);
    return r;
}
int creat(const char *path, mode_t mode) { return do_openat("creat", AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode); }
int link(const char *a, const char *b) {
    int r = (int)syscall(SYS_linkat, AT_FDCWD, a, AT_FDCWD, b, 0);
    if (r < 0) note("link", b, errno);
    return r;
}
int symlink(const char *a, const char *b) {
    int r = (int)syscall(SYS_symlinkat, a, AT_FDCWD, b);
    if (r < 0) note("symlink", b, errno);
    return r;
}
FILE *fopen(const char *path, const char *mode) { /* glibc's fopen opens through an internal call */
    int flags = strchr(mode, '+') ? O_RDWR : mode[0] == 'r' ? O_RDONLY : O_WRONLY;
    if (mode[0] == 'w') flags |= O_CREAT | O_TRUNC;
    if (mode[0] == 'a') flags |= O_CREAT | O_APPEND;
    if (strchr(mode, 'e')) flags |= O_CLOEXEC;
    int fd = do_openat("fopen", AT_FDCWD, path, flags, 0666);
    FILE *f = fd < 0 ? NULL : fdopen(fd, mode);
    if (fd >= 0 && !f) close(fd);
    return f;
}
FILE *fopen64(const char *path, const char *mode) { return fopen(path, mode); }
int shm_open(const char *name, int flags, mode_t mode) {
    char path[300];
    snprintf(path, sizeof path, "/dev/shm/%s", name[0] == '/' ? name + 1 : name);
    return do_openat("shm_open", AT_FDCWD, path, flags | O_NOFOLLOW | O_CLOEXEC, mode);
}

int connect(int fd, const struct sockaddr *addr, socklen_t len) {
    int r = (int)syscall(SYS_connect, fd, addr, len);
    if (r < 0) {
        char where[200] = "?";
        if (addr && addr->sa_family == AF_UNIX) {
            const struct sockaddr_un *u = (const void *)addr;
            snprintf(where, sizeof where, "unix:%s%.100s", u->sun_path[0] ? "" : "@", u->sun_path[0] ? u->sun_path : u->sun_path + 1);
        } else if (addr) snprintf(where, sizeof where, "family %d", addr->sa_family);
        int e = errno;
        note("connect", where, e == ENOENT || e == ECONNREFUSED ? EACCES : e);
        errno = e;
    }
    return r;
}

typedef int (*cu_init_t)(unsigned);
typedef int (*cu_dev_t)(int *, int);
typedef int (*cu_ctx_t)(void **, unsigned, int);
typedef int (*cu_name_t)(int, const char **);

static const char *cu_name(cu_name_t f, int r) {
    const char *s = NULL;
    return f && f(r, &s) == 0 && s ? s : "?";
}

static int child(const kbv_sandbox *sb, int ns, const char *home) {
    setsid();
    if (chdir(home) < 0) return 3;
    setenv("HOME", home, 1);
    setenv("TMPDIR", home, 1);
    int e = sandbox_enter(sb, ns);
    if (e) return fprintf(stderr, "probe:   sandbox_enter: %s\n", strerror(e)), 3;
    logging = 1;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib) return fprintf(stderr, "probe:   dlopen libcuda.so.1: %s\n", dlerror()), 4;
    cu_init_t init = (cu_init_t)dlsym(lib, "cuInit");
    cu_dev_t dev = (cu_dev_t)dlsym(lib, "cuDeviceGet");
    cu_ctx_t ctx = (cu_ctx_t)dlsym(lib, "cuCtxCreate_v2");
    cu_name_t name = (cu_name_t)dlsym(lib, "cuGetErrorName");
    if (!init || !dev || !ctx) return 4;
    int r = init(0), d = 0, rc = -1;
    void *c = NULL;
    if (r == 0 && (rc = dev(&d, 0)) == 0) rc = ctx(&c, 0, d);
    logging = 0;
    printf("cuInit=%s ctx=%s\n", cu_name(name, r), rc < 0 ? "-" : cu_name(name, rc));
    fflush(stdout);
    return r == 0 && rc == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
    int hide = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--no-hide") == 0) hide = 0;
        else if (strcmp(argv[i], "--quiet") == 0) quiet = 1;
        else {
            fprintf(stderr, "usage: sb_probe [--no-hide] [--quiet]\n"
                            "  (KBV_SANDBOX_SKIP, KBV_SANDBOX_GPU_FULL, KBV_SANDBOX_WRITABLE as for kbv)\n");
            return 2;
        }
    }
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char base[4096], home[4200], secret[4300];
    snprintf(base, sizeof base, "%s/kbv-probe-%d", tmp, (int)getpid());
    snprintf(home, sizeof home, "%s/cand", base);
    snprintf(secret, sizeof secret, "%s/ref", base);
    if (mkdir(base, 0700) < 0 || mkdir(home, 0700) < 0 || mkdir(secret, 0700) < 0) return perror("probe: mkdir"), 2;
    kbv_sandbox_spec sp = {.enable = 1,
                           .gpu = 1,
                           .drop_caps = 1,
                           .max_file_bytes = 1LL << 36,
                           .max_data_bytes = sandbox_phys_bytes() / 4 * 3,
                           .max_cpu_s = 600,
                           .max_procs = 4096};
    sp.writable[sp.nwritable++] = home;
    if (hide) sp.secret[sp.nsecret++] = secret, sp.scratch_base = tmp, sp.own_scratch = base;
    else sp.read_all = 1;
    kbv_sandbox sb;
    kbv_err err = {{0}};
    if (sandbox_prepare(&sb, &sp, &err) < 0) return fprintf(stderr, "probe: %s\n", err.msg), 2;
    int flags = sandbox_clone_flags(&sb);
    fflush(NULL);
    pid_t pid = (pid_t)syscall(SYS_clone, (unsigned long)(flags | SIGCHLD), NULL, NULL, NULL, NULL);
    int got = flags;
    if (pid < 0) pid = fork(), got = 0;
    if (pid == 0) _exit(child(&sb, got, home));
    int st = 0;
    waitpid(pid, &st, 0);
    printf("probe: skip=%s gpu_full=%s writable=%s%s ns=%s%s%s landlock=%d (%s) seccomp=%d -> %s\n",
           getenv("KBV_SANDBOX_SKIP") ? getenv("KBV_SANDBOX_SKIP") : "-", getenv("KBV_SANDBOX_GPU_FULL") ? "1" : "0",
           getenv("KBV_SANDBOX_WRITABLE") ? getenv("KBV_SANDBOX_WRITABLE") : "-", hide ? "" : " no-hide", got & CLONE_NEWPID ? "pid," : "",
           got & CLONE_NEWNET ? "net," : "", got & CLONE_NEWNS ? "mnt+proc" : "", sb.ruleset_fd >= 0 ? sb.landlock_abi : 0,
           sb.ruleset_fd >= 0 ? "on" : sb.fs_note, sb.prog.filter != NULL, WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "CUDA OK" : "CUDA FAILED");
    sandbox_free(&sb);
    rmdir(secret), rmdir(home), rmdir(base);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
