/* reply.c -- decode and validate every worker reply (see reply.h).
 *
 * One decoder per command, each reading only the fields that command's reply has
 * (docs/protocol.md) through the checked getters below. A getter that finds a field of the
 * wrong type, out of its range, too long or with characters outside its set fails the whole
 * reply; an absent optional field leaves its default. Nothing here trusts an array's length
 * or a string's size: both are capped before anything is allocated.
 */
#include "reply.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

#define MSG_CAP (64 * 1024) /* a failure's message or traceback: longer ones are cut */

/* ---- checked getters -------------------------------------------------------------------- */

static int bad(kbv_err *err, const char *field, const char *why) { return kbv_seterr(err, "reply field %.40s: %s", field, why); }

/* Optional boolean: absent leaves *out. */
static int get_bool(const json_t *o, const char *k, int *out, kbv_err *err) {
    const json_t *v = json_object_get(o, k);
    if (!v) return 0;
    if (!json_is_boolean(v)) return bad(err, k, "not a boolean");
    *out = json_is_true(v);
    return 0;
}

/* Optional integer in [lo, hi]; *has (may be NULL) set when present. */
static int get_int(const json_t *o, const char *k, long long lo, long long hi, long long *out, int *has, kbv_err *err) {
    const json_t *v = json_object_get(o, k);
    if (!v) return 0;
    if (!json_is_integer(v)) return bad(err, k, "not an integer");
    long long x = json_integer_value(v);
    if (x < lo || x > hi) return bad(err, k, "out of range");
    *out = x;
    if (has) *has = 1;
    return 0;
}

/* Optional finite number; *has (may be NULL) set when present. */
static int get_num(const json_t *o, const char *k, double *out, int *has, kbv_err *err) {
    const json_t *v = json_object_get(o, k);
    if (!v) return 0;
    if (!json_is_number(v) || !isfinite(json_number_value(v))) return bad(err, k, "not a finite number");
    *out = json_number_value(v);
    if (has) *has = 1;
    return 0;
}

enum { CS_ANY, CS_ID, CS_HEX };

