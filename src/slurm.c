/* slurm.c -- `kbv slurm`: a sweep as a Slurm job array, one task per shard (docs/cluster.md).
 *
 * Everything lives in a state folder beside the database, DB.slurm/ (mode 0700, on the file
 * system the nodes share):
 *   job.sh          the task's script: kbv run --shard $SLURM_ARRAY_TASK_ID/N --resume into
 *                   shard-I.db; every value in it single-quoted, no secret in it
 *   seed            the run's seed (mode 0600), read by kbv run --seed-file: the seed is on no
 *                   command line (sbatch's, the task's), in no script and in no log
 *   shard-I.db      shard I's results: each task writes its own database
 *   shard-I.exit    kbv run's exit status, written by the task as it ends (renamed into place)
 *   jobs            "JOBID ARRAY" per sbatch, so that `kbv slurm --resume` finds the tasks again
 *   logs/           Slurm's output of each task and attempt, shard-I.job-J.log
 *   merged.db       the shards merged, then merged into DB in one transaction (and removed)
 * A task is done when its exit file says 0; one that ended otherwise (killed, pre-empted, timed
 * out, its node dead, kbv failing) is submitted again with the same script, whose --resume
 * skips what its database holds: a task killed mid-way loses only its evaluation in progress.
 * Slurm's commands (sbatch, squeue, sacct, scontrol) run through fork/exec with argument
 * vectors, never through a shell. Nothing here schedules, and nothing but these files and
 * Slurm's own queue is kept about the jobs.
 */
#include "slurm.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "run.h"

enum { EXIT_OK = 0, EXIT_USAGE = 2, EXIT_INTERNAL = 4, EXIT_DATABASE = 5 };
enum { SHARDS_MAX = 10000, ARGS_MAX = 256, SBATCH_MAX = 64 };

#define say kbv_say

/* ---- the seed file ------------------------------------------------------------------------- */

int slurm_read_seed_file(const char *path, uint64_t *seed, kbv_err *err) {
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return kbv_seterr(err, "%s: %s", path, errno == ELOOP ? "a symbolic link; give the seed file itself" : strerror(errno));
    struct stat sb;
    char text[64] = "";
    ssize_t n = -1;
    const char *why = NULL;
    if (fstat(fd, &sb) < 0) why = strerror(errno);
    else if (!S_ISREG(sb.st_mode)) why = "not a regular file";
    else if (sb.st_uid != geteuid()) why = "owned by another user; a seed file must be yours (chown it, or write your own)";
    else if (sb.st_mode & 077) why = "others may read or write it; the seed is secret: chmod 600 it";
    else if ((n = read(fd, text, sizeof text - 1)) < 0) why = strerror(errno);
    close(fd);
    if (why || n < 0) return kbv_seterr(err, "%s: %s", path, why ? why : "cannot read it");
    size_t len = (size_t)n;
    text[len] = '\0';
    int bad = len == sizeof text - 1 || strlen(text) != len; /* too long, or binary */
    if (len > 0 && text[len - 1] == '\n') text[--len] = '\0';
    char *end;
    errno = 0;
    unsigned long long s = strtoull(text, &end, 0);
    if (bad || errno || end == text || *end || !(text[0] >= '0' && text[0] <= '9'))
        return kbv_seterr(err, "%s: needs one non-negative integer (and perhaps a newline), nothing else", path);
    *seed = s;
    return 0;
}

/* ---- running Slurm's commands --------------------------------------------------------------- */

/* Whether name is an executable in PATH. */
static int in_path(const char *name) {
    const char *path = getenv("PATH");
    char dir[PATH_MAX], full[PATH_MAX * 2];
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(dir, sizeof dir, "%.*s", (int)n, p);
        snprintf(full, sizeof full, "%s/%s", n ? dir : ".", name);
        if (access(full, X_OK) == 0) return 1;
        p += n + (p[n] == ':');
    }
    return 0;
}

/* The first line of a command's message, for a one-line error. */
static const char *first_line(kbv_buf *b) {
    if (!b->data) return "no message";
    char *s = b->data + strspn(b->data, " \n");
    s[strcspn(s, "\n")] = '\0';
    return *s ? s : "no message";
}

/* ---- the sweep ------------------------------------------------------------------------------ */

typedef enum { SH_SUBMIT, SH_PENDING, SH_RUNNING, SH_DONE, SH_FAILED } shard_state;

typedef struct shard {
    long long job; /* array job of its latest submission (its task I is this shard); 0: none */
    shard_state state;
    int retries;   /* submissions after its first, in this kbv slurm */
    int status;    /* kbv run's exit status once ended, -1 when it wrote none */
    char why[200]; /* how its last task ended, when not done */
} shard;

typedef struct sweep {
    const char *db;                 /* the database the shards end in */
    char state[PATH_MAX];           /* DB.slurm, absolute */
    char self[PATH_MAX];            /* this kbv executable */
    char cwd[PATH_MAX];             /* where kbv slurm started: the tasks start there too */
    char source[3][PATH_MAX];       /* --manifest, or --kernelbench and --runs: absolute */
    int kb;                         /* 1: source is --kernelbench/--runs */
    const char *run_args[ARGS_MAX]; /* kbv run's other arguments, as given */
    int nrun_args;
    const char *sbatch[SBATCH_MAX]; /* passed to sbatch as given */
    int nsbatch;
    int nshards, gpus, retries, max_running, resume, no_wait, quiet;
    double poll_s;
    shard *shards;
} sweep;

