/* timer-floor.cu -- what an event-timed empty kernel costs, piece by piece (BENCHMARKS.md).
 *
 * Times kbv's sample sequence and variants of it around one empty <<<1,1>>> kernel, rounds
 * interleaved over the variants, and prints each variant's median and quartiles in us:
 *   pair        flush, cushion, start event, stop event              (the event pair alone)
 *   kernel      flush, cushion, start, empty kernel, stop
 *   kernel2     flush, cushion, start, empty kernel x2, stop         (one more launch's cost)
 *   kbv         flush, cushion, SM-clock stamp, start, kernel, stop, stamp   (kbv's timer.c)
 *   noflush     cushion, start, kernel, stop                         (L2 not flushed)
 *   nocushion   synchronize, start, kernel, stop                     (launch latency inside)
 *   gtimer      flush, cushion, %globaltimer stamp kernel, kernel, stamp kernel (device clock)
 * With a second argument "copies": the kernel variant once per pair of 16 event pairs and once
 * per each of 8 copies of the empty kernel (distinct code), each pair and copy's median: does
 * where an event or a kernel's code sits move the time?
 * Standalone (no kbv code): nvcc -O2 -arch=sm_90 -o timer-floor scripts/timer-floor.cu
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

static __device__ __forceinline__ unsigned long long gtime(void) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
static __global__ void cushion(volatile int *flag) {
    unsigned long long t0 = gtime();
    while (*flag == 0 && gtime() - t0 < 20000000ull) {
    }
}
static __global__ void empty(void) {}
template <int N> __global__ void empty_copy(int *p) {
    if (p) p[N] = N; /* never taken: p is NULL; makes each copy distinct code */
}
typedef void (*copy_fn)(int *);
static const copy_fn copies[8] = {empty_copy<0>, empty_copy<1>, empty_copy<2>, empty_copy<3>,
                                  empty_copy<4>, empty_copy<5>, empty_copy<6>, empty_copy<7>};
static __global__ void stamp_all(unsigned long long *p) { /* one block per SM, like kbv's */
    if (threadIdx.x == 0 && blockIdx.x == 0) p[0] = gtime();
}
static __global__ void gstamp(unsigned long long *p) { p[0] = gtime(); }
static __global__ void discard(char *p, long long lines) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < lines; i += (long long)gridDim.x * blockDim.x)
        asm volatile("discard.global.L2 [%0], 128;" ::"l"(p + i * 128) : "memory");
}

