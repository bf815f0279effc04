/* proc.c -- spawn and supervise worker processes.
 *
 * Design notes:
 * - The child calls setsid(), so kill(-pid) reaches everything it forked unless that
 *   called setsid() again; such escapees are reparented to kbv (a subreaper) and killed
 *   by pid in reap_orphans().
 * - All of kbv's pipe ends are non-blocking and read in one poll() loop, so a child that
 *   floods stdout while kbv waits for a reply cannot block either side.
 * - A worker's memory cgroup is made before clone(); the child waits on a pipe until kbv has
 *   moved it in (by its host pid: in its own PID namespace the child is PID 1), so nothing it
 *   runs is outside it. Removed after the worker is reaped, once whatever is left is killed.
 * - A watched folder (proc_watch_scratch) is measured by a walk in kbv (no path from the worker
 *   is followed), rate-limited per worker to once a second, and to a tenth of kbv's time when
 *   the walk itself is slow; the walk and the budget bound each other (PROC_SCRATCH_MAX_*).
 * - Nothing here decides a verdict: callers map proc_result and wait statuses to one.
 */
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox.h"

#define MAX_LIVE 64
static pid_t live[MAX_LIVE]; /* workers kbv is supervising (not orphans) */

static void live_add(pid_t pid) {
    for (int i = 0; i < MAX_LIVE; i++)
        if (!live[i]) {
            live[i] = pid;
            return;
        }
}

static void live_del(pid_t pid) {
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i] == pid) live[i] = 0;
}

static int is_live(pid_t pid) {
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i] == pid) return 1;
    return 0;
}

static kbv_proc *watched[MAX_LIVE]; /* workers whose folders are watched (proc_watch_scratch) */

static void unwatch(kbv_proc *p) {
    for (int i = 0; i < MAX_LIVE; i++)
        if (watched[i] == p) watched[i] = NULL;
}

int proc_init_reaper(kbv_err *err) {
    signal(SIGPIPE, SIG_IGN); /* a dead worker must not kill kbv through a write */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) return kbv_seterr(err, "prctl(PR_SET_CHILD_SUBREAPER): %s", strerror(errno));
    return 0;
}

void proc_capture_init(kbv_capture *c, size_t cap) {
    memset(c, 0, sizeof *c);
    kbv_buf_init(&c->head);
    c->cap = cap;
    c->tail_cap = cap / 4 > 0 ? cap / 4 : 1;
}

void proc_capture_add(kbv_capture *c, const char *data, size_t n) {
    c->total += n;
    size_t room = c->head.len < c->cap ? c->cap - c->head.len : 0;
    size_t take = n < room ? n : room;
    if (take && kbv_buf_append(&c->head, data, take) < 0) take = 0;
    data += take, n -= take;
    if (!n) return;
    if (!c->tail && !(c->tail = malloc(c->tail_cap))) return;
    if (n >= c->tail_cap) { /* only the last tail_cap bytes matter */
        memcpy(c->tail, data + n - c->tail_cap, c->tail_cap);
        c->tail_len = c->tail_cap, c->tail_pos = 0;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        c->tail[c->tail_pos] = data[i];
        c->tail_pos = (c->tail_pos + 1) % c->tail_cap;
        if (c->tail_len < c->tail_cap) c->tail_len++;
    }
}

void proc_capture_free(kbv_capture *c) {
    kbv_buf_free(&c->head);
    free(c->tail);
    c->tail = NULL;
}

char *proc_capture_text(const kbv_capture *c) {
    kbv_buf b;
    kbv_buf_init(&b);
    kbv_buf_append(&b, c->head.data ? c->head.data : "", c->head.len);
    size_t omitted = c->total - c->head.len - c->tail_len;
    if (omitted) kbv_buf_printf(&b, "\n[... %zu bytes omitted ...]\n", omitted);
    if (c->tail_len) {
        size_t start = c->tail_len < c->tail_cap ? 0 : c->tail_pos;
        for (size_t i = 0; i < c->tail_len; i++) kbv_buf_append(&b, &c->tail[(start + i) % c->tail_cap], 1);
    }
    if (!b.data) kbv_buf_append(&b, "", 0);
    return b.data;
}