static int charset_ok(const char *s, int cs) {
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (cs == CS_ID && !((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_')) return 0;
        if (cs == CS_HEX && !((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) return 0;
    }
    return 1;
}

/* A string value v into out[n] (a longer one is an error unless cut is set). */
static int str_value(const json_t *v, const char *k, char *out, size_t n, int cs, int cut, kbv_err *err) {
    if (!json_is_string(v)) return bad(err, k, "not a string");
    const char *s = json_string_value(v);
    if (!cut && strlen(s) >= n) return bad(err, k, "too long");
    if (!charset_ok(s, cs)) return bad(err, k, "characters outside its set");
    snprintf(out, n, "%s", s);
    return 0;
}

/* Optional string field. */
static int get_str(const json_t *o, const char *k, char *out, size_t n, int cs, int cut, kbv_err *err) {
    const json_t *v = json_object_get(o, k);
    return v ? str_value(v, k, out, n, cs, cut, err) : 0;
}

/* Optional array of at most max elements: *a NULL when absent. */
static int get_array(const json_t *o, const char *k, size_t max, const json_t **a, kbv_err *err) {
    *a = json_object_get(o, k);
    if (!*a) return 0;
    if (!json_is_array(*a)) return bad(err, k, "not an array");
    if (json_array_size(*a) > max) return bad(err, k, "too many elements");
    return 0;
}

static char *dup_capped(const char *s) {
    size_t n = strlen(s);
    if (n > MSG_CAP) n = MSG_CAP;
    char *d = malloc(n + 1);
    if (d) memcpy(d, s, n), d[n] = '\0';
    return d;
}

/* ---- descriptors and fingerprints -------------------------------------------------------- */

static int value_from_json(const json_t *d, reply_value *v, int named, kbv_err *err) {
    char kind[16] = "";
    memset(v, 0, sizeof *v);
    if (!json_is_object(d)) return bad(err, "values", "a descriptor is not an object");
    if (get_str(d, "kind", kind, sizeof kind, CS_ID, 0, err) < 0) return -1;
    if (named && get_str(d, "name", v->name, sizeof v->name, CS_ANY, 0, err) < 0) return -1;
    if (strcmp(kind, "tensor") == 0) {
        v->is_tensor = 1;
        if (!json_object_get(d, "path")) return bad(err, "values", "a tensor descriptor has no path");
        return get_str(d, "path", v->path, sizeof v->path, CS_ANY, 0, err);
    }
    if (strcmp(kind, "scalar") != 0) return bad(err, "values", "a descriptor is neither a tensor nor a scalar");
    const json_t *x = json_object_get(d, "value");
    if (x && !json_is_number(x) && !json_is_boolean(x) && !json_is_null(x)) return bad(err, "values", "a scalar is not a number");
    v->value = json_number_value(x);
    v->scalar = x ? json_incref((json_t *)x) : json_null();
    return 0;
}

int reply_values_from_json(const json_t *a, reply_values *v, kbv_err *err) {
    memset(v, 0, sizeof *v);
    if (!a) return 0;
    if (!json_is_array(a) || json_array_size(a) > REPLY_MAX_VALUES) return bad(err, "values", "not an array of at most 4096");
    v->present = 1;
    v->v = calloc(json_array_size(a) + 1, sizeof *v->v);
    if (!v->v) return kbv_seterr(err, "out of memory");
    for (size_t j = 0; j < json_array_size(a); j++, v->n++)
        if (value_from_json(json_array_get(a, j), &v->v[j], 1, err) < 0) return -1;
    return 0;
}

void reply_values_free(reply_values *v) {
    for (int j = 0; v->v && j < v->n; j++) json_decref(v->v[j].scalar);
    free(v->v);
    memset(v, 0, sizeof *v);
}

int reply_values_copy(reply_values *dst, const reply_values *src) {
    memset(dst, 0, sizeof *dst);
    dst->present = src->present;
    dst->v = calloc((size_t)src->n + 1, sizeof *dst->v);
    if (!dst->v) return -1;
    for (int j = 0; j < src->n; j++) {
        dst->v[j] = src->v[j];
        if (dst->v[j].scalar) json_incref(dst->v[j].scalar);
    }
    dst->n = src->n;
    return 0;
}

json_t *reply_values_to_json(const reply_values *v) {
    json_t *a = json_array();
    for (int j = 0; a && j < v->n; j++) {
        const reply_value *x = &v->v[j];
        json_t *d = x->is_tensor ? json_pack("{s:s, s:s}", "kind", "tensor", "path", x->path)
                                 : json_pack("{s:s, s:O}", "kind", "scalar", "value", x->scalar ? x->scalar : json_null());
        if (d && x->name[0]) json_object_set_new(d, "name", json_string(x->name));
        json_array_append_new(a, d);
    }
    return a;
}

int reply_prints_from_json(const json_t *a, reply_prints *p, kbv_err *err) {
    memset(p, 0, sizeof *p);
    if (!a) return 0;
    if (!json_is_array(a) || json_array_size(a) > REPLY_MAX_VALUES) return bad(err, "fingerprints", "not an array of at most 4096");
    size_t n = json_array_size(a);
    p->present = 1;
    p->fp = calloc(n + 1, sizeof *p->fp);
    p->has = calloc(n + 1, 1);
    if (!p->fp || !p->has) return kbv_seterr(err, "out of memory");
    for (size_t j = 0; j < n; j++, p->n++) {
        const json_t *e = json_array_get(a, j);
        if (json_is_null(e)) continue;
        char hex[17];
        if (str_value(e, "fingerprints", hex, sizeof hex, CS_HEX, 0, err) < 0) return -1;
        if (strlen(hex) != 16) return bad(err, "fingerprints", "not 16 hex digits");
        p->fp[j] = strtoull(hex, NULL, 16);
        p->has[j] = 1;
    }
    return 0;
}

json_t *reply_prints_to_json(const reply_prints *p) {
    if (!p->present) return json_null();
    json_t *a = json_array();
    for (int j = 0; a && j < p->n; j++) {
        char hex[17];
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)p->fp[j]);
        json_array_append_new(a, p->has[j] ? json_string(hex) : json_null());
    }
    return a;
}

void reply_prints_free(reply_prints *p) {
    free(p->fp), free(p->has);
    memset(p, 0, sizeof *p);
}

int reply_prints_equal(const reply_prints *a, const reply_prints *b) {
    if (a->present != b->present || a->n != b->n) return 0;
    for (int j = 0; j < a->n; j++)
        if (a->has[j] != b->has[j] || (a->has[j] && a->fp[j] != b->fp[j])) return 0;
    return 1;
}

/* ---- the parts of each command ------------------------------------------------------------- */

static int names_from(const json_t *o, const char *k, char (**out)[256], int *n, kbv_err *err) {
    const json_t *a;
    if (get_array(o, k, REPLY_MAX_VALUES, &a, err) < 0) return -1;
    for (size_t j = 0; j < json_array_size(a); j++) {
        char(*grown)[256] = realloc(*out, sizeof **out * (size_t)(*n + 1));
        if (!grown) return kbv_seterr(err, "out of memory");
        *out = grown;
        if (str_value(json_array_get(a, j), k, (*out)[*n], 256, CS_ANY, 0, err) < 0) return -1;
        (*n)++;
    }
    return 0;
}

/* A name list as JSON again. */
static json_t *names_json(char (*names)[256], int from, int to) {
    json_t *a = json_array();
    for (int j = from; a && j < to; j++) json_array_append_new(a, json_string(names[j]));
    return a;
}

static int dec_inspect(const json_t *m, kbv_reply *r, kbv_err *err) {
    const json_t *ins = json_object_get(m, "inspect"), *fs;
    if (!json_is_object(ins)) return bad(err, "inspect", "not an object");
    int load_inline = 0, nlaunched = 0;
    char syntax[512] = "";
    char(*launched)[256] = NULL;
    if (get_bool(ins, "load_inline", &load_inline, err) < 0 || get_str(ins, "syntax_error", syntax, sizeof syntax, CS_ANY, 1, err) < 0 ||
        names_from(ins, "kernels", &r->inspect.kernels, &r->inspect.nkernels, err) < 0)
        return free(launched), -1;
    int ncuda = r->inspect.nkernels;
    if (names_from(ins, "triton_kernels", &r->inspect.kernels, &r->inspect.nkernels, err) < 0 ||
        names_from(ins, "launched", &launched, &nlaunched, err) < 0 || get_array(ins, "findings", REPLY_MAX_GUARD, &fs, err) < 0)
        return free(launched), -1;
    r->inspect.findings = calloc(json_array_size(fs) + 1, sizeof *r->inspect.findings);
    if (!r->inspect.findings) return free(launched), kbv_seterr(err, "out of memory");
    json_t *docf = json_array();
    for (size_t i = 0; i < json_array_size(fs); i++) {
        const json_t *f = json_array_get(fs, i);
        char id[49] = "", sev[16] = "";
        long long line = 0;
        int k = -1;
        if (!json_is_object(f) || get_str(f, "id", id, sizeof id, CS_ID, 0, err) < 0 || get_str(f, "severity", sev, sizeof sev, CS_ID, 0, err) < 0 ||
            get_int(f, "line", 0, INT32_MAX, &line, NULL, err) < 0 || (k = finding_lookup(id)) < 0 ||
            strcmp(finding_catalog[k].step, "inspect") != 0 ||
            get_str(f, "detail", r->inspect.findings[i].detail, sizeof r->inspect.findings[i].detail, CS_ANY, 1, err) < 0) {
            if (!err->msg[0] || k < 0) bad(err, "inspect.findings", "an id that is not a finding of the inspector");
            json_decref(docf), free(launched);
            return -1;
        }
        r->inspect.findings[i].id = (kbv_finding_id)k;
        r->inspect.findings[i].line = line;
        r->inspect.nfindings++;
        json_array_append_new(docf,
                              json_pack("{s:s, s:s, s:I, s:s}", "id", finding_catalog[k].id, "severity", severity_name(finding_catalog[k].severity),
                                        "line", (json_int_t)line, "detail", r->inspect.findings[i].detail));
    }
    r->inspect.doc =
        json_pack("{s:b, s:o, s:o, s:o, s:o}", "load_inline", load_inline, "kernels", names_json(r->inspect.kernels, 0, ncuda), "launched",
                  names_json(launched, 0, nlaunched), "triton_kernels", names_json(r->inspect.kernels, ncuda, r->inspect.nkernels), "findings", docf);
    if (r->inspect.doc && syntax[0]) json_object_set_new(r->inspect.doc, "syntax_error", json_string(syntax));
    free(launched);
    return 0;
}

static int range_of(const json_t *d, const char *k, double out[2], int *has, kbv_err *err) {
    const json_t *a = json_object_get(d, k);
    if (!a) return 0;
    if (!json_is_array(a) || json_array_size(a) != 2 || !json_is_number(json_array_get(a, 0)) || !json_is_number(json_array_get(a, 1)))
        return bad(err, k, "not a pair of numbers");
    out[0] = json_number_value(json_array_get(a, 0)), out[1] = json_number_value(json_array_get(a, 1));
    *has = 1;
    return 0;
}

static int dec_load(const json_t *m, kbv_reply *r, kbv_err *err) {
    const json_t *c = json_object_get(m, "constraints");
    if (!c) return 0;
    if (!json_is_object(c)) return bad(err, "constraints", "not an object");
    const char *key;
    json_t *d;
    r->constraints = json_object();
    json_object_foreach((json_t *)c, key, d) {
        char *end;
        long idx = strtol(key, &end, 10);
        if (*end || end == key || idx < 0 || idx >= REPLY_MAX_VALUES || !json_is_object(d)) continue; /* not an input's */
        if (idx >= r->ndecl) {
            reply_decl *g = realloc(r->decl, sizeof *g * (size_t)(idx + 1));
            if (!g) return kbv_seterr(err, "out of memory");
            memset(g + r->ndecl, 0, sizeof *g * (size_t)(idx + 1 - r->ndecl));
            r->decl = g, r->ndecl = (int)idx + 1;
        }
        reply_decl *x = &r->decl[idx];
        char dom[16] = "";
        x->present = 1;
        if (get_bool(d, "fixed", &x->fixed, err) < 0 || get_bool(d, "symmetric", &x->symmetric, err) < 0 ||
            get_str(d, "domain", dom, sizeof dom, CS_ANY, 1, err) < 0 || range_of(d, "range", x->range, &x->has_range, err) < 0 ||
            range_of(d, "int_range", x->int_range, &x->has_int_range, err) < 0)
            return -1;
        x->positive = strcmp(dom, "positive") == 0;
        json_t *o = json_pack("{s:b, s:b}", "fixed", x->fixed, "symmetric", x->symmetric);
        if (dom[0]) json_object_set_new(o, "domain", json_string(dom));
        if (x->has_range) json_object_set_new(o, "range", json_pack("[f, f]", x->range[0], x->range[1]));
        if (x->has_int_range) json_object_set_new(o, "int_range", json_pack("[f, f]", x->int_range[0], x->int_range[1]));
        json_object_set_new(r->constraints, key, o);
    }
    return 0;
}

static int dec_build(const json_t *m, kbv_reply *r, kbv_err *err) {
    return get_int(m, "persistent_bytes", -(1LL << 50), 1LL << 50, &r->persistent_bytes, &r->has_persistent, err) < 0 ||
                   get_int(m, "torch_persistent_bytes", -(1LL << 50), 1LL << 50, &r->torch_persistent_bytes, &r->has_torch_persistent, err) < 0
               ? -1
               : 0;
}

static int dec_probe(const json_t *m, kbv_reply *r, kbv_err *err) {
    const json_t *a;
    if (get_array(m, "inputs", REPLY_MAX_VALUES, &a, err) < 0) return -1;
    r->inputs = calloc(json_array_size(a) + 1, sizeof *r->inputs);
    r->probe_doc = json_array();
    if (!r->inputs || !r->probe_doc) return kbv_seterr(err, "out of memory");
    for (size_t j = 0; j < json_array_size(a); j++, r->ninputs++) {
        const json_t *e = json_array_get(a, j), *sh = NULL;
        reply_probe_input *p = &r->inputs[j];
        char kind[16] = "";
        if (!json_is_object(e) || get_str(e, "kind", kind, sizeof kind, CS_ID, 0, err) < 0) return bad(err, "inputs", "not an object with a kind");
        if (strcmp(kind, "tensor") != 0) {
            const json_t *v = json_object_get(e, "value");
            if (v && !json_is_number(v) && !json_is_boolean(v) && !json_is_null(v)) return bad(err, "inputs", "a scalar is not a number");
            json_array_append_new(r->probe_doc, json_pack("{s:s, s:O}", "kind", "scalar", "value", v ? v : json_null()));
            continue;
        }
        p->is_tensor = 1;
        if (get_bool(e, "consistent", &p->consistent, err) < 0 || get_bool(e, "fixed", &p->fixed, err) < 0 ||
            get_bool(e, "nonfinite", &p->nonfinite, err) < 0 || get_bool(e, "symmetric", &p->symmetric, err) < 0 ||
            get_str(e, "dtype", p->dtype, sizeof p->dtype, CS_ID, 0, err) < 0 ||
            get_num(e, "true_fraction", &p->true_fraction, &p->has_true_fraction, err) < 0 ||
            get_str(e, "zero_mask", p->zero_mask, sizeof p->zero_mask, CS_ANY, 0, err) < 0 || get_array(e, "shape", 8, &sh, err) < 0 ||
            get_int(e, "zeros", 0, INT64_MAX, &p->zeros, NULL, err) < 0 || get_int(e, "probes", 0, 1 << 20, &p->probes, NULL, err) < 0)
            return -1;
        const json_t *mn = json_object_get(e, "min"), *mx = json_object_get(e, "max");
        if ((mn && !json_is_null(mn) && get_num(e, "min", &p->min, &p->has_min, err) < 0) ||
            (mx && !json_is_null(mx) && get_num(e, "max", &p->max, &p->has_max, err) < 0))
            return -1;
        p->ndim = (int)json_array_size(sh);
        json_t *shape = json_array();
        for (int d = 0; d < p->ndim; d++) {
            const json_t *x = json_array_get(sh, (size_t)d);
            if (!json_is_integer(x) || json_integer_value(x) < 0) return json_decref(shape), bad(err, "shape", "not a list of sizes");
            p->shape[d] = json_integer_value(x);
            json_array_append_new(shape, json_integer(p->shape[d]));
        }
        /* the probe's findings, rebuilt from what was checked above (src/probe.h) */
        json_t *o =
            json_pack("{s:s, s:o, s:b, s:b, s:b, s:b, s:I, s:I}", "dtype", p->dtype, "shape", shape, "consistent", p->consistent, "fixed", p->fixed,
                      "nonfinite", p->nonfinite, "symmetric", p->symmetric, "zeros", (json_int_t)p->zeros, "probes", (json_int_t)p->probes);
        json_object_set_new(o, "min", p->has_min ? json_real(p->min) : json_null());
        json_object_set_new(o, "max", p->has_max ? json_real(p->max) : json_null());
        if (p->has_true_fraction) json_object_set_new(o, "true_fraction", json_real(p->true_fraction));
        json_object_set_new(o, "kind", json_string("tensor"));
        if (p->zero_mask[0]) json_object_set_new(o, "zero_mask", json_string(p->zero_mask));
        json_array_append_new(r->probe_doc, o);
    }
    return 0;
}

static int dec_forward(const json_t *m, kbv_reply *r, kbv_err *err) {
    const json_t *facts, *al;
    if (reply_values_from_json(json_object_get(m, "values"), &r->values, err) < 0 ||
        get_int(m, "count", 0, REPLY_MAX_VALUES, &r->count, &r->has_count, err) < 0 ||
        reply_prints_from_json(json_object_get(m, "inputs_after"), &r->after, err) < 0 || get_array(m, "facts", REPLY_MAX_VALUES, &facts, err) < 0 ||
        get_array(m, "aliases", REPLY_MAX_VALUES, &al, err) < 0)
        return -1;
    r->facts = calloc(json_array_size(facts) + 1, sizeof *r->facts);
    r->aliases = calloc(json_array_size(al) + 1, sizeof *r->aliases);
    if (!r->facts || !r->aliases) return kbv_seterr(err, "out of memory");
    for (size_t k = 0; k < json_array_size(facts); k++, r->nfacts++) {
        const json_t *e = json_array_get(facts, k);
        char v[64] = "";
        if (!json_is_object(e) || get_bool(e, "nonfinite", &r->facts[k].nonfinite, err) < 0 ||
            get_bool(e, "constant", &r->facts[k].constant, err) < 0 || get_str(e, "value", v, sizeof v, CS_ANY, 0, err) < 0)
            return bad(err, "facts", "not an output's facts");
        if (!v[0]) return bad(err, "facts", "an output's facts have no value");
        r->facts[k].value = strtod(v, NULL);
    }
    for (size_t q = 0; q < json_array_size(al); q++, r->naliases++) {
        const json_t *p = json_array_get(al, q);
        if (!json_is_array(p) || json_array_size(p) != 2 || !json_is_integer(json_array_get(p, 0)) || !json_is_integer(json_array_get(p, 1)) ||
            json_integer_value(json_array_get(p, 0)) < 0 || json_integer_value(json_array_get(p, 0)) >= REPLY_MAX_VALUES ||
            json_integer_value(json_array_get(p, 1)) < 0 || json_integer_value(json_array_get(p, 1)) >= REPLY_MAX_VALUES)
            return bad(err, "aliases", "not [output, input] pairs");
        r->aliases[q][0] = (int)json_integer_value(json_array_get(p, 0));
        r->aliases[q][1] = (int)json_integer_value(json_array_get(p, 1));
    }
    return 0;
}

/* standard and paper (their trials), standard_time and paper_time (their time_ms) reply in the
 * same shape. */
static int dec_standard(const json_t *m, kbv_reply *r, kbv_err *err) {
    const json_t *a, *tm = json_object_get(m, "time_ms");
    if (get_array(m, "trials", REPLY_MAX_TRIALS, &a, err) < 0) return -1;
    r->trials = calloc(json_array_size(a) + 1, sizeof *r->trials);
    if (!r->trials) return kbv_seterr(err, "out of memory");
    for (size_t t = 0; t < json_array_size(a); t++, r->ntrials++) {
        const json_t *e = json_array_get(a, t);
        if (!json_is_object(e) || get_int(e, "seed", INT64_MIN, INT64_MAX, &r->trials[t].seed, NULL, err) < 0 ||
            reply_values_from_json(json_object_get(e, "ref"), &r->trials[t].ref, err) < 0 ||
            reply_values_from_json(json_object_get(e, "new"), &r->trials[t].cand, err) < 0)
            return err->msg[0] ? -1 : bad(err, "trials", "not a trial");
    }
    if (tm) {
        if (!json_is_object(tm) || get_num(tm, "reference", &r->time_ref_ms, NULL, err) < 0 ||
            get_num(tm, "candidate", &r->time_cand_ms, NULL, err) < 0 || get_int(tm, "trials", 0, 1 << 30, &r->time_trials, NULL, err) < 0)
            return err->msg[0] ? -1 : bad(err, "time_ms", "not an object");
        r->has_time = 1;
    }
    return 0;
}

/* paper_memory: torch's max_memory_allocated over one call, the measure the audit's
 * torch_peak_bytes holds too (there less the bytes before the call); absent on the CPU. */
static int dec_paper_memory(const json_t *m, kbv_reply *r, kbv_err *err) {
    return get_int(m, "torch_peak_bytes", 0, 1LL << 60, &r->audit.torch_peak_bytes, &r->audit.has_torch_peak, err);
}

static int dec_bench(const json_t *m, kbv_reply *r, kbv_err *err) {
    const json_t *a;
    if (get_array(m, "ms", REPLY_MAX_SAMPLES, &a, err) < 0) return -1;
    r->ms = calloc(json_array_size(a) + 1, sizeof *r->ms);
    if (!r->ms) return kbv_seterr(err, "out of memory");
    for (size_t i = 0; i < json_array_size(a); i++, r->nms++) {
        const json_t *v = json_array_get(a, i);
        if (!json_is_number(v) || !isfinite(json_number_value(v))) return bad(err, "ms", "not a list of numbers");
        r->ms[i] = json_number_value(v);
    }
    const long long big = 1LL << 40;
    if (get_int(m, "throttled", 0, big, &r->throttled, NULL, err) < 0 || get_int(m, "cushion_expired", 0, big, &r->cushion_expired, NULL, err) < 0 ||
        get_int(m, "held", 0, 1 << 20, &r->held, NULL, err) < 0 || get_int(m, "graphs", 0, 1 << 20, &r->graphs, NULL, err) < 0 ||
        get_bool(m, "fresh", &r->fresh, err) < 0 || get_bool(m, "fresh_failed", &r->fresh_failed, err) < 0 ||
        get_num(m, "warmup_last_ms", &r->warmup_last_ms, &r->has_warmup_last, err) < 0)
        return -1;
    return 0;
}

/* The audit: the fields kbv decides on, and the whole record rebuilt for the result. */
static int dec_audit(const json_t *m, kbv_reply *r, kbv_err *err) {
    static const char *const ints[] = {"dropped",     "kernels_per_call", "authored_kernels", "authored_ns", "library_ns",
                                       "span_ns",     "after_stop",       "other_stream",     "peak_bytes",  "footprint_bytes",
                                       "allocations", "torch_peak_bytes", "empty_kernel_ns"};
    const long long big = 1LL << 60;
    long long v[sizeof ints / sizeof *ints] = {0};
    int has[sizeof ints / sizeof *ints] = {0};
    json_t *doc = json_object();
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
        if (get_int(m, ints[i], -big, big, &v[i], &has[i], err) < 0) return json_decref(doc), -1;
        if (has[i]) json_object_set_new(doc, ints[i], json_integer(v[i]));
    }
    if (get_bool(m, "markers", &r->audit.markers, err) < 0) return json_decref(doc), -1;
    json_object_set_new(doc, "markers", json_boolean(r->audit.markers));
    r->audit.dropped = v[0], r->audit.kernels_per_call = v[1], r->audit.authored_kernels = v[2], r->audit.authored_ns = v[3],
    r->audit.library_ns = v[4];
    r->audit.after_stop = v[6], r->audit.other_stream = v[7], r->audit.peak_bytes = v[8];
    r->audit.has_torch_peak = has[11], r->audit.torch_peak_bytes = v[11];
    /* kernel lists: after_stop_kernels {name, ns_after_stop}, other_stream_kernels {name, stream},
     * kernels {name, authored, count, ns} */
    static const char *const lists[] = {"after_stop_kernels", "other_stream_kernels", "kernels"};
    static const char *const nums[] = {"ns_after_stop", "stream", "count", "ns"};
    for (size_t l = 0; l < 3; l++) {
        const json_t *a;
        if (get_array(m, lists[l], REPLY_MAX_VALUES, &a, err) < 0) return json_decref(doc), -1;
        if (!a) continue;
        json_t *out = json_array();
        for (size_t i = 0; i < json_array_size(a); i++) {
            const json_t *e = json_array_get(a, i);
            char name[256];
            int authored = 0;
            if (!json_is_object(e) || str_value(json_object_get(e, "name"), lists[l], name, sizeof name, CS_ANY, 1, err) < 0 ||
                get_bool(e, "authored", &authored, err) < 0) {
                if (!err->msg[0]) bad(err, lists[l], "not a kernel record");
                return json_decref(out), json_decref(doc), -1;
            }
            json_t *o = json_pack("{s:s}", "name", name);
            for (size_t q = 0; q < 4; q++) {
                long long x = 0;
                int hx = 0;
                if (get_int(e, nums[q], -big, big, &x, &hx, err) < 0) return json_decref(o), json_decref(out), json_decref(doc), -1;
                if (hx) json_object_set_new(o, nums[q], json_integer(x));
                if (hx && l == 0 && i == 0 && q == 0) r->audit.first_after_stop.ns_after_stop = x;
            }
            if (json_object_get(e, "authored")) json_object_set_new(o, "authored", json_boolean(authored));
            if (l == 0 && i == 0) snprintf(r->audit.first_after_stop.name, sizeof r->audit.first_after_stop.name, "%s", name);
            json_array_append_new(out, o);
        }
        json_object_set_new(doc, lists[l], out);
    }
    r->audit.doc = doc;
    return 0;
}

static int dec_common(const json_t *m, kbv_reply *r, kbv_err *err) {
    const json_t *okv = json_object_get(m, "ok"), *g;
    if (!json_is_boolean(okv)) return bad(err, "ok", "not a boolean");
    r->ok = json_is_true(okv);
    if (get_str(m, "nonce", r->nonce, sizeof r->nonce, CS_HEX, 0, err) < 0) return -1;
    if (!r->ok) {
        const json_t *msg = json_object_get(m, "message"), *tb = json_object_get(m, "traceback");
        if (get_str(m, "kind", r->kind, sizeof r->kind, CS_ID, 0, err) < 0) return -1;
        if (msg && !json_is_string(msg)) return bad(err, "message", "not a string");
        if (tb && !json_is_string(tb) && !json_is_null(tb)) return bad(err, "traceback", "not a string");
        snprintf(r->message, sizeof r->message, "%s", msg ? json_string_value(msg) : "");
        if (json_is_string(tb)) r->traceback = dup_capped(json_string_value(tb));
    }
    if (get_array(m, "guard", REPLY_MAX_GUARD, &g, err) < 0) return -1;
    r->guard = calloc(json_array_size(g) + 1, sizeof *r->guard);
    if (!r->guard) return kbv_seterr(err, "out of memory");
    for (size_t i = 0; i < json_array_size(g); i++) {
        const json_t *e = json_array_get(g, i);
        char id[49] = "";
        reply_guard *x = &r->guard[r->nguard];
        if (!json_is_object(e) || get_str(e, "id", id, sizeof id, CS_ID, 0, err) < 0 ||
            get_str(e, "step", x->step, sizeof x->step, CS_ID, 0, err) < 0 || get_str(e, "detail", x->detail, sizeof x->detail, CS_ANY, 1, err) < 0)
            return err->msg[0] ? -1 : bad(err, "guard", "not a finding");
        int k = finding_lookup(id);
        if (k < 0 || strcmp(finding_catalog[k].step, "guard") != 0) return bad(err, "guard", "an id that is not a finding of the guard");
        x->id = (kbv_finding_id)k;
        r->nguard++;
    }
    /* the worker's own split of the step's time: any "..._s" number but cpu_s, which is kbv's
     * measurement of the worker (steps_s) and no reply's to set */
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)m, key, v) {
        size_t kl = strlen(key);
        if (!json_is_number(v) || kl <= 2 || kl >= sizeof r->times[0].key || strcmp(key + kl - 2, "_s") != 0 || strcmp(key, "cpu_s") == 0 || !charset_ok(key, CS_ID))
            continue;
        if (r->ntimes < (int)(sizeof r->times / sizeof *r->times) && isfinite(json_number_value(v))) {
            snprintf(r->times[r->ntimes].key, sizeof r->times[0].key, "%s", key);
            r->times[r->ntimes++].s = json_number_value(v);
        }
    }
    return 0;
}