enum { PAIR, KERNEL, KERNEL2, KBV, NOFLUSH, NOCUSHION, GTIMER, NV };
static const char *names[NV] = {"pair", "kernel", "kernel2", "kbv", "noflush", "nocushion", "gtimer"};

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One sample: flush, cushion, e0, kernel (copy k, or the plain empty one for k < 0), e1. */
static double sample_one(cudaStream_t s, char *flush, size_t fbytes, int *flag, int *flag_dev, cudaEvent_t e0, cudaEvent_t e1, int k, int r) {
    *(volatile int *)flag = 0;
    CK(cudaMemsetAsync(flush, r & 0xff, fbytes, s));
    discard<<<1024, 256, 0, s>>>(flush, (long long)(fbytes / 128));
    cushion<<<1, 1, 0, s>>>(flag_dev);
    CK(cudaEventRecord(e0, s));
    if (k < 0) empty<<<1, 1, 0, s>>>();
    else copies[k]<<<1, 1, 0, s>>>(NULL);
    CK(cudaEventRecord(e1, s));
    CK(cudaGetLastError());
    __atomic_store_n(flag, 1, __ATOMIC_SEQ_CST);
    CK(cudaDeviceSynchronize());
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    return ms * 1000.0;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 300;
    int copies_mode = argc > 2 && argv[2][0] == 'c';
    int nsm = 0, l2 = 0;
    CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    size_t fbytes = 2 * (size_t)l2;
    char *flush;
    CK(cudaMalloc(&flush, fbytes));
    int *flag, *flag_dev;
    CK(cudaHostAlloc((void **)&flag, sizeof *flag, cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer((void **)&flag_dev, flag, 0));
    unsigned long long *st;
    CK(cudaMalloc(&st, 8 * sizeof *st));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    if (copies_mode) { /* 16 event pairs with the plain kernel, then 8 kernel copies with pair 0 */
        enum { NP = 16, NK = 8 };
        cudaEvent_t ev[NP][2];
        for (int i = 0; i < NP; i++) {
            CK(cudaEventCreate(&ev[i][0]));
            CK(cudaEventCreate(&ev[i][1]));
        }
        double *u = (double *)malloc(sizeof(double) * (NP + NK) * rounds);
        for (int r = -10; r < rounds; r++)
            for (int i = 0; i < NP + NK; i++) {
                double us = i < NP ? sample_one(s, flush, fbytes, flag, flag_dev, ev[i][0], ev[i][1], -1, r)
                                   : sample_one(s, flush, fbytes, flag, flag_dev, ev[0][0], ev[0][1], i - NP, r);
                if (r >= 0) u[i * rounds + r] = us;
            }
        printf("# %d rounds; microseconds\n# what median q1 q3\n", rounds);
        for (int i = 0; i < NP + NK; i++) {
            double *x = u + i * rounds;
            qsort(x, rounds, sizeof *x, cmp);
            printf("%s%d %.3f %.3f %.3f\n", i < NP ? "events" : "code", i < NP ? i : i - NP, x[rounds / 2], x[rounds / 4], x[3 * rounds / 4]);
        }
        free(u);
        return 0;
    }
    double *t = (double *)malloc(sizeof(double) * NV * rounds);
    for (int r = -20; r < rounds; r++) {
        for (int v = 0; v < NV; v++) {
            *(volatile int *)flag = 0;
            if (v != NOFLUSH && v != NOCUSHION) {
                CK(cudaMemsetAsync(flush, r & 0xff, fbytes, s));
                discard<<<1024, 256, 0, s>>>(flush, (long long)(fbytes / 128));
            }
            if (v == NOCUSHION) CK(cudaStreamSynchronize(s));
            else cushion<<<1, 1, 0, s>>>(flag_dev);
            if (v == KBV) stamp_all<<<nsm, 32, 0, s>>>(st + 4);
            if (v == GTIMER) gstamp<<<1, 1, 0, s>>>(st);
            else CK(cudaEventRecord(e0, s));
            if (v != PAIR) empty<<<1, 1, 0, s>>>();
            if (v == KERNEL2) empty<<<1, 1, 0, s>>>();
            if (v == GTIMER) gstamp<<<1, 1, 0, s>>>(st + 1);
            else CK(cudaEventRecord(e1, s));
            if (v == KBV) stamp_all<<<nsm, 32, 0, s>>>(st + 5);
            CK(cudaGetLastError());
            __atomic_store_n(flag, 1, __ATOMIC_SEQ_CST);
            CK(cudaDeviceSynchronize());
            double us;
            if (v == GTIMER) {
                unsigned long long h[2];
                CK(cudaMemcpy(h, st, sizeof h, cudaMemcpyDeviceToHost));
                us = (double)(h[1] - h[0]) / 1000.0;
            } else {
                float ms;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                us = ms * 1000.0;
            }
            if (r >= 0) t[v * rounds + r] = us;
        }
    }
    printf("# %d rounds, %d SMs, flush %zu bytes; microseconds\n# variant median q1 q3\n", rounds, nsm, fbytes);
    for (int v = 0; v < NV; v++) {
        double *x = t + v * rounds;
        qsort(x, rounds, sizeof *x, cmp);
        printf("%s %.3f %.3f %.3f\n", names[v], x[rounds / 2], x[rounds / 4], x[3 * rounds / 4]);
    }
    free(t);
    return 0;
}
