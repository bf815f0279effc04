/* gen.h -- kbv's input generator: Philox4x32-10 and the value distributions.
 *
 * Included by gen.c (CPU) and gpu/gen.cu (CUDA); every function is the same source on
 * both, built without FMA contraction (-ffp-contract=off, nvcc -fmad=false), and uses only
 * +, -, *, /, sqrt, fabs, rint and ldexp -- operations IEEE 754 rounds the same way on
 * both -- so the CPU and the GPU produce bit-identical values (tests/unit/test_gen.c and
 * tests/gpu check it). No log, exp or trig: N(0,1) is the Irwin-Hall sum of 12 uniforms
 * (exact mean and variance, tails cut at +-6).
 *
 * Element i of input j in case c is a pure function of (key, c, j, i): key is the case's
 * 64-bit key (derived by kbv from the secret run seed), the counter holds i, j and a draw
 * index. docs/correctness.md gives each distribution.
 */
#ifndef KBV_GEN_H
#define KBV_GEN_H

#include <stdint.h>

#ifdef __CUDACC__
#define KBV_HD __host__ __device__ __forceinline__
#else
#define KBV_HD static inline
#include <math.h>
#endif

typedef enum kbv_dist {
    KBV_DIST_NORMAL = 0,          /* N(0,1) (Irwin-Hall 12) */
    KBV_DIST_UNIFORM_SHIFTED = 1, /* U(lo,hi), asymmetric, bounds drawn from the key */
    KBV_DIST_MIXED_MAGNITUDE = 2, /* random sign x [1,2) x 2^e, e per 256-element block in [16,24] or [-24,-17] (per case) */
    KBV_DIST_HEAVY_TAILED = 3,    /* Student-t(3) with exact zeros, ties and clustered maxima */
    KBV_DIST_UNIFORM01 = 4,       /* U[0,1) (for declared "unit" inputs) */
    KBV_DIST_COUNT
} kbv_dist;

typedef enum kbv_domain {
    KBV_DOM_RAW = 0,   /* values as drawn */
    KBV_DOM_ABS = 1,   /* |x| */
    KBV_DOM_RANGE = 2, /* squashed into [lo, hi]: lo + (hi-lo) * (1/2 + x / (2 (1 + |x|))) */
    KBV_DOM_COUNT
} kbv_domain;

/* One float input's recipe. */
typedef struct kbv_gen_spec {
    uint32_t key[2]; /* the case key */
    uint32_t tag;    /* case number (counter word 3) */
    uint32_t input;  /* input index (counter word 2, low 16 bits) */
    int dist;        /* kbv_dist */
    int domain;      /* kbv_domain */
    float lo, hi;    /* the range for KBV_DOM_RANGE */
} kbv_gen_spec;

#define KBV_PHILOX_M0 0xD2511F53u
#define KBV_PHILOX_M1 0xCD9E8D57u
#define KBV_PHILOX_W0 0x9E3779B9u
#define KBV_PHILOX_W1 0xBB67AE85u

/* Philox4x32 with 10 rounds (Salmon et al., SC'11), as in Random123. */
KBV_HD void kbv_philox4x32_10(const uint32_t ctr_in[4], const uint32_t key_in[2], uint32_t out[4]) {
    uint32_t c0 = ctr_in[0], c1 = ctr_in[1], c2 = ctr_in[2], c3 = ctr_in[3];
    uint32_t k0 = key_in[0], k1 = key_in[1];
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)KBV_PHILOX_M0 * c0, p1 = (uint64_t)KBV_PHILOX_M1 * c2;
        uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0, hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
        k0 += KBV_PHILOX_W0;
        k1 += KBV_PHILOX_W1;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

/* Four random words for element i, draw d (d < 256). */
KBV_HD void kbv_gen_words(const kbv_gen_spec *s, uint64_t i, uint32_t d, uint32_t w[4]) {
    uint32_t ctr[4] = {(uint32_t)i, (uint32_t)(i >> 32), (s->input & 0xffffu) | (d << 16), s->tag};
    kbv_philox4x32_10(ctr, s->key, w);
}

/* [0,1) with 24 random bits: exact in float. */
KBV_HD float kbv_u01(uint32_t w) { return (float)(w >> 8) * (1.0f / 16777216.0f); }

/* Irwin-Hall: 12 uniforms from draws d, d+1, d+2, minus 6. */
KBV_HD float kbv_normal(const kbv_gen_spec *s, uint64_t i, uint32_t d) {
    float acc = 0.0f;
    for (uint32_t k = 0; k < 3; k++) {
        uint32_t w[4];
        kbv_gen_words(s, i, d + k, w);
        acc = acc + kbv_u01(w[0]);
        acc = acc + kbv_u01(w[1]);
        acc = acc + kbv_u01(w[2]);
        acc = acc + kbv_u01(w[3]);
    }
    return acc - 6.0f;
}

