/* result.c -- evaluation results: bookkeeping, JSON (the CLI contract) and the summary.
 * Formats only; never decides anything.
 */
#include "result.h"

#include "judge.h"
#include "perf.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *kNames[KBV_STATUS_COUNT] = {
    "verified", "incorrect", "overfit", "hack", "compile_error", "runtime_error", "timeout", "crash", "problem_error", "problem_ok",
};

const char *const kbv_phase_names[PHASE_COUNT] = {"reference", "candidate_load", "cases", "audit", "timing", "standard", "paper", "gpu_wait", "admission_wait"};

/* KernelBench-Verified's D1-D4 (docs/correctness.md, "The paper protocol"). */
const double kbv_paper_scales[KBV_PAPER_VARIANTS] = {1.0, 3.0, 0.01, -1.0};

/* Whether the verified protocol ran (its cases, weights and timing are in the result): not
 * when the standard or the paper protocol ran alone. */
static int verified_ran(const kbv_result *r) { return strcmp(r->protocol, "standard") != 0 && strcmp(r->protocol, "paper") != 0; }

const char *kbv_status_name(kbv_status s) { return s >= 0 && s < KBV_STATUS_COUNT ? kNames[s] : "unknown"; }

void result_init(kbv_result *r) {
    memset(r, 0, sizeof *r);
    kbv_buf_init(&r->errors);
    r->klass = -1;
    snprintf(r->protocol, sizeof r->protocol, "verified");
    kbv_memory *m = &r->memory;
    m->peak_cand = m->peak_ref = m->torch_peak_cand = m->torch_peak_ref = -1;
    m->pers_cand = m->pers_ref = m->torch_pers_cand = m->torch_pers_ref = -1;
    for (int i = 0; i < PHASE_COUNT; i++) r->phase_s[i] = -1;
    r->cpu_kbv_s = r->cpu_workers_s = -1;
    r->paper.peak_cand = r->paper.peak_ref = -1;
}

void result_free(kbv_result *r) {
    for (int i = 0; i < r->nflags; i++) json_decref(r->flags[i].evidence);
    free(r->cases), free(r->flags);
    kbv_buf_free(&r->errors);
    free(r->candidate_stdout), free(r->candidate_stderr), free(r->reference_stderr);
    json_decref(r->inputs);
    json_decref(r->audit_cand), json_decref(r->audit_ref), json_decref(r->samples), json_decref(r->inspect), json_decref(r->sandbox),
        json_decref(r->steps);
    memset(r, 0, sizeof *r);
}

kbv_case *result_add_case(kbv_result *r) {
    kbv_case *c = realloc(r->cases, sizeof *c * (size_t)(r->ncases + 1));
    if (!c) return NULL;
    r->cases = c;
    memset(&c[r->ncases], 0, sizeof *c);
    c[r->ncases].klass = -1;
    return &c[r->ncases++];
}

static void add_flag(kbv_result *r, kbv_finding_id id, kbv_severity sev, json_t *evidence, const char *fmt, va_list ap) {
    if (id < 0 || id >= FIND_COUNT || result_has_flag(r, id)) {
        json_decref(evidence);
        return;
    }
    kbv_flag *f = realloc(r->flags, sizeof *f * (size_t)(r->nflags + 1));
    if (!f) {
        json_decref(evidence);
        return;
    }
    r->flags = f;
    f = &f[r->nflags++];
    f->fid = id;
    snprintf(f->id, sizeof f->id, "%s", finding_catalog[id].id);
    f->severity = sev;
    vsnprintf(f->message, sizeof f->message, fmt, ap);
    f->evidence = evidence;
}

int result_has_flag(const kbv_result *r, kbv_finding_id id) {
    for (int i = 0; i < r->nflags; i++)
        if (r->flags[i].fid == id) return 1;
    return 0;
}

void result_add_finding(kbv_result *r, kbv_finding_id id, json_t *evidence, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    add_flag(r, id, id >= 0 && id < FIND_COUNT ? finding_catalog[id].severity : SEV_INFO, evidence, fmt, ap);
    va_end(ap);
}

void result_add_finding_at(kbv_result *r, kbv_finding_id id, kbv_severity sev, json_t *evidence, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    add_flag(r, id, sev, evidence, fmt, ap);
    va_end(ap);
}

