/* util.c -- error values, growable buffers, whole-file I/O, scratch folders, hashing.
 *
 * Deliberately small: anything with a subject of its own (tensors, processes, protocol)
 * lives in its own file. Hashing uses OpenSSL's EVP interface rather than a hand-written
 * SHA-256.
 */
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <openssl/evp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int kbv_seterr(kbv_err *err, const char *fmt, ...) {
    if (!err) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int kbv_wraperr(kbv_err *err, const char *fmt, ...) {
    if (!err) return -1;
    char prefix[512], old[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    snprintf(err->msg, sizeof err->msg, "%s: %s", prefix, old);
    return -1;
}

void kbv_buf_init(kbv_buf *b) { b->data = NULL, b->len = 0, b->cap = 0; }

void kbv_buf_free(kbv_buf *b) {
    free(b->data);
    kbv_buf_init(b);
}

static int buf_reserve(kbv_buf *b, size_t extra) {
    if (b->len + extra + 1 <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) return -1;
    b->data = p, b->cap = cap;
    return 0;
}

int kbv_buf_append(kbv_buf *b, const void *data, size_t n) {
    if (buf_reserve(b, n) < 0) return -1;
    if (n) memcpy(b->data + b->len, data, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int kbv_buf_printf(kbv_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || buf_reserve(b, (size_t)n) < 0) return -1;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

void kbv_fputs_safe(const char *s, FILE *f) {
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
        if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f) fprintf(f, "\\x%02x", *p);
        else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) fprintf(f, "\\xc2\\x%02x", *++p);
        else fputc(*p, f);
    }
}

int kbv_read_file(const char *path, char **out, size_t *len, kbv_err *err) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return kbv_seterr(err, "%s: %s", path, strerror(errno));
    kbv_buf b;
    kbv_buf_init(&b);
    char chunk[65536];
    for (;;) {
        ssize_t r = read(fd, chunk, sizeof chunk);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            close(fd), kbv_buf_free(&b);
            return kbv_seterr(err, "%s: %s", path, strerror(e));
        }
        if (r == 0) break;
        if (kbv_buf_append(&b, chunk, (size_t)r) < 0) {
            close(fd), kbv_buf_free(&b);
            return kbv_seterr(err, "%s: out of memory", path);
        }
    }
    close(fd);
    if (!b.data && kbv_buf_append(&b, "", 0) < 0) return kbv_seterr(err, "out of memory");
    *out = b.data;
    if (len) *len = b.len;
    return 0;
}

int kbv_write_all(int fd, const void *data, size_t n) {
    const char *p = data;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w, n -= (size_t)w;
    }
    return 0;
}

int kbv_read_full(int fd, void *data, size_t n) {
    char *p = data;
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p += r, n -= (size_t)r;
    }
    return 0;
}

const char *kbv_scratch_base(const char *base) {
    if (!base || !*base) base = getenv("TMPDIR");
    return base && *base ? base : "/tmp";
}

int kbv_mkscratch(const char *base, char *out, size_t outlen, kbv_err *err) {
    base = kbv_scratch_base(base);
    if (snprintf(out, outlen, "%s/kbv-XXXXXX", base) >= (int)outlen) return kbv_seterr(err, "scratch path under %s is too long", base);
    if (!mkdtemp(out)) return kbv_seterr(err, "%s: cannot make a scratch folder there: %s", base, strerror(errno));
    return 0;
}

/* Remove the entries of the folder open as fd, descending with openat() and climbing back
 * with "..", so that no path is ever longer than one name and no descriptor is held per level:
 * a tree of any depth goes (a candidate may nest folders past PATH_MAX). names: the stack of
 * folder names below the top, so that a folder emptied is removed from its parent. */
