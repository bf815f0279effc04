/* test_proc.c -- proc.c with /bin/sh children: replies, timeouts, deaths, garbage,
 * capped output, process-group kills, and orphans that detached from the group. */
#include <signal.h>
#include <stdlib.h>
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
    CHECK_DONE("test_proc");
}