int reply_decode(const char *op, const json_t *m, kbv_reply *r, kbv_err *err) {
    memset(r, 0, sizeof *r);
    snprintf(r->op, sizeof r->op, "%s", op);
    err->msg[0] = '\0';
    if (!json_is_object(m)) return bad(err, "(reply)", "not an object");
    int rc = dec_common(m, r, err);
    if (rc == 0 && r->ok) {
        if (strcmp(op, "load_problem") == 0) rc = dec_load(m, r, err);
        else if (strcmp(op, "inspect") == 0) rc = dec_inspect(m, r, err);
        else if (strcmp(op, "build") == 0) rc = dec_build(m, r, err);
        else if (strcmp(op, "probe") == 0) rc = dec_probe(m, r, err);
        else if (strcmp(op, "gen_inputs") == 0) rc = reply_prints_from_json(json_object_get(m, "fingerprints"), &r->prints, err);
        else if (strcmp(op, "forward") == 0) rc = dec_forward(m, r, err);
        else if (strcmp(op, "save_state") == 0) rc = reply_values_from_json(json_object_get(m, "state"), &r->state, err);
        else if (strcmp(op, "load_state") == 0)
            rc = get_bool(m, "matched", &r->matched, err) < 0 || get_bool(m, "loaded", &r->loaded, err) < 0 ||
                         get_int(m, "differing", 0, 1LL << 40, &r->differing, NULL, err) < 0
                     ? -1
                     : 0;
        else if (strcmp(op, "redraw_weights") == 0)
            rc = get_int(m, "redrawn", 0, 1LL << 30, &r->redrawn, NULL, err) < 0 || get_int(m, "kept", 0, 1LL << 30, &r->kept, NULL, err) < 0 ||
                         reply_values_from_json(json_object_get(m, "state"), &r->state, err) < 0
                     ? -1
                     : 0;
        else if (strcmp(op, "standard") == 0 || strcmp(op, "standard_time") == 0 || strcmp(op, "paper") == 0 || strcmp(op, "paper_time") == 0) rc = dec_standard(m, r, err);
        else if (strcmp(op, "paper_memory") == 0) rc = dec_paper_memory(m, r, err);
        else if (strcmp(op, "bench_setup") == 0)
            rc = get_bool(m, "fresh", &r->fresh, err) < 0 || get_int(m, "slots", 0, 1 << 20, &r->slots, NULL, err) < 0 ||
                         get_num(m, "peak_gbs", &r->peak_gbs, &r->has_peak_gbs, err) < 0
                     ? -1
                     : 0;
        else if (strcmp(op, "bench") == 0) rc = dec_bench(m, r, err);
        else if (strcmp(op, "bench_save") == 0)
            rc = get_int(m, "set", -1, 1 << 20, &r->set, &r->has_set, err) < 0 ||
                         reply_values_from_json(json_object_get(m, "values"), &r->values, err) < 0
                     ? -1
                     : 0;
        else if (strcmp(op, "audit") == 0) rc = dec_audit(m, r, err);
        else if (strcmp(op, "partial_probe") == 0) rc = get_int(m, "input", -1, 1 << 16, &r->input, NULL, err) < 0 ? -1 : 0;
        else if (strcmp(op, "partial_save") == 0)
            rc = reply_values_from_json(json_object_get(m, "before"), &r->values, err) < 0 ||
                         reply_values_from_json(json_object_get(m, "after"), &r->after_values, err) < 0
                     ? -1
                     : 0;
        else if (strcmp(op, "memo_probe") == 0)
            rc = reply_prints_from_json(json_object_get(m, "before"), &r->before, err) < 0 ||
                         reply_prints_from_json(json_object_get(m, "after"), &r->after, err) < 0
                     ? -1
                     : 0;
    }
    if (rc < 0) reply_free(r);
    return rc;
}

