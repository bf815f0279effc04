/* tensor.c -- dtype table, host tensors and the .kbt file format.
 *
 * .kbt layout (little-endian, see docs/formats.md):
 *   0  char[8]  magic "KBVTNSR1"
 *   8  u32      dtype (kbv_dtype)
 *   12 u32      ndim (<= KBV_MAX_DIMS)
 *   16 u64      nbytes of data
 *   24 i64[ndim] shape, then i64[ndim] strides (elements)
 *   data starts at the next multiple of 64 bytes, C-contiguous.
 * Does not: convert dtypes, move data to a device, or compare values (judge.c does).
 */
#include "tensor.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const char kMagic[8] = {'K', 'B', 'V', 'T', 'N', 'S', 'R', '1'};

static const struct {
    const char *name;
    size_t size;
    int is_float;
} kDtypes[KBV_DT_COUNT] = {
    [KBV_DT_INVALID] = {"invalid", 0, 0}, [KBV_DT_BOOL] = {"bool", 1, 0},   [KBV_DT_U8] = {"uint8", 1, 0},    [KBV_DT_I8] = {"int8", 1, 0},
    [KBV_DT_I16] = {"int16", 2, 0},       [KBV_DT_I32] = {"int32", 4, 0},   [KBV_DT_I64] = {"int64", 8, 0},   [KBV_DT_F16] = {"float16", 2, 1},
    [KBV_DT_BF16] = {"bfloat16", 2, 1},   [KBV_DT_F32] = {"float32", 4, 1}, [KBV_DT_F64] = {"float64", 8, 1},
};

const char *kbv_dtype_name(kbv_dtype dt) { return dt > KBV_DT_INVALID && dt < KBV_DT_COUNT ? kDtypes[dt].name : "invalid"; }

kbv_dtype kbv_dtype_from_name(const char *name) {
    if (!name) return KBV_DT_INVALID;
    if (strncmp(name, "torch.", 6) == 0) name += 6;
    for (int i = 1; i < KBV_DT_COUNT; i++)
        if (strcmp(name, kDtypes[i].name) == 0) return (kbv_dtype)i;
    return KBV_DT_INVALID;
}

size_t kbv_dtype_size(kbv_dtype dt) { return dt > 0 && dt < KBV_DT_COUNT ? kDtypes[dt].size : 0; }
int kbv_dtype_is_float(kbv_dtype dt) { return dt > 0 && dt < KBV_DT_COUNT && kDtypes[dt].is_float; }

int64_t kbv_tensor_numel(const kbv_tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n;
}

static int check_shape(kbv_dtype dt, int ndim, const int64_t *shape, size_t *nbytes, kbv_err *err) {
    if (!kbv_dtype_size(dt)) return kbv_seterr(err, "unsupported dtype %d", (int)dt);
    if (ndim < 0 || ndim > KBV_MAX_DIMS) return kbv_seterr(err, "tensor has %d dimensions (at most %d)", ndim, KBV_MAX_DIMS);
    uint64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) return kbv_seterr(err, "negative dimension %lld", (long long)shape[i]);
        if (shape[i] && n > (UINT64_MAX / 16) / (uint64_t)shape[i]) return kbv_seterr(err, "tensor too large");
        n *= (uint64_t)shape[i];
    }
    *nbytes = (size_t)(n * kbv_dtype_size(dt));
    return 0;
}

int kbv_tensor_describe(kbv_tensor *t, kbv_dtype dt, int ndim, const int64_t *shape, kbv_err *err) {
    size_t nbytes;
    memset(t, 0, sizeof *t);
    if (check_shape(dt, ndim, shape, &nbytes, err) < 0) return -1;
    t->dtype = dt, t->ndim = ndim, t->nbytes = nbytes;
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) t->shape[i] = shape[i], t->strides[i] = s, s *= shape[i] ? shape[i] : 1;
    return 0;
}

int kbv_tensor_alloc(kbv_tensor *t, kbv_dtype dt, int ndim, const int64_t *shape, kbv_err *err) {
    if (kbv_tensor_describe(t, dt, ndim, shape, err) < 0) return -1;
    t->data = calloc(1, t->nbytes ? t->nbytes : 1);
    if (!t->data) return kbv_seterr(err, "out of memory allocating %zu bytes", t->nbytes);
    return 0;
}