void result_add_error(kbv_result *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) >= 0) {
        if (r->errors.len) kbv_buf_append(&r->errors, "\n", 1);
        kbv_buf_append(&r->errors, s, strlen(s));
        free(s);
    }
    va_end(ap);
}

/* JSON strings must be UTF-8: captured output may not be. Replace invalid bytes by '?'. */
static json_t *text(const char *s) {
    if (!s) return json_null();
    json_t *j = json_string(s);
    if (j) return j;
    char *c = strdup(s);
    if (!c) return json_null();
    for (unsigned char *p = (unsigned char *)c; *p; p++)
        if (*p >= 0x80) *p = '?';
    j = json_string(c);
    free(c);
    return j ? j : json_null();
}

/* A number, or null where it is not finite (JSON has no NaN or infinity). */
static json_t *num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

static const char *class_name(int k) { return judge_class_name((judge_class)k); }

static json_t *file_json(const kbv_file_id *f) {
    return json_pack("{s:o, s:o, s:o}", "path", text(f->path), "name", text(f->name), "sha256", f->sha256[0] ? json_string(f->sha256) : json_null());
}

static json_t *times_json(const kbv_times *t) {
    if (!t->n) return json_null();
    return json_pack("{s:o, s:o, s:o, s:o, s:i}", "median", num(t->median), "q1", num(t->q1), "q3", num(t->q3), "mean", num(t->mean), "samples",
                     t->n);
}

static json_t *ratio_json(const kbv_ratio *q) {
    if (!q->measured) return json_null();
    return json_pack("{s:o, s:[o, o]}", "value", num(q->value), "ci95", num(q->lo), num(q->hi));
}

static json_t *bytes(long long b) { return b >= 0 ? json_integer(b) : json_null(); }

static json_t *bytes_ratio(long long a, long long b) { return a >= 0 && b > 0 ? num((double)a / (double)b) : json_null(); }

/* The authored share of an audited call (perf.h), -1 where there is none. */
static double audit_share(const json_t *audit) {
    const json_t *an = json_object_get(audit, "authored_ns"), *ln = json_object_get(audit, "library_ns");
    return json_is_integer(an) && json_is_integer(ln) ? perf_authored_share(json_integer_value(an), json_integer_value(ln)) : -1;
}

