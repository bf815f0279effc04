/* test_gpus.c -- gpus.c: physical GPUs from fake /proc/driver/nvidia/gpus and /dev/nvidia*
 * trees (1, 2 and 4 GPUs, made out of PCI bus order; a Slurm job's cgroup that lets it open
 * two of a node's four), CUDA_VISIBLE_DEVICES as CUDA reads it, --gpus lists, the slot of each
 * GPU, and one lock file per physical GPU however a process names it. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "gpus.h"

static const char *uuid[4] = {"GPU-00000000-aaaa-0000-0000-000000000000", "GPU-11111111-bbbb-1111-1111-111111111111",
                              "GPU-22222222-cccc-2222-2222-222222222222", "GPU-22223333-dddd-3333-3333-333333333333"};
static const char *bus[4] = {"0000:1b:00.0", "0000:3b:00.0", "0000:9a:00.0", "0001:05:00.0"};

/* A fake ROOT/proc with GPUs 0..n-1 (PCI order), made from the last to the first so that the
 * folder's order is not the bus order; uuid_of: which of them has a "GPU UUID:" line; dev_of:
 * which have a device file ROOT/dev/nvidia<minor> (the others cannot be opened, as a cgroup's
 * ConstrainDevices makes them); minor_of: which have a "Device Minor:" line at all. The minor
 * numbers are not the bus order either: GPU i has minor 3 - i. */
static void make_tree(const char *root, int n, int uuid_of, int dev_of, int minor_of) {
    char p[PATH_MAX];
    const char *dirs[] = {"proc", "proc/driver", "proc/driver/nvidia", "proc/driver/nvidia/gpus", "dev"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) snprintf(p, sizeof p, "%s/%s", root, dirs[i]), mkdir(p, 0700);
    for (int i = n - 1; i >= 0; i--) {
        snprintf(p, sizeof p, "%s/proc/driver/nvidia/gpus/%s", root, bus[i]), mkdir(p, 0700);
        snprintf(p, sizeof p, "%s/proc/driver/nvidia/gpus/%s/information", root, bus[i]);
        FILE *f = fopen(p, "w");
        if (!f) continue;
        fprintf(f, "Model: \t\t NVIDIA H200\nIRQ:   \t\t 17\n");
        if (uuid_of & (1 << i)) fprintf(f, "GPU UUID: \t %s\n", uuid[i]);
        fprintf(f, "Video BIOS: \t 96.00.99.00.01\nBus Type: \t PCIe\nBus Location: \t %s\n", bus[i]);
        if (minor_of & (1 << i)) fprintf(f, "Device Minor: \t %d\n", 3 - i);
        fprintf(f, "GPU Excluded:\t No\n");
        fclose(f);
        if (dev_of & (1 << i)) {
            snprintf(p, sizeof p, "%s/dev/nvidia%d", root, 3 - i);
            if ((f = fopen(p, "w"))) fclose(f);
        }
    }
}

/* The ids of the GPUs a process with cvd sees, joined by ' ' ("" when none). */
static const char *visible(const char *root, const char *cvd) {
    static char s[1024];
    kbv_gpu g[GPUS_MAX];
    int n = gpus_visible(root, cvd, g, GPUS_MAX);
    s[0] = '\0';
    for (int i = 0; i < n; i++) snprintf(s + strlen(s), sizeof s - strlen(s), "%s%s", i ? " " : "", g[i].id);
    return s;
}

/* The lock file of the GPU a process with cvd uses when it picks none (kbv eval). */
static const char *lock_of(const char *root, const char *cvd) {
    static char s[8][PATH_MAX];
    static int turn;
    kbv_gpu g;
    gpus_default(root, cvd, &g);
    char *out = s[turn++ % 8];
    gpus_lock_path("/scratch", g.id, out, PATH_MAX);
    return out;
}