static volatile sig_atomic_t g_stop;
static void on_signal(int sig) { g_stop = sig; }

/* path made absolute against the working folder (it need not exist). */
static void absolute(const char *path, const char *cwd, char *out, size_t n) {
    if (path[0] == '/') snprintf(out, n, "%s", path);
    else snprintf(out, n, "%s/%s", cwd, path);
}

/* s single-quoted for the shell. */
static int sh_quote(kbv_buf *b, const char *s) {
    int rc = kbv_buf_append(b, "'", 1);
    for (const char *p = s; rc == 0 && *p; p++) rc = *p == '\'' ? kbv_buf_append(b, "'\\''", 4) : kbv_buf_append(b, p, 1);
    return rc ? rc : kbv_buf_append(b, "'", 1);
}

/* The task's script. Each value kbv puts in it is quoted; the seed is not in it. */
static int job_script(const sweep *w, kbv_buf *b) {
    int rc = kbv_buf_printf(b,
                            "#!/bin/bash\n"
                            "# Written by kbv slurm (kbv %s): one shard of a sweep, run by Slurm as array task I of %d.\n"
                            "# It continues the shard's database (--resume), so running it again loses nothing;\n"
                            "# the run's seed is read from the seed file, never passed on a command line.\n"
                            "set -u -o pipefail\n"
                            "state=",
                            KBV_VERSION, w->nshards);
    rc |= sh_quote(b, w->state);
    rc |= kbv_buf_printf(
        b, "\ni=${SLURM_ARRAY_TASK_ID:?kbv slurm: not started as a Slurm array task}\n"
           "rm -f -- \"$state/shard-$i.exit\"\n"
           "ended() { echo \"$1\" >\"$state/shard-$i.exit.tmp\" && mv -f -- \"$state/shard-$i.exit.tmp\" \"$state/shard-$i.exit\"; exit \"$1\"; }\n"
           "cd -- ");
    rc |= sh_quote(b, w->cwd);
    rc |= kbv_buf_printf(b, " || ended 4\n");
    /* kbv run --gpus all takes the GPUs the task sees, which CUDA_VISIBLE_DEVICES names
     * (indices or UUIDs); unset, it would take every GPU of the node */
    if (w->gpus > 0)
        rc |= kbv_buf_printf(b, "if [ -z \"${CUDA_VISIBLE_DEVICES:-}\" ]; then\n"
                                "    echo \"kbv slurm: shard $i: Slurm gave no GPU in CUDA_VISIBLE_DEVICES\" >&2\n"
                                "    ended 4\n"
                                "fi\n");
    /* The entries as kbv slurm read them when the sweep started (manifest.jsonl beside this
     * script): a task starts later, or again, and the manifest or the run folders may have
     * changed by then. The source named here keeps --resume to the same arguments. */
    rc |= kbv_buf_printf(b, "# entries read from:");
    if (w->kb) {
        rc |= kbv_buf_printf(b, " --kernelbench "), rc |= sh_quote(b, w->source[1]);
        rc |= kbv_buf_printf(b, " --runs "), rc |= sh_quote(b, w->source[2]);
    } else {
        rc |= kbv_buf_printf(b, " --manifest "), rc |= sh_quote(b, w->source[0]);
    }
    rc |= kbv_buf_printf(b, "\n");
    rc |= sh_quote(b, w->self);
    rc |= kbv_buf_printf(b, " run --manifest \"$state/manifest.jsonl\"");
    rc |= kbv_buf_printf(b, " --db \"$state/shard-$i.db\" --shard \"$i/%d\" --seed-file \"$state/seed\" --resume", w->nshards);
    for (int k = 0; k < w->nrun_args; k++) rc |= kbv_buf_append(b, " ", 1), rc |= sh_quote(b, w->run_args[k]);
    if (w->gpus > 0) rc |= kbv_buf_printf(b, " --gpus all");
    /* kbv run prints no seed it read from a seed file */
    rc |= kbv_buf_printf(b, "\nended \"$?\"\n");
    return rc ? -1 : 0;
}

/* Write path (mode) with text, through a temporary file renamed into place. */
static int write_file(const char *path, const char *text, mode_t mode, kbv_err *err) {
    char tmp[PATH_MAX + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) return kbv_seterr(err, "%s: %s", tmp, strerror(errno));
    int bad = fchmod(fd, mode) < 0 || kbv_write_all(fd, text, strlen(text)) < 0 || fsync(fd) < 0;
    bad |= close(fd) < 0;
    if (bad || rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        return kbv_seterr(err, "%s: cannot write it: %s", path, strerror(e));
    }
    return 0;
}

/* The seed file, made once with O_EXCL: nobody else may read it at any moment. */
static int write_seed(const char *path, uint64_t seed, kbv_err *err) {
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return kbv_seterr(err, "%s: %s", path, strerror(errno));
    char text[32];
    int n = snprintf(text, sizeof text, "%llu\n", (unsigned long long)seed);
    int bad = fchmod(fd, 0600) < 0 || kbv_write_all(fd, text, (size_t)n) < 0 || fsync(fd) < 0;
    bad |= close(fd) < 0;
    return bad ? kbv_seterr(err, "%s: cannot write it: %s", path, strerror(errno)) : 0;
}

static void state_path(const sweep *w, char *out, size_t n, const char *fmt, int i) {
    char name[64];
    snprintf(name, sizeof name, fmt, i);
    snprintf(out, n, "%s/%s", w->state, name);
}

