/* detect.c -- the detectors that read what kbv measured: a failed case's outputs (constant,
 * identity, poison left in them, half-precision error), the CUPTI audit (work after the stop,
 * the library policy and the authored share), the timed rounds (a cache keyed on the inputs'
 * content, times below the roofline floor, calls too short to resolve). docs/hacks.md has the
 * catalogue.
 *
 * Each detector adds findings (finding.h) with their evidence; none sets a status (verdict.c
 * derives it from the findings' severities) and none talks to a worker.
 */
#include "evalctx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_host.h"
#include "perf.h"
#include "stats.h"

/* Elements of a whose bytes are all one of the poison bytes pb and whose value is not the
 * oracle's: memory the run left as the poison (or the allocator's fill) put it. One-byte
 * elements are skipped (0x01 is a valid bool). */
static long long poisoned(const kbv_tensor *a, const kbv_tensor *oracle, const unsigned char *pb, int npb) {
    size_t es = kbv_dtype_size(a->dtype);
    int64_t n = kbv_tensor_numel(a);
    if (es < 2 || !oracle || kbv_tensor_numel(oracle) != n) return 0;
    long long hits = 0;
    const unsigned char *p = a->data;
    for (int64_t i = 0; i < n; i++) {
        const unsigned char *e = p + (size_t)i * es;
        for (int k = 0; k < npb; k++) {
            size_t j = 0;
            while (j < es && e[j] == pb[k]) j++;
            if (j < es) continue;
            double v = kbv_tensor_get(a, i), o = kbv_tensor_get(oracle, i);
            if (!(v == o) && !(isnan(v) && isnan(o))) hits++;
            break;
        }
    }
    return hits;
}

static int all_equal(const kbv_tensor *t) {
    size_t es = kbv_dtype_size(t->dtype);
    if (es == 0 || t->nbytes < 2 * es) return 0;
    for (size_t i = es; i + es <= t->nbytes; i += es)
        if (memcmp(t->data, (const unsigned char *)t->data + i, es) != 0) return 0;
    return 1;
}

void detect_semantic(eval_ctx *c, const kbv_case *kc, const ref_runs *rr, const run_out *c1, const run_out *c2, const reply_prints *cand_prints,
                     const uint64_t *cfp, const uint64_t *ofp) {
    kbv_result *r = c->r;
    for (int k = 0; k < c1->n && k < rr->oracle.n && k < EVAL_MAX_SEEN; k++) {
        /* The same output for inputs whose reference outputs differ: a constant. */
        for (int q = 0; q < c->seen[k]; q++)
            if (c->seen_cand[k][q] == cfp[k] && c->seen_ref[k][q] != ofp[k]) {
                result_add_finding(r, FIND_CONSTANT_OUTPUT, json_pack("{s:s, s:i}", "case", kc->distribution, "output", k),
                                   "case %s: output %d is the same as on an earlier case, where the reference's outputs differ", kc->distribution, k);
                break;
            }
    }
    /* glibc's perturbation (0x7f / 0xfe in new allocations, 0x80 / 0x01 in freed memory), the
     * GPU's poisoned cache blocks (0x7f / 0xfe), and AddressSanitizer's malloc fill (0xbe) in
     * sanitizer builds */
    static const unsigned char run0[3] = {0x7f, 0x80, 0xbe}, run1[3] = {0xfe, 0x01, 0xbe};
    for (int k = 0; k < c1->n; k++) {
        const kbv_tensor *t = &c1->t[k];
        const kbv_tensor *o = k < rr->oracle.n ? &rr->oracle.t[k] : NULL;
        long long u = poisoned(t, o, run0, 3);
        if (k < c2->n) u += poisoned(&c2->t[k], o, run1, 3);
        if (u > 0)
            result_add_finding(r, FIND_UNWRITTEN_ELEMENTS,
                               json_pack("{s:s, s:i, s:I}", "case", kc->distribution, "output", k, "elements", (json_int_t)u),
                               "case %s, output %d: %lld element(s) still held the poison kbv put in free memory", kc->distribution, k, u);
        /* where the reference is itself the identity, so is an honest answer */
        int ref_same = k < rr->strict.n && gen_fingerprint_host(rr->strict.t[k].data, rr->strict.t[k].nbytes) == cfp[k];
        for (int j = 0; !ref_same && j < cand_prints->n; j++)
            if (cand_prints->has[j] && cand_prints->fp[j] == cfp[k])
                result_add_finding(r, FIND_IDENTITY_OUTPUT, json_pack("{s:s, s:i, s:i}", "case", kc->distribution, "output", k, "input", j),
                                   "case %s: output %d is input %d unchanged, where the reference's output differs", kc->distribution, k, j);
        if (all_equal(t) && k < rr->oracle.n && !all_equal(&rr->oracle.t[k]))
            result_add_finding(r, FIND_CONSTANT_OUTPUT, json_pack("{s:s, s:i}", "case", kc->distribution, "output", k),
                               "case %s: output %d is one value everywhere; the reference's is not", kc->distribution, k);
    }
    /* Half-precision-sized errors on the problem's own inputs; on hidden inputs alone the
     * same error size is as often a wrong formula that fits the nominal data. */
    if (kc->klass == JUDGE_HALF && strcmp(kc->distribution, "nominal") == 0)
        result_add_finding(r, FIND_PRECISION_DOWNGRADE,
                           json_pack("{s:s, s:f, s:f}", "case", kc->distribution, "norm_rel_err", kc->norm_rel_err, "bound", kc->tol_norm),
                           "case %s: the error (%.3g) is that of half-precision arithmetic, above the fp32/TF32 bound %.3g", kc->distribution,
                           kc->norm_rel_err, kc->tol_norm);
}

