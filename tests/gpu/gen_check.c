/* gen_check.c -- the input generator gives the same bytes on the GPU as on the CPU, for
 * every distribution, domain and dtype, and the fingerprints agree. Built and run by
 * `make test-gpu`; prints "N passed, M failed". */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_host.h"
#include "tensor.h"

int main(void) {
    const int64_t n = (1 << 20) + 77; /* not a multiple of any block size */
    int passed = 0, failed = 0;
    kbv_err err = {{0}};
    static const int dts[] = {KBV_DT_F32, KBV_DT_F16, KBV_DT_BF16, KBV_DT_F64};
    /* every distribution; mixed_magnitude twice, in a case of each window (high: above
     * float16's range, low: below its normals) */
    static const int runs[][2] = {{KBV_DIST_NORMAL, 0},          {KBV_DIST_UNIFORM_SHIFTED, 0}, {KBV_DIST_MIXED_MAGNITUDE, 0},
                                  {KBV_DIST_MIXED_MAGNITUDE, 1}, {KBV_DIST_HEAVY_TAILED, 0},    {KBV_DIST_UNIFORM01, 0}};
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++)
        for (int dom = 0; dom < KBV_DOM_COUNT; dom++)
            for (int k = 0; k < 4; k++) {
                int dist = runs[r][0];
                kbv_gen_plan g;
                memset(&g, 0, sizeof g);
                g.s.key[0] = 0xdeadbeefu ^ (unsigned)dist, g.s.key[1] = 0x01234567u, g.s.tag = 9, g.s.input = 2;
                while (dist == KBV_DIST_MIXED_MAGNITUDE && kbv_mixed_low(&g.s) != runs[r][1]) g.s.tag++;
                g.s.dist = dist, g.s.domain = dom, g.s.lo = -0.5f, g.s.hi = 2.0f;
                g.kind = KBV_GEN_FLOAT, g.dtype = dts[k];
                size_t es = kbv_dtype_size((kbv_dtype)dts[k]), nb = (size_t)n * es;
                unsigned char *host = malloc(nb), *back = malloc(nb);
                void *dev = NULL;
                uint64_t fpg = 0;
                gen_fill_host(&g, host, n, es);
                int ok = cudaMalloc(&dev, nb) == cudaSuccess && gpu_gen_fill(&g, dev, n, es, &err) == 0 &&
                         cudaMemcpy(back, dev, nb, cudaMemcpyDeviceToHost) == cudaSuccess && gpu_fingerprint(dev, nb, &fpg, &err) == 0;
                size_t first = nb;
                for (size_t i = 0; ok && i < nb; i++)
                    if (host[i] != back[i]) {
                        first = i;
                        break;
                    }
                if (ok && first == nb && fpg == gen_fingerprint_host(host, nb)) {
                    passed++;
                } else {
                    failed++;
                    printf("not ok - dist %d (tag %u) domain %d dtype %s: %s first differing byte %zu\n", dist, g.s.tag, dom,
                           kbv_dtype_name((kbv_dtype)dts[k]), err.msg, first);
                }
                cudaFree(dev), free(host), free(back);
            }
    /* integers and booleans */
    for (int kind = 1; kind <= 2; kind++) {
        kbv_gen_plan g;
        memset(&g, 0, sizeof g);
        g.s.key[0] = 7, g.kind = kind, g.dtype = kind == 1 ? KBV_DT_I64 : KBV_DT_BOOL, g.ilo = -5, g.ihi = 1000, g.p = 0.25f;
        size_t es = kind == 1 ? 8 : 1, nb = (size_t)n * es;
        unsigned char *host = malloc(nb), *back = malloc(nb);
        void *dev = NULL;
        gen_fill_host(&g, host, n, es);
        int ok = cudaMalloc(&dev, nb) == cudaSuccess && gpu_gen_fill(&g, dev, n, es, &err) == 0 &&
                 cudaMemcpy(back, dev, nb, cudaMemcpyDeviceToHost) == cudaSuccess && memcmp(host, back, nb) == 0;
        if (ok) passed++;
        else failed++, printf("not ok - kind %d: %s\n", kind, err.msg);
        cudaFree(dev), free(host), free(back);
    }
    printf("gen_check: CPU == GPU for %d plans\n", passed);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