static void rm_below(int fd) {
    char **names = NULL;
    size_t depth = 0, cap = 0;
    for (;;) {
        int dfd = dup(fd);
        DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
        if (!d && dfd >= 0) close(dfd);
        if (d) rewinddir(d); /* the duplicate shares fd's offset: list from the start */
        int descended = 0;
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            struct stat st;
            if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) continue;
            if (!S_ISDIR(st.st_mode)) {
                unlinkat(fd, e->d_name, 0);
                continue;
            }
            if (unlinkat(fd, e->d_name, AT_REMOVEDIR) == 0) continue; /* already empty */
            /* A folder the candidate closed: open it up (gone meanwhile: next; refused: the
             * openat below fails too, the folder stays and the caller's rmdir reports it). */
            if (fchmodat(fd, e->d_name, 0700, 0) < 0 && errno == ENOENT) continue;
            int child = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            char *nm = child >= 0 ? strdup(e->d_name) : NULL;
            if (nm && depth == cap) {
                char **g = realloc(names, sizeof *names * (cap ? 2 * cap : 64));
                if (g) names = g, cap = cap ? 2 * cap : 64;
            }
            if (!nm || depth == cap) {
                if (child >= 0) close(child);
                free(nm);
                continue;
            }
            names[depth++] = nm;
            close(fd);
            fd = child;
            descended = 1;
            break;
        }
        if (d) closedir(d);
        if (descended) continue;
        if (depth == 0) break;
        /* this folder is empty (or holds what could not go): up, and remove it */
        int parent = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        close(fd);
        fd = parent;
        char *nm = names[--depth];
        if (fd >= 0) unlinkat(fd, nm, AT_REMOVEDIR);
        free(nm);
        if (fd < 0) break;
    }
    while (depth) free(names[--depth]);
    free(names);
    if (fd >= 0) close(fd);
}

int kbv_rmtree(const char *path) {
    struct stat st;
    if (lstat(path, &st) < 0) return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(st.st_mode)) return unlink(path) == 0 || errno == ENOENT ? 0 : -1;
    chmod(path, 0700);
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) rm_below(fd);
    rmdir(path);
    return lstat(path, &st) < 0 && errno == ENOENT ? 0 : -1;
}

static long long tree_bytes; /* nftw has no argument for its callback: kbv_tree_bytes' sum */

static int add_bytes(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)path, (void)ftw;
    if (flag == FTW_F) tree_bytes += (long long)st->st_blocks * 512;
    return 0;
}

long long kbv_tree_bytes(const char *path) {
    tree_bytes = 0;
    nftw(path, add_bytes, 32, FTW_PHYS);
    return tree_bytes;
}

static void hex(const unsigned char *d, unsigned n, char *out) {
    static const char digits[] = "0123456789abcdef";
    for (unsigned i = 0; i < n; i++) out[2 * i] = digits[d[i] >> 4], out[2 * i + 1] = digits[d[i] & 15];
    out[2 * n] = '\0';
}

int kbv_sha256_hex(const void *data, size_t n, char out[65]) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    if (!EVP_Digest(data, n, md, &mdlen, EVP_sha256(), NULL) || mdlen != 32) return -1;
    hex(md, mdlen, out);
    return 0;
}

int kbv_sha256_file(const char *path, char out[65], kbv_err *err) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return kbv_seterr(err, "%s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size > KBV_SOURCE_MAX) {
        int e = errno;
        close(fd);
        if (S_ISDIR(sb.st_mode)) return kbv_seterr(err, "%s: is a folder, not a file", path);
        if (!S_ISREG(sb.st_mode)) return kbv_seterr(err, "%s: not a regular file", path);
        if (sb.st_size > KBV_SOURCE_MAX) return kbv_seterr(err, "%s: larger than %d MiB: not a source file", path, KBV_SOURCE_MAX >> 20);
        return kbv_seterr(err, "%s: %s", path, strerror(e));
    }
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
    char chunk[65536];
    int rerr = 0;
    while (ok) {
        ssize_t r = read(fd, chunk, sizeof chunk);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) rerr = errno;
        if (r <= 0) break;
        ok = EVP_DigestUpdate(ctx, chunk, (size_t)r);
    }
    close(fd);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    ok = ok && !rerr && EVP_DigestFinal_ex(ctx, md, &mdlen) && mdlen == 32;
    EVP_MD_CTX_free(ctx);
    if (rerr) return kbv_seterr(err, "%s: %s", path, strerror(rerr));
    if (!ok) return kbv_seterr(err, "%s: SHA-256 failed", path);
    hex(md, mdlen, out);
    return 0;
}

uint64_t kbv_derive_seed(uint64_t secret, uint64_t label) {
    unsigned char in[24] = "kbv-seed", md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    memcpy(in + 8, &secret, 8);
    memcpy(in + 16, &label, 8);
    uint64_t v = kbv_mix64(secret ^ label); /* only if the digest fails: never expected */
    if (EVP_Digest(in, sizeof in, md, &mdlen, EVP_sha256(), NULL) && mdlen >= 8) memcpy(&v, md, 8);
    return v;
}

int kbv_proc_stat(const char *pid, long *session, long *threads) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%.20s/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t r = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0) close(fd);
    if (r <= 0) return -1;
    buf[r] = '\0';
    /* "pid (comm) state ppid pgrp session ... num_threads" -- comm may hold spaces and ')' */
    char *p = strrchr(buf, ')');
    *session = -1, *threads = 1;
    for (int field = 3; p && field <= 20; field++) { /* p: the space before field `field` */
        p = strchr(p + 1, ' ');
        if (p && field == 6) *session = strtol(p + 1, NULL, 10);
        if (p && field == 20) *threads = strtol(p + 1, NULL, 10);
    }
    if (*threads < 1) *threads = 1;
    return p ? 0 : -1;
}