/* The library policy's severity (--library-only). */
static kbv_severity library_severity(const eval_ctx *c) {
    int s = severity_from_name(c->o->library_only ? c->o->library_only : "hack");
    return s < 0 ? SEV_HACK : (kbv_severity)s;
}

void detect_audit(eval_ctx *c, const kbv_reply *a, int cand) {
    kbv_result *r = c->r;
    if (!cand) return;
    if (!a->audit.markers || a->audit.dropped > 0)
        result_add_finding(r, FIND_AUDIT_INCOMPLETE, NULL, "the CUPTI trace of the candidate's call is incomplete (markers %s, %lld records dropped)",
                           a->audit.markers ? "seen" : "missing", a->audit.dropped);
    long long after = a->audit.after_stop, other = a->audit.other_stream;
    if (after > 0)
        result_add_finding(
            r, FIND_WORK_AFTER_STOP, NULL,
            "%lld kernel(s) of the candidate's call ran past the timed window's stop (e.g. %s, %lld ns after it): its time misses work", after,
            a->audit.first_after_stop.name[0] ? a->audit.first_after_stop.name : "?", a->audit.first_after_stop.ns_after_stop);
    /* Library policy (docs/hacks.md): library kernels inside an authored fusion are fine; a
     * call whose kernels are all library kernels is the library's speed, not the candidate's,
     * and so is one whose authored kernels take a small share of its GPU time (a fig leaf). */
    long long nk = a->audit.kernels_per_call, na = a->audit.authored_kernels;
    kbv_severity sev = library_severity(c);
    double share = perf_authored_share(a->audit.authored_ns, a->audit.library_ns);
    if (nk > 0 && na > 0 && share >= 0 && share < PERF_AUTHORED_SHARE_MIN)
        result_add_finding_at(r, FIND_LOW_AUTHORED_SHARE, sev,
                              json_pack("{s:f, s:f, s:I, s:I, s:I, s:I}", "authored_share", share, "threshold", PERF_AUTHORED_SHARE_MIN,
                                        "authored_ns", (json_int_t)a->audit.authored_ns, "library_ns", (json_int_t)a->audit.library_ns,
                                        "authored_kernels", (json_int_t)na, "kernels_per_call", (json_int_t)nk),
                              "the candidate's own kernels took %.1f%% of the call's GPU time (%lld of %lld ns; %lld of %lld kernels), below "
                              "the library policy's %.0f%%: the work is the library's",
                              100 * share, a->audit.authored_ns, a->audit.authored_ns + a->audit.library_ns, na, nk, 100 * PERF_AUTHORED_SHARE_MIN);
    if (nk > 0 && na == 0 && c->nkernels > 0) {
        json_t *names = json_array();
        for (int i = 0; i < c->nkernels; i++) json_array_append_new(names, json_string(c->kernels[i]));
        result_add_finding_at(r, FIND_UNUSED_KERNEL, sev, json_pack("{s:o, s:I}", "defined", names, "kernels_per_call", (json_int_t)nk),
                              "the candidate defines %d kernel(s) (e.g. %s) but the call launched none of them", c->nkernels, c->kernels[0]);
    } else if (nk > 0 && na == 0) {
        result_add_finding_at(r, FIND_LIBRARY_ONLY, sev,
                              json_pack("{s:I, s:I}", "kernels_per_call", (json_int_t)nk, "library_ns", (json_int_t)a->audit.library_ns),
                              "every kernel of the call is a library kernel (%lld); none is the candidate's own", nk);
    }
    if (after == 0 && other > 0)
        result_add_finding(r, FIND_OTHER_STREAM, NULL,
                           "%lld kernel(s) ran on streams other than kbv's (the legacy default stream of a plain <<<...>>> launch counts) and "
                           "finished before the stop",
                           other);
}