/* Shard i's exit file: kbv run's status, or -1 when there is none (the task has not ended,
 * or ended without reaching its last line: killed, pre-empted, its node gone). */
static int shard_exit(const sweep *w, int i) {
    char path[PATH_MAX + 64], text[32] = "";
    state_path(w, path, sizeof path, "shard-%d.exit", i);
    FILE *f = fopen(path, "re");
    if (!f) return -1;
    int ok = fgets(text, sizeof text, f) != NULL;
    fclose(f);
    char *end;
    long v = ok ? strtol(text, &end, 10) : -1;
    return ok && end != text && v >= 0 && v <= 255 ? (int)v : -1;
}

/* "0-9" or "1,4,7", with "%K" for --max-running: the shards in state SH_SUBMIT. */
static int array_spec(const sweep *w, char *out, size_t n) {
    int count = 0, all = 1;
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; i < w->nshards; i++) {
        if (w->shards[i].state != SH_SUBMIT) {
            all = 0;
            continue;
        }
        if (o + 16 >= n) return -1;
        o += (size_t)snprintf(out + o, n - o, "%s%d", count ? "," : "", i);
        count++;
    }
    if (all && w->nshards > 1) o = (size_t)snprintf(out, n, "0-%d", w->nshards - 1);
    if (count && w->max_running > 0) snprintf(out + o, n - o, "%%%d", w->max_running);
    return count;
}

/* Submit the shards in state SH_SUBMIT as one array job. */
static int submit(sweep *w, kbv_err *err) {
    char *spec = malloc((size_t)w->nshards * 8 + 32);
    if (!spec) return kbv_seterr(err, "out of memory");
    int count = array_spec(w, spec, (size_t)w->nshards * 8 + 32);
    if (count <= 0) {
        free(spec);
        return 0;
    }
    char array[64 + (size_t)SHARDS_MAX * 6], name[80], output[PATH_MAX + 64], script[PATH_MAX + 16], gres[32];
    snprintf(array, sizeof array, "--array=%s", spec);
    const char *base = strrchr(w->db, '/') ? strrchr(w->db, '/') + 1 : w->db;
    snprintf(name, sizeof name, "--job-name=kbv-%.60s", base);
    snprintf(output, sizeof output, "--output=%s/logs/shard-%%a.job-%%A.log", w->state);
    snprintf(script, sizeof script, "%s/job.sh", w->state);
    snprintf(gres, sizeof gres, "--gres=gpu:%d", w->gpus);
    char *argv[SBATCH_MAX + 12];
    int a = 0;
    argv[a++] = "sbatch", argv[a++] = "--parsable", argv[a++] = array, argv[a++] = name, argv[a++] = output;
    if (w->gpus > 0) argv[a++] = gres;
    for (int k = 0; k < w->nsbatch; k++) argv[a++] = (char *)w->sbatch[k];
    argv[a++] = script, argv[a] = NULL;
    kbv_buf out, msg;
    kbv_buf_init(&out), kbv_buf_init(&msg);
    int rc = kbv_run_cmd(argv, &out, &msg, err);
    long long job = 0;
    if (rc > 0) kbv_seterr(err, "sbatch failed (exit %d): %s", rc, first_line(&msg));
    else if (rc == 0 && (sscanf(out.data ? out.data : "", "%lld", &job) != 1 || job <= 0))
        kbv_seterr(err, "sbatch printed no job id: '%s'", first_line(&out));
    kbv_buf_free(&out), kbv_buf_free(&msg);
    if (job <= 0) {
        free(spec);
        return -1;
    }
    /* Recorded before anything else: a kbv slurm stopped now finds the job with --resume. */
    char path[PATH_MAX + 16], line[128 + (size_t)SHARDS_MAX * 6];
    snprintf(path, sizeof path, "%s/jobs", w->state);
    int n = snprintf(line, sizeof line, "%lld %s\n", job, spec);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    int bad = fd < 0 || kbv_write_all(fd, line, (size_t)n) < 0 || fsync(fd) < 0;
    if (fd >= 0) close(fd);
    if (bad) say("kbv slurm: %s: cannot record job %lld: %s (kbv slurm --resume will not find it)\n", path, job, strerror(errno));
    for (int i = 0; i < w->nshards; i++)
        if (w->shards[i].state == SH_SUBMIT) w->shards[i].state = SH_PENDING, w->shards[i].job = job, w->shards[i].status = -1;
    if (!w->quiet) fprintf(stderr, "kbv slurm: submitted job %lld: array %s (%d task%s)\n", job, spec, count, count == 1 ? "" : "s");
    free(spec);
    return 0;
}

/* How Slurm says task job_i ended ("NODE_FAIL", "CANCELLED by 0", ...): sacct where
 * accounting is kept, else scontrol while the controller still holds the job; "" when neither
 * says. */
static void task_end_state(long long job, int i, char *out, size_t n) {
    char id[64];
    snprintf(id, sizeof id, "%lld_%d", job, i);
    kbv_buf b;
    kbv_err e;
    out[0] = '\0';
    kbv_buf_init(&b);
    char *sacct[] = {"sacct", "-n", "-P", "-X", "-j", id, "-o", "State", NULL};
    if (in_path("sacct") && kbv_run_cmd(sacct, &b, NULL, &e) == 0 && b.data && b.data[0] != '\n') snprintf(out, n, "%s", first_line(&b));
    kbv_buf_free(&b);
    if (out[0]) return;
    char *scontrol[] = {"scontrol", "-o", "show", "job", id, NULL};
    if (kbv_run_cmd(scontrol, &b, NULL, &e) == 0 && b.data) {
        const char *s = strstr(b.data, "JobState=");
        if (s) snprintf(out, n, "%.*s", (int)strcspn(s + 9, " \n"), s + 9);
    }
    kbv_buf_free(&b);
}

