/* refcache.c -- the reference side, once per problem in a run (docs/results.md).
 *
 * Within one `kbv run` every evaluation of a problem sees the same cases (their seeds derive
 * from the run's seed), so the first evaluation that gets through all of them keeps, per
 * case, the domain and seed the reference settled on (or why the case was skipped), its
 * input fingerprints, whether it changes its inputs, the oracle in use, and the three runs'
 * outputs (hard links to what the reference worker wrote) with their aliasing. Later
 * evaluations of the problem take the cases from there instead of running the reference on
 * them. The folder lies in the scratch base under a "kbv-" name, which Landlock hides from
 * every worker (security.md); without Landlock the cache is not used at all. The index is
 * kbv's own file, written from decoded replies; nothing a worker wrote is stored as it came.
 * A problem too big to keep is published all the same, as an index that says so and holds no
 * case: later evaluations then neither take nor record anything, and `kbv run`'s admission
 * sees its cases have run (admit.c), so they need not wait for the first evaluation to end.
 */
#include "evalctx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define GIB (1LL << 30)

/* How much a problem may keep: a quarter of what the cache's file system has free when its
 * first evaluation opens the folder, within [4 GiB, 32 GiB]. So a level-1 problem with 256 MiB
 * outputs (about 14 GiB kept: 14 records of a float64 oracle and two float32 runs) is kept on a
 * file system with 56 GiB free, and one with 1 GiB outputs (56 GiB) nowhere. */
long long refcache_problem_cap(long long avail) {
    long long q = avail / 4;
    return q < 4 * GIB ? 4 * GIB : q > 32 * GIB ? 32 * GIB : q;
}

/* Whether a new problem may be kept, the run's folder holding `held` bytes and its file system
 * `avail` free: at least 8 GiB free, and the folder under half of itself and the free space
 * together (at least 16 GiB). A problem's folder goes as soon as its last evaluation ends
 * (run.c), so this is what the problems being evaluated at once hold. */
int refcache_room(long long held, long long avail) {
    long long half = (held + avail) / 2;
    return avail >= 8 * GIB && held <= (half > 16 * GIB ? half : 16 * GIB);
}

/* Whether a problem that has kept `bytes` in `records` of the `total` an evaluation records
 * (the cases, then the hidden check draws) goes on keeping under `cap`: neither what it holds
 * nor what it would hold at that rate may pass the cap. Deciding at the first record drops
 * a problem too big to keep before it has pinned more than one case's outputs. */
int refcache_keeps(long long bytes, int records, int total, long long cap) {
    if (bytes > cap) return 0;
    if (records <= 0 || total <= records) return 1;
    return (double)bytes / records * total <= (double)cap;
}

/* This evaluation's folder for the problem, renamed to cache.dir on publishing: 0, or -1 (and
 * no folder) where it cannot be made. */
static int make_tmp(eval_ctx *c) {
    snprintf(c->cache.tmp, sizeof c->cache.tmp, "%s.%ld", c->cache.dir, (long)getpid());
    if (mkdir(c->cache.tmp, 0700) == 0) return 0;
    c->cache.tmp[0] = '\0';
    return -1;
}

void refcache_open(eval_ctx *c) {
    if (!c->o->ref_cache || !c->o->candidate) return;
    const char *fs = json_string_value(json_object_get(c->r->sandbox, "filesystem"));
    if (!fs || strncmp(fs, "landlock", 8) != 0) {
        result_add_finding(c->r, FIND_REFERENCE_NOT_REUSED, NULL,
                           "the reference side was run for this candidate: without Landlock (sandbox: %s) kept reference outputs "
                           "would be readable by candidates",
                           fs ? fs : "off");
        return;
    }
    char sha[65], index[PATH_MAX + 96];
    kbv_err e;
    if (kbv_sha256_file(c->o->problem, sha, &e) < 0) return;
    snprintf(c->cache.dir, sizeof c->cache.dir, "%s/%s", c->o->ref_cache, sha);
    snprintf(index, sizeof index, "%s/index.json", c->cache.dir);
    c->cache.loaded = json_load_file(index, 0, NULL);
    if (c->cache.loaded && json_is_true(json_object_get(c->cache.loaded, "dropped"))) { /* too big: run here, keep nothing */
        json_decref(c->cache.loaded), c->cache.loaded = NULL;
        return;
    }
    if (c->cache.loaded) {
        c->r->reference_reused = 1;
        return;
    }
    /* Room to keep this problem, on a file system that is often a tmpfs (memory). */
    struct statvfs vfs;
    if (statvfs(c->o->ref_cache, &vfs) < 0) return;
    long long avail = (long long)vfs.f_bavail * (long long)vfs.f_frsize;
    if (!refcache_room(kbv_tree_bytes(c->o->ref_cache), avail)) return;
    c->cache.cap = refcache_problem_cap(avail);
    if (c->o->ref_cache_max_bytes >= 0 && c->o->ref_cache_max_bytes < c->cache.cap) c->cache.cap = c->o->ref_cache_max_bytes;
    if (make_tmp(c) < 0) return;
    c->cache.cases = json_object();
}

