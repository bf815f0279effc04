/* admit.c -- admission control for `kbv run --jobs` (see admit.h).
 *
 * The figures come from the kernel only: statvfs for the scratch, /proc/meminfo and the memory
 * cgroup for memory, /proc/PID/stat, status and cwd for a running evaluation's processes, and
 * the block counts of the files in its scratch folder. A worker can change what it is seen to
 * use (its working folder, its memory), never what kbv decides about its verdict: a need that
 * is wrong makes evaluations wait too long or start too soon, and an evaluation that then
 * finds the scratch full is kbv's own error (not stored; --resume runs it again).
 */
#include "admit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "proc.h"

static long long max_ll(long long a, long long b) { return a > b ? a : b; }

/* The nearest existing folder of path (path itself, or a parent), for its file system. */
static int stat_existing(const char *path, struct stat *sb) {
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", path);
    for (;;) {
        if (stat(p, sb) == 0) return 0;
        char *slash = strrchr(p, '/');
        if (!slash) return -1;
        if (slash == p) return stat("/", sb);
        *slash = '\0';
    }
}

int admit_init(kbv_admit *a, const char *scratch_base, const char *ref_cache, const char *cache_dir, int nproblems, const char (*sha)[65],
               kbv_err *err) {
    memset(a, 0, sizeof *a);
    const char *base = kbv_scratch_base(scratch_base);
    if (!realpath(base, a->base)) snprintf(a->base, sizeof a->base, "%s", base);
    if (ref_cache && ref_cache[0] && !realpath(ref_cache, a->ref_cache)) snprintf(a->ref_cache, sizeof a->ref_cache, "%s", ref_cache);
    struct statfs fs;
    a->tmpfs = statfs(a->base, &fs) == 0 && (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC);
    struct stat sb, sc;
    if (cache_dir && stat(a->base, &sb) == 0 && stat_existing(cache_dir, &sc) == 0 && sb.st_dev == sc.st_dev) a->compile = ADMIT_COMPILE_BYTES;
    a->problems = calloc((size_t)nproblems + 1, sizeof *a->problems);
    if (!a->problems) return kbv_seterr(err, "out of memory");
    a->sha = sha, a->nproblems = nproblems;
    return 0;
}

void admit_free(kbv_admit *a) {
    free(a->problems);
    a->problems = NULL;
}

/* A measured peak with its slack: a quarter more and ADMIT_SLACK_BYTES. */
static long long with_slack(long long b) { return b + b / 4 + ADMIT_SLACK_BYTES; }

/* Problem p's kept reference outputs are published (refcache.c): later evaluations read them
 * and keep nothing of their own. */