/* The asymmetric bounds of uniform_shifted, from the key alone: lo in [-4,-2), hi in
 * [0.5,1), mirrored when the key says so (e.g. U(-3.1, 0.7) or U(-0.7, 3.1)). */
KBV_HD void kbv_shifted_bounds(const kbv_gen_spec *s, float *lo, float *hi) {
    uint32_t ctr[4] = {0xB0B0B0B0u, s->input, 0xFFFF0000u, s->tag}, w[4];
    kbv_philox4x32_10(ctr, s->key, w);
    float a = -(2.0f + 2.0f * kbv_u01(w[0])), b = 0.5f + 0.5f * kbv_u01(w[1]);
    if (w[2] & 1u) *lo = a, *hi = b;
    else *lo = -b, *hi = -a;
}

/* mixed_magnitude's window for a case, from the key and the case number alone (all inputs
 * and elements of a case agree): 1 = low, every value below float16's smallest normal 2^-14
 * (e in [-24,-17]: float16 keeps at most 7 of float32's 23 mantissa bits); 0 = high, every
 * value above float16's largest, 65504 (e in [16,24]: float16 overflows to Inf). float32
 * holds both exactly, so a kernel that computes in float16 inside shows on each such case,
 * where TF32 (float32's range, float16's mantissa) would hide it on values near 1. */
KBV_HD int kbv_mixed_low(const kbv_gen_spec *s) {
    uint32_t ctr[4] = {0x5CA1E5u, 0u, 0xFFFF0001u, s->tag}, w[4];
    kbv_philox4x32_10(ctr, s->key, w);
    return (int)(w[0] & 1u);
}

/* The block exponent of mixed_magnitude from the block's random word. The window is [-10,10]
 * where the extremes have no use: squashed into a range (KBV_DOM_RANGE) they all land at
 * its ends or its middle, and a float16 input (f16) cannot hold them. */
KBV_HD int kbv_mixed_exponent(const kbv_gen_spec *s, uint32_t word, int f16) {
    if (s->domain == KBV_DOM_RANGE || f16) return -10 + (int)(word % 21u);
    return kbv_mixed_low(s) ? -24 + (int)(word % 8u) : 16 + (int)(word % 9u);
}

/* Element i as drawn; f16: the input is float16 (see kbv_mixed_exponent). */
KBV_HD float kbv_gen_raw(const kbv_gen_spec *s, uint64_t i, int f16) {
    uint32_t w[4];
    switch (s->dist) {
    case KBV_DIST_NORMAL: return kbv_normal(s, i, 0);
    case KBV_DIST_UNIFORM01: kbv_gen_words(s, i, 0, w); return kbv_u01(w[0]);
    case KBV_DIST_UNIFORM_SHIFTED: {
        float lo, hi;
        kbv_shifted_bounds(s, &lo, &hi);
        kbv_gen_words(s, i, 0, w);
        return lo + (hi - lo) * kbv_u01(w[0]);
    }
    case KBV_DIST_MIXED_MAGNITUDE: {
        uint32_t b[4];
        kbv_gen_spec blk = *s;
        kbv_gen_words(&blk, i >> 8, 200, b); /* one exponent per 256-element block */
        int e = kbv_mixed_exponent(s, b[0], f16);
        kbv_gen_words(s, i, 0, w);
        float v = ldexpf(1.0f + kbv_u01(w[0]), e);
        return (w[1] & 1u) ? -v : v;
    }
    case KBV_DIST_HEAVY_TAILED: {
        uint32_t c[4];
        kbv_gen_words(s, i >> 6, 201, c); /* one block in 16 of 64 elements starts with 4 equal maxima */
        if ((c[0] & 15u) == 0u && (i & 63u) < 4u) return 50.0f;
        kbv_gen_words(s, i, 20, w);
        uint32_t sel = w[0] % 100u;
        if (sel < 5u) return 0.0f; /* exact zeros */
        float z = kbv_normal(s, i, 0), z1 = kbv_normal(s, i, 3), z2 = kbv_normal(s, i, 6), z3 = kbv_normal(s, i, 9);
        float v = (z1 * z1 + z2 * z2 + z3 * z3) / 3.0f;
        float t = z / sqrtf(v > 1e-12f ? v : 1e-12f);
        if (sel < 15u) t = rintf(t * 4.0f) / 4.0f; /* ties */
        return t;
    }
    default: return 0.0f;
    }
}

KBV_HD float kbv_gen_value(const kbv_gen_spec *s, uint64_t i, int f16) {
    float v = kbv_gen_raw(s, i, f16);
    if (s->domain == KBV_DOM_ABS) return fabsf(v);
    if (s->domain == KBV_DOM_RANGE) return s->lo + (s->hi - s->lo) * (0.5f + v / (2.0f * (1.0f + fabsf(v))));
    return v;
}