/* The memory of freed tensors, kept for the next tensor of the same size while kbv evaluates
 * (kbv_tensor_pool_keep; never in a worker, whose memory counts against the candidate's limit,
 * nor between evaluations). The judge holds outputs of the same few sizes for every case and
 * every re-check, and each page of a fresh anonymous mapping costs the kernel a zeroing when it
 * is first touched: on 200 MB outputs as much CPU as the judge's comparisons. What is mapped,
 * in use plus kept, never exceeds the most that was once in use at the same time: a tensor that
 * finds no mapping of its size first returns kept ones (the oldest first) until it fits under
 * that peak, or none is left. Every user overwrites the whole mapping (a load reads the whole
 * file or fails, a copy copies all), so no byte of an earlier tensor is ever seen. */
#define POOL_SLOTS 8
static struct {
    void *p;
    size_t n;
} pool[POOL_SLOTS];
static int pool_n, pool_on;
static size_t pool_kept, pool_in_use, pool_peak;
static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;

/* Kept mapping i, out of the pool (with pool_mu held). */
static void *pool_take(int i) {
    void *p = pool[i].p;
    pool_kept -= pool[i].n;
    memmove(&pool[i], &pool[i + 1], sizeof pool[0] * (size_t)(pool_n - i - 1));
    pool_n--;
    return p;
}

static void pool_drop(int i) { /* with pool_mu held */
    size_t n = pool[i].n;
    munmap(pool_take(i), n);
}

/* A mapping of n bytes, its contents undefined, or NULL (errno set). */
static void *pool_get(size_t n) {
    void *p = NULL;
    pthread_mutex_lock(&pool_mu);
    int keep = pool_on;
    for (int i = 0; i < pool_n && !p; i++)
        if (pool[i].n == n) p = pool_take(i);
    if (!p)
        while (pool_n > 0 && pool_in_use + pool_kept + n > pool_peak) pool_drop(0);
    pthread_mutex_unlock(&pool_mu);
    if (!p) {
        p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        if (p == MAP_FAILED) return NULL;
        /* kbv's: not in a forked child (a worker's, which runs the sandbox's setup and then
         * execs), or a fork would mark every page copy-on-write and each page's next write
         * here would fault. Without it (an old kernel), only that cost comes back. A worker's
         * stay in its children: the candidate's own forks may use them. */
        if (keep) (void)madvise(p, n, MADV_DONTFORK);
    }
    pthread_mutex_lock(&pool_mu);
    pool_in_use += n;
    if (pool_in_use > pool_peak) pool_peak = pool_in_use;
    pthread_mutex_unlock(&pool_mu);
    return p;
}

static void pool_put(void *p, size_t n) {
    pthread_mutex_lock(&pool_mu);
    pool_in_use -= n;
    if (pool_on) {
        if (pool_n == POOL_SLOTS) pool_drop(0);
        pool[pool_n].p = p, pool[pool_n++].n = n, pool_kept += n, p = NULL;
    }
    pthread_mutex_unlock(&pool_mu);
    if (p) munmap(p, n);
}

void kbv_tensor_pool_keep(int on) {
    pthread_mutex_lock(&pool_mu);
    pool_on = on;
    if (!on)
        while (pool_n > 0) pool_drop(0);
    pool_peak = pool_in_use;
    pthread_mutex_unlock(&pool_mu);
}

int kbv_tensor_copy(kbv_tensor *dst, const kbv_tensor *src) {
    *dst = *src;
    dst->data = NULL, dst->mapped = 0;
    if (!src->nbytes) return (dst->data = calloc(1, 1)) ? 0 : -1;
    if (!(dst->data = pool_get(src->nbytes))) return -1;
    memcpy(dst->data, src->data, src->nbytes);
    dst->mapped = 1;
    return 0;
}

void kbv_tensor_drop_data(kbv_tensor *t) {
    if (!t) return;
    if (t->mapped && t->data) pool_put(t->data, t->nbytes ? t->nbytes : 1);
    else free(t->data);
    t->data = NULL, t->mapped = 0;
}

