/* test_tensor.c -- tensor.c: the .kbt format round-trips; damaged files are refused. */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "tensor.h"

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

    /* Shapes too large for memory are refused, not allocated. */
    int64_t huge[2] = {INT64_C(1) << 40, INT64_C(1) << 40};
    CHECK(kbv_tensor_alloc(&t, KBV_DT_F32, 2, huge, &err) == -1);
    kbv_rmtree(dir);
    CHECK_DONE("test_tensor");
}
