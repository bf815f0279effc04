/* gen.c -- CPU input generation and fingerprints (the GPU twin is src/gpu/gen.cu).
 * Built with -ffp-contract=off so that no multiply-add is fused: see gen.h. */
#include "gen_host.h"

#include <string.h>

void gen_fill_host(const kbv_gen_plan *g, void *out, int64_t n, size_t elem_size) {
    unsigned char *o = out;
    for (int64_t i = 0; i < n; i++) kbv_gen_store(g, (uint64_t)i, o + (size_t)i * elem_size);
}

void gen_mask_host(void *out, const uint8_t *mask, int64_t n, size_t elem_size) {
    unsigned char *o = out;
    for (int64_t i = 0; i < n; i++)
        if (mask[i]) memset(o + (size_t)i * elem_size, 0, elem_size);
}

void gen_symmetrize_host(void *out, int64_t batch, int64_t d, size_t elem_size) {
    unsigned char *o = out;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t r = 0; r < d; r++)
            for (int64_t c = r + 1; c < d; c++)
                memcpy(o + (size_t)((b * d + c) * d + r) * elem_size, o + (size_t)((b * d + r) * d + c) * elem_size, elem_size);
}

uint64_t gen_fingerprint_host(const void *data, uint64_t nbytes) {
    uint64_t h = kbv_fp_mix(nbytes), words = (nbytes + 7) / 8, k = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* Whole words as they lie in memory: the same value kbv_fp_word assembles byte by byte. */
    for (; k < nbytes / 8; k++) {
        uint64_t w;
        memcpy(&w, (const unsigned char *)data + k * 8, 8);
        h += kbv_fp_mix(w + k * 0x9e3779b97f4a7c15ULL);
    }
#endif
    for (; k < words; k++) h += kbv_fp_word(data, nbytes, k);
    return h;
}

#ifndef KBV_HAVE_CUDA
static int no_cuda(kbv_err *err) { return kbv_seterr(err, "built without CUDA"); }
int gpu_gen_fill(const kbv_gen_plan *g, void *d, int64_t n, size_t es, kbv_err *err) {
    (void)g, (void)d, (void)n, (void)es;
    return no_cuda(err);
}
int gpu_gen_mask(void *d, const uint8_t *m, int64_t n, size_t es, kbv_err *err) {
    (void)d, (void)m, (void)n, (void)es;
    return no_cuda(err);
}
int gpu_gen_symmetrize(void *d, int64_t b, int64_t n, size_t es, kbv_err *err) {
    (void)d, (void)b, (void)n, (void)es;
    return no_cuda(err);
}
int gpu_fingerprint(const void *d, uint64_t n, uint64_t *out, kbv_err *err) {
    (void)d, (void)n, (void)out;
    return no_cuda(err);
}
#endif