static int published(const kbv_admit *a, int p) {
    if (!a->ref_cache[0] || !a->sha || !a->sha[p][0]) return 0;
    char path[PATH_MAX + 80];
    struct stat sb;
    snprintf(path, sizeof path, "%s/%s", a->ref_cache, a->sha[p]);
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

admit_bytes admit_need(const kbv_admit *a, int p) {
    const admit_problem *m = &a->problems[p];
    admit_bytes n;
    long long kept = published(a, p) ? 0 : m->kept;
    n.scratch = m->scratch_known ? with_slack(m->own + kept) : max_ll(ADMIT_DEFAULT_SCRATCH, with_slack(m->own + kept));
    n.memory = m->memory_known ? with_slack(m->memory) : max_ll(ADMIT_DEFAULT_MEMORY, with_slack(m->memory));
    n.scratch += a->compile;
    if (a->tmpfs) n.memory += n.scratch; /* the scratch's pages are memory */
    return n;
}

/* ---- free memory --------------------------------------------------------------------------- */

/* The first number after "key" at the start of a line of a small file (stat-like files), or -1. */
static long long file_key(const char *path, const char *key) {
    FILE *f = fopen(path, "re");
    if (!f) return -1;
    char line[256];
    long long v = -1;
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, kl) == 0 && (line[kl] == ' ' || line[kl] == ':' || line[kl] == '\t')) {
            v = strtoll(line + kl + 1 + strspn(line + kl + 1, " \t:"), NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

/* A file holding one number ("max" and anything else not a number: -1). */
static long long file_number(const char *path) {
    FILE *f = fopen(path, "re");
    if (!f) return -1;
    char buf[64] = "";
    long long v = -1;
    if (fgets(buf, sizeof buf, f) && buf[0] >= '0' && buf[0] <= '9') v = strtoll(buf, NULL, 10);
    fclose(f);
    return v;
}

/* Where the cgroup file systems are mounted: v2 (fstype cgroup2) and v1's memory controller. */
static void cgroup_mounts(char *v2, char *v2root, char *v1, char *v1root, size_t n) {
    v2[0] = v1[0] = '\0';
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f) return;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        /* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ... - FSTYPE SOURCE SUPEROPTIONS" */
        char root[1024], point[1024], fstype[64], super[1024];
        const char *dash = strstr(line, " - ");
        if (!dash || sscanf(line, "%*s %*s %*s %1023s %1023s", root, point) != 2 || sscanf(dash + 3, "%63s %*s %1023s", fstype, super) != 2)
            continue;
        if (strcmp(fstype, "cgroup2") == 0 && !v2[0]) snprintf(v2, n, "%s", point), snprintf(v2root, n, "%s", root);
        else if (strcmp(fstype, "cgroup") == 0 && !v1[0] && (strstr(super, ",memory") || strncmp(super, "memory", 6) == 0))
            snprintf(v1, n, "%s", point), snprintf(v1root, n, "%s", root);
    }
    fclose(f);
}

/* The cgroup path of this process for controller ctl ("" for v2's "0::" line). */
static int cgroup_path(const char *ctl, char *out, size_t n) {
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f) return -1;
    char line[4096];
    int found = -1;
    while (found < 0 && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL; /* "ID:CONTROLLERS:PATH" */
        if (!c2) continue;
        *c1 = *c2 = '\0';
        int match = ctl[0] ? strstr(c1 + 1, ctl) != NULL : strcmp(line, "0") == 0 && c1[1] == '\0';
        if (match) found = snprintf(out, n, "%s", c2 + 1) < (int)n ? 0 : -1;
    }
    fclose(f);
    return found;
}

/* The mount's folder for cgroup path p (relative to the mount's root in a cgroup namespace). */
static void cgroup_dir(const char *mount, const char *root, const char *p, char *out, size_t n) {
    size_t rl = strlen(root);
    if (strcmp(root, "/") != 0 && strncmp(p, root, rl) == 0) p += rl;
    snprintf(out, n, "%s%s", mount, p);
}

/* Room in the memory cgroup(s) of this process: limit less what is charged and not file cache
 * (which the kernel reclaims first). ADMIT_UNKNOWN when no limit applies. */
static long long cgroup_room(void) {
    char v2[1024], v2root[1024], v1[1024], v1root[1024], p[2048], dir[4096], f[4200];
    long long room = ADMIT_UNKNOWN;
    cgroup_mounts(v2, v2root, v1, v1root, sizeof v2);
    if (v1[0] && cgroup_path("memory", p, sizeof p) == 0) {
        cgroup_dir(v1, v1root, p, dir, sizeof dir);
        snprintf(f, sizeof f, "%s/memory.stat", dir);
        long long limit = file_key(f, "hierarchical_memory_limit"); /* the ancestors' too */
        long long cache = max_ll(0, file_key(f, "total_inactive_file")) + max_ll(0, file_key(f, "total_active_file"));
        snprintf(f, sizeof f, "%s/memory.usage_in_bytes", dir);
        long long usage = file_number(f);
        if (limit > 0 && limit < (1LL << 60) && usage >= 0) room = limit - max_ll(0, usage - cache);
    }
    if (v2[0] && cgroup_path("", p, sizeof p) == 0) {
        cgroup_dir(v2, v2root, p, dir, sizeof dir);
        for (;;) { /* this cgroup and its ancestors up to the mount */
            snprintf(f, sizeof f, "%s/memory.max", dir);
            long long limit = file_number(f);
            snprintf(f, sizeof f, "%s/memory.current", dir);
            long long usage = file_number(f);
            snprintf(f, sizeof f, "%s/memory.stat", dir);
            long long cache = max_ll(0, file_key(f, "inactive_file")) + max_ll(0, file_key(f, "active_file"));
            if (limit > 0 && usage >= 0 && limit - max_ll(0, usage - cache) < room) room = limit - max_ll(0, usage - cache);
            char *slash = strrchr(dir, '/');
            if (!slash || (size_t)(slash - dir) < strlen(v2)) break;
            *slash = '\0';
        }
    }
    return room < 0 ? 0 : room;
}