void proc_describe_status(int wstatus, char *out, size_t outlen) {
    if (WIFEXITED(wstatus)) snprintf(out, outlen, "exited with status %d", WEXITSTATUS(wstatus));
    else if (WIFSIGNALED(wstatus)) snprintf(out, outlen, "killed by signal %d (%s)", WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
    else snprintf(out, outlen, "ended with wait status %d", wstatus);
}

static int cloexec_pipe(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

static void close_fd(int *fd) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

/* fork(), or clone() into new namespaces where asked and permitted. */
static pid_t fork_ns(int flags, int *got) {
    *got = 0;
    if (flags) {
        pid_t pid = (pid_t)syscall(SYS_clone, (unsigned long)(flags | SIGCHLD), NULL, NULL, NULL, NULL);
        if (pid >= 0) {
            *got = flags;
            return pid;
        }
    }
    return fork();
}

int proc_spawn(kbv_proc *p, char *const argv[], char *const envp[], const char *cwd, size_t cap, const kbv_sandbox *sb, kbv_err *err) {
    memset(p, 0, sizeof *p);
    p->cmd_fd = p->reply_fd = p->out_fd = p->err_fd = -1;
    proto_reader_init(&p->reader);
    proc_capture_init(&p->out, cap);
    proc_capture_init(&p->err, cap);
    unwatch(p);
    sandbox_memcg_create(sb, &p->memcg);
    int cg = p->memcg.path[0] != '\0'; /* the child waits on go[0] until kbv moved it into the cgroup */
    int cmd[2] = {-1, -1}, rep[2] = {-1, -1}, out[2] = {-1, -1}, er[2] = {-1, -1}, st[2] = {-1, -1}, go[2] = {-1, -1};
    int *all[] = {cmd, rep, out, er, st, go};
    if (cloexec_pipe(cmd) < 0 || cloexec_pipe(rep) < 0 || cloexec_pipe(out) < 0 || cloexec_pipe(er) < 0 || cloexec_pipe(st) < 0 ||
        (cg && cloexec_pipe(go) < 0)) {
        int e = errno;
        for (int i = 0; i < 6; i++) close_fd(&all[i][0]), close_fd(&all[i][1]);
        sandbox_memcg_remove(&p->memcg);
        return kbv_seterr(err, "pipe: %s", strerror(e));
    }
    pid_t parent = getpid();
    int ns = 0;
    pid_t pid = fork_ns(sb ? sandbox_clone_flags(sb) : 0, &ns);
    if (pid < 0) {
        int e = errno;
        for (int i = 0; i < 6; i++) close_fd(&all[i][0]), close_fd(&all[i][1]);
        sandbox_memcg_remove(&p->memcg);
        return kbv_seterr(err, "fork: %s", strerror(e));
    }
    if (pid == 0) {
        /* Child: only async-signal-safe calls until execve. */
        int code = 0;
        setsid();
        /* In a new PID namespace the parent is invisible (getppid() is 0). */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || (!(ns & CLONE_NEWPID) && getppid() != parent)) _exit(127);
        if (cg) { /* nothing runs before kbv has moved this process into its memory cgroup */
            char b;
            close(go[1]);
            while (read(go[0], &b, 1) < 0 && errno == EINTR) {
            }
            close(go[0]);
        }
        int devnull = open("/dev/null", O_RDONLY);
        /* Move the child's ends above the target numbers first, so dup2 cannot clobber. */
        int c_cmd = fcntl(cmd[0], F_DUPFD, 10), c_rep = fcntl(rep[1], F_DUPFD, 10);
        int c_out = fcntl(out[1], F_DUPFD, 10), c_err = fcntl(er[1], F_DUPFD, 10);
        if (devnull < 0 || c_cmd < 0 || c_rep < 0 || c_out < 0 || c_err < 0 || dup2(devnull, 0) < 0 || dup2(c_out, 1) < 0 || dup2(c_err, 2) < 0 ||
            dup2(c_cmd, PROTO_CMD_FD) < 0 || dup2(c_rep, PROTO_REPLY_FD) < 0) {
            code = errno;
            goto fail;
        }
        struct rlimit core = {0, 0};
        setrlimit(RLIMIT_CORE, &core);
        if (cwd && chdir(cwd) < 0) {
            code = errno;
            goto fail;
        }
        /* Every fd above the protocol's is closed (the status pipe is close-on-exec). */
        for (int fd = PROTO_REPLY_FD + 1; fd < 1024; fd++)
            if (fd != st[1] && (!sb || fd != sb->ruleset_fd)) close(fd);
        if ((code = sandbox_enter(sb, ns)) != 0) goto fail;
        execve(argv[0], argv, envp);
        code = errno;
    fail:
        if (write(st[1], &code, sizeof code) < 0) _exit(126);
        _exit(127);
    }
    close_fd(&cmd[0]), close_fd(&rep[1]), close_fd(&out[1]), close_fd(&er[1]), close_fd(&st[1]);
    if (cg) {
        sandbox_memcg_attach(&p->memcg, pid); /* applied, or why not: the child goes on either way */
        ssize_t w;
        do w = write(go[1], "g", 1);
        while (w < 0 && errno == EINTR);
        close_fd(&go[0]), close_fd(&go[1]); /* (a failed write: the child reads EOF and goes on) */
    }
    int code = 0;
    ssize_t r;
    do r = read(st[0], &code, sizeof code);
    while (r < 0 && errno == EINTR);
    close_fd(&st[0]);
    p->namespaces = ns;
    p->pid = pid, p->cmd_fd = cmd[1], p->reply_fd = rep[0], p->out_fd = out[0], p->err_fd = er[0];
    live_add(pid);
    fcntl(p->reply_fd, F_SETFL, O_NONBLOCK);
    fcntl(p->out_fd, F_SETFL, O_NONBLOCK);
    fcntl(p->err_fd, F_SETFL, O_NONBLOCK);
    if (r > 0) {
        proc_kill(p);
        return kbv_seterr(err, "cannot start %s: %s", argv[0], strerror(code));
    }
    return 0;
}

/* The worker's family: processes in its PID namespace (or, without one, its session) and
 * their threads. Counted once a second while kbv waits; a storm gets the worker killed. */
static void count_family(const kbv_proc *p, long *procs, long *threads) {
    *procs = *threads = 0;
    char path[64], ns[64] = "";
    if (p->namespaces & CLONE_NEWPID) {
        snprintf(path, sizeof path, "/proc/%d/ns/pid", (int)p->pid);
        ssize_t n = readlink(path, ns, sizeof ns - 1);
        if (n <= 0) return;
        ns[n] = '\0';
    }
    DIR *d = opendir("/proc");
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        if (ns[0]) {
            char other[64];
            snprintf(path, sizeof path, "/proc/%.20s/ns/pid", e->d_name);
            ssize_t n = readlink(path, other, sizeof other - 1);
            if (n <= 0 || (size_t)n != strlen(ns) || memcmp(other, ns, (size_t)n) != 0) continue;
        }
        long sid, nthreads;
        if (kbv_proc_stat(e->d_name, &sid, &nthreads) < 0) continue;
        if (!ns[0] && sid != p->pid) continue;
        (*procs)++;
        *threads += nthreads;
    }
    closedir(d);
}