/* One look at the queue: each submitted shard pending, running, done or ended otherwise (then
 * submitted again while it has retries left). 0, or -1 when squeue failed (nothing changed). */
static int poll_queue(sweep *w, kbv_err *err) {
    struct passwd *pw = getpwuid(getuid());
    char uid[32];
    snprintf(uid, sizeof uid, "%u", (unsigned)getuid());
    char *argv[] = {"squeue", "-h", "-r", "-u", pw ? pw->pw_name : uid, "-o", "%F %K %T", NULL};
    kbv_buf out, msg;
    kbv_buf_init(&out), kbv_buf_init(&msg);
    int rc = kbv_run_cmd(argv, &out, &msg, err);
    if (rc > 0) kbv_seterr(err, "squeue failed (exit %d): %s", rc, first_line(&msg));
    if (rc != 0) {
        kbv_buf_free(&out), kbv_buf_free(&msg);
        return -1;
    }
    char *seen = calloc((size_t)w->nshards, 1); /* 1 pending, 2 running */
    if (!seen) {
        kbv_buf_free(&out), kbv_buf_free(&msg);
        return kbv_seterr(err, "out of memory");
    }
    for (char *save = NULL, *line = strtok_r(out.data ? out.data : (char[]){""}, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        long long job;
        int task;
        char st[64];
        if (sscanf(line, "%lld %d %63s", &job, &task, st) != 3 || task < 0 || task >= w->nshards || w->shards[task].job != job) continue;
        int running = !strcmp(st, "RUNNING") || !strcmp(st, "COMPLETING") || !strcmp(st, "SUSPENDED") || !strcmp(st, "STOPPED");
        seen[task] = running ? 2 : 1;
    }
    kbv_buf_free(&out), kbv_buf_free(&msg);
    for (int i = 0; i < w->nshards; i++) {
        shard *s = &w->shards[i];
        if (s->state != SH_PENDING && s->state != SH_RUNNING) continue;
        if (seen[i]) {
            s->state = seen[i] == 2 ? SH_RUNNING : SH_PENDING;
            continue;
        }
        s->status = shard_exit(w, i);
        if (s->status == 0) {
            s->state = SH_DONE;
            continue;
        }
        char slurm_state[64];
        task_end_state(s->job, i, slurm_state, sizeof slurm_state);
        if (s->status > 0)
            snprintf(s->why, sizeof s->why, "kbv run exited with status %d%s%s", s->status, *slurm_state ? ", Slurm says " : "", slurm_state);
        else snprintf(s->why, sizeof s->why, "ended before kbv run did (Slurm says %s)", *slurm_state ? slurm_state : "nothing more");
        /* 2: kbv run refused its arguments or the manifest; running it again changes nothing. */
        int again = s->status != 2 && s->retries < w->retries;
        if (!w->quiet || !again)
            fprintf(stderr, "kbv slurm: shard %d (job %lld_%d) %s; %s\n", i, s->job, i, s->why,
                    again ? "submitting it again (--resume keeps what it stored)" : "not submitted again");
        if (again) s->state = SH_SUBMIT, s->retries++;
        else s->state = SH_FAILED;
    }
    free(seen);
    return 0;
}

static void count_states(const sweep *w, int c[5]) {
    memset(c, 0, 5 * sizeof *c);
    for (int i = 0; i < w->nshards; i++) c[w->shards[i].state]++;
}

/* Merge the shards into merged.db, then that into the database in one transaction: either all
 * of the sweep goes in, or nothing. */
static int merge_all(sweep *w) {
    char merged[PATH_MAX + 16], path[PATH_MAX + 64], side[PATH_MAX + 24];
    snprintf(merged, sizeof merged, "%s/merged.db", w->state);
    const char *sides[] = {"", "-wal", "-shm", "-journal"};
    for (size_t k = 0; k < 4; k++) snprintf(side, sizeof side, "%s%s", merged, sides[k]), unlink(side);
    kbv_err err = {{0}};
    kbv_db m;
    if (db_open(&m, merged, &err) < 0) {
        say("kbv slurm: %s\n", err.msg);
        return EXIT_DATABASE;
    }
    int total = 0;
    for (int i = 0; i < w->nshards; i++) {
        int runs, evals;
        state_path(w, path, sizeof path, "shard-%d.db", i);
        if (db_merge(&m, path, &runs, &evals, &err) < 0) {
            say("kbv slurm: %s\n", err.msg);
            db_close(&m);
            return EXIT_DATABASE;
        }
        total += evals;
    }
    db_close(&m);
    kbv_db dst;
    int runs = 0, evals = 0;
    if (db_open(&dst, w->db, &err) < 0 || db_merge(&dst, merged, &runs, &evals, &err) < 0) {
        say("kbv slurm: %s\n", err.msg);
        if (dst.h) db_close(&dst);
        return EXIT_DATABASE;
    }
    db_close(&dst);
    unlink(merged); /* a copy of what DB now holds; the shards stay */
    if (!w->quiet)
        fprintf(stderr, "kbv slurm: merged %d shard%s (%d evaluations) into %s: %d run(s), %d evaluation(s) added (kbv report --db %s)\n", w->nshards,
                w->nshards == 1 ? "" : "s", total, w->db, runs, evals, w->db);
    return EXIT_OK;
}

/* Watch the queue until every shard is done or failed for good, submitting again what ended
 * otherwise; then merge. */
static int watch(sweep *w) {
    kbv_err err = {{0}};
    double t0 = kbv_now(), squeue_failed_since = 0;
    char last[200] = "";
    for (;;) {
        if (g_stop) break;
        if (submit(w, &err) < 0) {
            say("kbv slurm: %s\n", err.msg);
            return EXIT_INTERNAL;
        }
        int c[5];
        count_states(w, c);
        char line[200], failed[32] = "";
        if (c[SH_FAILED]) snprintf(failed, sizeof failed, ", %d failed", c[SH_FAILED]);
        snprintf(line, sizeof line, "%d done, %d running, %d pending%s", c[SH_DONE], c[SH_RUNNING], c[SH_PENDING] + c[SH_SUBMIT], failed);
        if (!w->quiet && strcmp(line, last) != 0)
            fprintf(stderr, "kbv slurm: [%.0f s] %d shard%s: %s\n", kbv_now() - t0, w->nshards, w->nshards == 1 ? "" : "s", line);
        snprintf(last, sizeof last, "%s", line);
        if (c[SH_DONE] + c[SH_FAILED] == w->nshards) break;
        if (w->no_wait) {
            if (!w->quiet)
                fprintf(stderr, "kbv slurm: --no-wait: the tasks go on; the same command with --resume (and without --no-wait) waits for "
                                "them and merges\n");
            return EXIT_OK;
        }
        struct timespec ts = {.tv_sec = (time_t)w->poll_s, .tv_nsec = (long)((w->poll_s - (double)(time_t)w->poll_s) * 1e9)};
        nanosleep(&ts, NULL);
        if (g_stop) break;
        if (poll_queue(w, &err) < 0) { /* the controller may be restarting: nothing is concluded */
            if (squeue_failed_since == 0) squeue_failed_since = kbv_now();
            say("kbv slurm: %s (trying again; failing for %.0f s)\n", err.msg, kbv_now() - squeue_failed_since);
        } else {
            squeue_failed_since = 0;
        }
    }
    if (g_stop) {
        say("kbv slurm: stopped (signal %d); the submitted tasks go on: run the same command with --resume to wait for them "
            "and merge (scancel cancels them; the job ids are in %s/jobs)\n",
            (int)g_stop, w->state);
        return 128 + (int)g_stop;
    }
    int c[5];
    count_states(w, c);
    if (c[SH_FAILED]) {
        char list[256] = "";
        for (int i = 0, k = 0; i < w->nshards && strlen(list) < sizeof list - 16; i++)
            if (w->shards[i].state == SH_FAILED) snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", k++ ? "," : "", i);
        say("kbv slurm: shard(s) %s did not finish (their logs: %s/logs/); nothing was merged into %s. Fix what the logs say and "
            "run the same command with --resume: it submits them again, and keeps what every shard stored\n",
            list, w->state, w->db);
        return EXIT_INTERNAL;
    }
    return merge_all(w);
}

/* On --resume: the latest job of each shard from the jobs file; done shards from their exit
 * files. */
static void load_jobs(sweep *w) {
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/jobs", w->state);
    FILE *f = fopen(path, "re");
    char *line = NULL;
    size_t cap = 0;
    while (f && getline(&line, &cap, f) > 0) {
        long long job;
        int off = 0;
        if (sscanf(line, "%lld %n", &job, &off) != 1 || job <= 0) continue;
        for (char *p = line + off; *p && *p != '%' && *p != '\n';) {
            char *end;
            long a = strtol(p, &end, 10), b = a;
            if (end == p) break;
            if (*end == '-') b = strtol(end + 1, &end, 10);
            for (long i = a; i <= b && i >= 0 && i < w->nshards; i++) w->shards[i].job = job, w->shards[i].state = SH_PENDING;
            p = end + (*end == ',');
        }
    }
    free(line);
    if (f) fclose(f);
    for (int i = 0; i < w->nshards; i++)
        if (shard_exit(w, i) == 0) w->shards[i].state = SH_DONE;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: kbv slurm (--manifest FILE | --kernelbench DIR --runs DIR) --shards N [--db FILE] [options]\n"
            "                 [kbv run's options] [-- SBATCH_OPTIONS...]\n"
            "\n"
            "Runs a sweep as a Slurm job array, one task per shard (kbv run --shard I/N), then merges the\n"
            "shards' databases into --db. Everything goes into a state folder beside the database, DB.slurm/\n"
            "(mode 0700; it must be on a file system the nodes share): the task script job.sh, the entries\n"
            "as kbv slurm read them (manifest.jsonl: every task reads these, so a manifest edited or\n"
            "replaced after the sweep started changes nothing in it), the run's\n"
            "seed in a file only you can read (seed, mode 0600: kbv run --seed-file reads it, so the seed\n"
            "is on no command line and in no script or log), one database per shard (shard-I.db), Slurm's\n"
            "logs (logs/). kbv slurm submits the array with sbatch, prints progress from squeue, submits\n"
            "again each task that ended without success (killed, pre-empted, timed out, its node gone;\n"
            "sacct or scontrol say how) -- the script always runs kbv run --resume, so a task killed\n"
            "mid-way loses only its evaluation in progress -- and merges once every shard is done.\n"
            "\n"
            "options:\n"
            "  --shards N              tasks (shards) in the array (required; 1 to %d)\n"
            "  --db FILE               results database the shards are merged into (default kbv.db)\n"
            "  --gpus G                GPUs per task (default 0: CPU only): sbatch --gres=gpu:G, and kbv run\n"
            "                          --gpus all: the ones Slurm gave the task (CUDA_VISIBLE_DEVICES)\n"
            "  --seed N | --seed-file FILE  the run's seed (default: drawn at random); it goes into the seed\n"
            "                          file and nowhere else\n"
            "  --retries N             submissions again per shard after its first (default 3)\n"
            "  --max-running K         at most K tasks at a time (sbatch --array=...%%K)\n"
            "  --poll SECONDS          how often squeue is asked (default 30)\n"
            "  --sbatch ARG            one more argument for sbatch (repeat it); or put them all after --,\n"
            "                          e.g. -- --partition=gpu --account=lab --time=4:00:00 --constraint=h100\n"
            "  --no-wait               submit, print the job id and return; --resume later waits and merges\n"
            "  --resume                continue the sweep in DB.slurm/ (after kbv slurm was stopped, or a shard\n"
            "                          failed for good): the same arguments; its seed file is kept\n"
            "  --quiet                 no progress lines (kbv run gets --quiet too)\n"
            "  -h, --help              this text\n"
            "  and kbv run's options (--device, --cases, --protocol, --jobs, --timeout, ...), given to each\n"
            "  task's kbv run as they are; kbv slurm sets --shard, --db, --resume and --seed-file itself\n"
            "\n"
            "Without Slurm, the same shards run anywhere as kbv run --shard I/N and are merged with kbv\n"
            "merge (docs/cluster.md). Exit status: 0 every shard done and merged (or submitted, with\n"
            "--no-wait); 2 usage error or a bad manifest; 4 Slurm cannot be used, or a shard failed past its\n"
            "retries (nothing merged); 5 the database cannot be used, or the shards are not of one run;\n"
            "130/143 interrupted (the tasks go on).\n",
            SHARDS_MAX);
}