void kbv_tensor_free(kbv_tensor *t) {
    if (!t) return;
    kbv_tensor_drop_data(t);
    t->nbytes = 0;
}

float kbv_half_to_float(uint16_t h) {
    int sign = h >> 15, ex = (h >> 10) & 31, man = h & 1023;
    float v;
    if (ex == 0) v = ldexpf((float)man, -24);
    else if (ex == 31) v = man ? NAN : INFINITY;
    else v = ldexpf((float)(man | 1024), ex - 25);
    return sign ? -v : v;
}

float kbv_bf16_to_float(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

void kbv_tensor_shape_str(const kbv_tensor *t, char *out, size_t outlen) {
    size_t o = 0;
    o += (size_t)snprintf(out + o, o < outlen ? outlen - o : 0, "[");
    for (int i = 0; i < t->ndim; i++) o += (size_t)snprintf(out + o, o < outlen ? outlen - o : 0, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
    snprintf(out + o, o < outlen ? outlen - o : 0, "]");
}

static size_t header_size(int ndim) { return (24 + 16 * (size_t)ndim + 63) / 64 * 64; }

int kbv_tensor_write(const kbv_tensor *t, const void *src, kbv_copy_fn copy, const char *path, kbv_err *err) {
    size_t nbytes;
    if (check_shape(t->dtype, t->ndim, t->shape, &nbytes, err) < 0) return kbv_wraperr(err, "%s", path);
    if (nbytes != t->nbytes) return kbv_seterr(err, "%s: data size %zu does not match shape (%zu)", path, t->nbytes, nbytes);
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) return kbv_seterr(err, "%s: path too long", path);
    unsigned char hdr[24 + 16 * KBV_MAX_DIMS + 64];
    size_t hlen = header_size(t->ndim);
    memset(hdr, 0, sizeof hdr);
    memcpy(hdr, kMagic, 8);
    uint32_t u32 = (uint32_t)t->dtype;
    memcpy(hdr + 8, &u32, 4);
    u32 = (uint32_t)t->ndim;
    memcpy(hdr + 12, &u32, 4);
    uint64_t u64 = nbytes;
    memcpy(hdr + 16, &u64, 8);
    memcpy(hdr + 24, t->shape, 8 * (size_t)t->ndim);
    memcpy(hdr + 24 + 8 * (size_t)t->ndim, t->strides, 8 * (size_t)t->ndim);
    int fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return kbv_seterr(err, "%s: %s", tmp, strerror(errno));
    int rc = 0;
    if (!copy) {
        if (kbv_write_all(fd, hdr, hlen) < 0 || kbv_write_all(fd, src, nbytes) < 0)
            rc = kbv_seterr(err, "%s: write failed: %s", tmp, strerror(errno));
    } else {
        /* The copy lands in the file's pages directly (one copy, not two). The space is
         * reserved first: a full file system then fails here, not with SIGBUS in the copy. */
        int e = posix_fallocate(fd, 0, (off_t)(hlen + nbytes));
        void *m = e ? MAP_FAILED : mmap(NULL, hlen + nbytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
        if (e || m == MAP_FAILED) {
            rc = kbv_seterr(err, "%s: %s", tmp, strerror(e ? e : errno));
        } else {
            memcpy(m, hdr, hlen);
            if (nbytes && copy((char *)m + hlen, src, nbytes, err) < 0) rc = kbv_wraperr(err, "%s", path);
            munmap(m, hlen + nbytes);
        }
    }
    if (rc < 0) {
        close(fd), unlink(tmp);
        return -1;
    }
    if (close(fd) < 0 || rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        return kbv_seterr(err, "%s: %s", path, strerror(e));
    }
    return 0;
}

int kbv_tensor_save(const kbv_tensor *t, const char *path, kbv_err *err) { return kbv_tensor_write(t, t->data, NULL, path, err); }

int kbv_tensor_load(kbv_tensor *t, const char *path, kbv_err *err) { return kbv_tensor_load_capped(t, path, -1, err); }

int kbv_tensor_load_capped(kbv_tensor *t, const char *path, long long max_bytes, kbv_err *err) {
    memset(t, 0, sizeof *t);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return kbv_seterr(err, "%s: %s", path, errno == ELOOP ? "a symbolic link, not a tensor file" : strerror(errno));
    struct stat st;
    unsigned char hdr[24];
    const char *bad = fstat(fd, &st) < 0     ? strerror(errno)
                      : !S_ISREG(st.st_mode) ? "not a regular file"
                      : st.st_nlink != 1     ? "a file with other links to it"
                                             : NULL;
    if (bad) {
        close(fd);
        return kbv_seterr(err, "%s: %s", path, bad);
    }
    if (kbv_read_full(fd, hdr, sizeof hdr) < 0) {
        close(fd);
        return kbv_seterr(err, "%s: truncated tensor file", path);
    }
    uint32_t dt, ndim;
    uint64_t nbytes;
    memcpy(&dt, hdr + 8, 4), memcpy(&ndim, hdr + 12, 4), memcpy(&nbytes, hdr + 16, 8);
    if (memcmp(hdr, kMagic, 8) != 0 || dt == 0 || dt >= KBV_DT_COUNT || ndim > KBV_MAX_DIMS) {
        close(fd);
        return kbv_seterr(err, "%s: not a kbv tensor file", path);
    }
    t->dtype = (kbv_dtype)dt, t->ndim = (int)ndim;
    if (kbv_read_full(fd, t->shape, 8 * ndim) < 0 || kbv_read_full(fd, t->strides, 8 * ndim) < 0) {
        close(fd);
        return kbv_seterr(err, "%s: truncated tensor header", path);
    }
    size_t expect, hlen = header_size((int)ndim);
    if (check_shape(t->dtype, t->ndim, t->shape, &expect, err) < 0) {
        close(fd);
        return kbv_wraperr(err, "%s", path);
    }
    if (max_bytes >= 0 && nbytes > (uint64_t)max_bytes) {
        close(fd);
        kbv_seterr(err, "%s: declares %llu bytes of data, more than the %lld allowed", path, (unsigned long long)nbytes, max_bytes);
        return -2;
    }
    if (expect != nbytes || (uint64_t)st.st_size != hlen + nbytes) {
        close(fd);
        return kbv_seterr(err, "%s: size %lld does not match its header", path, (long long)st.st_size);
    }
    t->nbytes = nbytes;
    if (nbytes == 0) {
        close(fd);
        t->data = calloc(1, 1);
        return t->data ? 0 : kbv_seterr(err, "out of memory");
    }
    /* Each tensor gets an anonymous mapping of its own: one kept from a freed tensor of the
     * same size, or a fresh one. */
    void *d = pool_get(nbytes);
    if (!d) {
        close(fd);
        kbv_seterr(err, "%s: out of memory for %zu bytes", path, (size_t)nbytes);
        return -3; /* the reader's own exhaustion, not the file's fault */
    }
    if (lseek(fd, (off_t)hlen, SEEK_SET) < 0 || kbv_read_full(fd, d, nbytes) < 0) {
        int e = errno;
        close(fd), pool_put(d, nbytes);
        return kbv_seterr(err, "%s: read failed: %s", path, strerror(e));
    }
    close(fd);
    t->data = d, t->mapped = 1;
    return 0;
}

int kbv_weight_stats(const void *data, kbv_dtype dt, int64_t n, double *lo, double *mean, double *sd) {
    *lo = *mean = *sd = 0;
    if (n <= 0 || !kbv_dtype_is_float(dt)) return KBV_WSTATS_KEEP;
    kbv_tensor t = {.dtype = dt, .data = (void *)data};
    double mn = INFINITY, mx = -INFINITY, sum = 0;
    int integral = 1;
    for (int64_t i = 0; i < n; i++) {
        double x = kbv_tensor_get(&t, i);
        if (!isfinite(x)) return KBV_WSTATS_KEEP;
        if (x < mn) mn = x;
        if (x > mx) mx = x;
        if (integral && x != rint(x)) integral = 0;
        sum += x;
    }
    *lo = mn;
    if (mn == mx) return KBV_WSTATS_CONST;
    if (integral) return KBV_WSTATS_KEEP;
    double m = sum / (double)n, ss = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = kbv_tensor_get(&t, i) - m;
        ss += d * d;
    }
    *mean = m, *sd = sqrt(ss / (double)(n - 1));
    return KBV_WSTATS_NORMAL;
}