/* Integers in [lo, hi] and booleans with P(true) = p, from draw 0. */
KBV_HD int64_t kbv_gen_int(const kbv_gen_spec *s, uint64_t i, int64_t lo, int64_t hi) {
    uint32_t w[4];
    kbv_gen_words(s, i, 0, w);
    uint64_t range = (uint64_t)(hi - lo) + 1u;
    uint64_t r = ((uint64_t)w[0] << 32 | w[1]);
    return lo + (int64_t)(range ? r % range : r);
}

KBV_HD int kbv_gen_bool(const kbv_gen_spec *s, uint64_t i, float p) {
    uint32_t w[4];
    kbv_gen_words(s, i, 0, w);
    return kbv_u01(w[0]) < p;
}

/* float -> float16 / bfloat16, round to nearest even (as __float2half_rn / __float2bfloat16_rn). */
KBV_HD uint16_t kbv_f32_to_f16(float f) {
    union {
        float f;
        uint32_t u;
    } v;
    v.f = f;
    uint32_t x = v.u, sign = (x >> 16) & 0x8000u, mant = x & 0x7fffffu;
    int32_t e = (int32_t)((x >> 23) & 0xff);
    if (e == 0xff) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0u));
    int32_t he = e - 127 + 15;
    if (he >= 0x1f) return (uint16_t)(sign | 0x7c00u);
    if (he <= 0) {
        if (he < -10) return (uint16_t)sign;
        mant |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - he);
        uint32_t h = mant >> shift, rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1u))) h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)he << 10) | (mant >> 13), rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
    return (uint16_t)(sign | h);
}

KBV_HD uint16_t kbv_f32_to_bf16(float f) {
    union {
        float f;
        uint32_t u;
    } v;
    v.f = f;
    uint32_t x = v.u;
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

/* What one generated input needs: the recipe, and how values become its dtype. */
typedef enum kbv_gen_kind { KBV_GEN_FLOAT = 0, KBV_GEN_INT = 1, KBV_GEN_BOOL = 2 } kbv_gen_kind;

typedef struct kbv_gen_plan {
    kbv_gen_spec s;
    int kind;         /* kbv_gen_kind */
    int dtype;        /* kbv_dtype of the output buffer */
    int64_t ilo, ihi; /* KBV_GEN_INT: inclusive range */
    float p;          /* KBV_GEN_BOOL: P(true) */
} kbv_gen_plan;

/* Element i of a plan, stored at out (elem_size bytes) -- one source for CPU and GPU. */
KBV_HD void kbv_gen_store(const kbv_gen_plan *g, uint64_t i, void *out) {
    unsigned char *o = (unsigned char *)out;
    if (g->kind == KBV_GEN_BOOL) {
        o[0] = (unsigned char)kbv_gen_bool(&g->s, i, g->p);
        return;
    }
    if (g->kind == KBV_GEN_INT) {
        int64_t v = kbv_gen_int(&g->s, i, g->ilo, g->ihi);
        switch (g->dtype) {
        case 2: *(uint8_t *)o = (uint8_t)v; return; /* KBV_DT_U8 */
        case 3: *(int8_t *)o = (int8_t)v; return;   /* KBV_DT_I8 */
        case 4: *(int16_t *)o = (int16_t)v; return; /* KBV_DT_I16 */
        case 5: *(int32_t *)o = (int32_t)v; return; /* KBV_DT_I32 */
        default: *(int64_t *)o = v; return;         /* KBV_DT_I64 */
        }
    }
    float v = kbv_gen_value(&g->s, i, g->dtype == 7);
    switch (g->dtype) {
    case 7: *(uint16_t *)o = kbv_f32_to_f16(v); return;  /* KBV_DT_F16 */
    case 8: *(uint16_t *)o = kbv_f32_to_bf16(v); return; /* KBV_DT_BF16 */
    case 10: *(double *)o = (double)v; return;           /* KBV_DT_F64 */
    default: *(float *)o = v; return;                    /* KBV_DT_F32 */
    }
}

/* Order-independent 64-bit fingerprint of a byte string: the sum over 8-byte words w_k of
 * mix(w_k + k * golden), plus the length. Same on CPU and GPU (integer arithmetic). */
KBV_HD uint64_t kbv_fp_mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

KBV_HD uint64_t kbv_fp_word(const unsigned char *data, uint64_t nbytes, uint64_t k) {
    uint64_t w = 0;
    for (int b = 0; b < 8; b++) {
        uint64_t at = k * 8u + (uint64_t)b;
        if (at < nbytes) w |= (uint64_t)data[at] << (8 * b);
    }
    return kbv_fp_mix(w + k * 0x9e3779b97f4a7c15ULL);
}

#endif