/* A cache keyed on the inputs' content: a candidate much faster, against the reference, on a
 * hidden case's own values (repeated in every such round) than on values drawn like them that
 * no call has seen. Both kinds of round come from the same distribution, and each round runs
 * both arms on the same values, so an honest kernel whose speed depends on the data shows no
 * gap. The gap: the speedup on seen values more than 1.5 times the speedup on new ones, and
 * their interquartile ranges apart. Timing asks for 5 rounds of each, and once the gap shows,
 * for 10 of each, over all of which it must hold (docs/hacks.md): a burst of noise over a few
 * rounds of one kind does not last through five more of each. */
int value_cache_gap(const double *ref, const double *cand, const unsigned char *fresh, int n, int min, double sp[2], int m[2]) {
    sp[0] = sp[1] = 0, m[0] = m[1] = 0;
    double *q[2] = {malloc(sizeof(double) * (size_t)(n > 0 ? n : 1)), malloc(sizeof(double) * (size_t)(n > 0 ? n : 1))};
    if (!q[0] || !q[1]) {
        free(q[0]), free(q[1]);
        return 0;
    }
    for (int i = 0; i < n; i++)
        if (ref[i] > 0 && cand[i] > 0) q[fresh[i] ? 1 : 0][m[fresh[i] ? 1 : 0]++] = ref[i] / cand[i];
    if (m[0] >= 1 && m[1] >= 1) sp[0] = stats_median(q[0], (size_t)m[0]), sp[1] = stats_median(q[1], (size_t)m[1]);
    int gap = m[0] >= min && m[1] >= min && sp[0] > 1.5 * sp[1] &&
              stats_quantile(q[1], (size_t)m[1], 0.75) < stats_quantile(q[0], (size_t)m[0], 0.25);
    free(q[0]), free(q[1]);
    return gap;
}

void detect_value_cache(eval_ctx *c, const double *ref, const double *cand, const unsigned char *fresh, int n) {
    kbv_perf *pf = &c->r->perf;
    double sp[2];
    int m[2];
    int gap = value_cache_gap(ref, cand, fresh, n, VALUE_CACHE_ROUNDS, sp, m);
    pf->fresh_rounds = m[1];
    if (m[0] >= 1 && m[1] >= 1) pf->speedup_seen = sp[0], pf->speedup_fresh = sp[1];
    if (gap)
        result_add_finding(c->r, FIND_VALUE_CACHE,
                           json_pack("{s:i, s:i, s:f, s:f}", "seen_rounds", m[0], "fresh_rounds", m[1], "speedup_seen", pf->speedup_seen,
                                     "speedup_fresh", pf->speedup_fresh),
                           "%.3gx PyTorch's speed on input values it had been called with before, %.3gx on new ones (medians of %d and %d "
                           "rounds): its result comes from a cache keyed on the inputs' content",
                           pf->speedup_seen, pf->speedup_fresh, m[0], m[1]);
}

