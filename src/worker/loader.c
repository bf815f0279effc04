/* loader.c -- the table of candidate loaders (see loader.h).
 *
 * Tried in order: the first whose accepts() takes the file loads it. It only picks; what a
 * kind of file needs is in its own loader_KIND.c.
 */
#include "loader.h"

/* One line per loader, tried in this order; loader_py takes any file: keep it last.
 * loader_native: .cu, .c, .cpp, .cc files with kbv_forward (include/kbv_native.h). */
#define LOADERS(X) X(loader_native) X(loader_py)

#define DECLARE(l) extern const cand_loader l;
#define ENTRY(l)   &l,
LOADERS(DECLARE)
static const cand_loader *const loaders[] = {LOADERS(ENTRY)};

const cand_loader *loader_find(const char *path) {
    for (size_t i = 0; i < sizeof loaders / sizeof *loaders; i++)
        if (loaders[i]->accepts(path)) return loaders[i];
    return NULL;
}
