/* test_gen.c -- gen.h/gen.c: Philox4x32-10 against Random123's published known answers,
 * the distributions' defining properties, half conversions, and fingerprints. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "gen_host.h"
#include "tensor.h"

static kbv_gen_plan plan(int dist, int domain) {
    kbv_gen_plan g;
    memset(&g, 0, sizeof g);
    g.s.key[0] = 0x12345678u, g.s.key[1] = 0x9abcdef0u, g.s.tag = 3, g.s.input = 1;
    g.s.dist = dist, g.s.domain = domain, g.s.lo = 0.1f, g.s.hi = 1.1f;
    g.kind = KBV_GEN_FLOAT, g.dtype = KBV_DT_F32;
    return g;
}

int main(void) {
    /* Random123 kat_vectors, "philox4x32 10": counter, key -> output. */
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1},
    };
    for (int k = 0; k < 3; k++) {
        uint32_t out[4];
        kbv_philox4x32_10(kat[k], kat[k] + 4, out);
        for (int j = 0; j < 4; j++) CHECK(out[j] == kat[k][6 + j]);
    }

    enum { N = 1 << 18 };
    float *v = malloc(sizeof(float) * N);
    /* normal: mean 0, variance 1, bounded by 6, both signs. */
    kbv_gen_plan g = plan(KBV_DIST_NORMAL, KBV_DOM_RAW);
    gen_fill_host(&g, v, N, 4);
    double s = 0, s2 = 0, mx = 0;
    for (int i = 0; i < N; i++) s += v[i], s2 += (double)v[i] * v[i], mx = fmax(mx, fabs(v[i]));
    CHECK_NEAR(s / N, 0, 0.01);
    CHECK_NEAR(s2 / N, 1, 0.02);
    CHECK(mx <= 6 && mx > 3.5);
    /* the same plan gives the same values; another key does not */
    float a = v[123];
    gen_fill_host(&g, v, 200, 4);
    CHECK(v[123] == a);
    g.s.key[0]++;
    gen_fill_host(&g, v, 200, 4);
    CHECK(v[123] != a);

    /* uniform_shifted: inside its asymmetric bounds, mean far from 0. */
    g = plan(KBV_DIST_UNIFORM_SHIFTED, KBV_DOM_RAW);
    float lo, hi;
    kbv_shifted_bounds(&g.s, &lo, &hi);
    CHECK(lo < 0 && hi > 0 && fabsf(lo + hi) >= 1.0f);
    gen_fill_host(&g, v, N, 4);
    s = 0;
    int inside = 1;
    for (int i = 0; i < N; i++) s += v[i], inside &= v[i] >= lo && v[i] < hi;
    CHECK(inside);
    CHECK_NEAR(s / N, (lo + hi) / 2, 0.01);

    /* mixed_magnitude: per case, every value below float16's smallest normal (2^-14) or above
     * its largest (65504), with the window's magnitudes spread over 256-element blocks; both
     * windows occur among the case numbers (tags). */
    int seen[2] = {0, 0};
    for (uint32_t tag = 0; tag < 64 && !(seen[0] && seen[1]); tag++) {
        g = plan(KBV_DIST_MIXED_MAGNITUDE, KBV_DOM_RAW);
        g.s.tag = tag;
        int low = kbv_mixed_low(&g.s);
        if (seen[low]++) continue;
        gen_fill_host(&g, v, N, 4);
        float amin = INFINITY, amax = 0;
        int neg = 0, f16_normal = 0, f16_finite = 0;
        for (int i = 0; i < N; i++) {
            uint16_t h = kbv_f32_to_f16(v[i]);
            amin = fminf(amin, fabsf(v[i])), amax = fmaxf(amax, fabsf(v[i])), neg += v[i] < 0;
            f16_normal += (h & 0x7c00u) != 0, f16_finite += (h & 0x7c00u) != 0x7c00u;
        }
        if (low) { /* 2^-24 .. 2^-16: float16 subnormals (and zeros), float32 normals */
            CHECK(amin >= ldexpf(1, -24) && amin < ldexpf(1, -23));
            CHECK(amax >= ldexpf(1, -17) && amax < ldexpf(1, -16));
            CHECK(f16_normal == 0);
        } else { /* 2^16 .. 2^25: Inf in float16 */
            CHECK(amin >= ldexpf(1, 16) && amin < ldexpf(1, 17));
            CHECK(amax >= ldexpf(1, 24) && amax < ldexpf(1, 25));
            CHECK(f16_finite == 0);
        }
        CHECK(neg > N / 3 && neg < 2 * N / 3);
        CHECK(floorf(log2f(fabsf(v[0]))) == floorf(log2f(fabsf(v[255])))); /* one scale per block */
        /* every input of the case has the same window */
        g.s.input = 7;
        gen_fill_host(&g, v, 1024, 4);
        CHECK(kbv_mixed_low(&g.s) == low && (fabsf(v[0]) < 1.0f) == low);
    }
    CHECK(seen[0] && seen[1]);
    /* squashed into a range, or made float16, the window is [-10, 10] (2^-10 .. 2^11) */
    for (int k = 0; k < 2; k++) {
        g = plan(KBV_DIST_MIXED_MAGNITUDE, k ? KBV_DOM_RANGE : KBV_DOM_RAW);
        float amin = INFINITY, amax = 0;
        for (int i = 0; i < N; i++) {
            float r = kbv_gen_raw(&g.s, (uint64_t)i, !k); /* k = 0: a float16 input; 1: squashed */
            amin = fminf(amin, fabsf(r)), amax = fmaxf(amax, fabsf(r));
        }
        CHECK(amin >= ldexpf(1, -10) && amin < ldexpf(1, -9));
        CHECK(amax >= ldexpf(1, 10) && amax < ldexpf(1, 11));
    }
    g = plan(KBV_DIST_MIXED_MAGNITUDE, KBV_DOM_RANGE);
    gen_fill_host(&g, v, N, 4);
    inside = 1;
    float rmin = INFINITY, rmax = -INFINITY;
    for (int i = 0; i < N; i++) inside &= v[i] >= 0.1f && v[i] <= 1.1f, rmin = fminf(rmin, v[i]), rmax = fmaxf(rmax, v[i]);
    CHECK(inside && rmin < 0.11f && rmax > 1.09f); /* spread to both ends of [lo, hi] */
    uint16_t *hv = malloc(sizeof(uint16_t) * 4096);
    g = plan(KBV_DIST_MIXED_MAGNITUDE, KBV_DOM_RAW);
    g.dtype = KBV_DT_F16;
    gen_fill_host(&g, hv, 4096, 2);
    int f16_ok = 1;
    for (int i = 0; i < 4096; i++) f16_ok &= (hv[i] & 0x7c00u) != 0x7c00u && (hv[i] & 0x7c00u) != 0;
    CHECK(f16_ok); /* a float16 input gets finite, normal float16 values */
    free(hv);

    /* heavy_tailed: ~5% exact zeros, ties, clustered maxima, tails beyond the normal's. */
    g = plan(KBV_DIST_HEAVY_TAILED, KBV_DOM_RAW);
    gen_fill_host(&g, v, N, 4);
    int zeros = 0, fifty = 0, beyond6 = 0;
    for (int i = 0; i < N; i++) zeros += v[i] == 0, fifty += v[i] == 50.0f, beyond6 += fabsf(v[i]) > 6 && v[i] != 50.0f;
    CHECK(zeros > N * 0.04 && zeros < N * 0.07);
    CHECK(fifty > 0 && fifty % 4 == 0);
    CHECK(beyond6 > 100);

    /* domains */
    g = plan(KBV_DIST_NORMAL, KBV_DOM_ABS);
    gen_fill_host(&g, v, 4096, 4);
    int nonneg = 1;
    for (int i = 0; i < 4096; i++) nonneg &= v[i] >= 0;
    CHECK(nonneg);
    g = plan(KBV_DIST_HEAVY_TAILED, KBV_DOM_RANGE);
    gen_fill_host(&g, v, 4096, 4);
    inside = 1;
    for (int i = 0; i < 4096; i++) inside &= v[i] >= 0.1f && v[i] <= 1.1f;
    CHECK(inside);

    /* integers in range, bools with the asked share */
    int64_t *iv = malloc(sizeof(int64_t) * 10000);
    g = plan(KBV_DIST_NORMAL, KBV_DOM_RAW);
    g.kind = KBV_GEN_INT, g.dtype = KBV_DT_I64, g.ilo = 0, g.ihi = 999;
    gen_fill_host(&g, iv, 10000, 8);
    int64_t imin = 1 << 30, imax = -1;
    for (int i = 0; i < 10000; i++) imin = iv[i] < imin ? iv[i] : imin, imax = iv[i] > imax ? iv[i] : imax;
    CHECK(imin == 0 && imax == 999);
    uint8_t *bv = malloc(10000);
    g.kind = KBV_GEN_BOOL, g.dtype = KBV_DT_BOOL, g.p = 0.7f;
    gen_fill_host(&g, bv, 10000, 1);
    int ntrue = 0;
    for (int i = 0; i < 10000; i++) ntrue += bv[i];
    CHECK(ntrue > 6800 && ntrue < 7200);

    /* masks and symmetry */
    float m[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    uint8_t mask[9] = {0, 1, 1, 0, 0, 1, 0, 0, 0}; /* strict upper triangle */
    gen_mask_host(m, mask, 9, 4);
    CHECK(m[1] == 0 && m[2] == 0 && m[5] == 0 && m[3] == 4);
    float sm[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    gen_symmetrize_host(sm, 1, 3, 4);
    CHECK(sm[3] == 2 && sm[6] == 3 && sm[7] == 6 && sm[1] == 2);

    /* float -> half / bfloat16, round to nearest even */
    CHECK(kbv_f32_to_f16(1.0f) == 0x3c00 && kbv_f32_to_f16(-2.0f) == 0xc000);
    CHECK(kbv_f32_to_f16(65520.0f) == 0x7c00);                  /* rounds up to infinity */
    CHECK(kbv_f32_to_f16(ldexpf(1, -24)) == 0x0001);            /* smallest subnormal */
    CHECK(kbv_f32_to_f16(1.0f + ldexpf(1, -11)) == 0x3c00);     /* tie to even */
    CHECK(kbv_f32_to_f16(1.0f + 3 * ldexpf(1, -11)) == 0x3c02); /* tie to even, up */
    for (float x = -3.0f; x < 3.0f; x += 0.37f) CHECK_NEAR(kbv_half_to_float(kbv_f32_to_f16(x)), x, fabsf(x) * 1e-3);
    CHECK(kbv_f32_to_bf16(1.0f) == 0x3f80 && kbv_f32_to_bf16(-5.0f) == 0xc0a0);
    CHECK(kbv_f32_to_bf16(1.0f + ldexpf(1, -8)) == 0x3f80); /* tie to even */

    /* fingerprints: any byte matters; equal bytes give equal prints */
    unsigned char buf[37];
    for (int i = 0; i < 37; i++) buf[i] = (unsigned char)i;
    uint64_t f1 = gen_fingerprint_host(buf, 37);
    buf[36] ^= 1;
    CHECK(gen_fingerprint_host(buf, 37) != f1);
    buf[36] ^= 1;
    CHECK(gen_fingerprint_host(buf, 37) == f1);
    CHECK(gen_fingerprint_host(buf, 36) != f1);
    /* the whole-word fast path gives the definition's value (the GPU's), for every tail length */
    int same = 1;
    for (uint64_t len = 0; len <= 37; len++) {
        uint64_t def = kbv_fp_mix(len);
        for (uint64_t k = 0; k < (len + 7) / 8; k++) def += kbv_fp_word(buf, len, k);
        same &= gen_fingerprint_host(buf, len) == def;
    }
    CHECK(same);
    free(v), free(iv), free(bv);
    CHECK_DONE("test_gen");
}