/* ---- watched folders ---- */

static void usage_walk(int fd, int depth, proc_usage *u) {
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (++u->entries > PROC_SCRATCH_MAX_ENTRIES) break;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) continue;
        u->bytes += (long long)st.st_blocks * 512;
        if (!S_ISDIR(st.st_mode)) continue;
        if (depth + 1 >= PROC_SCRATCH_MAX_DEPTH) {
            u->deep++;
            continue;
        }
        int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
        int c = openat(dirfd(d), e->d_name, flags);
        if (c < 0 && errno == EACCES && fchmodat(dirfd(d), e->d_name, 0700, 0) == 0) c = openat(dirfd(d), e->d_name, flags);
        if (c >= 0) usage_walk(c, depth + 1, u);
    }
    closedir(d);
}

int proc_tree_usage(const char *dir, proc_usage *u) {
    memset(u, 0, sizeof *u);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) == 0) u->bytes += (long long)st.st_blocks * 512;
    usage_walk(fd, 0, u);
    return 0;
}

void proc_watch_scratch(kbv_proc *p, const char *dir, long long budget) {
    snprintf(p->scratch.dir, sizeof p->scratch.dir, "%s", dir);
    p->scratch.budget = budget > 0 ? budget : 0;
    p->scratch.next = kbv_now() + 1.0;
    unwatch(p);
    for (int i = 0; i < MAX_LIVE; i++)
        if (!watched[i]) {
            watched[i] = p;
            return;
        }
}

