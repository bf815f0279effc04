/* probe.c -- input structure from several draws of get_inputs() (see probe.h). */
#include "probe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gen_host.h"

void probe_init(probe_input *p) {
    memset(p, 0, sizeof *p);
    p->consistent = 1, p->fixed = 1, p->symmetric = 1;
    p->min = INFINITY, p->max = -INFINITY;
}

void probe_free(probe_input *p) {
    free(p->zeros);
    p->zeros = NULL;
}

static int is_symmetric(const kbv_tensor *t) {
    if (t->ndim < 2) return 0;
    int64_t d = t->shape[t->ndim - 1];
    if (d != t->shape[t->ndim - 2] || d < 2) return 0;
    int64_t batch = kbv_tensor_numel(t) / (d * d);
    size_t es = kbv_dtype_size(t->dtype);
    const unsigned char *x = t->data;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t r = 0; r < d; r++)
            for (int64_t c = r + 1; c < d; c++)
                if (memcmp(x + (size_t)((b * d + r) * d + c) * es, x + (size_t)((b * d + c) * d + r) * es, es)) return 0;
    return 1;
}

/* A float32's bits as an int32 that orders like the floats (finite values; -0 just below +0),
 * and back (the map is its own inverse). */
static inline int32_t order_key(uint32_t u) { return (int32_t)(u ^ ((uint32_t)((int32_t)u >> 31) & 0x7fffffffu)); }
static float key_float(int32_t k) {
    uint32_t bits = (uint32_t)order_key((uint32_t)k);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* probe_add's scan for float32, the common case (a multi-GiB input is scanned three times):
 * integer operations over fixed-size blocks, which the compiler vectorises (the Makefile
 * builds this file with -O3; every result is exact, so the order does not matter), the
 * NaN/Inf test once per block. Same results as the generic loop: min and max over the finite
 * values, zeros cleared where a value is not 0. */
static void scan_f32(probe_input *p, const float *x, int64_t n) {
    enum { B = 4096 };
    int32_t mn = INT32_MAX, mx = INT32_MIN;
    for (int64_t b = 0; b < n; b += B) {
        int64_t m = n - b < B ? n - b : B;
        const uint32_t *u = (const uint32_t *)(const void *)(x + b);
        uint32_t bad = 0; /* exponent all ones: NaN or Inf */
        for (int64_t i = 0; i < m; i++) bad |= (u[i] & 0x7f800000u) == 0x7f800000u;
        if (!bad) {
            int32_t bmn = INT32_MAX, bmx = INT32_MIN;
            for (int64_t i = 0; i < m; i++) {
                int32_t k = order_key(u[i]);
                bmn = k < bmn ? k : bmn;
                bmx = k > bmx ? k : bmx;
            }
            mn = bmn < mn ? bmn : mn;
            mx = bmx > mx ? bmx : mx;
        } else {
            p->nonfinite = 1;
            for (int64_t i = 0; i < m; i++)
                if ((u[i] & 0x7f800000u) != 0x7f800000u) {
                    int32_t k = order_key(u[i]);
                    mn = k < mn ? k : mn;
                    mx = k > mx ? k : mx;
                }
        }
        if (p->zeros) {
            uint8_t *z = p->zeros + b;
            for (int64_t i = 0; i < m; i++) z[i] &= (u[i] << 1) == 0; /* +0 or -0 */
        }
    }
    if (mn > mx) return; /* no finite value */
    if (key_float(mn) < p->min) p->min = key_float(mn);
    if (key_float(mx) > p->max) p->max = key_float(mx);
}

void probe_add(probe_input *p, const kbv_tensor *t) {
    int64_t n = kbv_tensor_numel(t);
    if (p->nprobes == 0) {
        p->dtype = t->dtype, p->ndim = t->ndim;
        memcpy(p->shape, t->shape, sizeof p->shape);
        p->first_fp = gen_fingerprint_host(t->data, t->nbytes);
        if (kbv_dtype_is_float(t->dtype) && n > 0) {
            p->zeros = malloc((size_t)n);
            if (p->zeros && t->dtype == KBV_DT_F32)
                for (int64_t i = 0; i < n; i++) p->zeros[i] = ((const float *)t->data)[i] == 0.0f;
            else if (p->zeros)
                for (int64_t i = 0; i < n; i++) p->zeros[i] = kbv_tensor_get(t, i) == 0.0;
        }
    } else {
        int same = p->dtype == t->dtype && p->ndim == t->ndim;
        for (int i = 0; same && i < t->ndim; i++) same = p->shape[i] == t->shape[i];
        if (!same) {
            p->consistent = 0, p->fixed = 0;
            free(p->zeros), p->zeros = NULL;
        } else if (gen_fingerprint_host(t->data, t->nbytes) != p->first_fp) {
            p->fixed = 0;
        }
    }
    p->nprobes++;
    if (!p->consistent) return;
    if (t->dtype == KBV_DT_F32) {
        scan_f32(p, t->data, n);
    } else {
        for (int64_t i = 0; i < n; i++) {
            double v = kbv_tensor_get(t, i);
            if (p->zeros && v != 0.0) p->zeros[i] = 0; /* NaN too: not a zero in every draw */
            if (!isfinite(v)) {
                p->nonfinite = 1;
                continue;
            }
            if (v < p->min) p->min = v;
            if (v > p->max) p->max = v;
            if (t->dtype == KBV_DT_BOOL) p->n_true += v != 0;
        }
    }
    p->n_total += n;
    if (p->symmetric) p->symmetric = is_symmetric(t);
    int64_t zc = 0; /* a local: a store through p would alias zeros (uint8_t) on every step */
    if (p->zeros)
        for (int64_t i = 0; i < n; i++) zc += p->zeros[i];
    p->zero_count = zc;
}

json_t *probe_to_json(const probe_input *p) {
    json_t *shape = json_array();
    for (int i = 0; i < p->ndim; i++) json_array_append_new(shape, json_integer(p->shape[i]));
    json_t *o = json_pack("{s:s, s:o, s:b, s:b, s:b, s:b, s:I, s:i}", "dtype", kbv_dtype_name(p->dtype), "shape", shape, "consistent", p->consistent,
                          "fixed", p->fixed && p->nprobes > 1, "nonfinite", p->nonfinite, "symmetric", p->symmetric && p->nprobes > 0, "zeros",
                          (json_int_t)p->zero_count, "probes", p->nprobes);
    json_object_set_new(o, "min", isfinite(p->min) ? json_real(p->min) : json_null());
    json_object_set_new(o, "max", isfinite(p->max) ? json_real(p->max) : json_null());
    if (p->dtype == KBV_DT_BOOL && p->n_total) json_object_set_new(o, "true_fraction", json_real((double)p->n_true / (double)p->n_total));
    return o;
}
