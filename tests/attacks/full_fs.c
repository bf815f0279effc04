/* full_fs.c -- an LD_PRELOAD shim for tests/attacks/run.sh: statvfs() reports a full file
 * system (no block, no inode free), as when evaluations side by side have filled the scratch.
 * kbv must then call a worker's failure its own (not stored, --resume runs it again), never a
 * verdict against the candidate or the problem. Built by the test with `cc -shared`. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/statvfs.h>

int statvfs(const char *path, struct statvfs *buf) {
    int (*real)(const char *, struct statvfs *) = (int (*)(const char *, struct statvfs *))dlsym(RTLD_NEXT, "statvfs");
    int rc = real ? real(path, buf) : -1;
    if (rc == 0) buf->f_bavail = buf->f_bfree = 0, buf->f_favail = buf->f_ffree = 0;
    return rc;
}
