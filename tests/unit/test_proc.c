/* test_proc.c -- proc.c with /bin/sh children: replies, timeouts, deaths, garbage,
 * capped output, process-group kills, and orphans that detached from the group. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "proc.h"

static char *env[] = {"PATH=/usr/bin:/bin", NULL};

static proc_result run(kbv_proc *p, const char *script, double timeout, json_t **reply) {
    char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
    kbv_err err = {{0}};
    if (proc_spawn(p, argv, env, NULL, 4096, NULL, &err) < 0) return PROC_ERROR;
    return proc_request(p, NULL, timeout, reply, &err);
}

static int alive(pid_t pid) { return kill(pid, 0) == 0; }

int main(void) {
    kbv_err err = {{0}};
    CHECK(proc_init_reaper(&err) == 0);
    kbv_proc p;
    json_t *rep;

    /* A reply on fd 4 arrives; a command reaches fd 3. */
    CHECK(run(&p, "echo '{\"ok\":true,\"n\":1}' >&4; read line <&3; echo \"{\\\"ok\\\":true,\\\"got\\\":$line}\" >&4; sleep 30", 5, &rep) == PROC_OK);
    CHECK(json_integer_value(json_object_get(rep, "n")) == 1);
    json_decref(rep);
    json_t *cmd = json_pack("{s:s}", "op", "x");
    CHECK(proc_request(&p, cmd, 5, &rep, &err) == PROC_OK);
    CHECK_STR(json_string_value(json_object_get(json_object_get(rep, "got"), "op")), "x");
    json_decref(cmd), json_decref(rep);
    pid_t pid = p.pid;
    proc_kill(&p);
    CHECK(!alive(pid));
    proc_free(&p);

    /* Nothing but 0-4 reaches a worker: a socket and a file kbv's process holds without
     * close-on-exec (as one inherited from kbv's own parent would be) are closed in the child
     * (the attack fd_scan's guarantee, whatever the GPU stack opens inside a worker later). */
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    int leak = open("/dev/null", O_RDONLY);
    CHECK(leak > 4);
    CHECK(run(&p, "exec 4>&-; exec sleep 30", 0.5, &rep) != PROC_ERROR); /* sleep keeps what it was given */
    usleep(200000);
    char fdpath[64], seen[256] = "";
    snprintf(fdpath, sizeof fdpath, "/proc/%d/fd", (int)p.pid);
    DIR *d = opendir(fdpath);
    CHECK(d != NULL);
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.' && atoi(e->d_name) > 4) {
            char l[128] = "", q[96];
            snprintf(q, sizeof q, "%s/%s", fdpath, e->d_name);
            ssize_t k = readlink(q, l, sizeof l - 1);
            if (k > 0) l[k] = 0;
            snprintf(seen + strlen(seen), sizeof seen - strlen(seen), " %s=%s", e->d_name, l);
        }
    if (d) closedir(d);
    CHECK_STR(seen, "");
    json_decref(rep);
    proc_kill(&p);
    proc_free(&p);
    close(sv[0]), close(sv[1]), close(leak);

    /* No reply in time: PROC_TIMEOUT, and the kill takes the whole group. */
    double t0 = kbv_now();
    CHECK(run(&p, "sleep 30 & sleep 30", 0.3, &rep) == PROC_TIMEOUT);
    CHECK(kbv_now() - t0 < 3);
    proc_kill(&p);
    CHECK(p.exited && WIFSIGNALED(p.wstatus) && WTERMSIG(p.wstatus) == SIGKILL);
    proc_free(&p);

    /* Death is reported with its status. */
    CHECK(run(&p, "exit 7", 5, &rep) == PROC_DIED);
    CHECK(p.exited && WIFEXITED(p.wstatus) && WEXITSTATUS(p.wstatus) == 7);
    char desc[128];
    proc_describe_status(p.wstatus, desc, sizeof desc);
    CHECK_STR(desc, "exited with status 7");
    proc_free(&p);
    CHECK(run(&p, "kill -SEGV $$", 5, &rep) == PROC_DIED);
    proc_describe_status(p.wstatus, desc, sizeof desc);
    CHECK(strstr(desc, "signal 11") != NULL);
    proc_free(&p);

    /* Garbage on the reply pipe is a protocol error, not a crash of kbv. */
    CHECK(run(&p, "echo 'hello there' >&4; sleep 30", 5, &rep) == PROC_PROTOCOL);
    proc_kill(&p), proc_free(&p);
    /* Closing the reply pipe while alive is reported as death. */
    CHECK(run(&p, "exec 4>&-; sleep 30", 5, &rep) == PROC_DIED);
    proc_kill(&p), proc_free(&p);

    /* Output is drained while waiting and capped: 2 MB written, head and tail kept. */
    CHECK(run(&p, "head -c 2000000 /dev/zero | tr '\\0' a; echo END; echo '{\"ok\":true}' >&4; sleep 30", 10, &rep) == PROC_OK);
    json_decref(rep);
    proc_kill(&p);
    CHECK(p.out.total == 2000004);
    char *text = proc_capture_text(&p.out);
    CHECK(strlen(text) < 8000);
    CHECK(strstr(text, "bytes omitted") != NULL);
    CHECK(strstr(text, "END") != NULL);
    free(text);
    proc_free(&p);

    /* A grandchild that detached (setsid) is reaped by kbv as a subreaper. */
    CHECK(run(&p, "setsid sleep 300 & echo $! > /tmp/kbv_test_proc_orphan.$PPID; echo '{\"ok\":true}' >&4; sleep 30", 5, &rep) == PROC_OK);
    json_decref(rep);
    usleep(200000);
    char path[64];
    snprintf(path, sizeof path, "/tmp/kbv_test_proc_orphan.%d", (int)getpid());
    FILE *f = fopen(path, "r");
    int orphan = 0;
    if (f) {
        if (fscanf(f, "%d", &orphan) != 1) orphan = 0;
        fclose(f);
    }
    unlink(path);
    CHECK(orphan > 0 && alive(orphan));
    proc_kill(&p);
    CHECK(orphan > 0 && !alive(orphan));
    proc_free(&p);

    /* A folder's usage: every entry's blocks, no link followed, at most PROC_SCRATCH_MAX_DEPTH deep. */
    char dir[] = "/tmp/kbv_test_proc_scratch.XXXXXX", sub[96];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(sub, sizeof sub, "%s/a", dir);
    CHECK(mkdir(sub, 0700) == 0);
    snprintf(sub, sizeof sub, "%s/a/f", dir);
    static char mib[1 << 20];
    memset(mib, 'x', sizeof mib);
    FILE *big = fopen(sub, "w");
    CHECK(big && fwrite(mib, 1, sizeof mib, big) == sizeof mib);
    if (big) fclose(big);
    snprintf(sub, sizeof sub, "%s/link", dir);
    CHECK(symlink("/usr", sub) == 0);
    proc_usage u;
    CHECK(proc_tree_usage(dir, &u) == 0);
    CHECK(u.entries == 3 && u.deep == 0); /* a, a/f, link (not /usr beneath it) */
    CHECK(u.bytes >= (1 << 20) && u.bytes < (1 << 20) + (1 << 17));
    char why[200];
    CHECK(proc_usage_over(&u, 1 << 19, why, sizeof why) == 1 && strstr(why, "over its budget of 0.5 MiB") != NULL);
    CHECK(proc_usage_over(&u, 4 << 20, why, sizeof why) == 0 && proc_usage_over(&u, 0, why, sizeof why) == 0);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    for (int i = 0; dfd >= 0 && i < PROC_SCRATCH_MAX_DEPTH + 6; i++) { /* a chain past the depth bound */
        int next = mkdirat(dfd, "d", 0700) == 0 ? openat(dfd, "d", O_RDONLY | O_DIRECTORY) : -1;
        close(dfd);
        dfd = next;
    }
    if (dfd >= 0) close(dfd);
    CHECK(proc_tree_usage(dir, &u) == 0);
    CHECK(u.entries == 3 + PROC_SCRATCH_MAX_DEPTH && u.deep == 1);
    CHECK(proc_tree_usage("/nonexistent/kbv", &u) == -1);

    /* A watched worker that writes past its folder's budget is killed while kbv waits. */
    char script[300];
    snprintf(script, sizeof script, "head -c 3000000 /dev/zero > %s/w.bin; sleep 30", dir);
    char *wargv[] = {"/bin/sh", "-c", script, NULL};
    CHECK(proc_spawn(&p, wargv, env, dir, 4096, NULL, &err) == 0);
    proc_watch_scratch(&p, dir, 2 << 20);
    t0 = kbv_now();
    CHECK(proc_request(&p, NULL, 10, &rep, &err) == PROC_DIED);
    CHECK(kbv_now() - t0 < 5);
    CHECK(p.scratch.over && strstr(p.killed_why, "over its budget of 2.0 MiB") != NULL);
    CHECK(p.scratch.peak > (3 << 20) && p.exited);
    proc_free(&p);
    /* ... and one within it is only measured. */
    CHECK(run(&p, "echo '{\"ok\":true}' >&4; sleep 30", 5, &rep) == PROC_OK);
    json_decref(rep);
    proc_watch_scratch(&p, dir, 1LL << 30);
    CHECK(proc_request(&p, NULL, 1.5, &rep, &err) == PROC_TIMEOUT);
    CHECK(!p.scratch.over && p.scratch.peak > (3 << 20));
    proc_kill(&p), proc_free(&p);
    CHECK(kbv_rmtree(dir) == 0);

    /* A program that does not exist fails at spawn, with its name. */
    char *argv[] = {"/nonexistent/worker", NULL};
    CHECK(proc_spawn(&p, argv, env, NULL, 1024, NULL, &err) == -1);
    CHECK(strstr(err.msg, "/nonexistent/worker") != NULL);
    proc_free(&p);

    /* Capture bookkeeping by itself. */
    kbv_capture c;
    proc_capture_init(&c, 8);
    proc_capture_add(&c, "0123456789", 10);
    proc_capture_add(&c, "abcdefgh", 8);
    text = proc_capture_text(&c);
    CHECK_STR(text, "01234567\n[... 8 bytes omitted ...]\ngh");
    free(text);
    proc_capture_free(&c);
    /* A worker's CPU time (kbv's steps_s cpu_s): its own and that of the children it waited
     * for, while it runs and, from wait4, once it exited; a process that burns no CPU shows
     * none. The child burns about 0.3 s in a grandchild it waits for, then replies. */
    CHECK(run(&p, "i=0; (while [ $i -lt 300000 ]; do i=$((i+1)); done); echo '{\"ok\":true}' >&4; exec sleep 30", 20, &rep) == PROC_OK);
    json_decref(rep);
    double c1 = proc_cpu_seconds(&p);
    CHECK(c1 >= 0.05 && c1 < 20);
    CHECK(proc_stat_cpu_seconds((long)getpid()) >= 0 && proc_stat_cpu_seconds(999999999) < 0);
    proc_kill(&p);
    CHECK(p.exited && proc_cpu_seconds(&p) >= c1 - 0.011);
    proc_free(&p);
    CHECK(run(&p, "echo '{\"ok\":true}' >&4; exec sleep 30", 5, &rep) == PROC_OK);
    json_decref(rep);
    CHECK(proc_cpu_seconds(&p) >= 0 && proc_cpu_seconds(&p) < 0.05);
    proc_kill(&p);
    proc_free(&p);
    CHECK_DONE("test_proc");
}
