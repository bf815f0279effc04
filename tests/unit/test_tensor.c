/* test_tensor.c -- tensor.c: the .kbt format round-trips; damaged files are refused. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "tensor.h"

static int copies;
static int copy_ok(void *dst, const void *src, size_t n, kbv_err *err) {
    (void)err;
    copies++;
    memcpy(dst, src, n);
    return 0;
}
static int copy_fail(void *dst, const void *src, size_t n, kbv_err *err) {
    (void)dst, (void)src, (void)n;
    return kbv_seterr(err, "device lost");
}

int main(void) {
    kbv_err err = {{0}};
    char dir[4096], path[4200];
    CHECK(kbv_mkscratch(NULL, dir, sizeof dir, &err) == 0);
    snprintf(path, sizeof path, "%s/t.kbt", dir);

    kbv_tensor t, u;
    int64_t shape[3] = {2, 3, 4};
    CHECK(kbv_tensor_alloc(&t, KBV_DT_F32, 3, shape, &err) == 0);
    CHECK(t.nbytes == 96 && t.strides[0] == 12 && t.strides[1] == 4 && t.strides[2] == 1);
    for (int i = 0; i < 24; i++) ((float *)t.data)[i] = (float)i * 0.5f - 3;
    t.strides[0] = 1; /* recorded as produced, e.g. a transposed view */
    CHECK(kbv_tensor_save(&t, path, &err) == 0);
    CHECK(kbv_tensor_load(&u, path, &err) == 0);
    CHECK(u.dtype == KBV_DT_F32 && u.ndim == 3 && u.shape[2] == 4 && u.strides[0] == 1);
    CHECK(memcmp(t.data, u.data, t.nbytes) == 0);
    CHECK(kbv_tensor_get(&u, 23) == 8.5);
    char s[64];
    kbv_tensor_shape_str(&u, s, sizeof s);
    CHECK_STR(s, "[2, 3, 4]");
    kbv_tensor_free(&u);

    /* What a candidate can put at a name kbv reads: a symbolic link, a FIFO (opened without
     * blocking), a second hard link, a header declaring more data than allowed (-2). */
    char alt[600], lnk[600];
    snprintf(alt, sizeof alt, "%s/alt.kbt", dir);
    snprintf(lnk, sizeof lnk, "%s/l.kbt", dir);
    CHECK(kbv_tensor_save(&t, alt, &err) == 0 && symlink(alt, lnk) == 0);
    CHECK(kbv_tensor_load(&u, lnk, &err) == -1 && strstr(err.msg, "symbolic link") != NULL);
    CHECK(unlink(lnk) == 0 && mkfifo(lnk, 0600) == 0);
    CHECK(kbv_tensor_load(&u, lnk, &err) == -1 && strstr(err.msg, "not a regular file") != NULL);
    CHECK(unlink(lnk) == 0 && link(alt, lnk) == 0);
    CHECK(kbv_tensor_load(&u, lnk, &err) == -1 && strstr(err.msg, "other links") != NULL);
    CHECK(unlink(lnk) == 0);
    CHECK(kbv_tensor_load_capped(&u, alt, 95, &err) == -2 && strstr(err.msg, "more than the 95") != NULL);
    CHECK(kbv_tensor_load_capped(&u, alt, 96, &err) == 0 && u.nbytes == 96);
    kbv_tensor_free(&u);
    unlink(alt);

    /* A truncated file is refused with its path in the message. */
    CHECK(truncate(path, 64 + 50) == 0);
    CHECK(kbv_tensor_load(&u, path, &err) == -1);
    CHECK(strstr(err.msg, "t.kbt") != NULL);
    /* Garbage is not a tensor file. */
    FILE *f = fopen(path, "w");
    if (f) fputs("not a tensor file at all, just text........", f), fclose(f);
    CHECK(kbv_tensor_load(&u, path, &err) == -1);
    CHECK(strstr(err.msg, "not a kbv tensor file") != NULL);
    kbv_tensor_free(&t);

    /* kbv_tensor_write: bytes from elsewhere (a GPU in the worker) through a copy function
     * straight into the file; a failing copy leaves no file and names the path. */
    {
        kbv_tensor m = {.dtype = KBV_DT_F32, .ndim = 2, .shape = {3, 5}, .strides = {5, 1}, .nbytes = 60};
        float src[15];
        for (int i = 0; i < 15; i++) src[i] = (float)i - 7.25f;
        char p2[4300];
        snprintf(p2, sizeof p2, "%s/w.kbt", dir);
        CHECK(kbv_tensor_write(&m, src, copy_ok, p2, &err) == 0 && copies == 1);
        CHECK(kbv_tensor_load(&u, p2, &err) == 0 && u.nbytes == 60 && memcmp(u.data, src, 60) == 0 && u.strides[0] == 5);
        kbv_tensor_free(&u);
        unlink(p2);
        CHECK(kbv_tensor_write(&m, src, copy_fail, p2, &err) == -1 && strstr(err.msg, "w.kbt") && strstr(err.msg, "device lost"));
        CHECK(access(p2, F_OK) != 0);
        snprintf(p2, sizeof p2, "%s/w.kbt.tmp", dir);
        CHECK(access(p2, F_OK) != 0);
        m.nbytes = 64; /* a size that does not match the shape is refused */
        CHECK(kbv_tensor_write(&m, src, copy_ok, path, &err) == -1);
    }

    /* While kbv keeps (kbv_tensor_pool_keep), a freed load's memory serves the next load of the
     * same size, holding that file's bytes only, and a copy's memory too; a load of another
     * size returns what it does not fit beside. Without keeping (a worker), a freed tensor's
     * memory goes back to the system at once. */
    {
        enum { N = 300000 };
        int64_t sh[1] = {N}, sh2[1] = {N + 1};
        char pa[4300], pb[4300], pc[4300];
        snprintf(pa, sizeof pa, "%s/a.kbt", dir), snprintf(pb, sizeof pb, "%s/b.kbt", dir), snprintf(pc, sizeof pc, "%s/c.kbt", dir);
        kbv_tensor a, b, c, v;
        unsigned char inc[1];
        CHECK(kbv_tensor_alloc(&a, KBV_DT_F32, 1, sh, &err) == 0 && kbv_tensor_alloc(&b, KBV_DT_F32, 1, sh, &err) == 0);
        CHECK(kbv_tensor_alloc(&c, KBV_DT_F32, 1, sh2, &err) == 0);
        for (int i = 0; i < N; i++) ((float *)a.data)[i] = (float)i, ((float *)b.data)[i] = -(float)i - 1;
        CHECK(kbv_tensor_save(&a, pa, &err) == 0 && kbv_tensor_save(&b, pb, &err) == 0 && kbv_tensor_save(&c, pc, &err) == 0);
        CHECK(kbv_tensor_load(&u, pa, &err) == 0 && u.mapped && memcmp(u.data, a.data, a.nbytes) == 0);
        void *kept = u.data;
        pid_t pid = fork(); /* not keeping (a worker): a forked child (the candidate's own) has it too */
        if (pid == 0) _exit(memcmp(u.data, a.data, a.nbytes) == 0 ? 0 : 1);
        int st = -1;
        CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        kbv_tensor_free(&u); /* not keeping: unmapped (mincore fails on an address not mapped) */
        CHECK(mincore(kept, 4096, inc) == -1 && errno == ENOMEM);
        kbv_tensor_pool_keep(1);
        CHECK(kbv_tensor_load(&u, pa, &err) == 0);
        kept = u.data;
        kbv_tensor_free(&u);
        CHECK(mincore(kept, 4096, inc) == 0);
        CHECK(kbv_tensor_load(&v, pb, &err) == 0 && v.data == kept && memcmp(v.data, b.data, b.nbytes) == 0);
        kbv_tensor_free(&v);
        CHECK(truncate(pa, 64 + 1000) == 0); /* a refused file takes nothing from what is kept */
        CHECK(kbv_tensor_load(&u, pa, &err) == -1 && mincore(kept, 4096, inc) == 0);
        CHECK(kbv_tensor_load(&u, pc, &err) == 0 && u.nbytes == c.nbytes && memcmp(u.data, c.data, c.nbytes) == 0);
        CHECK(kbv_tensor_load(&v, pb, &err) == 0 && v.data != u.data && memcmp(v.data, b.data, b.nbytes) == 0);
        kbv_tensor_free(&u), kbv_tensor_free(&v);
        kbv_tensor_pool_keep(0);
        kbv_tensor_pool_keep(1);
        CHECK(kbv_tensor_load(&u, pb, &err) == 0 && memcmp(u.data, b.data, b.nbytes) == 0);
        CHECK(kbv_tensor_copy(&v, &u) == 0 && v.mapped && v.data != u.data && v.nbytes == u.nbytes && memcmp(v.data, b.data, b.nbytes) == 0);
        kept = v.data;
        kbv_tensor_free(&v); /* a copy's memory is kept like a load's */
        CHECK(kbv_tensor_load(&v, pa, &err) == -1 && kbv_tensor_save(&a, pa, &err) == 0);
        CHECK(kbv_tensor_load(&v, pa, &err) == 0 && v.data == kept && memcmp(v.data, a.data, a.nbytes) == 0);
        kbv_tensor_free(&v), kbv_tensor_free(&u);
        kbv_tensor_pool_keep(0); /* what was kept goes back */
        CHECK(mincore(kept, 4096, inc) == -1 && errno == ENOMEM);
        kbv_tensor_free(&a), kbv_tensor_free(&b), kbv_tensor_free(&c);
        unlink(pa), unlink(pb), unlink(pc);
    }

    /* Zero-dimensional and empty tensors. */
    CHECK(kbv_tensor_alloc(&t, KBV_DT_I64, 0, NULL, &err) == 0);
    ((int64_t *)t.data)[0] = -7;
    CHECK(kbv_tensor_save(&t, path, &err) == 0 && kbv_tensor_load(&u, path, &err) == 0);
    CHECK(u.ndim == 0 && kbv_tensor_numel(&u) == 1 && kbv_tensor_get(&u, 0) == -7);
    kbv_tensor_free(&t), kbv_tensor_free(&u);
    int64_t zero[2] = {0, 5};
    CHECK(kbv_tensor_alloc(&t, KBV_DT_BOOL, 2, zero, &err) == 0);
    CHECK(kbv_tensor_save(&t, path, &err) == 0 && kbv_tensor_load(&u, path, &err) == 0);
    CHECK(u.dtype == KBV_DT_BOOL && kbv_tensor_numel(&u) == 0);
    kbv_tensor_free(&t), kbv_tensor_free(&u);

    /* dtype names follow torch's. */
    CHECK(kbv_dtype_from_name("torch.float32") == KBV_DT_F32);
    CHECK(kbv_dtype_from_name("bfloat16") == KBV_DT_BF16);
    CHECK(kbv_dtype_from_name("torch.complex64") == KBV_DT_INVALID);
    CHECK_STR(kbv_dtype_name(KBV_DT_BOOL), "bool");
    CHECK(kbv_dtype_size(KBV_DT_I64) == 8 && kbv_dtype_is_float(KBV_DT_F16) && !kbv_dtype_is_float(KBV_DT_I32));

    /* Half-precision conversions: exact known bit patterns. */
    CHECK(kbv_half_to_float(0x3c00) == 1.0f);
    CHECK(kbv_half_to_float(0xc000) == -2.0f);
    CHECK(kbv_half_to_float(0x0001) == ldexpf(1, -24));
    CHECK(isinf(kbv_half_to_float(0x7c00)) && isnan(kbv_half_to_float(0x7e00)));
    CHECK(kbv_bf16_to_float(0x3f80) == 1.0f);
    CHECK(kbv_bf16_to_float(0xc0a0) == -5.0f);

    /* The redraw's statistics (kbv_weight_stats): what is kept, a constant, a weight. */
    {
        double lo, mean, sd;
        float w[6] = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.5f};
        CHECK(kbv_weight_stats(w, KBV_DT_F32, 6, &lo, &mean, &sd) == KBV_WSTATS_NORMAL);
        CHECK(lo == 1.0 && fabs(mean - 21.5 / 6) < 1e-12);
        double ss = 0;
        for (int i = 0; i < 6; i++) ss += (w[i] - 21.5 / 6) * (w[i] - 21.5 / 6);
        CHECK(fabs(sd - sqrt(ss / 5)) < 1e-12); /* unbiased, as torch's std */
        float ones[4] = {1, 1, 1, 1}, mask[4] = {0, 1, 1, 0}, inf[3] = {1.5f, INFINITY, 2.5f}, nan[2] = {NAN, 0.5f};
        CHECK(kbv_weight_stats(ones, KBV_DT_F32, 4, &lo, &mean, &sd) == KBV_WSTATS_CONST && lo == 1.0);
        CHECK(kbv_weight_stats(ones, KBV_DT_F32, 1, &lo, &mean, &sd) == KBV_WSTATS_CONST);
        CHECK(kbv_weight_stats(mask, KBV_DT_F32, 4, &lo, &mean, &sd) == KBV_WSTATS_KEEP); /* integral, not all equal */
        CHECK(kbv_weight_stats(inf, KBV_DT_F32, 3, &lo, &mean, &sd) == KBV_WSTATS_KEEP);
        CHECK(kbv_weight_stats(nan, KBV_DT_F32, 2, &lo, &mean, &sd) == KBV_WSTATS_KEEP);
        CHECK(kbv_weight_stats(w, KBV_DT_F32, 0, &lo, &mean, &sd) == KBV_WSTATS_KEEP);
        CHECK(kbv_weight_stats(w, KBV_DT_I32, 6, &lo, &mean, &sd) == KBV_WSTATS_KEEP); /* not floating */
        uint16_t h[3] = {0x3c00, 0xc000, 0x3800}; /* 1, -2, 0.5 in float16 */
        CHECK(kbv_weight_stats(h, KBV_DT_F16, 3, &lo, &mean, &sd) == KBV_WSTATS_NORMAL && lo == -2.0 && fabs(mean + 0.5 / 3) < 1e-12);
        double d[3] = {-0.25, 0.25, 0.75};
        CHECK(kbv_weight_stats(d, KBV_DT_F64, 3, &lo, &mean, &sd) == KBV_WSTATS_NORMAL && lo == -0.25 && fabs(sd - 0.5) < 1e-12);
    }

    /* Shapes too large for memory are refused, not allocated. */
    int64_t huge[2] = {INT64_C(1) << 40, INT64_C(1) << 40};
    CHECK(kbv_tensor_alloc(&t, KBV_DT_F32, 2, huge, &err) == -1);
    kbv_rmtree(dir);
    CHECK_DONE("test_tensor");
}