admit_bytes admit_available(const kbv_admit *a) {
    admit_bytes free_b = {ADMIT_UNKNOWN, ADMIT_UNKNOWN};
    struct statvfs v;
    if (statvfs(a->base, &v) == 0) free_b.scratch = (long long)v.f_bavail * (long long)v.f_frsize;
    long long avail = file_key("/proc/meminfo", "MemAvailable");
    if (avail >= 0) free_b.memory = avail * 1024;
    long long room = cgroup_room();
    if (room < free_b.memory) free_b.memory = room;
    return free_b;
}

admit_bytes admit_left(admit_bytes free_b, const admit_eval *ev, int nev) {
    admit_bytes left = free_b;
    for (int k = 0; k < nev; k++) {
        if (!ev[k].pid) continue;
        if (left.scratch != ADMIT_UNKNOWN) left.scratch -= max_ll(0, ev[k].reserved.scratch - ev[k].used.scratch);
        if (left.memory != ADMIT_UNKNOWN) left.memory -= max_ll(0, ev[k].reserved.memory - ev[k].used.memory);
    }
    return left;
}

/* Whether a running evaluation of p (not measured yet) has published p's reference side, so
 * that what it was seen to use covers its cases: the most of them in *mem and *own. */
static int provisional(const kbv_admit *a, const admit_eval *ev, int nev, int p, long long *mem, long long *own) {
    int sampled = 0;
    *mem = *own = 0;
    for (int k = 0; k < nev; k++)
        if (ev[k].pid && ev[k].problem == p && ev[k].samples > 0)
            sampled = 1, *mem = max_ll(*mem, ev[k].mem_peak), *own = max_ll(*own, ev[k].own_peak);
    return sampled && published(a, p);
}

int admit_unmeasured_busy(const kbv_admit *a, const admit_eval *ev, int nev, int p) {
    if (p < 0 || p >= a->nproblems || a->problems[p].measured) return 0;
    int running = 0;
    for (int k = 0; k < nev; k++) running |= ev[k].pid && ev[k].problem == p;
    long long mem, own;
    return running && !provisional(a, ev, nev, p, &mem, &own);
}

admit_bytes admit_need_running(const kbv_admit *a, const admit_eval *ev, int nev, int p) {
    admit_bytes n = admit_need(a, p);
    long long mem, own;
    if (p < 0 || p >= a->nproblems || a->problems[p].measured || !provisional(a, ev, nev, p, &mem, &own)) return n;
    /* (its kept reference outputs are published: later evaluations keep none of their own) */
    long long scratch = ADMIT_PROVISIONAL * with_slack(own) + a->compile, memory = ADMIT_PROVISIONAL * with_slack(mem);
    if (a->tmpfs) memory += scratch;
    n.scratch = max_ll(n.scratch, scratch), n.memory = max_ll(n.memory, memory);
    return n;
}

