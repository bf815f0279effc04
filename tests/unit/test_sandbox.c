/* test_sandbox.c -- sandbox.c's Landlock layer in a forked child: reads only beneath the
 * allow-list (a listed file, a listed folder less its secret and other evaluations' kbv-*
 * folders, a candidate's folder's Python sources, the system's folders, the process's own
 * /proc entry), writes only in the writable folder, and, with Landlock ABI 6, no signal to
 * and no abstract UNIX socket of a process outside the child's domain. Without Landlock in
 * the kernel it says SKIP. The child reports each refusal it did not get (or got wrongly)
 * on stderr and exits with their number. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "sandbox.h"

static char root[64];

static void put(const char *rel, const char *text) {
    char p[256];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    if (f) fputs(text, f), fclose(f);
}

static void dir(const char *rel) {
    char p[256];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    CHECK(mkdir(p, 0755) == 0);
}

static int child_failures;

/* Opening path (relative to root unless absolute) for reading must give want (0 or an errno). */
static void expect_read(const char *path, int want) {
    char p[256];
    snprintf(p, sizeof p, "%s%s%s", path[0] == '/' ? "" : root, path[0] == '/' ? "" : "/", path);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    int got = fd < 0 ? errno : 0;
    if (fd >= 0) close(fd);
    if (got != want) {
        child_failures++;
        fprintf(stderr, "test_sandbox: reading %s: %s, expected %s\n", p, got ? strerror(got) : "allowed", want ? strerror(want) : "allowed");
    }
}

static void expect(const char *what, int got, int want) {
    if (got != want) {
        child_failures++;
        fprintf(stderr, "test_sandbox: %s: %s, expected %s\n", what, got ? strerror(got) : "allowed", want ? strerror(want) : "allowed");
    }
}

static int abstract_addr(struct sockaddr_un *a, pid_t owner) {
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    int n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "kbv-test-sandbox-%d", (int)owner);
    return (int)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static int child(const kbv_sandbox *sb, pid_t parent) {
    int e = sandbox_enter(sb, 0);
    if (e) return fprintf(stderr, "test_sandbox: sandbox_enter: %s\n", strerror(e)), 100;
    expect_read("listed.txt", 0);
    expect_read("unlisted.txt", EACCES);
    expect_read("pub/ok.txt", 0);
    expect_read("pub/secret.txt", EACCES);
    expect_read("base/plain.txt", 0);
    expect_read("base/kbv-own/mine.txt", 0);
    expect_read("base/kbv-other/theirs.txt", EACCES);
    expect_read("src/helper.py", 0);
    expect_read("src/results.db", EACCES);
    expect_read("/etc/passwd", 0);
    expect_read("/proc/self/status", 0);
    expect_read("/proc/meminfo", 0);
    char p[256];
    snprintf(p, sizeof p, "/proc/%d/status", (int)parent);
    expect_read(p, EACCES);
    DIR *d = opendir(root);
    expect("listing the temporary folder", d ? 0 : errno, EACCES);
    if (d) closedir(d);
    d = opendir("/proc");
    expect("listing /proc", d ? 0 : errno, EACCES);
    if (d) closedir(d);
    snprintf(p, sizeof p, "%s/src", root);
    d = opendir(p);
    expect("listing the candidate's folder", d ? 0 : errno, 0);
    if (d) closedir(d);
    snprintf(p, sizeof p, "%s/home/new.txt", root);
    int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    expect("writing in the writable folder", fd < 0 ? errno : 0, 0);
    if (fd >= 0) close(fd);
    snprintf(p, sizeof p, "%s/pub/new.txt", root);
    fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    expect("writing in a readable folder", fd < 0 ? errno : 0, EACCES);
    if (fd >= 0) close(fd);
    int scoped = sb->ll_scoped != 0;
    expect("kill(parent, 0)", kill(parent, 0) < 0 ? errno : 0, scoped ? EPERM : 0);
    struct sockaddr_un a;
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), len = abstract_addr(&a, parent);
    expect("connecting to the parent's abstract socket", connect(s, (struct sockaddr *)&a, (socklen_t)len) < 0 ? errno : 0, scoped ? EPERM : 0);
    close(s);
    /* Within its own domain both still work. */
    int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    len = abstract_addr(&a, getpid());
    expect("binding its own abstract socket", bind(l, (struct sockaddr *)&a, (socklen_t)len) < 0 || listen(l, 1) < 0 ? errno : 0, 0);
    s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    expect("connecting to its own abstract socket", connect(s, (struct sockaddr *)&a, (socklen_t)len) < 0 ? errno : 0, 0);
    close(s), close(l);
    pid_t kid = fork();
    if (kid == 0) {
        pause();
        _exit(0);
    }
    if (kid < 0) expect("fork", errno, 0);
    else expect("kill(its own child)", kill(kid, SIGKILL) < 0 ? errno : 0, 0), waitpid(kid, NULL, 0);
    return child_failures;
}

