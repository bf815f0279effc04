/* test_util.c -- util.c: hashing against known answers, seeds, buffers, scratch folders, the GPU lock,
 * tasks run at once. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "util.h"

static void nap(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The GPU lock: shared holders coexist, a writer waits for them, and a reader that comes
 * after a waiting writer waits behind it (writer first). The order of the children's
 * notes on the pipe says who got the lock when. Asked for shared, it is held only between
 * enter and leave (one worker command), so a writer waits for a command, not a phase. */
/* kbv_nicer, in a child (a process cannot take nice back): relative to where it was, capped
 * at 19; the child's exit status says which check failed. */
static void test_nicer(void) {
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int base = getpriority(PRIO_PROCESS, 0), want = base + 3 > 19 ? 19 : base + 3;
        if (kbv_nicer(3) != 0 || getpriority(PRIO_PROCESS, 0) != want) _exit(1);
        if (kbv_nicer(40) != 0 || getpriority(PRIO_PROCESS, 0) != 19) _exit(2);
        _exit(0);
    }
    int st = -1;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_gpulock(void) {
    kbv_gpulock off;
    CHECK(kbv_gpulock_open(&off, NULL, NULL) == 0);
    CHECK(kbv_gpulock_set(&off, 2, NULL) == 0 && off.held == 0); /* no path: off */
    CHECK(kbv_gpulock_set(&off, 1, NULL) == 0 && kbv_gpulock_enter(&off, NULL) == 0 && off.held == 0);
    kbv_gpulock_close(&off);
    char dir[] = "/tmp/kbv-test-lock-XXXXXX", path[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/gpu.lock", dir);
    kbv_gpulock a, b;
    CHECK(kbv_gpulock_open(&a, path, NULL) == 0 && kbv_gpulock_open(&b, path, NULL) == 0);
    CHECK(kbv_gpulock_set(&a, 1, NULL) == 0 && kbv_gpulock_set(&b, 1, NULL) == 0);
    CHECK(a.held == 0 && b.held == 0); /* asked for, not held until a command */
    CHECK(kbv_gpulock_enter(&a, NULL) == 0 && kbv_gpulock_enter(&b, NULL) == 0); /* two readers at once */
    CHECK(a.held == 1 && b.held == 1);
    kbv_gpulock_leave(&b);
    CHECK(b.held == 0 && b.want == 1);
    CHECK(kbv_gpulock_set(&b, 0, NULL) == 0 && b.held == 0);
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t w = fork();
    if (w == 0) { /* the writer: waits for a's shared hold, keeps the GPU 300 ms */
        kbv_gpulock l;
        if (kbv_gpulock_open(&l, path, NULL) < 0 || kbv_gpulock_set(&l, 2, NULL) < 0) _exit(1);
        if (write(fds[1], "W", 1) != 1) _exit(1);
        nap(300);
        if (write(fds[1], "w", 1) != 1) _exit(1);
        kbv_gpulock_close(&l);
        _exit(l.waited_s >= 0.15 ? 0 : 2);
    }
    nap(100);
    pid_t r = fork();
    if (r == 0) { /* a reader arriving while the writer waits: must wait behind it */
        kbv_gpulock l;
        if (kbv_gpulock_open(&l, path, NULL) < 0 || kbv_gpulock_set(&l, 1, NULL) < 0 || kbv_gpulock_enter(&l, NULL) < 0) _exit(1);
        if (write(fds[1], "R", 1) != 1) _exit(1);
        kbv_gpulock_close(&l);
        _exit(0);
    }
    nap(100);
    kbv_gpulock_leave(&a); /* the first reader's command ends: the writer goes */
    CHECK(a.held == 0);
    close(fds[1]);
    char order[8] = "";
    ssize_t n = 0, k;
    while (n < 7 && (k = read(fds[0], order + n, sizeof order - 1 - (size_t)n)) > 0) n += k;
    close(fds[0]);
    CHECK_STR(order, "WwR");
    int st = -1;
    CHECK(waitpid(w, &st, 0) == w && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(waitpid(r, &st, 0) == r && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(a.waited_s < 0.1);
    /* Between commands nothing is held: a writer gets the GPU at once while a is still asked
     * for shared (a phase in progress), and a's next command waits for the writer. */
    CHECK(a.want == 1 && a.held == 0);
    CHECK(kbv_gpulock_set(&b, 2, NULL) == 0 && b.held == 2 && b.waited_s < 0.1);
    pid_t x = fork();
    if (x == 0) { /* a's next command, from another process sharing nothing with b */
        kbv_gpulock l;
        if (kbv_gpulock_open(&l, path, NULL) < 0 || kbv_gpulock_set(&l, 1, NULL) < 0 || kbv_gpulock_enter(&l, NULL) < 0) _exit(1);
        kbv_gpulock_leave(&l);
        _exit(l.held == 0 && l.waited_s >= 0.15 ? 0 : 2);
    }
    nap(250);
    CHECK(kbv_gpulock_set(&b, 1, NULL) == 0 && b.held == 0); /* the exclusive hold ends */
    CHECK(waitpid(x, &st, 0) == x && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(kbv_gpulock_enter(&b, NULL) == 0 && b.held == 1); /* under 1, a command holds it shared; under 2, enter and leave do nothing: */
    kbv_gpulock_leave(&b);
    CHECK(kbv_gpulock_set(&b, 2, NULL) == 0 && kbv_gpulock_enter(&b, NULL) == 0 && b.held == 2);
    kbv_gpulock_leave(&b);
    CHECK(b.held == 2);
    kbv_gpulock_close(&a), kbv_gpulock_close(&b);
    char turn[80];
    snprintf(turn, sizeof turn, "%s.turn", path);
    unlink(path), unlink(turn), rmdir(dir);
}

/* kbv_parallel and kbv_async: every task once; with par, all but the last on threads of their own, at the
 * same time (each waits, up to 5 s, until all have started), with signals blocked there; the
 * last on the caller's. Without par, all on the caller's, in order. A NULL fn is skipped. */
typedef struct par_task {
    atomic_int *started, *order;
    int n, ran, saw_all, sigint_blocked, pos;
    pthread_t self;
} par_task;

static void par_fn(void *arg) {
    par_task *t = arg;
    t->ran++, t->self = pthread_self();
    t->pos = atomic_fetch_add(t->order, 1);
    atomic_fetch_add(t->started, 1);
    sigset_t cur;
    t->sigint_blocked = pthread_sigmask(SIG_BLOCK, NULL, &cur) == 0 && sigismember(&cur, SIGINT) == 1;
    if (t->n == 0) return;
    double t0 = kbv_now();
    while (atomic_load(t->started) < t->n && kbv_now() - t0 < 5) nap(1);
    t->saw_all = atomic_load(t->started) >= t->n;
}

static void test_parallel(void) {
    for (int par = 0; par < 2; par++) {
        atomic_int started = 0, order = 0;
        par_task pt[4];
        kbv_task tasks[5];
        for (int i = 0; i < 4; i++) {
            pt[i] = (par_task){.started = &started, .order = &order, .n = par ? 4 : 0};
            tasks[i] = (kbv_task){par_fn, &pt[i]};
        }
        tasks[4] = tasks[3], tasks[3] = (kbv_task){NULL, NULL}; /* a skipped one among them */
        kbv_parallel(tasks, 5, par);
        int once = 1, others = 1, together = 1, blocked = 1, in_order = 1;
        for (int i = 0; i < 4; i++) {
            once &= pt[i].ran == 1;
            if (i < 3) others &= par ? !pthread_equal(pt[i].self, pthread_self()) : pthread_equal(pt[i].self, pthread_self());
            if (i < 3) blocked &= pt[i].sigint_blocked == par;
            together &= !par || pt[i].saw_all;
            in_order &= par || pt[i].pos == i;
        }
        CHECK(once);
        CHECK(others);
        CHECK(pthread_equal(pt[3].self, pthread_self()) && !pt[3].sigint_blocked); /* the last: the caller's, its mask as it was */
        CHECK(together);
        CHECK(blocked);
        CHECK(in_order);
    }
    /* kbv_async: the task runs while the caller goes on (it waits for the caller's go), on a
     * thread of its own with signals blocked; joined, it has run once. */
    atomic_int go = 0, order = 0;
    par_task at = {.started = &go, .order = &order, .n = 2};
    kbv_async a = {0};
    kbv_async_start(&a, par_fn, &at);
    CHECK(a.started);
    atomic_fetch_add(&go, 1); /* the caller's part: the task sees 2 only if it runs meanwhile */
    kbv_async_join(&a);
    CHECK(at.ran == 1 && at.saw_all && at.sigint_blocked && !pthread_equal(at.self, pthread_self()));
    kbv_async_join(&a); /* joined twice, or never started: nothing */
    kbv_async none = {0};
    kbv_async_join(&none);
    CHECK(!a.started && !none.started);
}

int main(void) {
    char hex[65];
    test_nicer();
    test_parallel();
    /* FIPS 180-2 known answers. */
    CHECK(kbv_sha256_hex("abc", 3, hex) == 0);
    CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(kbv_sha256_hex("", 0, hex) == 0);
    CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");

    /* SplitMix64 reference values (Vigna's splitmix64.c, state 0 then 0x9e37...). */
    CHECK(kbv_mix64(0) == 0xe220a8397b1dcdafULL);
    /* Derived seeds: deterministic, label-dependent, and not the mixer's (which inverts). */
    CHECK(kbv_derive_seed(2026, 1) == kbv_derive_seed(2026, 1));
    CHECK(kbv_derive_seed(2026, 1) != kbv_derive_seed(2026, 2));
    CHECK(kbv_derive_seed(2026, 1) != kbv_derive_seed(2027, 1));
    CHECK(kbv_derive_seed(2026, 1) != kbv_mix64(2026 ^ 1));
    /* /proc/PID/stat: this process's session, and one thread (a comm with ')' and spaces is
     * what strrchr guards against; this test binary's name has neither). */
    {
        char me[24];
        long sid = 0, threads = 0;
        snprintf(me, sizeof me, "%d", (int)getpid());
        CHECK(kbv_proc_stat(me, &sid, &threads) == 0);
        CHECK(sid == (long)getsid(0));
        CHECK(threads == 1);
        CHECK(kbv_proc_stat("999999999", &sid, &threads) == -1);
    }
    CHECK(kbv_mix64(1) != kbv_mix64(2));

    kbv_buf b;
    kbv_buf_init(&b);
    for (int i = 0; i < 1000; i++) kbv_buf_printf(&b, "%d,", i);
    CHECK(b.len == 3890);
    CHECK(b.data[b.len] == '\0');
    kbv_buf_free(&b);

    kbv_err err = {{0}};
    CHECK(kbv_seterr(&err, "x=%d", 5) == -1);
    CHECK_STR(err.msg, "x=5");
    kbv_wraperr(&err, "loading %s", "f.py");
    CHECK_STR(err.msg, "loading f.py: x=5");

    char dir[4096], path[4200];
    CHECK(kbv_mkscratch(NULL, dir, sizeof dir, &err) == 0);
    snprintf(path, sizeof path, "%s/a/b", dir);
    CHECK(mkdir(path - 0, 0700) != 0); /* parent missing */
    snprintf(path, sizeof path, "%s/a", dir);
    CHECK(mkdir(path, 0700) == 0);
    snprintf(path, sizeof path, "%s/a/b", dir);
    CHECK(mkdir(path, 0500) == 0); /* read-only folder: rmtree must still remove it */
    snprintf(path, sizeof path, "%s/f", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) fputs("abc", f), fclose(f);
    CHECK(kbv_sha256_file(path, hex, &err) == 0);
    CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    char *data;
    size_t n;
    CHECK(kbv_read_file(path, &data, &n, &err) == 0 && n == 3);
    free(data);
    CHECK(kbv_read_file("/nonexistent/x", &data, &n, &err) == -1);
    CHECK(strstr(err.msg, "/nonexistent/x") != NULL);
    /* kbv_tree_bytes: the blocks of every file beneath, a hard link's once per name */
    long long before = kbv_tree_bytes(dir);
    snprintf(path, sizeof path, "%s/a/big", dir);
    f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        for (int i = 0; i < 100000; i++) fputc('x', f);
        fclose(f);
    }
    long long after = kbv_tree_bytes(dir);
    CHECK(before >= 0 && after - before >= 100000 && after - before < 200000);
    CHECK(kbv_tree_bytes("/nonexistent/x") == 0);
    CHECK(kbv_rmtree(dir) == 0);
    CHECK(access(dir, F_OK) != 0);

    /* kbv_rmtree: a tree deeper than PATH_MAX, a closed folder, a symbolic link out of the tree
     * (removed, not followed), a file that is not a regular one */
    char deep[] = "/tmp/kbv-test-deep-XXXXXX", outside[] = "/tmp/kbv-test-out-XXXXXX";
    CHECK(mkdtemp(deep) != NULL && mkdtemp(outside) != NULL);
    int top = open(deep, O_RDONLY | O_DIRECTORY), cur = top;
    for (int i = 0; cur >= 0 && i < 600; i++) { /* 600 x 9 bytes: past PATH_MAX (4096) */
        CHECK(mkdirat(cur, "dddddddd", 0755) == 0);
        int next = openat(cur, "dddddddd", O_RDONLY | O_DIRECTORY);
        int ff = openat(next, "f", O_WRONLY | O_CREAT, 0600);
        if (ff >= 0) close(ff);
        if (cur != top) close(cur);
        cur = next;
    }
    CHECK(cur >= 0 && mkdirat(cur, "closed", 0) == 0 && mkfifoat(cur, "fifo", 0600) == 0);
    char keepf[64];
    snprintf(keepf, sizeof keepf, "%s/keep", outside);
    FILE *kf = fopen(keepf, "w");
    if (kf) fclose(kf);
    CHECK(symlinkat(outside, cur, "link") == 0);
    if (cur != top) close(cur);
    close(top);
    CHECK(kbv_rmtree(deep) == 0);
    CHECK(access(deep, F_OK) != 0);
    CHECK(access(keepf, F_OK) == 0); /* the link went, not what it pointed at */
    CHECK(kbv_rmtree(outside) == 0);

    /* kbv_fputs_safe: control characters (C0 but newline and tab, DEL, C1 in UTF-8) as \xNN */
    {
        char *buf = NULL;
        size_t blen = 0;
        FILE *m = open_memstream(&buf, &blen);
        kbv_fputs_safe("a\x1b[2J\tb\n\x07\x7f\xc2\x9b\xc3\xa9", m);
        fclose(m);
        CHECK_STR(buf, "a\\x1b[2J\tb\n\\x07\\x7f\\xc2\\x9b\xc3\xa9");
        free(buf);
    }

    char stem[64];
    kbv_stem("/a/b/level_1_problem_2_sample_0_kernel.py", stem, sizeof stem);
    CHECK_STR(stem, "level_1_problem_2_sample_0_kernel");
    kbv_stem("plain", stem, sizeof stem);
    CHECK_STR(stem, "plain");
    test_gpulock();
    CHECK_DONE("test_util");
}