/* --gpus spec under cvd: the child CUDA_VISIBLE_DEVICES of each slot of nslots, joined by ' ';
 * or "error N: message". */
static const char *slots(const char *root, const char *cvd, const char *spec, int nslots) {
    static char s[2048];
    kbv_gpu g[GPUS_MAX];
    kbv_err err = {{0}};
    int n = gpus_select(root, cvd, spec, g, GPUS_MAX, &err);
    if (n < 0) {
        snprintf(s, sizeof s, "error %d: %s", n, err.msg);
        return s;
    }
    s[0] = '\0';
    for (int k = 0; k < nslots; k++) snprintf(s + strlen(s), sizeof s - strlen(s), "%s%s", k ? " " : "", g[gpus_slot(k, n)].cvd);
    return s;
}

int main(void) {
    char base[] = "/tmp/kbv-test-gpus-XXXXXX", one[PATH_MAX], two[PATH_MAX], four[PATH_MAX], none[PATH_MAX], nouuid[PATH_MAX],
         job[PATH_MAX], nominor[PATH_MAX];
    if (!mkdtemp(base)) return perror("mkdtemp"), 1;
    snprintf(one, sizeof one, "%s/one", base), mkdir(one, 0700), make_tree(one, 1, 0xf, 0xf, 0xf);
    snprintf(two, sizeof two, "%s/two", base), mkdir(two, 0700), make_tree(two, 2, 0xf, 0xf, 0xf);
    snprintf(four, sizeof four, "%s/four", base), mkdir(four, 0700), make_tree(four, 4, 0xf, 0xf, 0xf);
    snprintf(nouuid, sizeof nouuid, "%s/nouuid", base), mkdir(nouuid, 0700), make_tree(nouuid, 2, 0x2, 0xf, 0xf);
    /* A Slurm job given the node's GPUs 1 and 3: /proc lists all four, only two open. */
    snprintf(job, sizeof job, "%s/job", base), mkdir(job, 0700), make_tree(job, 4, 0xf, 0xa, 0xf);
    /* A driver whose information files name no minor: every GPU is kept, openable or not. */
    snprintf(nominor, sizeof nominor, "%s/nominor", base), mkdir(nominor, 0700), make_tree(nominor, 2, 0xf, 0x0, 0x0);
    snprintf(none, sizeof none, "%s/none", base), mkdir(none, 0700); /* no driver */
    kbv_gpu g[GPUS_MAX];

    /* The driver's GPUs in PCI bus order, whatever the folder's order; UUID, bus, index. */
    CHECK(gpus_physical(four, g, GPUS_MAX) == 4);
    for (int i = 0; i < 4; i++) {
        CHECK_STR(g[i].id, uuid[i]);
        CHECK_STR(g[i].cvd, uuid[i]);
        CHECK_STR(g[i].bus, bus[i]);
        CHECK(g[i].index == i);
    }
    CHECK(gpus_physical(four, g, 3) == 3); /* at most max */
    CHECK(gpus_physical(none, g, GPUS_MAX) == 0);
    CHECK(gpus_physical("/nonexistent-kbv", g, GPUS_MAX) == 0);
    /* A GPU whose information has no UUID: its bus for the lock, its index for CUDA. */
    CHECK(gpus_physical(nouuid, g, GPUS_MAX) == 2);
    CHECK_STR(g[0].id, "pci-0000:1b:00.0");
    CHECK_STR(g[0].cvd, "0");
    CHECK_STR(g[1].id, uuid[1]);

    /* CUDA_VISIBLE_DEVICES: unset (all), indices (PCI order), UUIDs and unique prefixes, MIG
     * and what cannot be mapped kept as text, the list ending at the first bad or repeated
     * entry, empty (none). */
    char all4[512], u10[256], u31[256];
    snprintf(all4, sizeof all4, "%s %s %s %s", uuid[0], uuid[1], uuid[2], uuid[3]);
    snprintf(u10, sizeof u10, "%s %s", uuid[1], uuid[0]);
    snprintf(u31, sizeof u31, "%s %s", uuid[3], uuid[1]);
    CHECK_STR(visible(four, NULL), all4);
    CHECK_STR(visible(one, NULL), uuid[0]);
    CHECK_STR(visible(four, "1"), uuid[1]);
    CHECK_STR(visible(four, "1,0"), u10);
    CHECK_STR(visible(four, " 1 , 0 "), u10);
    CHECK_STR(visible(four, uuid[2]), uuid[2]);
    CHECK_STR(visible(four, "GPU-22223333,gpu-11111111-BBBB"), u31); /* prefixes, any case */
    CHECK_STR(visible(four, "GPU-2222"), "");                        /* a prefix of two GPUs: names none */
    CHECK_STR(visible(four, "GPU-99999999"), "");                    /* no such GPU */
    CHECK_STR(visible(four, "MIG-5c0a7e66-1d3c-5c2f-9f8e-0123456789ab"), "MIG-5c0a7e66-1d3c-5c2f-9f8e-0123456789ab");
    CHECK_STR(visible(four, ""), "");
    CHECK_STR(visible(four, "-1"), "");
    CHECK_STR(visible(four, "NoDevFiles"), "");
    CHECK_STR(visible(four, "0,4,1"), uuid[0]);      /* 4 is past the last: CUDA stops there */
    CHECK_STR(visible(four, "0,x,1"), uuid[0]);      /* not an index or a UUID */
    CHECK_STR(visible(four, "1,0,1"), u10);          /* a GPU named twice */
    CHECK_STR(visible(two, "2"), "");                /* two GPUs: no index 2 */
    CHECK_STR(visible(none, NULL), "");              /* no driver, unset: nothing */
    CHECK_STR(visible(none, "1,0"), "1 0");          /* no driver to map with: the text */
    CHECK_STR(visible(none, uuid[1]), uuid[1]);
    CHECK_STR(visible(nouuid, "0"), "pci-0000:1b:00.0");

    /* A Slurm job with ConstrainDevices on GPUs 1 and 3 of four: CUDA counts the two it can
     * open, so the job's CUDA_VISIBLE_DEVICES=0 (Slurm's, job-relative) is the node's GPU 1,
     * not GPU 0, which the job cannot open; two jobs' "0" are two GPUs and two locks. */
    CHECK(gpus_physical(job, g, GPUS_MAX) == 2);
    CHECK_STR(g[0].id, uuid[1]);
    CHECK(g[0].index == 0 && g[1].index == 1);
    CHECK_STR(g[1].id, uuid[3]);
    char u13[256], u01[256];
    snprintf(u13, sizeof u13, "%s %s", uuid[1], uuid[3]);
    CHECK_STR(visible(job, NULL), u13);
    CHECK_STR(visible(job, "0"), uuid[1]);
    CHECK_STR(visible(job, "1"), uuid[3]);
    CHECK_STR(visible(job, "2"), "");
    CHECK_STR(visible(job, uuid[0]), ""); /* by UUID, a GPU outside the job: CUDA sees none */
    CHECK_STR(slots(job, "0,1", "all", 2), u13);
    CHECK_STR(slots(job, "0", "0", 1), uuid[1]);
    /* No "Device Minor:" line: nothing to open, both kept. */
    snprintf(u01, sizeof u01, "%s %s", uuid[0], uuid[1]);
    CHECK_STR(visible(nominor, NULL), u01);

    /* One lock per physical GPU, however it is named: unset (cuda:0 is the first GPU), an
     * index, a list whose first entry it is, its UUID or a prefix; another GPU, another lock. */
    char want0[PATH_MAX], want1[PATH_MAX];
    snprintf(want0, sizeof want0, "/scratch/kbv-gpu-%s.lock", uuid[0]);
    snprintf(want1, sizeof want1, "/scratch/kbv-gpu-%s.lock", uuid[1]);
    CHECK_STR(lock_of(four, NULL), want0);
    CHECK_STR(lock_of(four, "0"), want0);
    CHECK_STR(lock_of(four, "0,1"), want0);
    CHECK_STR(lock_of(four, uuid[0]), want0);
    CHECK_STR(lock_of(four, "GPU-00000000"), want0);
    CHECK_STR(lock_of(four, "1"), want1);
    CHECK_STR(lock_of(four, "1,0"), want1);
    CHECK_STR(lock_of(four, uuid[1]), want1);
    CHECK_STR(lock_of(two, "1"), want1);
    CHECK(strcmp(lock_of(four, "0"), lock_of(four, "1")) != 0);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            char a[2] = {(char)('0' + i), 0}, b[2] = {(char)('0' + j), 0};
            CHECK((strcmp(lock_of(four, a), lock_of(four, b)) == 0) == (i == j));
            CHECK((strcmp(lock_of(four, a), lock_of(four, uuid[j])) == 0) == (i == j));
        }
    /* What cannot be mapped keeps its text, made safe for a file name; no GPU: "all" or the text. */
    CHECK_STR(lock_of(four, "MIG-ab/cd"), "/scratch/kbv-gpu-MIG-ab_cd.lock");
    CHECK_STR(lock_of(none, "1,0"), "/scratch/kbv-gpu-1.lock");
    CHECK_STR(lock_of(none, NULL), "/scratch/kbv-gpu-all.lock");
    CHECK_STR(lock_of(four, ""), "/scratch/kbv-gpu-all.lock");
    CHECK_STR(lock_of(four, "7"), "/scratch/kbv-gpu-7.lock");
    CHECK_STR(lock_of(nouuid, "0"), "/scratch/kbv-gpu-pci-0000_1b_00.0.lock");
    CHECK(gpus_default(four, "7", &g[0]) == 0 && gpus_default(four, "1", &g[0]) == 1 && g[0].index == 1);

    /* --gpus: "all" is what the process sees, indices count in that list, and each slot's
     * child gets its physical GPU's UUID; slot k on GPU k mod n. */
    char want[1024];
    snprintf(want, sizeof want, "%s %s %s %s %s %s", uuid[0], uuid[1], uuid[2], uuid[3], uuid[0], uuid[1]);
    CHECK_STR(slots(four, NULL, "all", 6), want);
    snprintf(want, sizeof want, "%s %s %s %s", uuid[2], uuid[3], uuid[2], uuid[3]);
    CHECK_STR(slots(four, "2,3", "all", 4), want);
    CHECK_STR(slots(four, "2,3", "0,1", 4), want);
    snprintf(want, sizeof want, "%s %s %s", uuid[3], uuid[2], uuid[3]);
    CHECK_STR(slots(four, "2,3", "1,0", 3), want);
    snprintf(want, sizeof want, "%s %s", uuid[1], uuid[1]);
    CHECK_STR(slots(four, "1", "0", 2), want); /* CUDA_VISIBLE_DEVICES=1 --gpus 0: physical GPU 1 */
    CHECK_STR(slots(two, uuid[1], "all", 1), uuid[1]);
    snprintf(want, sizeof want, "%s %s", uuid[0], uuid[2]);
    CHECK_STR(slots(four, NULL, "0,2", 2), want);
    CHECK_STR(slots(four, "MIG-a,MIG-b", "1", 1), "MIG-b"); /* the user's entries where kbv cannot map them */
    CHECK_STR(slots(none, "3,1", "1", 1), "1");
    CHECK(gpus_slot(5, 0) == 0 && gpus_slot(5, 2) == 1 && gpus_slot(7, 4) == 3 && gpus_slot(0, 3) == 0);
    /* Each GPU gets ngpus-th of the slots: --jobs J on each of n GPUs. */
    for (int n = 1; n <= 4; n++) {
        int per[4] = {0};
        for (int k = 0; k < n * 3; k++) per[gpus_slot(k, n)]++;
        for (int i = 0; i < n; i++) CHECK(per[i] == 3);
    }
    /* Refused: past the visible list, twice, malformed; no GPU at all. */
    CHECK_STR(slots(four, "2,3", "2", 1), "error -1: --gpus 2: no GPU 2: this process sees 2 (CUDA_VISIBLE_DEVICES='2,3'), which --gpus counts from 0");
    CHECK_STR(slots(two, NULL, "0,2", 1), "error -1: --gpus 0,2: no GPU 2: this process sees 2 (every GPU of the driver), which --gpus counts from 0");
    CHECK_STR(slots(four, NULL, "1,1", 1), "error -1: --gpus 1,1: GPU 1 is listed twice");
    CHECK_STR(slots(four, NULL, "", 1), "error -1: --gpus needs 'all' or a list like 0,1,2, not ''");
    CHECK_STR(slots(four, NULL, "0,,1", 1), "error -1: --gpus needs 'all' or a list like 0,1,2, not '0,,1'");
    CHECK_STR(slots(four, NULL, "0,", 1), "error -1: --gpus needs 'all' or a list like 0,1,2, not '0,'");
    CHECK_STR(slots(four, NULL, "-1", 1), "error -1: --gpus needs 'all' or a list like 0,1,2, not '-1'");
    CHECK_STR(slots(four, NULL, "0,a", 1), "error -1: --gpus needs 'all' or a list like 0,1,2, not '0,a'");
    CHECK_STR(slots(four, NULL, "99999999999999999999", 1),
              "error -1: --gpus 99999999999999999999: no GPU 99999999999999999999: this process sees 4 (every GPU of the driver), which --gpus counts from 0");
    char msg[512];
    snprintf(msg, sizeof msg, "error -2: --gpus all: no NVIDIA GPU visible (%s/proc/driver/nvidia/gpus, CUDA_VISIBLE_DEVICES unset)", none);
    CHECK_STR(slots(none, NULL, "all", 1), msg);
    snprintf(msg, sizeof msg, "error -2: --gpus 0: no NVIDIA GPU visible (%s/proc/driver/nvidia/gpus, CUDA_VISIBLE_DEVICES '')", four);
    CHECK_STR(slots(four, "", "0", 1), msg);

    /* /proc/locks as the time report reads it: flock holds, shared or alone; not waiters,
     * POSIX or OFD locks. */
    unsigned maj = 0, min = 0;
    unsigned long ino = 0;
    int alone = -1;
    CHECK(gpus_lock_held("1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF\n", &maj, &min, &ino, &alone) == 1);
    CHECK(maj == 0xfd && min == 1 && ino == 5678 && alone == 1);
    CHECK(gpus_lock_held("2: FLOCK  ADVISORY  READ 1235 00:2a:77 0 EOF\n", &maj, &min, &ino, &alone) == 1);
    CHECK(maj == 0 && min == 0x2a && ino == 77 && alone == 0);
    CHECK(gpus_lock_held("3: -> FLOCK  ADVISORY  WRITE 1236 00:2a:77 0 EOF\n", &maj, &min, &ino, &alone) == 0);
    CHECK(gpus_lock_held("4: POSIX  ADVISORY  WRITE 1237 08:01:99 0 EOF\n", &maj, &min, &ino, &alone) == 0);
    CHECK(gpus_lock_held("5: OFDLCK ADVISORY  READ  -1 00:05:1 0 EOF\n", &maj, &min, &ino, &alone) == 0);
    CHECK(gpus_lock_held("garbage\n", &maj, &min, &ino, &alone) == 0);

    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    if (system(cmd) != 0) fprintf(stderr, "test_gpus: could not remove %s\n", base);
    CHECK_DONE("test_gpus");
}