int reply_decode_hello(const json_t *m, kbv_reply *r, kbv_err *err) {
    memset(r, 0, sizeof *r);
    snprintf(r->op, sizeof r->op, "hello");
    err->msg[0] = '\0';
    if (!json_is_object(m)) return bad(err, "(hello)", "not an object");
    if (dec_common(m, r, err) < 0 || get_str(m, "python", r->hello.python, sizeof r->hello.python, CS_ANY, 1, err) < 0 ||
        get_str(m, "torch", r->hello.torch, sizeof r->hello.torch, CS_ANY, 1, err) < 0 ||
        get_str(m, "gpu", r->hello.gpu, sizeof r->hello.gpu, CS_ANY, 1, err) < 0 ||
        get_str(m, "device", r->hello.device, sizeof r->hello.device, CS_ID, 1, err) < 0 ||
        get_int(m, "pid", 0, INT32_MAX, &r->hello.pid, NULL, err) < 0)
        return reply_free(r), -1;
    if (!r->ok && !r->message[0]) snprintf(r->message, sizeof r->message, "(no message)");
    return 0;
}

void reply_free(kbv_reply *r) {
    free(r->traceback);
    free(r->guard);
    free(r->decl);
    json_decref(r->constraints);
    free(r->inspect.findings), free(r->inspect.kernels);
    json_decref(r->inspect.doc);
    free(r->inputs);
    json_decref(r->probe_doc);
    reply_prints_free(&r->prints), reply_prints_free(&r->after), reply_prints_free(&r->before);
    reply_values_free(&r->values), reply_values_free(&r->state), reply_values_free(&r->after_values);
    free(r->facts), free(r->aliases);
    for (int t = 0; r->trials && t < r->ntrials; t++) reply_values_free(&r->trials[t].ref), reply_values_free(&r->trials[t].cand);
    free(r->trials);
    free(r->ms);
    json_decref(r->audit.doc);
    memset(r, 0, sizeof *r);
}

