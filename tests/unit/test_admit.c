/* test_admit.c -- admit.c: what is left after the running evaluations' reservations, the
 * admission decision, one evaluation at a time of a problem not measured yet, a problem's need before and after a measurement (slack, a published
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
#define GiB (1LL << 30)

/* run.c's fill of the free slots, in their order, with free bytes that do not change: the next
 * entry (problem[*next]) starts in a free slot unless it must wait, and then the ones after it
 * wait too. measure_rule 0: the old rule (admit_check alone); 1: run.c's (admit_decide). How
 * many started. */
static int fill(const kbv_admit *a, admit_eval *ev, int nslots, const int *problem, int n, int *next, admit_bytes free_b, int measure_rule) {
    int started = 0;
    for (int k = 0; k < nslots && *next < n; k++) {
        if (ev[k].pid) continue;
        int g = problem[*next], running = 0;
        for (int j = 0; j < nslots; j++) running += ev[j].pid != 0;
        admit_bytes need = admit_need(a, g), left = admit_left(free_b, ev, nslots);
        if (measure_rule ? admit_decide(a, ev, nslots, g, need, left, running) != ADMIT_YES : running && admit_check(need, left) != ADMIT_YES) break;
        memset(&ev[k], 0, sizeof ev[k]);
        ev[k].pid = 100 + *next, ev[k].problem = g, ev[k].reserved = need;
        (*next)++, started++;
    }
    return started;
}

/* An evaluation ends: ran_all as admit_record's complete; what it was seen to use. */
static void end_eval(kbv_admit *a, admit_eval *e, int ran_all, long long mem_peak, long long own_peak) {
    e->samples = 4, e->mem_peak = mem_peak, e->own_peak = own_peak;
    snprintf(e->scratch, sizeof e->scratch, "/nonexistent/kbv-eval");
    admit_record(a, e, ran_all, 0);
    e->pid = 0;
}

/* One problem not measured yet runs one evaluation at a time (the H200 run of 2026-12-04: the
 * five samples of a problem with 1 GiB outputs, in a row in the manifest, all started under
 * the 8 GiB default, grew to some 13 GiB each and were OOM-killed together). */
