/* test_refcache.c -- the reference cache's sizing rules (refcache.c, docs/results.md): a
 * problem's cap follows its file system's free space, the run's folder leaves room, and a
 * problem too big to keep is dropped at its first record, before it pins more. */
#include "check.h"
#include "evalctx.h"

#define GiB (1LL << 30)
#define MiB (1LL << 20)

int main(void) {
    /* A quarter of the free space, within [4, 32] GiB. */
    CHECK(refcache_problem_cap(8 * GiB) == 4 * GiB);
    CHECK(refcache_problem_cap(16 * GiB) == 4 * GiB);
    CHECK(refcache_problem_cap(60 * GiB) == 15 * GiB);
    CHECK(refcache_problem_cap(400 * GiB) == 32 * GiB);

    /* A new problem: 8 GiB free at least, the folder under half of itself and the free space
     * (16 GiB at least). */
    CHECK(!refcache_room(0, 7 * GiB));
    CHECK(refcache_room(0, 8 * GiB));
    CHECK(refcache_room(16 * GiB, 8 * GiB));   /* 16 GiB held is allowed whatever the rest */
    CHECK(!refcache_room(17 * GiB, 8 * GiB));  /* over 16 GiB and over half of 25 */
    CHECK(refcache_room(30 * GiB, 40 * GiB));  /* 30 of 70 */
    CHECK(!refcache_room(40 * GiB, 30 * GiB)); /* 40 of 70 */

    /* KernelBench level 1's Frobenius norm (256 MiB output): a float64 oracle and two float32
     * runs a record, 14 records (10 cases, 4 check draws). Kept with 60 GiB free (cap 15), not
     * with 40 GiB (cap 10), where the first record already says so. */
    long long rec = 512 * MiB + 2 * 256 * MiB;
    CHECK(refcache_keeps(rec, 1, 14, refcache_problem_cap(60 * GiB)));
    CHECK(refcache_keeps(14 * rec, 14, 14, refcache_problem_cap(60 * GiB)));
    CHECK(!refcache_keeps(rec, 1, 14, refcache_problem_cap(40 * GiB)));
    /* 1 GiB outputs (4 GiB a record, 56 GiB in all): dropped at the first record anywhere. */
    CHECK(!refcache_keeps(4 * GiB, 1, 14, refcache_problem_cap(1000 * GiB)));
    /* Records with nothing kept (skipped cases) do not count against it; what is held over the
     * cap always ends it, the last record too. */
    CHECK(refcache_keeps(0, 5, 14, 4 * GiB));
    CHECK(refcache_keeps(4 * GiB, 14, 14, 4 * GiB));
    CHECK(!refcache_keeps(4 * GiB + 1, 14, 14, 4 * GiB));
    CHECK(refcache_keeps(GiB, 1, 1, 4 * GiB));
    CHECK_DONE("refcache");
}