/* kbv run's options that take a value, so that a value is never taken for an option. */
static int run_takes_value(const char *a) {
    static const char *const kValued[] = {"--jobs",        "--compile-jobs", "--device",      "--timeout",         "--load-timeout", "--cases",
                                          "--protocol",    "--standard-tol", "--time-budget", "--standard-trials", "--library-only", "--max-memory",
                                          "--max-scratch", "--cache-dir",    "--build",       "--scratch",         "--prime"};
    for (size_t k = 0; k < sizeof kValued / sizeof *kValued; k++)
        if (strcmp(a, kValued[k]) == 0) return 1;
    return 0;
}

/* Let kbv run itself judge its arguments before anything is submitted: it parses them all,
 * stops at the --help put last, and exits 0; a bad option or value is its usual message. */
static int check_run_args(const sweep *w) {
    char *argv[ARGS_MAX + 12];
    int a = 0;
    argv[a++] = (char *)w->self, argv[a++] = "run";
    if (w->kb) argv[a++] = "--kernelbench", argv[a++] = (char *)w->source[1], argv[a++] = "--runs", argv[a++] = (char *)w->source[2];
    else argv[a++] = "--manifest", argv[a++] = (char *)w->source[0];
    for (int k = 0; k < w->nrun_args; k++) argv[a++] = (char *)w->run_args[k];
    argv[a++] = "--help", argv[a] = NULL;
    kbv_buf msg;
    kbv_err err;
    kbv_buf_init(&msg);
    int rc = kbv_run_cmd(argv, NULL, &msg, &err);
    if (rc != 0) say("kbv slurm: %s\n", rc < 0 ? err.msg : first_line(&msg));
    kbv_buf_free(&msg);
    return rc == 0 ? 0 : -1;
}

