/* test_admit.c -- admit.c: what is left after the running evaluations' reservations, the
 * admission decision, a problem's need before and after a measurement (slack, a published
 * reference folder, a tmpfs scratch), and a sample of a real process tree: its scratch folder
 * found through a grandchild's working folder, its bytes, its kept reference outputs and its
 * memory. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "admit.h"
#include "check.h"

#define MiB (1LL << 20)

static void write_file(const char *path, long long bytes) {
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    char block[65536];
    memset(block, 7, sizeof block); /* not sparse: its blocks count */
    for (long long w = 0; w < bytes; w += (long long)sizeof block) fwrite(block, 1, sizeof block, f);
    fclose(f);
}

int main(void) {
    /* Free less what the running ones reserved and have not used; a free slot counts nothing. */
    admit_eval ev[3];
    memset(ev, 0, sizeof ev);
    ev[0].pid = 11, ev[0].reserved = (admit_bytes){100 * MiB, 500 * MiB}, ev[0].used = (admit_bytes){30 * MiB, 600 * MiB};
    ev[2].pid = 12, ev[2].reserved = (admit_bytes){50 * MiB, 50 * MiB};
    admit_bytes left = admit_left((admit_bytes){1000 * MiB, 2000 * MiB}, ev, 3);
    CHECK(left.scratch == (1000 - 70 - 50) * MiB && left.memory == (2000 - 0 - 50) * MiB);
    left = admit_left((admit_bytes){ADMIT_UNKNOWN, 10 * MiB}, ev, 3);
    CHECK(left.scratch == ADMIT_UNKNOWN && left.memory == -40 * MiB);
    CHECK(admit_check((admit_bytes){880 * MiB, 1 * MiB}, (admit_bytes){880 * MiB, 1 * MiB}) == ADMIT_YES);
    CHECK(admit_check((admit_bytes){881 * MiB, 1 * MiB}, (admit_bytes){880 * MiB, 1 * MiB}) == ADMIT_WAIT_SCRATCH);
    CHECK(admit_check((admit_bytes){1, 2 * MiB}, (admit_bytes){880 * MiB, 1 * MiB}) == ADMIT_WAIT_MEMORY);
    CHECK(admit_check((admit_bytes){1LL << 50, 1LL << 50}, (admit_bytes){ADMIT_UNKNOWN, ADMIT_UNKNOWN}) == ADMIT_YES);
    char b[32];
    admit_format(3LL << 30, b, sizeof b);
    CHECK_STR(b, "3.0 GiB");
    admit_format(40 * MiB, b, sizeof b);
    CHECK_STR(b, "40 MiB");

    /* A scratch base with the run's reference folder in it, on the file system of /tmp. */
    char base[] = "/tmp/kbv-test-admit-XXXXXX", cache[PATH_MAX], scratch[PATH_MAX], kept[PATH_MAX + 100], pub[PATH_MAX + 100];
    CHECK(mkdtemp(base) != NULL);
    snprintf(cache, sizeof cache, "%s/kbv-run", base);
    snprintf(scratch, sizeof scratch, "%s/kbv-eval01", base);
    CHECK(mkdir(cache, 0700) == 0 && mkdir(scratch, 0700) == 0);
    char sub[PATH_MAX + 8];
    snprintf(sub, sizeof sub, "%s/ref", scratch);
    CHECK(mkdir(sub, 0700) == 0);
    static const char sha[2][65] = {"aaaa", "bbbb"};
    kbv_admit a;
    kbv_err err;
    CHECK(admit_init(&a, base, cache, "/nonexistent/kbv-cache", 2, sha, &err) == 0);
    a.tmpfs = 0, a.compile = 0; /* whatever /tmp is here */
    CHECK(admit_need(&a, 0).scratch == ADMIT_DEFAULT_SCRATCH && admit_need(&a, 0).memory == ADMIT_DEFAULT_MEMORY);
    admit_bytes avail = admit_available(&a);
    CHECK(avail.scratch > 0 && avail.scratch != ADMIT_UNKNOWN && avail.memory > 0);

    /* An evaluation: the child kbv (pid), a worker beneath it working in the scratch folder
     * and holding 16 MiB, 2 MiB in the folder, 3 MiB kept under refcache.c's recording name. */
    snprintf(sub, sizeof sub, "%s/ref/out.kbt", scratch);
    write_file(sub, 2 * MiB);
    int ready[2];
    CHECK(pipe(ready) == 0);
    pid_t kid = fork();
    if (kid == 0) {
        setpgid(0, 0); /* one group, killed together below */
        pid_t worker = fork();
        if (worker == 0) {
            char *held = malloc(16 * MiB);
            if (held) memset(held, 1, 16 * MiB);
            snprintf(sub, sizeof sub, "%s/ref", scratch);
            if (chdir(sub) < 0 || write(ready[1], "x", 1) != 1) _exit(1);
            for (;;) pause();
        }
        for (;;) pause();
    }
    if (kid > 0) setpgid(kid, kid); /* (either side may set it first) */
    char x;
    CHECK(kid > 0 && read(ready[0], &x, 1) == 1);
    snprintf(kept, sizeof kept, "%s/%s.%ld", cache, sha[1], (long)kid);
    CHECK(mkdir(kept, 0700) == 0);
    snprintf(sub, sizeof sub, "%s/case0_strict_0.kbt", kept);
    write_file(sub, 3 * MiB);
    memset(ev, 0, sizeof ev);
    ev[1].pid = kid, ev[1].problem = 1, ev[1].reserved = admit_need(&a, 1);
    admit_sample(&a, ev, 3);
    CHECK_STR(ev[1].scratch, scratch);
    CHECK(ev[1].own_peak >= 2 * MiB && ev[1].own_peak < 3 * MiB);
    CHECK(ev[1].kept_peak >= 3 * MiB && ev[1].kept_peak < 4 * MiB);
    CHECK(ev[1].used.scratch == ev[1].own_peak + ev[1].kept_peak);
    CHECK(ev[1].mem_peak >= 16 * MiB && ev[1].used.memory >= 16 * MiB);
    CHECK(ev[1].samples == 1 && ev[0].samples == 0);
    kill(-kid, SIGKILL);
    kill(kid, SIGKILL);
    waitpid(kid, NULL, 0);

    /* Ended without running all its cases: a floor under the default, no more. */
    admit_record(&a, &ev[1], 0, 0);
    CHECK(admit_need(&a, 1).scratch == ADMIT_DEFAULT_SCRATCH && !a.problems[1].scratch_known);
    /* Ended having run them: the measured need, with its slack; the other problem untouched. */
    admit_record(&a, &ev[1], 1, 0);
    long long want = ev[1].own_peak + ev[1].kept_peak;
    CHECK(admit_need(&a, 1).scratch == want + want / 4 + ADMIT_SLACK_BYTES);
    CHECK(admit_need(&a, 1).memory == ev[1].mem_peak + ev[1].mem_peak / 4 + ADMIT_SLACK_BYTES);
    CHECK(admit_need(&a, 0).scratch == ADMIT_DEFAULT_SCRATCH);
    /* Once the problem's folder is published, later evaluations keep nothing of their own. */
    snprintf(pub, sizeof pub, "%s/%s", cache, sha[1]);
    CHECK(rename(kept, pub) == 0);
    CHECK(admit_need(&a, 1).scratch == ev[1].own_peak + ev[1].own_peak / 4 + ADMIT_SLACK_BYTES);
    /* A scratch in memory (tmpfs) is memory too; the compile cache's allowance on its disk. */
    a.tmpfs = 1, a.compile = ADMIT_COMPILE_BYTES;
    admit_bytes n = admit_need(&a, 1);
    CHECK(n.scratch == ev[1].own_peak + ev[1].own_peak / 4 + ADMIT_SLACK_BYTES + ADMIT_COMPILE_BYTES);
    CHECK(n.memory == ev[1].mem_peak + ev[1].mem_peak / 4 + ADMIT_SLACK_BYTES + n.scratch);
    /* the wait4() peak of a process that was never sampled still counts */
    admit_eval quick;
    memset(&quick, 0, sizeof quick);
    quick.problem = 0;
    admit_record(&a, &quick, 1, 5LL << 30);
    CHECK(a.problems[0].memory == 5LL << 30 && !a.problems[0].memory_known && !a.problems[0].scratch_known);
    admit_free(&a);
    kbv_rmtree(base);
    CHECK_DONE("test_admit");
}