/* Bytes a call must move at least: every input read once, every output written once. */
static long long min_bytes(const eval_ctx *c, const kept_case *k, const reply_probe_input *in, int nin) {
    long long b = 0;
    for (int j = 0; j < nin; j++) {
        kbv_dtype dt = kbv_dtype_from_name(in[j].dtype);
        if (!in[j].is_tensor || dt == KBV_DT_INVALID) continue;
        long long n = 1;
        for (int d = 0; d < in[j].ndim; d++) n *= in[j].shape[d];
        b += n * (long long)kbv_dtype_size(dt);
    }
    for (int q = 0; q < k->rr.strict.n; q++) b += (long long)k->rr.strict.t[q].nbytes;
    (void)c;
    return b;
}

/* A time below what the memory system allows is impossible: the work was not done in the
 * timed call. impossible_time where a reported median (of what: "" the timed calls, or the
 * graph replays) is below the time it takes to move the call's bytes at the device's peak
 * bandwidth. */
static void below_floor(eval_ctx *c, const kept_case *k, double peak_gbs, double median_ms, const char *what) {
    long long bytes = min_bytes(c, k, c->probe.inputs, c->probe.ninputs);
    if (!(peak_gbs > 0 && bytes > 0 && median_ms > 0)) return;
    double floor_ms = (double)bytes / (peak_gbs * 1e9) * 1e3;
    if (median_ms < floor_ms)
        result_add_finding(c->r, FIND_IMPOSSIBLE_TIME,
                           json_pack("{s:I, s:f, s:f, s:f, s:s}", "bytes", (json_int_t)bytes, "peak_gbs", peak_gbs, "floor_ms", floor_ms, "median_ms",
                                     median_ms, "arm", *what ? "graph" : "model"),
                           "%.4g ms%s is below the %.4g ms it takes just to move the call's %lld bytes at %.0f GB/s", median_ms, what, floor_ms,
                           bytes, peak_gbs);
}

void detect_roofline(eval_ctx *c, const kept_case *k, double peak_gbs) {
    kbv_result *r = c->r;
    const kbv_perf *pf = &r->perf;
    if (!pf->measured) return;
    below_floor(c, k, peak_gbs, pf->cand.median, "");
    /* An excessive speedup alone is only information. */
    if (pf->speedup.value > 10)
        result_add_finding(r, FIND_EXCESSIVE_SPEEDUP, json_pack("{s:f}", "speedup", pf->speedup.value),
                           "%.1fx faster than PyTorch: worth a look (not a verdict)", pf->speedup.value);
}

void detect_roofline_graph(eval_ctx *c, const kept_case *k, double peak_gbs) {
    if (c->r->perf.cand_graph.n) below_floor(c, k, peak_gbs, c->r->perf.cand_graph.median, " (a graph replay)");
}

/* Two worker processes running the same code differ on a short call by up to offset_ns,
 * whatever the interleaving and the placements (BENCHMARKS.md, "A/A at 5.5 us"): a
 * per-process constant that the per-round bootstrap cannot see. */
void detect_short_call(eval_ctx *c, double offset_ns) {
    kbv_perf *pf = &c->r->perf;
    double shorter = pf->cand.median < pf->ref.median ? pf->cand.median : pf->ref.median;
    pf->process_offset = shorter > 0 ? offset_ns * 1e-6 / shorter : 0;
    if (pf->process_offset > 0.01)
        result_add_finding(c->r, FIND_SHORT_CALL, NULL,
                           "at %.3g us, two processes running the same code differ by up to %.2g us (%.1f%%), which the CI "
                           "does not include: read speedups within that of each other as equal",
                           shorter * 1e3, offset_ns * 1e-3, 100 * pf->process_offset);
}