int main(void) {
    int abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, 1 /* LANDLOCK_CREATE_RULESET_VERSION */);
    if (abi < 1) {
        printf("SKIP: test_sandbox: no Landlock in this kernel (%s)\n", strerror(errno));
        return 0;
    }
    snprintf(root, sizeof root, "/tmp/test_sandbox.XXXXXX");
    CHECK(mkdtemp(root) != NULL);
    dir("home"), dir("pub"), dir("base"), dir("base/kbv-own"), dir("base/kbv-other"), dir("src");
    put("listed.txt", "x"), put("unlisted.txt", "x"), put("pub/ok.txt", "x"), put("pub/secret.txt", "x");
    put("base/plain.txt", "x"), put("base/kbv-own/mine.txt", "x"), put("base/kbv-other/theirs.txt", "x");
    put("src/helper.py", "x"), put("src/results.db", "x");
    char home[128], listed[128], pub[128], secret[128], base[128], own[128], src[128];
    snprintf(home, sizeof home, "%s/home", root);
    snprintf(listed, sizeof listed, "%s/listed.txt", root);
    snprintf(pub, sizeof pub, "%s/pub", root);
    snprintf(secret, sizeof secret, "%s/pub/secret.txt", root);
    snprintf(base, sizeof base, "%s/base", root);
    snprintf(own, sizeof own, "%s/base/kbv-own", root);
    snprintf(src, sizeof src, "%s/src", root);
    kbv_sandbox_spec sp = {.enable = 1, .scratch_base = base, .own_scratch = own, .source_dir = src};
    sp.writable[sp.nwritable++] = home;
    sp.readable[sp.nreadable++] = listed;
    sp.readable[sp.nreadable++] = pub;
    sp.readable[sp.nreadable++] = base;
    sp.secret[sp.nsecret++] = secret;
    kbv_sandbox sb;
    kbv_err err = {{0}};
    CHECK(sandbox_prepare(&sb, &sp, &err) == 0);
    CHECK(sb.ruleset_fd >= 0);
    json_t *desc = sandbox_describe(&sb, 0);
    CHECK_STR(json_string_value(json_object_get(desc, "reads")), "allow-list");
    if (abi >= 6) CHECK_STR(json_string_value(json_object_get(desc, "scope")), "signals, abstract unix sockets");
    CHECK((sb.ll_scoped != 0) == (abi >= 6));
    json_decref(desc);
    /* The parent's abstract socket, which the child must not reach. */
    int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a;
    int len = abstract_addr(&a, getpid());
    CHECK(l >= 0 && bind(l, (struct sockaddr *)&a, (socklen_t)len) == 0 && listen(l, 4) == 0);
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) _exit(sb.ruleset_fd >= 0 ? child(&sb, parent) : 100);
    int st = 0;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    close(l);
    sandbox_free(&sb);
    /* KBV_SANDBOX_SKIP=reads: only what is secret is hidden (the path complement of before). */
    setenv("KBV_SANDBOX_SKIP", "reads", 1);
    CHECK(sandbox_prepare(&sb, &sp, &err) == 0);
    desc = sandbox_describe(&sb, 0);
    CHECK(strncmp(json_string_value(json_object_get(desc, "reads")) ?: "", "all but secrets", 15) == 0);
    json_decref(desc);
    sandbox_free(&sb);
    unsetenv("KBV_SANDBOX_SKIP");
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK(system(cmd) == 0);
    CHECK_DONE("test_sandbox");
}
