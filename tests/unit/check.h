/* check.h -- the unit tests' assertion macros. A failing CHECK prints what differed and
 * where; a test binary's exit status is its verdict. */
#ifndef KBV_CHECK_H
#define KBV_CHECK_H
#include <stdio.h>
#include <string.h>

static int check_failures, check_count;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        check_count++;                                                               \
        if (!(cond)) {                                                               \
            check_failures++;                                                        \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

#define CHECK_STR(a, b)                                                                                                             \
    do {                                                                                                                            \
        check_count++;                                                                                                              \
        const char *a_ = (a), *b_ = (b);                                                                                            \
        if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                                                                    \
            check_failures++;                                                                                                       \
            fprintf(stderr, "%s:%d: CHECK_STR failed: %s is \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, a_ ? a_ : "(null)", \
                    b_ ? b_ : "(null)");                                                                                            \
        }                                                                                                                           \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                                           \
    do {                                                                                                                \
        check_count++;                                                                                                  \
        double a_ = (a), b_ = (b);                                                                                      \
        if (!(a_ - b_ <= (tol) && b_ - a_ <= (tol))) {                                                                  \
            check_failures++;                                                                                           \
            fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s is %.17g, expected %.17g\n", __FILE__, __LINE__, #a, a_, b_); \
        }                                                                                                               \
    } while (0)

#define CHECK_DONE(name)                                                           \
    do {                                                                           \
        printf("%s: %d checks, %d failed\n", (name), check_count, check_failures); \
        return check_failures ? 1 : 0;                                             \
    } while (0)

#endif