/* A run as kept: its output files named where they will be once the folder is published
 * (session_read_outputs() linked them into cache.tmp, renamed to cache.dir on publishing). */
static json_t *published_run(const eval_ctx *c, const run_out *o) {
    reply_values v;
    if (reply_values_copy(&v, &o->rep.values) < 0) return NULL;
    for (int j = 0; j < v.n; j++) {
        const char *base = v.v[j].is_tensor ? strrchr(v.v[j].path, '/') : NULL;
        char p[PATH_MAX + 160];
        if (!base) continue;
        snprintf(p, sizeof p, "%s%s", c->cache.dir, base);
        snprintf(v.v[j].path, sizeof v.v[j].path, "%s", p);
    }
    json_t *aliases = json_array();
    for (int q = 0; q < o->rep.naliases; q++) json_array_append_new(aliases, json_pack("[i, i]", o->rep.aliases[q][0], o->rep.aliases[q][1]));
    json_t *r = json_pack("{s:o, s:o}", "values", reply_values_to_json(&v), "aliases", aliases);
    reply_values_free(&v);
    return r;
}

/* This evaluation keeps nothing more, and what it kept is removed. */
static void refcache_drop(eval_ctx *c) {
    json_decref(c->cache.cases), c->cache.cases = NULL;
    if (c->cache.tmp[0]) kbv_rmtree(c->cache.tmp);
    c->cache.tmp[0] = '\0', c->cache.keep = NULL;
    c->cache.dropped = 1;
}

void refcache_record(eval_ctx *c, int ci, const kbv_case *kc, int dom, const ref_runs *rr) {
    if (!c->cache.cases) return;
    /* Too big to keep: later evaluations run the reference themselves, and what this one has
     * kept goes now rather than staying pinned (on a tmpfs, in memory) until it ends. */
    int total = 5 * c->o->ncases + (c->o->timing ? TIMING_CHECKS : 0);
    if (!refcache_keeps(c->cache.bytes, (int)json_object_size(c->cache.cases) + 1, total, c->cache.cap)) {
        refcache_drop(c);
        return;
    }
    char key[16], seed[32];
    snprintf(key, sizeof key, "%d", ci);
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)kc->seed);
    json_t *rec = json_pack("{s:b, s:i, s:s, s:s, s:s, s:s}", "skipped", kc->skipped, "dom", dom, "seed", seed, "domain", kc->domain, "skip_reason",
                            kc->skip_reason, "fallback_reason", kc->fallback_reason);
    if (!kc->skipped && rr) {
        /* After a float64 failure the oracle is a copy of the strict run; on the CPU the
         * baseline is: neither has files of its own. */
        json_object_set_new(rec, "prints", reply_prints_to_json(&rr->prints));
        json_object_set_new(rec, "mutates_inputs", json_boolean(rr->mutates_inputs));
        json_object_set_new(rec, "oracle_fallback", json_boolean(c->oracle_fallback));
        json_object_set_new(rec, "oracle", json_string(c->r->oracle));
        json_object_set_new(rec, "strict", published_run(c, &rr->strict));
        json_object_set_new(rec, "tf32", strcmp(c->r->device, "cuda") == 0 ? published_run(c, &rr->tf32) : json_null());
        json_object_set_new(rec, "float64", c->oracle_fallback ? json_null() : published_run(c, &rr->oracle));
    }
    json_object_set_new(c->cache.cases, key, rec);
}