int proc_usage_over(const proc_usage *u, long long budget, char *why, size_t n) {
    double mib = 1024.0 * 1024.0;
    if (budget <= 0) return 0;
    if (u->entries > PROC_SCRATCH_MAX_ENTRIES)
        snprintf(why, n, "made more than %d files and folders beneath its folder, over its budget of as many (%.1f MiB so far)", PROC_SCRATCH_MAX_ENTRIES,
                 (double)u->bytes / mib);
    else if (u->bytes <= budget) return 0;
    else if ((long long)((double)u->bytes / mib * 10 + 0.5) > (long long)((double)budget / mib * 10 + 0.5))
        snprintf(why, n, "wrote %.1f MiB beneath its folder, over its budget of %.1f MiB", (double)u->bytes / mib, (double)budget / mib);
    else /* the same in MiB to one decimal */
        snprintf(why, n, "wrote %lld bytes beneath its folder, over its budget of %lld bytes (%.1f MiB)", u->bytes, budget, (double)budget / mib);
    return 1;
}

int proc_scratch_measure(kbv_proc *p) {
    proc_usage u;
    if (!p->scratch.dir[0] || proc_tree_usage(p->scratch.dir, &u) < 0) return 0;
    if (u.bytes > p->scratch.peak) p->scratch.peak = u.bytes, p->scratch.entries = u.entries;
    return proc_usage_over(&u, p->scratch.budget, p->scratch.why, sizeof p->scratch.why);
}

/* The watched folders that are due, measured; a worker over its budget is killed (its
 * killed_why says so). Returns 1 when that worker was cur. */
static int watch_tick(kbv_proc *cur) {
    int hit = 0;
    for (int i = 0; i < MAX_LIVE; i++) {
        kbv_proc *w = watched[i];
        double t0 = kbv_now();
        if (!w || w->pid <= 0 || w->exited || t0 < w->scratch.next) continue;
        int over = proc_scratch_measure(w);
        double took = kbv_now() - t0;
        w->scratch.next = kbv_now() + (took * 10 > 1.0 ? took * 10 : 1.0);
        if (!over) continue;
        w->scratch.over = 1;
        snprintf(w->killed_why, sizeof w->killed_why, "the worker %s; kbv killed it", w->scratch.why);
        proc_kill(w); /* (unwatches it) */
        hit |= w == cur;
    }
    return hit;
}

/* Read what is available on fd; returns 0 at EOF (fd closed), 1 otherwise. */
static int drain(int *fd, kbv_capture *cap, proto_reader *reader) {
    char chunk[65536];
    for (int rounds = 0; rounds < 64; rounds++) {
        ssize_t r = read(*fd, chunk, sizeof chunk);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return 1; /* EAGAIN */
        if (r == 0) {
            close_fd(fd);
            return 0;
        }
        if (cap) proc_capture_add(cap, chunk, (size_t)r);
        if (reader) proto_reader_feed(reader, chunk, (size_t)r);
    }
    return 1;
}

static int try_wait(kbv_proc *p, int block) {
    if (p->exited || !p->pid) return 1;
    int st;
    pid_t r;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    do r = wait4(p->pid, &st, (block ? 0 : WNOHANG) | WUNTRACED, &ru);
    while (r < 0 && errno == EINTR);
    if (r == p->pid && WIFSTOPPED(st)) { /* it stopped itself: it would never answer */
        snprintf(p->killed_why, sizeof p->killed_why, "the worker was stopped by signal %d (%s); kbv killed it", WSTOPSIG(st),
                 strsignal(WSTOPSIG(st)));
        kill(-p->pid, SIGKILL);
        kill(p->pid, SIGKILL);
        do r = wait4(p->pid, &st, 0, &ru);
        while (r < 0 && errno == EINTR);
    }
    if (r == p->pid) {
        p->exited = 1, p->wstatus = st;
        p->cpu_s = kbv_rusage_seconds(&ru);
        live_del(p->pid);
        return 1;
    }
    return 0;
}