/* ---- the documented fields ----------------------------------------------------------------- */

static const struct {
    const char *op;
    const char *fields[20];
} kFields[] = {
    {"*", {"ok", "kind", "message", "traceback", "guard", "nonce"}},
    {"hello", {"proto", "pid", "python", "torch", "device", "cuda_available", "gpu"}},
    {"load_problem", {"constraints"}},
    {"inspect", {"inspect"}},
    {"load_candidate", {NULL}},
    {"build", {"persistent_bytes", "torch_persistent_bytes"}},
    {"probe", {"inputs", "get_inputs_s", "copy_s", "scan_s"}},
    {"gen_inputs", {"fingerprints"}},
    {"forward", {"values", "count", "facts", "wall_s", "save_s", "aliases", "inputs_after"}},
    {"save_state", {"state"}},
    {"load_state", {"matched", "differing", "loaded"}},
    {"redraw_weights", {"state", "redrawn", "kept"}},
    {"standard", {"trials"}},
    {"standard_time", {"time_ms"}},
    {"paper", {"trials"}},
    {"paper_time", {"time_ms"}},
    {"paper_memory", {"torch_peak_bytes"}},
    {"bench_setup", {"slots", "fresh", "l2_bytes", "peak_mhz", "peak_gbs"}},
    {"bench", {"ms", "sm_mhz", "throttled", "cushion_expired", "warmup_samples", "warmup_last_ms", "held", "graphs", "fresh", "fresh_failed"}},
    {"bench_save", {"values", "set"}},
    {"bench_launch", {NULL}},
    {"bench_sync", {NULL}},
    {"audit",
     {"markers", "dropped", "empty_kernel_ns", "kernels_per_call", "authored_kernels", "authored_ns", "library_ns", "span_ns", "after_stop",
      "after_stop_kernels", "other_stream", "other_stream_kernels", "kernels", "peak_bytes", "footprint_bytes", "allocations", "torch_peak_bytes"}},
    {"memo_probe", {"before", "after"}},
    {"partial_probe", {"input"}},
    {"partial_save", {"before", "after"}},
    {"quit", {NULL}},
};

const char *const *reply_fields(const char *op) {
    for (size_t i = 0; i < sizeof kFields / sizeof *kFields; i++)
        if (strcmp(kFields[i].op, op) == 0) return kFields[i].fields;
    return NULL;
}