static json_t *perf_json(const kbv_result *r) {
    const kbv_perf *p = &r->perf;
    json_t *o = json_object();
    json_object_set_new(o, "speedup", ratio_json(&p->speedup));
    json_object_set_new(o, "speedup_strict", ratio_json(&p->speedup_strict));
    json_object_set_new(o, "speedup_compile", ratio_json(&p->speedup_compile));
    json_object_set_new(o, "speedup_graph", ratio_json(&p->speedup_graph));
    json_object_set_new(o, "time_ms",
                        json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "candidate", times_json(&p->cand), "reference", times_json(&p->ref),
                                  "reference_strict", times_json(&p->ref_strict), "reference_compile", times_json(&p->ref_compile), "candidate_graph",
                                  times_json(&p->cand_graph), "reference_graph", times_json(&p->ref_graph), "empty_kernel", times_json(&p->empty)));
    json_object_set_new(
        o, "timing",
        json_pack("{s:b, s:o, s:s, s:i, s:b, s:{s:{s:i, s:i, s:i}, s:{s:i, s:i, s:i}}, s:s, s:o, s:i, s:i, s:i, s:i, s:o, s:o, s:O?, s:i, s:o, s:o}",
                  "measured", p->measured, "note", p->note[0] ? text(p->note) : json_null(), "clock", p->clock, "rounds", p->rounds, "primed",
                  p->primed, "placements", "reference", "input_slots", p->slots[0], "held_outputs", p->held[0], "graphs", p->graphs[0], "candidate",
                  "input_slots", p->slots[1], "held_outputs", p->held[1], "graphs", p->graphs[1], "stop", p->stop, "noise", num(p->noise),
                  "throttled_discarded", p->throttled, "cushion_expired", p->cushion_expired, "rechecks", p->rechecks, "rechecks_failed",
                  p->rechecks_failed, "graph_note", p->graph_note[0] ? text(p->graph_note) : json_null(), "time_s", num(p->time_s), "samples",
                  r->samples, "fresh_rounds", p->fresh_rounds, "speedup_fresh_values", p->fresh_rounds ? num(p->speedup_fresh) : json_null(),
                  "speedup_seen_values", p->fresh_rounds ? num(p->speedup_seen) : json_null()));
    json_object_set_new(json_object_get(o, "timing"), "process_offset", p->process_offset > 0 ? num(p->process_offset) : json_null());
    json_object_set_new(json_object_get(o, "timing"), "hidden_checks",
                        json_pack("{s:i, s:i, s:i, s:f}", "during", p->checks.during, "after", p->checks.after, "failed", p->checks.failed,
                                  "time_s", p->checks.time_s));
    json_object_set_new(json_object_get(o, "timing"), "partial_probe_s", p->partial_s > 0 ? num(p->partial_s) : json_null());
    const kbv_wall *w = &p->wall;
    json_object_set_new(json_object_get(o, "timing"), "wall",
                        w->measured ? json_pack("{s:i, s:i, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "calls_per_command", w->calls, "commands",
                                                w->commands, "batches", w->batches, "candidate_ms", num(w->cand_ms), "reference_ms",
                                                num(w->ref_ms), "overhead_ms", num(w->overhead_ms), "speedup", num(w->speedup), "predicted",
                                                num(w->predicted), "consistency", num(w->consistency), "capped_by", w->cap > 0 ? num(w->cap) : json_null(), "time_s", num(w->time_s))
                                    : json_null());
    const kbv_graph_wall *gw = &p->graph_wall;
    json_object_set_new(json_object_get(o, "timing"), "graph_wall",
                        gw->measured ? json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "candidate_ms", num(gw->cand_ms), "reference_ms", num(gw->ref_ms),
                                                 "overhead_ms", num(gw->overhead_ms), "speedup", num(gw->speedup), "predicted", num(gw->predicted),
                                                 "capped_by", gw->cap > 0 ? num(gw->cap) : json_null())
                                     : json_null());
    if (w->measured) {
        json_t *wj = json_object_get(json_object_get(o, "timing"), "wall");
        json_object_set_new(wj, "candidate_cpu_ms", w->cand_cpu_ms >= 0 ? num(w->cand_cpu_ms) : json_null());
        json_object_set_new(wj, "host_share", w->host_share >= 0 ? num(w->host_share) : json_null());
    }
    const kbv_memory *m = &r->memory;
    json_object_set_new(o, "memory",
                        json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:{s:o, s:o, s:o, s:o}}", "peak_bytes_candidate", bytes(m->peak_cand),
                                  "peak_bytes_reference", bytes(m->peak_ref), "peak_ratio", bytes_ratio(m->peak_cand, m->peak_ref),
                                  "persistent_bytes_candidate", bytes(m->pers_cand), "persistent_bytes_reference", bytes(m->pers_ref),
                                  "persistent_ratio", bytes_ratio(m->pers_cand, m->pers_ref), "torch", "peak_bytes_candidate",
                                  bytes(m->torch_peak_cand), "peak_bytes_reference", bytes(m->torch_peak_ref), "persistent_bytes_candidate",
                                  bytes(m->torch_pers_cand), "persistent_bytes_reference", bytes(m->torch_pers_ref)));
    /* the candidate's audit with its authored share (null where the call ran no kernel) */
    json_t *ac = r->audit_cand ? json_copy(r->audit_cand) : NULL;
    double share = audit_share(r->audit_cand);
    if (ac) json_object_set_new(ac, "authored_share", share >= 0 ? num(share) : json_null());
    json_object_set_new(o, "audit", json_pack("{s:o?, s:O?}", "candidate", ac, "reference", r->audit_ref));
    return o;
}