proc_result proc_request(kbv_proc *p, const json_t *msg, double timeout_s, json_t **reply, kbv_err *err) {
    *reply = NULL;
    if (msg) {
        if (p->cmd_fd < 0) return kbv_seterr(err, "worker's command pipe is closed"), PROC_DIED;
        /* A worker that stopped reading could block this write: commands are small, and the
         * pipe buffer (64 KiB) holds any one of them. */
        errno = 0;
        if (proto_send(p->cmd_fd, msg, err) < 0) {
            if (errno == 0 || errno == ENOMEM) return PROC_ERROR; /* not written: kbv's own (no memory to encode it, too long) */
            try_wait(p, 0);
            return PROC_DIED;
        }
    }
    double deadline = kbv_now() + timeout_s, next_count = kbv_now() + 1.0;
    for (;;) {
        char *line;
        size_t len;
        int got = proto_reader_next(&p->reader, &line, &len);
        if (got < 0) return kbv_seterr(err, "worker wrote an over-long line on the control pipe"), PROC_PROTOCOL;
        if (got > 0) {
            int rc = proto_parse(line, len, reply, err);
            free(line);
            return rc < 0 ? PROC_PROTOCOL : PROC_OK;
        }
        if (p->reply_fd < 0) {
            /* Control pipe closed: the worker died or closed it. Give it a moment to exit. */
            for (int i = 0; i < 200 && !try_wait(p, 0); i++) {
                if (p->out_fd >= 0) drain(&p->out_fd, &p->out, NULL);
                if (p->err_fd >= 0) drain(&p->err_fd, &p->err, NULL);
                usleep(10000);
            }
            if (!p->exited) kbv_seterr(err, "worker closed its control pipe");
            return PROC_DIED;
        }
        if (watch_tick(p)) return kbv_seterr(err, "%s", p->killed_why), PROC_DIED;
        double left = deadline - kbv_now();
        if (left <= 0) return kbv_seterr(err, "no reply within %.1f s", timeout_s), PROC_TIMEOUT;
        if (kbv_now() >= next_count) {
            long procs, threads;
            count_family(p, &procs, &threads);
            next_count = kbv_now() + 1.0;
            if (procs > PROC_MAX_FAMILY || threads > PROC_MAX_THREADS) {
                snprintf(p->killed_why, sizeof p->killed_why,
                         "the worker's processes numbered %ld with %ld threads (limits %d and %d); kbv killed them", procs, threads, PROC_MAX_FAMILY,
                         PROC_MAX_THREADS);
                proc_kill(p);
                return kbv_seterr(err, "%s", p->killed_why), PROC_DIED;
            }
        }
        struct pollfd fds[3] = {{p->reply_fd, POLLIN, 0}, {p->out_fd, POLLIN, 0}, {p->err_fd, POLLIN, 0}};
        int ms = left > 1.0 ? 1000 : (int)(left * 1000) + 1;
        int n = poll(fds, 3, ms);
        if (n < 0 && errno != EINTR) return kbv_seterr(err, "poll: %s", strerror(errno)), PROC_ERROR;
        if (p->out_fd >= 0 && fds[1].revents) drain(&p->out_fd, &p->out, NULL);
        if (p->err_fd >= 0 && fds[2].revents) drain(&p->err_fd, &p->err, NULL);
        if (fds[0].revents) drain(&p->reply_fd, NULL, &p->reader);
        if (n == 0 && try_wait(p, 0)) {
            /* Exited without closing the pipe cleanly (a forked child may still hold it). */
            drain(&p->reply_fd, NULL, &p->reader);
            if (proto_reader_next(&p->reader, &line, &len) > 0) {
                int rc = proto_parse(line, len, reply, err);
                free(line);
                return rc < 0 ? PROC_PROTOCOL : PROC_OK;
            }
            return PROC_DIED;
        }
    }
}

/* /proc/PID/stat's fields after "pid (comm)" (comm may hold anything, ')' too) into buf: a
 * pointer to them, or NULL where unreadable. */
static const char *stat_fields(long pid, char *buf, size_t n) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    ssize_t got = read(fd, buf, n - 1);
    close(fd);
    if (got <= 0) return NULL;
    buf[got] = '\0';
    char *rp = strrchr(buf, ')');
    return rp ? rp + 1 : NULL;
}

int proc_stat_parent(long pid, char *state, long *ppid) {
    char buf[512], st;
    const char *f = stat_fields(pid, buf, sizeof buf);
    if (!f || sscanf(f, " %c %ld", &st, ppid) != 2) return -1;
    if (state) *state = st;
    return 0;
}