double kbv_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int kbv_random_u64(uint64_t *out) { return getrandom(out, sizeof *out, 0) == (ssize_t)sizeof *out ? 0 : -1; }

uint64_t kbv_mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

int kbv_abspath(const char *path, char *out, size_t outlen, kbv_err *err) {
    char tmp[PATH_MAX];
    if (!realpath(path, tmp)) return kbv_seterr(err, "%s: %s", path, strerror(errno));
    if (strlen(tmp) + 1 > outlen) return kbv_seterr(err, "%s: path too long", path);
    memcpy(out, tmp, strlen(tmp) + 1);
    return 0;
}

void kbv_stem(const char *path, char *out, size_t outlen) {
    const char *s = strrchr(path, '/');
    s = s ? s + 1 : path;
    size_t n = strlen(s);
    if (n > 3 && strcmp(s + n - 3, ".py") == 0) n -= 3;
    if (n + 1 > outlen) n = outlen - 1;
    memcpy(out, s, n);
    out[n] = '\0';
}

static void *task_main(void *arg) {
    const kbv_task *t = arg;
    t->fn(t->arg);
    return NULL;
}

/* Start t on a thread with every signal blocked: 1, or 0 where no thread could be made. */
static int task_thread(const kbv_task *t, pthread_t *th) {
    sigset_t all, prev;
    if (sigfillset(&all) != 0 || pthread_sigmask(SIG_BLOCK, &all, &prev) != 0) return 0;
    /* the thread inherits the blocked mask: signals stay the caller's to handle */
    int ok = pthread_create(th, NULL, task_main, (void *)t) == 0;
    pthread_sigmask(SIG_SETMASK, &prev, NULL);
    return ok;
}

void kbv_async_start(kbv_async *a, void (*fn)(void *arg), void *arg) {
    a->task = (kbv_task){fn, arg};
    a->started = task_thread(&a->task, &a->th);
    if (!a->started) fn(arg);
}

void kbv_async_join(kbv_async *a) {
    if (a->started) pthread_join(a->th, NULL);
    a->started = 0;
}

void kbv_parallel(const kbv_task *tasks, int n, int par) {
    kbv_async a[KBV_PARALLEL_MAX] = {0};
    if (n > KBV_PARALLEL_MAX) n = KBV_PARALLEL_MAX;
    for (int i = 0; i < n - 1; i++)
        if (tasks[i].fn && par) kbv_async_start(&a[i], tasks[i].fn, tasks[i].arg);
        else if (tasks[i].fn) tasks[i].fn(tasks[i].arg);
    if (n > 0 && tasks[n - 1].fn) tasks[n - 1].fn(tasks[n - 1].arg);
    for (int i = 0; i < n - 1; i++) kbv_async_join(&a[i]);
}

int kbv_gpulock_open(kbv_gpulock *l, const char *path, kbv_err *err) {
    l->main_fd = l->turn_fd = -1, l->held = l->want = 0, l->waited_s = 0;
    if (!path || !*path) return 0;
    char turn[PATH_MAX];
    if (snprintf(turn, sizeof turn, "%s.turn", path) >= (int)sizeof turn) return kbv_seterr(err, "GPU lock %s: path too long", path);
    l->main_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    l->turn_fd = l->main_fd >= 0 ? open(turn, O_RDWR | O_CREAT | O_CLOEXEC, 0600) : -1;
    if (l->turn_fd < 0) {
        int e = errno;
        kbv_gpulock_close(l);
        return kbv_seterr(err, "GPU lock %s: %s", path, strerror(e));
    }
    return 0;
}

static int lock_fd(int fd, int op, kbv_err *err) {
    while (flock(fd, op) < 0)
        if (errno != EINTR) return kbv_seterr(err, "GPU lock: flock: %s", strerror(errno));
    return 0;
}

/* Take it (1 shared, 2 exclusive), nothing held before. */
static int gpulock_take(kbv_gpulock *l, int mode, kbv_err *err) {
    double t0 = kbv_now();
    /* Through the turnstile: a writer waiting on the main lock holds it, so no new reader
     * gets past it meanwhile. */
    if (lock_fd(l->turn_fd, LOCK_EX, err) < 0) return -1;
    int rc = lock_fd(l->main_fd, mode == 2 ? LOCK_EX : LOCK_SH, err);
    int rc2 = lock_fd(l->turn_fd, LOCK_UN, err);
    l->waited_s += kbv_now() - t0;
    if (rc < 0 || rc2 < 0) return -1;
    l->held = mode;
    return 0;
}