/* The "paper" object (docs/cli.md): KernelBench-Verified's verdict, times and memory. */
static json_t *paper_json(const kbv_paper *pp) {
    json_t *o = json_pack("{s:b, s:s, s:f, s:i, s:i, s:b}", "correct", pp->correct, "status", kbv_status_name(pp->status), "tolerance",
                          pp->tolerance, "trials", pp->trials, "trials_passed", pp->trials_passed, "standard_correct", pp->standard_correct);
    json_object_set_new(o, "hidden_correct", pp->variants_run ? json_boolean(pp->hidden_correct) : json_null());
    json_t *vs = json_array();
    for (int k = 0; k < KBV_PAPER_VARIANTS; k++) {
        const kbv_paper_variant *v = &pp->variants[k];
        json_array_append_new(vs, json_pack("{s:f, s:o, s:b, s:o}", "scale", v->scale, "passed", v->evaluated ? json_boolean(v->passed) : json_null(),
                                            "skipped", v->skipped, "detail", v->detail[0] ? text(v->detail) : json_null()));
    }
    json_object_set_new(o, "variants", vs);
    json_object_set_new(o, "time_ms",
                        pp->timed ? json_pack("{s:o, s:o, s:o, s:i, s:i}", "candidate", num(pp->time_cand_ms), "baseline_tf32", num(pp->time_tf32_ms),
                                              "baseline_fp32", num(pp->time_fp32_ms), "warmup", pp->warmup, "trials", pp->time_trials)
                                  : json_null());
    /* The paper's speedups: the mean baseline over the mean candidate time, correct only. */
    int sp = pp->timed && pp->correct && pp->time_cand_ms > 0;
    json_object_set_new(o, "speedup", sp ? num(pp->time_tf32_ms / pp->time_cand_ms) : json_null());
    json_object_set_new(o, "speedup_fp32", sp ? num(pp->time_fp32_ms / pp->time_cand_ms) : json_null());
    json_t *pc = pp->peak_cand >= 0 ? json_integer((json_int_t)pp->peak_cand) : json_null();
    json_t *pr = pp->peak_ref >= 0 ? json_integer((json_int_t)pp->peak_ref) : json_null();
    json_object_set_new(o, "memory",
                        json_pack("{s:o, s:o, s:o}", "candidate_peak_bytes", pc, "baseline_peak_bytes", pr, "ratio",
                                  pp->peak_cand > 0 && pp->peak_ref >= 0 ? num((double)pp->peak_ref / (double)pp->peak_cand) : json_null()));
    json_object_set_new(o, "max_abs_err", pp->judged ? num(pp->max_abs_err) : json_null());
    json_object_set_new(o, "detail", pp->detail[0] ? text(pp->detail) : json_null());
    return o;
}

