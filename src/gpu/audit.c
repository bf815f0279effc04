/* audit.c -- CUPTI activity tracing for kbv-worker (see audit.h). */
#include "audit.h"

#include <stdlib.h>
#include <string.h>

#if defined(KBV_HAVE_CUDA) && defined(KBV_HAVE_CUPTI)
#include "check.h"
#include <cupti.h>
#include <pthread.h>

int kbv_launch_marker(cudaStream_t s, int end);                                 /* bench.cu */
char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status); /* libstdc++ */

#define BUF_BYTES (8u << 20)

typedef struct mem_rec {
    uint64_t ts;
    long long bytes; /* + allocation, - release; 0 for pool updates */
    uint64_t pool;   /* pool address for stream-ordered allocations, else 0 */
    long long pool_size;
} mem_rec;

static struct {
    pthread_mutex_t mu;
    int started, tracing;
    mem_rec *mem;
    size_t nmem, capmem;
    audit_kernel *k;
    size_t nk, capk;
    uint64_t dropped;
    int oom; /* a record could not be kept: the report says so */
} A = {.mu = PTHREAD_MUTEX_INITIALIZER};

#define CU_CHECK(call, err)                                                                    \
    do {                                                                                       \
        CUptiResult r_ = (call);                                                               \
        if (r_ != CUPTI_SUCCESS) {                                                             \
            const char *s_ = "unknown";                                                        \
            (void)cuptiGetResultString(r_, &s_);                                               \
            return kbv_seterr((err), "%s failed at %s:%d: %s", #call, __FILE__, __LINE__, s_); \
        }                                                                                      \
    } while (0)

int audit_available(void) { return 1; }

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size, size_t *max_records) {
    *buf = aligned_alloc(8, BUF_BYTES);
    *size = *buf ? BUF_BYTES : 0;
    *max_records = 0;
}

static int grow(void **p, size_t *cap, size_t n, size_t elem) {
    if (n < *cap) return 0;
    size_t c = *cap ? *cap * 2 : 1024;
    void *q = realloc(*p, c * elem);
    if (!q) return -1;
    *p = q, *cap = c;
    return 0;
}

static void keep_kernel(const CUpti_ActivityKernel10 *k) {
    if (grow((void **)&A.k, &A.capk, A.nk, sizeof *A.k) < 0) {
        A.oom = 1;
        return;
    }
    audit_kernel *o = &A.k[A.nk++];
    memset(o, 0, sizeof *o);
    snprintf(o->name, sizeof o->name, "%s", k->name ? k->name : "?");
    o->stream = k->streamId, o->start = k->start, o->end = k->end, o->graph = k->graphId != 0;
}

static void keep_memory(const CUpti_ActivityMemory4 *m) {
    int device = m->memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE || m->memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC;
    if (!device) return;
    if (grow((void **)&A.mem, &A.capmem, A.nmem, sizeof *A.mem) < 0) {
        A.oom = 1;
        return;
    }
    mem_rec *o = &A.mem[A.nmem++];
    o->ts = m->timestamp;
    if (m->isAsync) {
        o->bytes = 0;
        o->pool = m->memoryPoolConfig.address ? m->memoryPoolConfig.address : 1;
        o->pool_size = m->memoryPoolConfig.memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL ? (long long)m->memoryPoolConfig.pool.size : 0;
    } else {
        o->pool = 0, o->pool_size = 0;
        o->bytes = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE ? -(long long)m->bytes : (long long)m->bytes;
    }
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid) {
    (void)size;
    CUpti_Activity *rec = NULL;
    pthread_mutex_lock(&A.mu);
    while (valid && cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) {
        if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) keep_kernel((const CUpti_ActivityKernel10 *)rec);
        else if (rec->kind == CUPTI_ACTIVITY_KIND_MEMORY2) keep_memory((const CUpti_ActivityMemory4 *)rec);
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS) A.dropped += dropped;
    pthread_mutex_unlock(&A.mu);
    free(buf);
}

int audit_start(kbv_err *err) {
    if (A.started) return 0;
    CU_CHECK(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), err);
    CU_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY2), err);
    A.started = 1;
    return 0;
}

static int flush(kbv_err *err) {
    GPU_CHECK(cudaDeviceSynchronize(), err);
    CU_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), err);
    return 0;
}