/* The sweep's state folder (DB.slurm): made with its seed, job script and the entries'
 * snapshot (manifest.jsonl, what every task reads), or, with --resume, checked to hold a sweep
 * started with the same arguments, *n then its snapshot's entries. 0, or an exit status (the
 * message said). */
static int open_state(sweep *w, const kbv_buf *entries, int have_seed, uint64_t *seed, int *n) {
    char dbabs[PATH_MAX], path[PATH_MAX + 64], snap[PATH_MAX + 64];
    kbv_err err = {0};
    absolute(w->db, w->cwd, dbabs, sizeof dbabs);
    if (snprintf(w->state, sizeof w->state, "%s.slurm", dbabs) >= (int)sizeof w->state)
        return say("kbv slurm: %s: path too long\n", w->db), EXIT_USAGE;
    kbv_buf script;
    kbv_buf_init(&script);
    if (job_script(w, &script) < 0) return kbv_buf_free(&script), say("kbv slurm: out of memory\n"), EXIT_INTERNAL;
    snprintf(path, sizeof path, "%s/job.sh", w->state);
    snprintf(snap, sizeof snap, "%s/manifest.jsonl", w->state);
    int rc = 0;
    if (w->resume) {
        char *old = NULL;
        size_t len = 0;
        run_item *items = NULL;
        if (kbv_read_file(path, &old, &len, &err) < 0) {
            say("kbv slurm: --resume: no sweep to continue: %s\n", err.msg), rc = EXIT_USAGE;
        } else if (strcmp(old, script.data) != 0) {
            say("kbv slurm: --resume: the sweep in %s was started with other arguments (its job.sh differs): give the same ones, "
                "or another --db for a new sweep\n",
                w->state),
                rc = EXIT_USAGE;
        } else if (manifest_load(snap, &items, n, &err) < 0) {
            say("kbv slurm: --resume: the sweep's entries: %s\n", err.msg), rc = EXIT_USAGE;
        }
        free(old), free(items);
    } else {
        struct stat sb;
        char logs[PATH_MAX + 8], seedpath[PATH_MAX + 8];
        snprintf(logs, sizeof logs, "%s/logs", w->state);
        snprintf(seedpath, sizeof seedpath, "%s/seed", w->state);
        if (lstat(w->state, &sb) == 0) {
            say("kbv slurm: %s exists: a sweep was started there; continue it with --resume and the same arguments, or "
                "remove the folder\n",
                w->state),
                rc = EXIT_USAGE;
        } else {
            if (!have_seed && kbv_random_u64(seed) < 0) *seed = kbv_mix64((uint64_t)getpid() ^ (uint64_t)(kbv_now() * 1e9));
            if (mkdir(w->state, 0700) < 0 || mkdir(logs, 0700) < 0) kbv_seterr(&err, "%s: %s", w->state, strerror(errno));
            else if (write_seed(seedpath, *seed, &err) == 0 && write_file(snap, entries->data, 0600, &err) == 0)
                write_file(path, script.data, 0700, &err);
            if (err.msg[0]) say("kbv slurm: %s\n", err.msg), rc = EXIT_INTERNAL;
        }
    }
    kbv_buf_free(&script);
    return rc;
}