json_t *result_to_json(const kbv_result *r) {
    json_t *o = json_object();
    json_object_set_new(o, "status", json_string(kbv_status_name(r->status)));
    json_object_set_new(o, "problem", file_json(&r->problem));
    json_object_set_new(o, "candidate", file_json(&r->candidate));
    json_object_set_new(o, "device", json_string(r->device));
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)r->seed);
    json_object_set_new(o, "seed", json_string(seed)); /* a string: 64-bit seeds exceed JSON's safe integers */
    json_t *cases = json_array();
    for (int i = 0; i < r->ncases; i++) {
        const kbv_case *c = &r->cases[i];
        snprintf(seed, sizeof seed, "%llu", (unsigned long long)c->seed);
        json_t *cj = json_pack("{s:s, s:s, s:s, s:b, s:b, s:b}", "distribution", c->distribution, "domain", c->domain[0] ? c->domain : "raw", "seed",
                               seed, "skipped", c->skipped, "evaluated", c->evaluated, "passed", c->passed);
        json_object_set_new(cj, "weights", json_boolean(c->weights));
        if (c->skipped) json_object_set_new(cj, "skip_reason", text(c->skip_reason));
        if (c->fallback_reason[0]) json_object_set_new(cj, "fallback_reason", text(c->fallback_reason));
        json_object_set_new(cj, "max_abs_err", c->evaluated ? num(c->max_abs_err) : json_null());
        json_object_set_new(cj, "max_rel_err", c->evaluated ? num(c->max_rel_err) : json_null());
        json_object_set_new(cj, "norm_rel_err", c->evaluated ? num(c->norm_rel_err) : json_null());
        if (c->klass >= 0) json_object_set_new(cj, "accuracy_class", json_string(class_name(c->klass)));
        if (verified_ran(r) && !c->skipped)
            json_object_set_new(cj, "tolerance",
                                json_pack("{s:f, s:o, s:o, s:o}", "k", 4.0, "norm_rel", num(c->tol_norm), "baseline_norm_rel_err",
                                          num(c->baseline_norm_rel_err), "strict_norm_rel_err", num(c->strict_norm_rel_err)));
        else if (!c->skipped) json_object_set_new(cj, "tolerance", json_pack("{s:o, s:o}", "atol", num(c->atol), "rtol", num(c->rtol)));
        if (c->detail[0]) json_object_set_new(cj, "detail", text(c->detail));
        if (c->t_reference_s > 0)
            json_object_set_new(cj, "time_s",
                                json_pack("{s:f, s:f, s:f}", "reference", c->t_reference_s, "candidate", c->t_candidate_s, "judge", c->t_judge_s));
        json_array_append_new(cases, cj);
    }
    json_object_set_new(o, "cases", cases);
    json_t *flags = json_array();
    for (int i = 0; i < r->nflags; i++)
        json_array_append_new(flags, json_pack("{s:s, s:s, s:o, s:O?}", "id", r->flags[i].id, "severity", severity_name(r->flags[i].severity),
                                               "message", text(r->flags[i].message), "evidence", r->flags[i].evidence));
    json_object_set_new(o, "flags", flags);
    json_object_set_new(o, "errors", text(r->errors.data ? r->errors.data : ""));
    json_object_set_new(o, "output",
                        json_pack("{s:o, s:o, s:o}", "candidate_stdout", text(r->candidate_stdout), "candidate_stderr", text(r->candidate_stderr),
                                  "reference_stderr", text(r->reference_stderr)));
    json_object_set_new(
        o, "environment",
        json_pack("{s:o, s:o, s:o, s:o}", "python", text(r->python), "torch", text(r->torch), "gpu", r->gpu[0] ? text(r->gpu) : json_null(),
                  "gpu_id", r->gpu_id[0] ? text(r->gpu_id) : json_null()));
    json_object_set_new(o, "protocol", json_string(r->protocol));
    json_object_set_new(o, "accuracy_class", r->klass >= 0 ? json_string(class_name(r->klass)) : json_null());
    if (r->oracle[0]) json_object_set_new(o, "oracle", text(r->oracle));
    if (r->inputs) json_object_set(o, "inputs", r->inputs);
    if (r->inspect) json_object_set(o, "inspect", r->inspect);
    if (r->sandbox) json_object_set(o, "sandbox", r->sandbox);
    if (verified_ran(r))
        json_object_set_new(o, "weights",
                            json_pack("{s:b, s:b, s:I, s:I, s:i, s:o, s:f, s:o}", "matched", r->weights_matched, "loaded", r->weights_loaded, "redrawn",
                                      (json_int_t)r->redraw.redrawn, "kept", (json_int_t)r->redraw.kept, "cases", r->redraw.cases, "skipped",
                                      r->redraw.skipped[0] ? text(r->redraw.skipped) : json_null(), "time_s", r->redraw.time_s, "print",
                                      r->redraw.print[0] ? json_string(r->redraw.print) : json_null()));
    json_object_set_new(o, "reference_reused", json_boolean(r->reference_reused));
    /* A degenerate problem: the reference's output one constant over every valid case (at
     * least 3) -- the same for any input, so no speedup on it means anything. */
    const int dg = r->degenerate.cases >= 3;
    json_object_set_new(o, "degenerate",
                        dg ? json_pack("{s:b, s:o, s:i}", "constant", !r->degenerate.varies, "value",
                                       r->degenerate.varies ? json_null() : num(r->degenerate.value), "cases", r->degenerate.cases)
                           : json_null());
    if (verified_ran(r)) {
        json_t *pj = perf_json(r);
        json_object_update(o, pj);
        json_decref(pj);
    }
    if (r->standard.ran) {
        const kbv_standard *st = &r->standard;
        json_t *sj = json_pack("{s:b, s:s, s:f, s:i, s:i, s:o, s:o}", "correct", st->correct, "status", kbv_status_name(st->status), "tolerance",
                               st->tolerance, "trials", st->trials, "trials_passed", st->trials_passed, "max_abs_err", num(st->max_abs_err), "detail",
                               text(st->detail));
        /* KernelBench's speedup: the mean of its trials, reference / candidate, correct only. */
        json_object_set_new(sj, "speedup", st->timed && st->correct && st->time_cand_ms > 0 ? num(st->time_ref_ms / st->time_cand_ms) : json_null());
        json_object_set_new(
            sj, "time_ms",
            st->timed ? json_pack("{s:o, s:o, s:i}", "reference", num(st->time_ref_ms), "candidate", num(st->time_cand_ms), "trials", st->time_trials)
                      : json_null());
        json_object_set_new(o, "standard", sj);
    }
    if (r->paper.ran) json_object_set_new(o, "paper", paper_json(&r->paper));
    json_object_set_new(o, "wall_s", json_real(r->wall_s));
    json_object_set_new(o, "cpu_s",
                        r->cpu_kbv_s >= 0 && r->cpu_workers_s >= 0 ? json_pack("{s:f, s:f}", "kbv", r->cpu_kbv_s, "workers", r->cpu_workers_s)
                                                                    : json_null());
    json_t *ph = json_object();
    for (int i = 0; i < PHASE_COUNT; i++) json_object_set_new(ph, kbv_phase_names[i], r->phase_s[i] >= 0 ? json_real(r->phase_s[i]) : json_null());
    json_object_set_new(o, "phases_s", ph);
    if (r->steps) json_object_set(o, "steps_s", r->steps);
    return o;
}