double proc_stat_cpu_seconds(long pid) {
    char buf[1024];
    const char *f = stat_fields(pid, buf, sizeof buf); /* fields 14-17: utime, stime, cutime, cstime */
    unsigned long long ut, stm;
    long long cut, cst;
    if (!f || sscanf(f, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld", &ut, &stm, &cut, &cst) != 4) return -1;
    long hz = sysconf(_SC_CLK_TCK);
    return hz > 0 ? (double)(ut + stm + (unsigned long long)(cut > 0 ? cut : 0) + (unsigned long long)(cst > 0 ? cst : 0)) / (double)hz : -1;
}

double proc_cpu_seconds(const kbv_proc *p) {
    if (!p->pid) return -1;
    if (p->exited) return p->cpu_s;
    return proc_stat_cpu_seconds((long)p->pid);
}

/* Kill every child of kbv that is not a supervised worker: processes that a worker's
 * descendants detached (setsid) and that were reparented to kbv. */
static void reap_orphans(void) {
    pid_t self = getpid();
    for (int round = 0; round < 50; round++) {
        int found = 0;
        DIR *d = opendir("/proc");
        if (!d) return;
        struct dirent *e;
        while ((e = readdir(d))) {
            char *end, state;
            long pid = strtol(e->d_name, &end, 10), ppid;
            if (*end || pid <= 0 || proc_stat_parent(pid, &state, &ppid) < 0) continue;
            if (ppid != self || is_live((pid_t)pid)) continue;
            found = 1;
            kill((pid_t)pid, SIGKILL);
            kill((pid_t)-pid, SIGKILL);
            waitpid((pid_t)pid, NULL, state == 'Z' ? WNOHANG : 0);
        }
        closedir(d);
        if (!found) return;
    }
}

void proc_kill(kbv_proc *p) {
    if (p->pid > 0) {
        kill(-p->pid, SIGKILL);
        kill(p->pid, SIGKILL);
        try_wait(p, 1);
        kill(-p->pid, SIGKILL); /* group members that outlived the leader */
        live_del(p->pid);
    }
    reap_orphans();
    unwatch(p);
    sandbox_memcg_remove(&p->memcg); /* (kills what is left in it first) */
    close_fd(&p->cmd_fd);
    /* Drain what the child wrote before it died; no writer is left, so this ends. */
    for (int i = 0; i < 1000 && (p->out_fd >= 0 || p->err_fd >= 0 || p->reply_fd >= 0); i++) {
        struct pollfd fds[3] = {{p->out_fd, POLLIN, 0}, {p->err_fd, POLLIN, 0}, {p->reply_fd, POLLIN, 0}};
        if (poll(fds, 3, 20) <= 0) break;
        if (p->out_fd >= 0 && fds[0].revents) drain(&p->out_fd, &p->out, NULL);
        if (p->err_fd >= 0 && fds[1].revents) drain(&p->err_fd, &p->err, NULL);
        if (p->reply_fd >= 0 && fds[2].revents) drain(&p->reply_fd, NULL, NULL);
    }
    close_fd(&p->out_fd), close_fd(&p->err_fd), close_fd(&p->reply_fd);
}

void proc_finish(kbv_proc *p, double grace_s) {
    close_fd(&p->cmd_fd); /* the worker exits at EOF on its command pipe */
    double deadline = kbv_now() + grace_s;
    while (!try_wait(p, 0) && kbv_now() < deadline) {
        struct pollfd fds[2] = {{p->out_fd, POLLIN, 0}, {p->err_fd, POLLIN, 0}};
        poll(fds, 2, 10);
        if (p->out_fd >= 0 && fds[0].revents) drain(&p->out_fd, &p->out, NULL);
        if (p->err_fd >= 0 && fds[1].revents) drain(&p->err_fd, &p->err, NULL);
    }
    proc_kill(p);
}

void proc_free(kbv_proc *p) {
    if (p->pid > 0 && !p->exited) proc_kill(p);
    unwatch(p);
    sandbox_memcg_remove(&p->memcg);
    close_fd(&p->cmd_fd), close_fd(&p->reply_fd), close_fd(&p->out_fd), close_fd(&p->err_fd);
    proto_reader_free(&p->reader);
    proc_capture_free(&p->out);
    proc_capture_free(&p->err);
    p->pid = 0;
}

double proc_busy_seconds(const kbv_proc *p) {
    if (!p || p->pid <= 0 || p->exited) return -1;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)p->pid);
    DIR *d = opendir(path);
    if (!d) return -1;
    double total = 0;
    int any = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char sp[96], buf[128];
        snprintf(sp, sizeof sp, "/proc/%d/task/%.16s/schedstat", (int)p->pid, e->d_name);
        int fd = open(sp, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0) continue;
        buf[n] = '\0';
        char *end;
        unsigned long long run = strtoull(buf, &end, 10), wait = strtoull(end, NULL, 10);
        total += (double)(run + wait) * 1e-9, any = 1;
    }
    closedir(d);
    return any ? total : -1;
}