static int by_ts(const void *a, const void *b) {
    const mem_rec *x = a, *y = b;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* Footprint before t0, and the highest footprint in [t0, t1], over the records so far. */
static void footprint(uint64_t t0, uint64_t t1, long long *base, long long *peak, int *allocs) {
    enum { MAXPOOL = 64 };
    uint64_t pool[MAXPOOL];
    long long psize[MAXPOOL], live = 0, pools = 0;
    int np = 0;
    *base = -1, *peak = 0, *allocs = 0;
    qsort(A.mem, A.nmem, sizeof *A.mem, by_ts);
    for (size_t i = 0; i <= A.nmem; i++) {
        if (*base < 0 && (i == A.nmem || A.mem[i].ts >= t0)) *base = *peak = live + pools;
        if (i == A.nmem || A.mem[i].ts > t1) break;
        const mem_rec *m = &A.mem[i];
        if (m->pool) {
            int j = 0;
            while (j < np && pool[j] != m->pool) j++;
            if (j == np && np < MAXPOOL) pool[np] = m->pool, psize[np++] = 0;
            if (j < np) pools += m->pool_size - psize[j], psize[j] = m->pool_size;
        } else {
            live += m->bytes;
            if (m->ts >= t0 && m->bytes > 0) ++*allocs;
        }
        if (m->ts >= t0 && live + pools > *peak) *peak = live + pools;
    }
}

int audit_footprint(long long *bytes, kbv_err *err) {
    if (!A.started) return kbv_seterr(err, "the CUPTI audit was not started");
    if (flush(err) < 0) return -1;
    uint64_t now = 0;
    CU_CHECK(cuptiGetTimestamp(&now), err);
    long long base, peak;
    int allocs;
    pthread_mutex_lock(&A.mu);
    footprint(now + 1, now + 1, &base, &peak, &allocs);
    pthread_mutex_unlock(&A.mu);
    *bytes = base;
    return 0;
}

static uint64_t window_t0;

int audit_begin(uintptr_t stream, kbv_err *err) {
    if (!A.started) return kbv_seterr(err, "the CUPTI audit was not started");
    if (flush(err) < 0) return -1;
    pthread_mutex_lock(&A.mu);
    A.nk = 0;
    pthread_mutex_unlock(&A.mu);
    CU_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), err);
    A.tracing = 1;
    CU_CHECK(cuptiGetTimestamp(&window_t0), err);
    GPU_CHECK((cudaError_t)kbv_launch_marker((cudaStream_t)stream, 0), err);
    return 0;
}

static void demangle(char *name, size_t cap) {
    int status = -1;
    size_t len = 0;
    char *d = __cxa_demangle(name, NULL, &len, &status);
    if (d && status == 0) snprintf(name, cap, "%s", d);
    free(d);
}

int audit_end(uintptr_t stream, audit_report *r, kbv_err *err) {
    memset(r, 0, sizeof *r);
    if (!A.tracing) return kbv_seterr(err, "audit_end without audit_begin");
    GPU_CHECK((cudaError_t)kbv_launch_marker((cudaStream_t)stream, 1), err);
    cudaError_t e = cudaDeviceSynchronize();
    uint64_t t1 = 0;
    (void)cuptiGetTimestamp(&t1);
    CU_CHECK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), err);
    A.tracing = 0;
    GPU_CHECK(e, err);
    if (flush(err) < 0) return -1;
    pthread_mutex_lock(&A.mu);
    int have_begin = 0, have_end = 0;
    for (size_t i = 0; i < A.nk; i++) {
        if (strstr(A.k[i].name, "kbv_audit_begin_marker"))
            have_begin = 1, r->own_stream = A.k[i].stream, r->begin_ns = A.k[i].end, r->empty_ns = A.k[i].end - A.k[i].start;
        else if (strstr(A.k[i].name, "kbv_audit_end_marker")) have_end = 1, r->stop_ns = A.k[i].start;
    }
    r->markers = have_begin && have_end;
    r->k = calloc(A.nk ? A.nk : 1, sizeof *r->k);
    if (!r->k) {
        pthread_mutex_unlock(&A.mu);
        return kbv_seterr(err, "out of memory");
    }
    for (size_t i = 0; i < A.nk; i++) {
        if (strstr(A.k[i].name, "kbv_audit_begin_marker") || strstr(A.k[i].name, "kbv_audit_end_marker")) continue;
        r->k[r->nk] = A.k[i];
        demangle(r->k[r->nk].name, sizeof r->k[r->nk].name);
        r->nk++;
    }
    A.nk = 0;
    r->dropped = A.dropped + (uint64_t)A.oom;
    footprint(window_t0, t1, &r->mem_base, &r->mem_peak, &r->allocations);
    pthread_mutex_unlock(&A.mu);
    return 0;
}

void audit_report_free(audit_report *r) {
    free(r->k);
    r->k = NULL, r->nk = 0;
}

#else /* built without CUPTI */

static int no_cupti(kbv_err *err) { return kbv_seterr(err, "kbv-worker was built without CUPTI"); }
int audit_available(void) { return 0; }
int audit_start(kbv_err *err) { return no_cupti(err); }
int audit_footprint(long long *bytes, kbv_err *err) {
    *bytes = 0;
    return no_cupti(err);
}
int audit_begin(uintptr_t stream, kbv_err *err) {
    (void)stream;
    return no_cupti(err);
}
int audit_end(uintptr_t stream, audit_report *r, kbv_err *err) {
    (void)stream;
    memset(r, 0, sizeof *r);
    return no_cupti(err);
}
void audit_report_free(audit_report *r) { (void)r; }

#endif
