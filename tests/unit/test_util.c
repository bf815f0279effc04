/* test_util.c -- util.c: hashing against known answers, seeds, buffers, scratch folders. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "util.h"

int main(void) {
    char hex[65];
    /* FIPS 180-2 known answers. */
    CHECK(kbv_sha256_hex("abc", 3, hex) == 0);
    CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(kbv_sha256_hex("", 0, hex) == 0);
    CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");

    /* SplitMix64 reference values (Vigna's splitmix64.c, state 0 then 0x9e37...). */
    CHECK(kbv_mix64(0) == 0xe220a8397b1dcdafULL);
    /* Derived seeds: deterministic, label-dependent, and not the mixer's (which inverts). */
    CHECK(kbv_derive_seed(2026, 1) == kbv_derive_seed(2026, 1));
    CHECK(kbv_derive_seed(2026, 1) != kbv_derive_seed(2026, 2));
    CHECK(kbv_derive_seed(2026, 1) != kbv_derive_seed(2027, 1));
    CHECK(kbv_derive_seed(2026, 1) != kbv_mix64(2026 ^ 1));
    /* /proc/PID/stat: this process's session, and one thread (a comm with ')' and spaces is
     * what strrchr guards against; this test binary's name has neither). */
    {
        char me[24];
        long sid = 0, threads = 0;
        snprintf(me, sizeof me, "%d", (int)getpid());
        CHECK(kbv_proc_stat(me, &sid, &threads) == 0);
        CHECK(sid == (long)getsid(0));
        CHECK(threads == 1);
        CHECK(kbv_proc_stat("999999999", &sid, &threads) == -1);
    }
    CHECK(kbv_mix64(1) != kbv_mix64(2));

    kbv_buf b;
    kbv_buf_init(&b);
    for (int i = 0; i < 1000; i++) kbv_buf_printf(&b, "%d,", i);
    CHECK(b.len == 3890);
    CHECK(b.data[b.len] == '\0');
    kbv_buf_free(&b);

    kbv_err err = {{0}};
    CHECK(kbv_seterr(&err, "x=%d", 5) == -1);
    CHECK_STR(err.msg, "x=5");
    kbv_wraperr(&err, "loading %s", "f.py");
    CHECK_STR(err.msg, "loading f.py: x=5");

    char dir[4096], path[4200];
    CHECK(kbv_mkscratch(NULL, dir, sizeof dir, &err) == 0);
    snprintf(path, sizeof path, "%s/a/b", dir);
    CHECK(mkdir(path - 0, 0700) != 0); /* parent missing */
    snprintf(path, sizeof path, "%s/a", dir);
    CHECK(mkdir(path, 0700) == 0);
    snprintf(path, sizeof path, "%s/a/b", dir);
    CHECK(mkdir(path, 0500) == 0); /* read-only folder: rmtree must still remove it */
    snprintf(path, sizeof path, "%s/f", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) fputs("abc", f), fclose(f);
    CHECK(kbv_sha256_file(path, hex, &err) == 0);
    CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    char *data;
    size_t n;
    CHECK(kbv_read_file(path, &data, &n, &err) == 0 && n == 3);
    free(data);
    CHECK(kbv_read_file("/nonexistent/x", &data, &n, &err) == -1);
    CHECK(strstr(err.msg, "/nonexistent/x") != NULL);
    CHECK(kbv_rmtree(dir) == 0);
    CHECK(access(dir, F_OK) != 0);

    char stem[64];
    kbv_stem("/a/b/level_1_problem_2_sample_0_kernel.py", stem, sizeof stem);
    CHECK_STR(stem, "level_1_problem_2_sample_0_kernel");
    kbv_stem("plain", stem, sizeof stem);
    CHECK_STR(stem, "plain");
    CHECK_DONE("test_util");
}