static void test_unmeasured(void) {
    enum { NSLOTS = 12 };
    admit_problem probs[8];
    kbv_admit a;
    admit_eval ev[NSLOTS];
    memset(&a, 0, sizeof a), memset(probs, 0, sizeof probs);
    a.problems = probs, a.nproblems = 8; /* no reference folder, no compile cache, not a tmpfs */
    admit_bytes lots = {100 * GiB, 100 * GiB};
    const int five[] = {0, 0, 0, 0, 0, 1}; /* five samples of problem 0, then problem 1 */
    int next = 0;

    /* failing before: the default fits five times over, so all five started at once */
    memset(ev, 0, sizeof ev);
    CHECK(fill(&a, ev, NSLOTS, five, 6, &next, lots, 0) == 6);
    /* now: one of problem 0, and the rest wait behind the next one, in the manifest's order */
    memset(ev, 0, sizeof ev), next = 0;
    CHECK(fill(&a, ev, NSLOTS, five, 6, &next, lots, 1) == 1 && next == 1);
    CHECK(admit_unmeasured_busy(&a, ev, NSLOTS, 0) && !admit_unmeasured_busy(&a, ev, NSLOTS, 1));
    CHECK(fill(&a, ev, NSLOTS, five, 6, &next, lots, 1) == 0 && next == 1); /* still measuring */
    /* it stops early (a compile error): the next one starts, again alone */
    end_eval(&a, &ev[0], 0, 300 * MiB, 10 * MiB);
    CHECK(!probs[0].measured && !admit_unmeasured_busy(&a, ev, NSLOTS, 0));
    CHECK(fill(&a, ev, NSLOTS, five, 6, &next, lots, 1) == 1 && next == 2);
    /* it runs all of its cases, at 12 GiB: the rest by the normal rule, need 15.1 GiB each, so
     * two fit in 40 GiB and the third waits (with 100 GiB, all three and problem 1) */
    end_eval(&a, &ev[0], 1, 12 * GiB, 100 * MiB);
    CHECK(probs[0].measured && !admit_unmeasured_busy(&a, ev, NSLOTS, 0));
    CHECK(admit_need(&a, 0).memory == 12 * GiB + 3 * GiB + ADMIT_SLACK_BYTES);
    int saved = next;
    CHECK(fill(&a, ev, NSLOTS, five, 6, &next, (admit_bytes){100 * GiB, 40 * GiB}, 1) == 2 && next == 4);
    for (int k = 0; k < NSLOTS; k++) ev[k].pid = 0;
    next = saved;
    CHECK(fill(&a, ev, NSLOTS, five, 6, &next, lots, 1) == 4 && next == 6);

    /* different problems not measured yet still start together, each under the default */
    const int apart[] = {2, 3, 4, 5, 6};
    memset(ev, 0, sizeof ev), next = 0;
    CHECK(fill(&a, ev, NSLOTS, apart, 5, &next, lots, 1) == 5);
    /* a measured problem's evaluations start together when they fit */
    const int same[] = {0, 0, 0, 0, 0};
    memset(ev, 0, sizeof ev), next = 0;
    CHECK(fill(&a, ev, NSLOTS, same, 5, &next, (admit_bytes){100 * GiB, 80 * GiB}, 1) == 5);
    /* with nothing running, an entry always starts, even one that does not fit */
    memset(ev, 0, sizeof ev), next = 0;
    CHECK(fill(&a, ev, NSLOTS, apart, 5, &next, (admit_bytes){1 * GiB, 1 * GiB}, 1) == 1);
    /* a free slot (pid 0) or another problem's evaluation is no reason to wait; nor is a
     * problem index outside the run's */
    memset(ev, 0, sizeof ev);
    ev[3].problem = 7, ev[4].pid = 5, ev[4].problem = 6;
    CHECK(!admit_unmeasured_busy(&a, ev, NSLOTS, 7) && admit_unmeasured_busy(&a, ev, NSLOTS, 6));
    CHECK(!admit_unmeasured_busy(&a, ev, NSLOTS, -1) && !admit_unmeasured_busy(&a, ev, NSLOTS, 8));

    /* A running evaluation that grew past its reservation counts at what it uses (free already
     * lacks it), not at its reservation: nothing more is taken off; one below it holds the rest. */
    memset(ev, 0, sizeof ev);
    ev[0].pid = 1, ev[0].reserved = (admit_bytes){4 * GiB, 8 * GiB}, ev[0].used = (admit_bytes){5 * GiB, 12 * GiB};
    admit_bytes left = admit_left((admit_bytes){20 * GiB, 30 * GiB}, ev, NSLOTS);
    CHECK(left.scratch == 20 * GiB && left.memory == 30 * GiB);
    ev[0].used = (admit_bytes){1 * GiB, 2 * GiB};
    left = admit_left((admit_bytes){20 * GiB, 30 * GiB}, ev, NSLOTS);
    CHECK(left.scratch == 17 * GiB && left.memory == 24 * GiB);
}

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
    test_unmeasured();

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

    /* Its first evaluation's cases have run (it published the problem's reference side): the
     * siblings start beside it under twice what it was seen to use so far; before that they
     * wait, as they do where nothing is published (no sign of its cases) or nothing sampled. */
    static const char sha3[3][65] = {"cccc", "dddd", "eeee"};
    CHECK(admit_init(&a, base, cache, "/nonexistent/kbv-cache", 3, sha3, &err) == 0);
    a.tmpfs = 0, a.compile = 0;
    enum { NS = 8 };
    admit_eval run[NS];
    memset(run, 0, sizeof run);
    run[0].pid = 77, run[0].problem = 2, run[0].reserved = admit_need(&a, 2);
    const int sibs[] = {2, 2, 2, 2};
    int nx = 0;
    admit_bytes plenty = {100 * GiB, 100 * GiB};
    CHECK(admit_unmeasured_busy(&a, run, NS, 2) && fill(&a, run, NS, sibs, 4, &nx, plenty, 1) == 0);
    run[0].samples = 3, run[0].mem_peak = 6 * GiB, run[0].own_peak = 1 * GiB;
    CHECK(admit_unmeasured_busy(&a, run, NS, 2)); /* sampled, not published: its cases may still be running */
    CHECK(admit_need_running(&a, run, NS, 2).memory == admit_need(&a, 2).memory);
    snprintf(pub, sizeof pub, "%s/%s", cache, sha3[2]);
    CHECK(mkdir(pub, 0700) == 0);
    CHECK(!admit_unmeasured_busy(&a, run, NS, 2) && !a.problems[2].measured);
    admit_bytes pn = admit_need_running(&a, run, NS, 2);
    CHECK(pn.memory == 2 * (6 * GiB + 6 * GiB / 4 + ADMIT_SLACK_BYTES) && pn.scratch == ADMIT_DEFAULT_SCRATCH);
    /* fill() computes admit_need, not run.c's admit_need_running: check run.c's decision here */
    admit_bytes lleft = admit_left((admit_bytes){100 * GiB, 18 * GiB}, run, NS);
    CHECK(admit_decide(&a, run, NS, 2, pn, lleft, 1) == ADMIT_WAIT_MEMORY); /* 15.1 GiB needed, 18 less its 4 reserved left */
    lleft = admit_left((admit_bytes){100 * GiB, 40 * GiB}, run, NS);
    CHECK(admit_decide(&a, run, NS, 2, pn, lleft, 1) == ADMIT_YES);
    /* another problem's publishing says nothing of this one's */
    run[0].problem = 1;
    CHECK(!admit_unmeasured_busy(&a, run, NS, 2) && admit_need_running(&a, run, NS, 2).memory == admit_need(&a, 2).memory);
    snprintf(pub, sizeof pub, "%s/%s", cache, sha3[1]);
    CHECK(admit_unmeasured_busy(&a, run, NS, 1)); /* dddd not published */
    CHECK(mkdir(pub, 0700) == 0 && !admit_unmeasured_busy(&a, run, NS, 1));
    /* without the kept reference sides (no folder: no Landlock, --no-reference-reuse) never */
    kbv_admit plain;
    CHECK(admit_init(&plain, base, "", "/nonexistent/kbv-cache", 3, sha3, &err) == 0);
    CHECK(admit_unmeasured_busy(&plain, run, NS, 1) && admit_need_running(&plain, run, NS, 1).memory == admit_need(&plain, 1).memory);
    admit_free(&plain);
    admit_free(&a);
    kbv_rmtree(base);
    CHECK_DONE("test_admit");
}