int slurm_main(int argc, char **argv) {
    sweep w = {.db = "kbv.db", .retries = 3, .poll_s = 30};
    const char *manifest = NULL, *kbdir = NULL, *runs = NULL, *seed_file = NULL;
    int have_seed = 0;
    uint64_t seed = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        double v;
        char *end;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return EXIT_OK;
        }
        if (strcmp(a, "--") == 0) {
            for (i++; i < argc; i++) {
                if (w.nsbatch == SBATCH_MAX) return say("kbv slurm: at most %d sbatch arguments\n", SBATCH_MAX), EXIT_USAGE;
                w.sbatch[w.nsbatch++] = argv[i];
            }
            break;
        }
        int valued = !strcmp(a, "--shards") || !strcmp(a, "--db") || !strcmp(a, "--gpus") || !strcmp(a, "--seed") || !strcmp(a, "--seed-file") ||
                     !strcmp(a, "--retries") || !strcmp(a, "--max-running") || !strcmp(a, "--poll") || !strcmp(a, "--sbatch") ||
                     !strcmp(a, "--manifest") || !strcmp(a, "--kernelbench") || !strcmp(a, "--runs") || run_takes_value(a);
        if (valued && !val) return say("kbv slurm: %s needs a value (see kbv slurm --help)\n", a), EXIT_USAGE;
        if (!strcmp(a, "--shards") || !strcmp(a, "--gpus") || !strcmp(a, "--retries") || !strcmp(a, "--max-running")) {
            int lo = !strcmp(a, "--shards") || !strcmp(a, "--max-running"), hi = !strcmp(a, "--shards") ? SHARDS_MAX
                                                                                 : !strcmp(a, "--gpus") ? 64
                                                                                                        : 1000;
            v = strtod(val, &end);
            if (end == val || *end || v != (int)v || v < lo || v > hi)
                return say("kbv slurm: %s needs an integer from %d to %d, not '%s'\n", a, lo, hi, val), EXIT_USAGE;
            *(!strcmp(a, "--shards") ? &w.nshards : !strcmp(a, "--gpus") ? &w.gpus : !strcmp(a, "--retries") ? &w.retries : &w.max_running) = (int)v;
            i++;
        } else if (!strcmp(a, "--poll")) {
            v = strtod(val, &end);
            if (end == val || *end || !(v >= 0.1 && v <= 3600))
                return say("kbv slurm: --poll needs seconds from 0.1 to 3600, not '%s'\n", val), EXIT_USAGE;
            w.poll_s = v, i++;
        } else if (!strcmp(a, "--db")) {
            w.db = argv[++i];
        } else if (!strcmp(a, "--manifest")) {
            manifest = argv[++i];
        } else if (!strcmp(a, "--kernelbench")) {
            kbdir = argv[++i];
        } else if (!strcmp(a, "--runs")) {
            runs = argv[++i];
        } else if (!strcmp(a, "--seed-file")) {
            seed_file = argv[++i];
        } else if (!strcmp(a, "--seed")) {
            errno = 0;
            unsigned long long s = strtoull(val, &end, 0);
            if (errno || end == val || *end || val[0] == '-') return say("kbv slurm: --seed needs a non-negative integer\n"), EXIT_USAGE;
            seed = s, have_seed = 1, i++;
            for (char *p = argv[i]; *p; p++) *p = '*'; /* off the command line others can read */
        } else if (!strcmp(a, "--sbatch")) {
            if (w.nsbatch == SBATCH_MAX) return say("kbv slurm: at most %d sbatch arguments\n", SBATCH_MAX), EXIT_USAGE;
            w.sbatch[w.nsbatch++] = argv[++i];
        } else if (!strcmp(a, "--resume")) {
            w.resume = 1;
        } else if (!strcmp(a, "--no-wait")) {
            w.no_wait = 1;
        } else if (!strcmp(a, "--shard") || !strcmp(a, "--child") || !strcmp(a, "--json")) {
            return say("kbv slurm: %s is not for kbv slurm: it makes the shards (--shards N) and their databases itself\n", a), EXIT_USAGE;
        } else if (a[0] == '-' && a[1]) { /* kbv run's: checked by kbv run itself below */
            if (w.nrun_args + 2 > ARGS_MAX) return say("kbv slurm: too many arguments\n"), EXIT_USAGE;
            if (!strcmp(a, "--quiet")) w.quiet = 1;
            w.run_args[w.nrun_args++] = a;
            if (run_takes_value(a)) w.run_args[w.nrun_args++] = argv[++i];
        } else {
            return say("kbv slurm: unknown argument '%s' (see kbv slurm --help)\n", a), EXIT_USAGE;
        }
    }
    for (int k = 0; k < w.nsbatch; k++)
        if (!strncmp(w.sbatch[k], "--array", 7) || !strcmp(w.sbatch[k], "-a") || !strcmp(w.sbatch[k], "--wrap") ||
            !strncmp(w.sbatch[k], "--wrap=", 7))
            return say("kbv slurm: sbatch's %s is kbv slurm's to set (--shards, --max-running)\n", w.sbatch[k]), EXIT_USAGE;
    if (!w.nshards) return say("kbv slurm: give --shards N, the number of tasks (see kbv slurm --help)\n"), EXIT_USAGE;
    if (!manifest == !(kbdir && runs) || !!kbdir != !!runs)
        return say("kbv slurm: give --manifest FILE, or --kernelbench DIR --runs DIR\n"), EXIT_USAGE;
    if (have_seed && seed_file) return say("kbv slurm: give --seed or --seed-file, not both\n"), EXIT_USAGE;
    if (w.resume && (have_seed || seed_file))
        return say("kbv slurm: --resume keeps the sweep's seed (in its seed file): give no --seed or --seed-file\n"), EXIT_USAGE;
    kbv_err err = {{0}};
    if (seed_file && slurm_read_seed_file(seed_file, &seed, &err) < 0) return say("kbv slurm: --seed-file %s\n", err.msg), EXIT_USAGE;
    if (seed_file) have_seed = 1;
    for (const char *const *c = (const char *const[]){"sbatch", "squeue", "scontrol", NULL}; *c; c++)
        if (!in_path(*c))
            return say("kbv slurm: %s is not in PATH: kbv slurm needs Slurm's commands (Debian: slurm-client). Without Slurm, run the "
                       "shards yourself with kbv run --shard I/N and merge them with kbv merge (docs/cluster.md)\n",
                       *c),
                   EXIT_INTERNAL;
    if (!getcwd(w.cwd, sizeof w.cwd)) return say("kbv slurm: getcwd: %s\n", strerror(errno)), EXIT_INTERNAL;
    ssize_t sl = readlink("/proc/self/exe", w.self, sizeof w.self - 1);
    if (sl <= 0) return say("kbv slurm: cannot find kbv's own path\n"), EXIT_INTERNAL;
    w.self[sl] = '\0';
    w.kb = kbdir != NULL;
    const char *src[3] = {manifest, kbdir, runs};
    for (int k = 0; k < 3; k++)
        if (src[k] && kbv_abspath(src[k], w.source[k], sizeof w.source[k], &err) < 0) return say("kbv slurm: %s\n", err.msg), EXIT_USAGE;
    /* A new sweep reads its source once, into the snapshot its tasks read; a resumed one reads
     * its snapshot (open_state) and needs the source no more. */
    int n = 0;
    kbv_buf entries;
    kbv_buf_init(&entries);
    if (!w.resume) {
        run_item *items = NULL;
        if (w.kb ? manifest_from_runs(w.source[1], w.source[2], &items, &n, &err) < 0 : manifest_load(w.source[0], &items, &n, &err) < 0)
            return say("kbv slurm: %s\n", err.msg), EXIT_USAGE;
        int bad = manifest_write_jsonl(items, n, &entries, &err);
        free(items);
        if (bad) return kbv_buf_free(&entries), say("kbv slurm: %s\n", err.msg), EXIT_USAGE;
    }
    if (check_run_args(&w) < 0) return kbv_buf_free(&entries), EXIT_USAGE;
    int st = open_state(&w, &entries, have_seed, &seed, &n);
    kbv_buf_free(&entries);
    if (st) return st;
    if (n < w.nshards && !w.quiet) fprintf(stderr, "kbv slurm: note: %d entries in %d shards: some shards will have nothing to do\n", n, w.nshards);
    w.shards = calloc((size_t)w.nshards, sizeof *w.shards);
    if (!w.shards) return say("kbv slurm: out of memory\n"), EXIT_INTERNAL;
    for (int i = 0; i < w.nshards; i++) w.shards[i].status = -1;
    if (w.resume) load_jobs(&w);
    if (!w.quiet)
        fprintf(stderr, "kbv slurm: %s %d entries in %d shard%s into %s (state: %s)\n", w.resume ? "continuing" : "starting", n, w.nshards,
                w.nshards == 1 ? "" : "s", w.db, w.state);
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL), sigaction(SIGTERM, &sa, NULL), sigaction(SIGHUP, &sa, NULL);
    int rc = watch(&w);
    free(w.shards);
    return rc;
}
