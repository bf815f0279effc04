/* plan.c -- the input plan: how each input of a hidden case is made, built once per
 * evaluation from the probe's findings and the problem's declarations (KBV_INPUTS).
 *
 * An input is either taken from get_inputs() ("nominal": not a tensor, shape or dtype that
 * change with the seed, declared fixed, the same under every seed, or NaN/Inf in it) or drawn
 * by kbv's generator ("gen") with its dtype, shape, range, zero pattern and symmetry. The
 * plan then gives each case its gen_inputs specs. It runs nothing and judges nothing.
 */
#include "evalctx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

void plan_free(eval_plan *pl) {
    free(pl->in);
    memset(pl, 0, sizeof *pl);
}

int plan_make(eval_plan *pl, const kbv_reply *probe, const kbv_reply *decl) {
    memset(pl, 0, sizeof *pl);
    pl->in = calloc((size_t)probe->ninputs + 1, sizeof *pl->in);
    if (!pl->in) return -1;
    pl->n = probe->ninputs;
    for (int j = 0; j < probe->ninputs; j++) {
        const reply_probe_input *p = &probe->inputs[j];
        const reply_decl *d = decl && j < decl->ndecl && decl->decl[j].present ? &decl->decl[j] : NULL;
        plan_input *e = &pl->in[j];
        snprintf(e->probe_kind, sizeof e->probe_kind, "%s", p->is_tensor ? "tensor" : "scalar");
        if (!p->is_tensor) e->why = "not a tensor";
        else if (!p->consistent) e->why = "its shape or dtype changes with the seed";
        else if (d && d->fixed) e->why = "declared fixed";
        else if (p->fixed) e->why = "the same under every seed";
        else if (p->nonfinite) e->why = "get_inputs() puts NaN or Inf in it";
        if (e->why) continue;
        kbv_dtype dt = kbv_dtype_from_name(p->dtype);
        e->gen = 1;
        snprintf(e->dtype, sizeof e->dtype, "%s", p->dtype);
        e->ndim = p->ndim;
        memcpy(e->shape, p->shape, sizeof e->shape);
        if (dt == KBV_DT_BOOL) {
            e->kind = PLAN_BOOL;
            e->p = p->has_true_fraction ? p->true_fraction : 0.5;
        } else if (!kbv_dtype_is_float(dt)) {
            e->kind = PLAN_INT;
            double lo = d && d->has_int_range ? d->int_range[0] : p->has_min ? p->min : 0;
            double hi = d && d->has_int_range ? d->int_range[1] : p->has_max ? p->max : 0;
            e->ilo = (long long)lo, e->ihi = (long long)hi;
        } else {
            e->kind = PLAN_FLOAT;
            e->lo = d && d->has_range ? d->range[0] : p->has_min ? p->min : 0;
            e->hi = d && d->has_range ? d->range[1] : p->has_max ? p->max : 0;
            /* The first domain to try: declarations narrow it up front. */
            e->first_domain = d && d->has_range ? KBV_DOM_RANGE : d && d->positive ? KBV_DOM_ABS : KBV_DOM_RAW;
            snprintf(e->zero_mask, sizeof e->zero_mask, "%s", p->zero_mask);
            e->symmetric = p->symmetric || (d && d->symmetric);
        }
    }
    return 0;
}

static json_t *shape_json(const plan_input *e) {
    json_t *a = json_array();
    for (int d = 0; a && d < e->ndim; d++) json_array_append_new(a, json_integer(e->shape[d]));
    return a;
}

/* The parameters of a generated input, as the plan's JSON and the specs carry them. */
static void gen_params(const plan_input *e, json_t *o) {
    if (e->kind == PLAN_BOOL) {
        json_object_set_new(o, "p", json_real(e->p));
    } else if (e->kind == PLAN_INT) {
        json_object_set_new(o, "ilo", json_integer(e->ilo));
        json_object_set_new(o, "ihi", json_integer(e->ihi));
    } else {
        json_object_set_new(o, "lo", json_real(e->lo));
        json_object_set_new(o, "hi", json_real(e->hi));
        if (e->zero_mask[0]) json_object_set_new(o, "zero_mask", json_string(e->zero_mask));
        if (e->symmetric) json_object_set_new(o, "symmetric", json_true());
    }
}

json_t *plan_to_json(const eval_plan *pl) {
    json_t *a = json_array();
    for (int j = 0; a && j < pl->n; j++) {
        const plan_input *e = &pl->in[j];
        json_t *o = json_pack("{s:i, s:s, s:s}", "index", j, "probe_kind", e->probe_kind, "make", e->gen ? "gen" : "nominal");
        if (!e->gen) {
            json_object_set_new(o, "why", json_string(e->why));
        } else {
            json_object_set_new(o, "dtype", json_string(e->dtype));
            json_object_set_new(o, "shape", shape_json(e));
            gen_params(e, o);
            if (e->kind == PLAN_FLOAT) json_object_set_new(o, "first_domain", json_integer(e->first_domain));
        }
        json_array_append_new(a, o);
    }
    return a;
}

json_t *plan_case_specs(const eval_plan *pl, uint64_t run_seed, int ci, int dist, int dom) {
    json_t *specs = json_array();
    uint64_t k = kbv_derive_seed(run_seed, 0xC0FFEE00ULL + (uint64_t)ci);
    for (int j = 0; j < pl->n; j++) {
        const plan_input *e = &pl->in[j];
        if (dist < 0 || dom >= 3 || !e->gen) {
            json_array_append_new(specs, json_pack("{s:s}", "kind", "nominal"));
            continue;
        }
        int first = e->kind == PLAN_FLOAT ? e->first_domain : 0;
        json_t *sp = json_pack("{s:s, s:s, s:o, s:[I,I], s:i, s:i, s:i, s:i}", "kind", "gen", "dtype", e->dtype, "shape", shape_json(e), "key",
                               (json_int_t)(uint32_t)k, (json_int_t)(uint32_t)(k >> 32), "tag", ci, "input", j, "dist", dist, "domain",
                               dom > first ? dom : first);
        gen_params(e, sp);
        json_array_append_new(specs, sp);
    }
    return specs;
}

int plan_effective_domain(const eval_plan *pl, int dom) {
    int d = dom;
    for (int j = 0; dom < 3 && j < pl->n; j++) {
        const plan_input *e = &pl->in[j];
        if (!e->gen || e->kind != PLAN_FLOAT) continue;
        if (e->first_domain > d && e->first_domain < 3) d = e->first_domain;
    }
    return d;
}

int plan_has_gen(const eval_plan *pl) {
    for (int j = 0; j < pl->n; j++)
        if (pl->in[j].gen) return 1;
    return 0;
}