static void print_raw(const kbv_result *r, FILE *f) {
    int check = r->status == KBV_PROBLEM_OK || !r->candidate.path[0];
    fprintf(f, "kbv %s: %s\n", check ? "check" : "eval", kbv_status_name(r->status));
    fprintf(f, "  problem    %s (sha256 %.12s)\n", r->problem.path, r->problem.sha256[0] ? r->problem.sha256 : "-");
    if (!check) fprintf(f, "  candidate  %s (sha256 %.12s)\n", r->candidate.path, r->candidate.sha256[0] ? r->candidate.sha256 : "-");
    fprintf(f, "  device     %s%s%s%s, torch %s, seed %llu\n", r->device, r->gpu[0] ? " (" : "", r->gpu, r->gpu[0] ? ")" : "",
            r->torch[0] ? r->torch : "?", (unsigned long long)r->seed);
    if (r->oracle[0] && strcmp(r->oracle, "float64") != 0) fprintf(f, "  oracle     %s\n", r->oracle);
    for (int i = 0; i < r->ncases; i++) {
        const kbv_case *c = &r->cases[i];
        char what[80];
        int show = c->domain[0] && strcmp(c->domain, "raw") && strcmp(c->distribution, "nominal") && strcmp(c->distribution, "weights_nominal");
        snprintf(what, sizeof what, "%s%s%s", c->distribution, show ? "/" : "", show ? c->domain : "");
        if (c->skipped) {
            fprintf(f, "  case %-2d %-26s skipped: %s\n", i, what, c->skip_reason);
            continue;
        }
        if (!c->evaluated) {
            fprintf(f, "  case %-2d %-26s %s\n", i, what, check ? "reference ok" : "not evaluated");
            continue;
        }
        if (!verified_ran(r))
            fprintf(f, "  case %-2d %-26s %-4s  max_abs_err %.3g  (atol %g, rtol %g)%s%s\n", i, what, c->passed ? "pass" : "FAIL", c->max_abs_err,
                    c->atol, c->rtol, c->detail[0] ? "\n      " : "", c->detail);
        else
            fprintf(f, "  case %-2d %-26s %-4s  err %.3g (bound %.3g; PyTorch tf32 %.3g, fp32 %.3g)  %s%s%s\n", i, what, c->passed ? "pass" : "FAIL",
                    c->norm_rel_err, c->tol_norm, c->baseline_norm_rel_err, c->strict_norm_rel_err, c->klass >= 0 ? class_name(c->klass) : "",
                    c->detail[0] ? "\n      " : "", c->detail);
    }
    if (r->klass >= 0) fprintf(f, "  accuracy   %s\n", class_name(r->klass));
    const kbv_perf *pf = &r->perf;
    if (pf->measured) {
        fprintf(f, "  speedup    %.3fx [%.3f, %.3f] vs PyTorch%s (%d rounds, %s)\n", pf->speedup.value, pf->speedup.lo, pf->speedup.hi,
                strcmp(r->device, "cuda") == 0 ? " eager, TF32 on" : "", pf->rounds, pf->stop);
        if (pf->speedup_strict.measured) fprintf(f, "             %.3fx vs PyTorch fp32 strict (TF32 off)\n", pf->speedup_strict.value);
        if (pf->speedup_compile.measured) fprintf(f, "             %.3fx vs torch.compile\n", pf->speedup_compile.value);
        fprintf(f, "  time       candidate %.4g ms, reference %.4g ms (medians, %s)\n", pf->cand.median, pf->ref.median, pf->clock);
        if (pf->cand_graph.n && pf->ref_graph.n)
            fprintf(f, "             graph replay: candidate %.4g ms, reference %.4g ms\n", pf->cand_graph.median, pf->ref_graph.median);
        if (pf->empty.n) fprintf(f, "             timer floor: an empty kernel measures %.3g us\n", pf->empty.median * 1e3);
    } else if (pf->note[0]) {
        fprintf(f, "  speedup    not measured: %s\n", pf->note);
    }
    const kbv_memory *m = &r->memory;
    if (m->peak_cand >= 0 && m->peak_ref >= 0)
        fprintf(f, "  memory     peak over the call: candidate %lld B, reference %lld B (CUPTI); torch: %lld B, %lld B\n", m->peak_cand, m->peak_ref,
                m->torch_peak_cand, m->torch_peak_ref);
    double share = audit_share(r->audit_cand);
    if (share >= 0)
        fprintf(f, "  authored   %.3f of the call's GPU time in the candidate's own kernels (CUPTI; the library policy's threshold is %g)\n", share,
                PERF_AUTHORED_SHARE_MIN);
    if (r->standard.ran)
        fprintf(f, "  standard   %s (KernelBench's check: %d of %d trials within %g)%s%s\n", r->standard.correct ? "correct" : "incorrect",
                r->standard.trials_passed, r->standard.trials, r->standard.tolerance, r->standard.detail[0] ? "; " : "", r->standard.detail);
    if (r->standard.timed && r->standard.correct && r->standard.time_cand_ms > 0)
        fprintf(f, "             KernelBench's speedup %.3fx (mean of %d trials, TF32 off)\n", r->standard.time_ref_ms / r->standard.time_cand_ms,
                r->standard.time_trials);
    const kbv_paper *pp = &r->paper;
    if (pp->ran) {
        int kept = 0, passed = 0;
        for (int k = 0; k < KBV_PAPER_VARIANTS; k++) kept += pp->variants[k].evaluated, passed += pp->variants[k].evaluated && pp->variants[k].passed;
        fprintf(f, "  paper      %s (KernelBench-Verified's check: %d of %d trials within %g", pp->correct ? "correct" : "incorrect", pp->trials_passed,
                pp->trials, pp->tolerance);
        if (pp->variants_run) fprintf(f, ", %d of %d kept input variants", passed, kept);
        fprintf(f, ")%s%s\n", pp->detail[0] ? "; " : "", pp->detail);
    }
    if (pp->timed && pp->correct && pp->time_cand_ms > 0)
        fprintf(f, "             the paper's speedup %.3fx vs TF32, %.3fx vs fp32 (mean of %d trials, %s)\n", pp->time_tf32_ms / pp->time_cand_ms,
                pp->time_fp32_ms / pp->time_cand_ms, pp->time_trials, strcmp(r->device, "cuda") == 0 ? "CUDA events, no L2 flush" : "monotonic clock");
    if (pp->peak_cand > 0 && pp->peak_ref >= 0)
        fprintf(f, "             the paper's memory: peak %lld B, baseline %lld B (ratio %.3f)\n", pp->peak_cand, pp->peak_ref,
                (double)pp->peak_ref / (double)pp->peak_cand);
    for (int i = 0; i < r->nflags; i++) fprintf(f, "  flag [%s] %s: %s\n", severity_name(r->flags[i].severity), r->flags[i].id, r->flags[i].message);
    if (r->errors.len) {
        /* The last lines carry the exception; keep the summary short. */
        const char *e = r->errors.data;
        size_t n = r->errors.len;
        const char *start = e;
        int lines = 0;
        for (const char *p = e + n; p > e; p--)
            if (p[-1] == '\n' && ++lines == 12) {
                start = p;
                break;
            }
        fprintf(f, "  errors%s:\n", start != e ? " (last lines; --json has all)" : "");
        for (const char *p = start; *p;) {
            const char *nl = strchr(p, '\n');
            int len = nl ? (int)(nl - p) : (int)strlen(p);
            fprintf(f, "    %.*s\n", len, p);
            p = nl ? nl + 1 : p + len;
        }
    }
    fprintf(f, "  time       %.1f s\n", r->wall_s);
}

/* The summary goes out through kbv_fputs_safe: errors, findings and notes hold a worker's text. */
void result_print(const kbv_result *r, FILE *f) {
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) return;
    print_raw(r, m);
    if (fclose(m) == 0) kbv_fputs_safe(buf, f);
    free(buf);
}