static int gpulock_release(kbv_gpulock *l, kbv_err *err) {
    if (!l->held) return 0;
    l->held = 0;
    return lock_fd(l->main_fd, LOCK_UN, err);
}

int kbv_gpulock_set(kbv_gpulock *l, int mode, kbv_err *err) {
    if (l->main_fd < 0) return 0;
    l->want = mode;
    if (l->held == mode && mode == 2) return 0;
    if (gpulock_release(l, err) < 0) return -1;
    return mode == 2 ? gpulock_take(l, 2, err) : 0;
}

int kbv_gpulock_enter(kbv_gpulock *l, kbv_err *err) {
    if (l->main_fd < 0 || l->want != 1 || l->held) return 0;
    return gpulock_take(l, 1, err);
}

void kbv_gpulock_leave(kbv_gpulock *l) {
    if (l->main_fd >= 0 && l->want == 1 && l->held == 1) gpulock_release(l, NULL);
}

void kbv_gpulock_close(kbv_gpulock *l) {
    if (l->main_fd >= 0) close(l->main_fd); /* closing releases the flock */
    if (l->turn_fd >= 0) close(l->turn_fd);
    l->main_fd = l->turn_fd = -1, l->held = l->want = 0;
}

void kbv_say(const char *fmt, ...) {
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    size_t n = strlen(line);
    while (n && line[n - 1] == '\n') line[--n] = '\0';
    for (char *p = line; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
    fprintf(stderr, "%s\n", line);
}

int kbv_run_cmd(char *const argv[], kbv_buf *out, kbv_buf *errout, kbv_err *err) {
    int po[2], pe[2];
    if (pipe2(po, O_CLOEXEC) < 0) return kbv_seterr(err, "pipe: %s", strerror(errno));
    if (pipe2(pe, O_CLOEXEC) < 0) {
        close(po[0]), close(po[1]);
        return kbv_seterr(err, "pipe: %s", strerror(errno));
    }
    pid_t pid = fork();
    if (pid == 0) {
        int nul = open("/dev/null", O_RDONLY);
        if (nul < 0 || dup2(nul, 0) < 0 || dup2(po[1], 1) < 0 || dup2(pe[1], 2) < 0) _exit(126);
        execvp(argv[0], argv);
        dprintf(2, "%s: %s", argv[0], strerror(errno));
        _exit(127);
    }
    close(po[1]), close(pe[1]);
    if (pid < 0) {
        close(po[0]), close(pe[0]);
        return kbv_seterr(err, "fork: %s", strerror(errno));
    }
    struct pollfd fds[2] = {{.fd = po[0], .events = POLLIN}, {.fd = pe[0], .events = POLLIN}};
    kbv_buf *to[2] = {out, errout};
    int open_fds = 2;
    while (open_fds > 0) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int k = 0; k < 2; k++) {
            if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            char chunk[4096];
            ssize_t n = read(fds[k].fd, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                close(fds[k].fd), fds[k].fd = -1, open_fds--;
            } else if (to[k] && to[k]->len < (16u << 20)) {
                kbv_buf_append(to[k], chunk, (size_t)n);
            }
        }
    }
    for (int k = 0; k < 2; k++)
        if (fds[k].fd >= 0) close(fds[k].fd);
    int ws;
    while (waitpid(pid, &ws, 0) < 0)
        if (errno != EINTR) return kbv_seterr(err, "%s: waitpid: %s", argv[0], strerror(errno));
    if (WIFEXITED(ws)) return WEXITSTATUS(ws);
    return kbv_seterr(err, "%s: killed by signal %d", argv[0], WTERMSIG(ws));
}

double kbv_rusage_seconds(const struct rusage *u) {
    return (double)u->ru_utime.tv_sec + u->ru_utime.tv_usec / 1e6 + (double)u->ru_stime.tv_sec + u->ru_stime.tv_usec / 1e6;
}

double kbv_cpu_seconds(int who) {
    struct rusage u;
    return getrusage(who, &u) == 0 ? kbv_rusage_seconds(&u) : -1;
}

int kbv_nicer(int by) {
    errno = 0;
    int ni = getpriority(PRIO_PROCESS, 0); /* -1 is a nice value too: errno tells */
    if (ni == -1 && errno != 0) return -1;
    return setpriority(PRIO_PROCESS, 0, ni + by > 19 ? 19 : ni + by);
}