/* A kept run back: its outputs read (not consumed) and its aliasing. */
static int take_run(const json_t *rec, run_out *o, kbv_err *err) {
    const json_t *al = json_object_get(rec, "aliases");
    if (reply_values_from_json(json_object_get(rec, "values"), &o->rep.values, err) < 0) return -1;
    o->rep.aliases = calloc(json_array_size(al) + 1, sizeof *o->rep.aliases);
    if (!o->rep.aliases) return kbv_seterr(err, "out of memory");
    for (size_t q = 0; q < json_array_size(al); q++, o->rep.naliases++) {
        o->rep.aliases[q][0] = (int)json_integer_value(json_array_get(json_array_get(al, q), 0));
        o->rep.aliases[q][1] = (int)json_integer_value(json_array_get(json_array_get(al, q), 1));
    }
    out_spec spec = {.max_bytes = -1}; /* kbv's own files, named in kbv's own index */
    return session_read_outputs(&o->rep.values, &spec, &o->t, &o->n, err);
}

int refcache_take(eval_ctx *c, int ci, kbv_case *kc, ref_runs *rr, int *dom, kbv_err *err) {
    char key[16];
    snprintf(key, sizeof key, "%d", ci);
    const json_t *rec = json_object_get(json_object_get(c->cache.loaded, "cases"), key);
    memset(rr, 0, sizeof *rr);
    if (!rec) return 0;
    *dom = (int)json_integer_value(json_object_get(rec, "dom"));
    kc->seed = strtoull(json_string_value(json_object_get(rec, "seed")) ?: "0", NULL, 10);
    snprintf(kc->domain, sizeof kc->domain, "%s", json_string_value(json_object_get(rec, "domain")) ?: "raw");
    snprintf(kc->fallback_reason, sizeof kc->fallback_reason, "%s", json_string_value(json_object_get(rec, "fallback_reason")) ?: "");
    if (json_is_true(json_object_get(rec, "skipped"))) {
        kc->skipped = 1;
        snprintf(kc->skip_reason, sizeof kc->skip_reason, "%s", json_string_value(json_object_get(rec, "skip_reason")) ?: "");
        return 1;
    }
    if (reply_prints_from_json(json_object_get(rec, "prints"), &rr->prints, err) < 0) return -1;
    rr->mutates_inputs = json_is_true(json_object_get(rec, "mutates_inputs"));
    c->oracle_fallback = json_is_true(json_object_get(rec, "oracle_fallback"));
    snprintf(c->r->oracle, sizeof c->r->oracle, "%s", json_string_value(json_object_get(rec, "oracle")) ?: "float64");
    static const char *const names[3] = {"strict", "tf32", "float64"};
    run_out *outs[3] = {&rr->strict, &rr->tf32, &rr->oracle};
    for (int k = 0; k < 3; k++) {
        const json_t *run = json_object_get(rec, names[k]);
        if (json_is_null(run) || !run) { /* a copy of the strict run */
            if (run_copy_outputs(outs[k], &rr->strict) < 0) return kbv_seterr(err, "out of memory copying outputs"), -1;
            continue;
        }
        if (take_run(run, outs[k], err) < 0) return -1;
    }
    return 1;
}

void refcache_publish(eval_ctx *c) {
    char index[PATH_MAX + 128];
    json_t *idx = NULL;
    if (c->cache.dropped && c->cache.dir[0]) { /* a folder of its own again, for the index alone */
        if (make_tmp(c) < 0) return;
        idx = json_pack("{s:b, s:I}", "dropped", 1, "cap", (json_int_t)c->cache.cap);
    } else if (c->cache.cases && c->cache.tmp[0]) {
        idx = json_pack("{s:O}", "cases", c->cache.cases);
    } else {
        return;
    }
    snprintf(index, sizeof index, "%s/index.json", c->cache.tmp);
    if (idx && json_dump_file(idx, index, JSON_COMPACT) == 0 && rename(c->cache.tmp, c->cache.dir) == 0) c->cache.tmp[0] = '\0';
    json_decref(idx);
}

void refcache_close(eval_ctx *c) {
    if (c->cache.tmp[0]) kbv_rmtree(c->cache.tmp); /* not published: incomplete, too big, or another's won */
    json_decref(c->cache.loaded), json_decref(c->cache.cases);
    memset(&c->cache, 0, sizeof c->cache);
}