int admit_decide(const kbv_admit *a, const admit_eval *ev, int nev, int p, admit_bytes need, admit_bytes left, int running) {
    if (admit_unmeasured_busy(a, ev, nev, p)) return ADMIT_WAIT_MEASURE;
    return running ? admit_check(need, left) : ADMIT_YES;
}

int admit_check(admit_bytes need, admit_bytes left) {
    if (left.scratch != ADMIT_UNKNOWN && need.scratch > left.scratch) return ADMIT_WAIT_SCRATCH;
    if (left.memory != ADMIT_UNKNOWN && need.memory > left.memory) return ADMIT_WAIT_MEMORY;
    return ADMIT_YES;
}

/* ---- sampling ---------------------------------------------------------------------------- */

typedef struct proc_link {
    pid_t pid, ppid;
} proc_link;

/* Every process's parent, from /proc/PID/stat. */
static int proc_links(proc_link **out) {
    *out = NULL;
    DIR *d = opendir("/proc");
    if (!d) return 0;
    int n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10), ppid;
        if (*end || pid <= 0 || proc_stat_parent(pid, NULL, &ppid) < 0) continue;
        if (n == cap) {
            int c = cap ? cap * 2 : 512;
            proc_link *q = realloc(*out, (size_t)c * sizeof *q);
            if (!q) break;
            *out = q, cap = c;
        }
        (*out)[n].pid = (pid_t)pid, (*out)[n].ppid = (pid_t)ppid, n++;
    }
    closedir(d);
    return n;
}

/* A process's memory now (anonymous and shared, not file-backed pages, which are reclaimable)
 * and at its peak (that plus how far its resident size has been above today's), bytes. */
static void proc_memory(pid_t pid, long long *now, long long *peak) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
    FILE *f = fopen(path, "re");
    *now = *peak = 0;
    if (!f) return;
    long long rss = 0, hwm = 0, anon = 0, shmem = 0;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        long long v;
        if (sscanf(line, "VmRSS: %lld", &v) == 1) rss = v;
        else if (sscanf(line, "VmHWM: %lld", &v) == 1) hwm = v;
        else if (sscanf(line, "RssAnon: %lld", &v) == 1) anon = v;
        else if (sscanf(line, "RssShmem: %lld", &v) == 1) shmem = v;
    }
    fclose(f);
    *now = (anon + shmem) * 1024;
    *peak = *now + max_ll(0, hwm - rss) * 1024;
}

/* The evaluation's scratch folder, if process pid works in one: BASE/kbv-XXXXXX/... */
static int scratch_of(const kbv_admit *a, pid_t pid, char *out, size_t n) {
    char link[64], cwd[PATH_MAX];
    snprintf(link, sizeof link, "/proc/%ld/cwd", (long)pid);
    ssize_t l = readlink(link, cwd, sizeof cwd - 1);
    if (l <= 0) return -1;
    cwd[l] = '\0';
    size_t bl = strlen(a->base);
    if (strncmp(cwd, a->base, bl) != 0 || strncmp(cwd + bl, "/kbv-", 5) != 0) return -1;
    size_t end = bl + 1 + strcspn(cwd + bl + 1, "/");
    cwd[end] = '\0';
    if (a->ref_cache[0] && strcmp(cwd, a->ref_cache) == 0) return -1; /* the run's own folder */
    return snprintf(out, n, "%s", cwd) < (int)n ? 0 : -1;
}

void admit_sample(const kbv_admit *a, admit_eval *ev, int nev) {
    proc_link *links = NULL;
    int nl = proc_links(&links);
    pid_t *tree = calloc((size_t)nl + 1, sizeof *tree);
    for (int k = 0; k < nev; k++) {
        admit_eval *e = &ev[k];
        if (!e->pid) continue;
        long long mem_now = 0, mem_peak = 0;
        int nt = 0;
        if (tree) tree[nt++] = e->pid;
        for (int i = 0; i < nt; i++) /* the child kbv, its workers and what they started */
            for (int j = 0; j < nl && nt < nl + 1; j++)
                if (links[j].ppid == tree[i] && links[j].pid != tree[i]) tree[nt++] = links[j].pid;
        for (int i = 0; i < nt; i++) {
            long long now, peak;
            proc_memory(tree[i], &now, &peak);
            mem_now += now, mem_peak += peak;
            /* its scratch: the working folder of a worker (kbv's own is the run's) */
            if (i > 0 && !e->scratch[0]) {
                char s[PATH_MAX];
                int taken = scratch_of(a, tree[i], s, sizeof s) < 0;
                for (int o = 0; !taken && o < nev; o++) taken = o != k && ev[o].pid && strcmp(ev[o].scratch, s) == 0;
                if (!taken) snprintf(e->scratch, sizeof e->scratch, "%s", s);
            }
        }
        long long own = e->scratch[0] ? kbv_tree_bytes(e->scratch) : 0, kept = 0;
        if (a->ref_cache[0] && a->sha && a->sha[e->problem][0]) {
            char path[PATH_MAX + 100];
            snprintf(path, sizeof path, "%s/%s.%ld", a->ref_cache, a->sha[e->problem], (long)e->pid); /* refcache.c's name while it records */
            kept = kbv_tree_bytes(path);
        }
        e->used.scratch = own + kept;
        e->used.memory = mem_now + (a->tmpfs ? own + kept : 0);
        e->own_peak = max_ll(e->own_peak, own), e->kept_peak = max_ll(e->kept_peak, kept);
        e->mem_peak = max_ll(e->mem_peak, mem_peak);
        e->samples++;
    }
    free(tree), free(links);
}

void admit_record(kbv_admit *a, const admit_eval *e, int complete, long long maxrss_bytes) {
    admit_problem *m = &a->problems[e->problem];
    long long mem = max_ll(e->mem_peak, maxrss_bytes);
    if (e->samples > 0 || maxrss_bytes > 0) {
        m->memory = max_ll(m->memory, mem);
        m->memory_known |= complete && e->samples > 0;
    }
    m->measured |= complete;
    m->kept = max_ll(m->kept, e->kept_peak);
    if (e->scratch[0]) { /* its folder was seen: what it used is known */
        m->own = max_ll(m->own, e->own_peak);
        m->scratch_known |= complete;
    }
}

admit_bytes admit_ahead_need(const kbv_admit *a) {
    const admit_problem *m = &a->ahead;
    admit_bytes n;
    n.scratch = m->scratch_known ? with_slack(m->own) : max_ll(ADMIT_AHEAD_SCRATCH, with_slack(m->own));
    n.memory = m->memory_known ? with_slack(m->memory) : max_ll(ADMIT_AHEAD_MEMORY, with_slack(m->memory));
    n.scratch += a->compile;
    if (a->tmpfs) n.memory += n.scratch;
    return n;
}

void admit_ahead_record(kbv_admit *a, const admit_eval *e, long long maxrss_bytes) {
    admit_problem *m = &a->ahead;
    /* Compiles differ less than problems do, but one worker is not all of them: the most of
     * any, and known only once one was sampled (a short one says little about the next). */
    if (e->samples > 0 || maxrss_bytes > 0) m->memory = max_ll(m->memory, max_ll(e->mem_peak, maxrss_bytes));
    m->memory_known |= e->samples >= 4;
    if (e->scratch[0]) {
        m->own = max_ll(m->own, e->own_peak);
        m->scratch_known |= e->samples >= 4;
    }
}

void admit_format(long long bytes, char *out, size_t n) {
    if (bytes == ADMIT_UNKNOWN) snprintf(out, n, "unknown");
    else if (bytes >= (1LL << 30) || bytes <= -(1LL << 30)) snprintf(out, n, "%.1f GiB", (double)bytes / (double)(1LL << 30));
    else snprintf(out, n, "%.0f MiB", (double)bytes / (double)(1LL << 20));
}
