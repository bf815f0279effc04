/* gpus.c -- physical GPUs, CUDA_VISIBLE_DEVICES and `kbv run --gpus` (see gpus.h).
 *
 * Reads the driver's /proc tree (a folder per GPU, named by its PCI bus id, holding an
 * `information` file with "GPU UUID:" and "Device Minor:" lines) and opens each GPU's device
 * file; it never asks CUDA or NVML, which the kbv process does not load. What the driver's tree
 * does not show (MIG instances) is kept as text.
 */
#include "gpus.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* The value of an information file's line "KEY:" (e.g. "GPU UUID"), or "" when it has none. */
static void read_field(const char *path, const char *key, char *out, size_t outlen) {
    out[0] = '\0';
    FILE *f = fopen(path, "re");
    if (!f) return;
    char line[256];
    size_t klen = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
            const char *v = line + klen + 1;
            v += strspn(v, " \t");
            size_t n = strcspn(v, " \t\r\n");
            if (n > 0 && n < outlen) memcpy(out, v, n), out[n] = '\0';
            break;
        }
    fclose(f);
}

/* Whether this process can use the GPU whose information file is INFO: its device file
 * ROOT/dev/nvidia<minor> opens. CUDA counts only the GPUs it can open, and a cgroup that
 * constrains devices (Slurm's ConstrainDevices, a container) leaves the others in /proc: a job
 * given the node's third GPU sees it as CUDA_VISIBLE_DEVICES=0. Kept when the file names no
 * minor (a driver whose format kbv does not know). */
static int usable(const char *root, const char *info) {
    char minor[16];
    read_field(info, "Device Minor", minor, sizeof minor);
    if (!minor[0] || strspn(minor, "0123456789") != strlen(minor)) return 1;
    char dev[PATH_MAX];
    snprintf(dev, sizeof dev, "%s/dev/nvidia%s", root, minor);
    int fd = open(dev, O_RDWR | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return 0;
    close(fd);
    return 1;
}

static int by_bus(const void *a, const void *b) { return strcmp(((const kbv_gpu *)a)->bus, ((const kbv_gpu *)b)->bus); }

int gpus_physical(const char *root, kbv_gpu *out, int max) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/proc/driver/nvidia/gpus", root);
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < max;) {
        if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof out[n].bus) continue;
        char info[PATH_MAX + 64];
        snprintf(info, sizeof info, "%s/%s/information", dir, e->d_name);
        if (!usable(root, info)) continue;
        kbv_gpu *g = &out[n++];
        memset(g, 0, sizeof *g);
        snprintf(g->bus, sizeof g->bus, "%s", e->d_name);
        read_field(info, "GPU UUID", g->id, sizeof g->id); /* kept below only if it is one */
    }
    closedir(d);
    /* CUDA's PCI_BUS_ID order: domain, bus, device, function, which the driver's fixed-width
     * hexadecimal names keep as strings. */
    qsort(out, (size_t)n, sizeof *out, by_bus);
    for (int i = 0; i < n; i++) {
        kbv_gpu *g = &out[i];
        g->index = i;
        if (strncmp(g->id, "GPU-", 4) == 0) {
            snprintf(g->cvd, sizeof g->cvd, "%s", g->id);
        } else { /* no UUID to name it by: the bus id for the lock, the index for CUDA */
            snprintf(g->id, sizeof g->id, "pci-%s", g->bus), snprintf(g->cvd, sizeof g->cvd, "%d", i);
        }
    }
    return n;
}

/* The physical GPU an entry of CUDA_VISIBLE_DEVICES names: its place in phys, -1 when it
 * names none (CUDA's list ends there), -2 when kbv cannot tell (kept as text). */
static int entry_gpu(const char *e, const kbv_gpu *phys, int nphys) {
    size_t n = strlen(e);
    if (n == 0) return -1;
    if (strspn(e, "0123456789") == n) {
        if (nphys == 0) return -2; /* no driver tree to map it with */
        long i = strtol(e, NULL, 10);
        return i < nphys ? (int)i : -1;
    }
    if (strncasecmp(e, "MIG-", 4) == 0) return -2;
    if (strncasecmp(e, "GPU-", 4) != 0 || n < 5) return -1;
    if (nphys == 0) return -2;
    int found = -1; /* a UUID, or a prefix of exactly one */
    for (int i = 0; i < nphys; i++)
        if (strncmp(phys[i].id, "GPU-", 4) == 0 && strncasecmp(phys[i].id, e, n) == 0) {
            if (found >= 0) return -1;
            found = i;
        }
    return found;
}

int gpus_visible(const char *root, const char *cvd, kbv_gpu *out, int max) {
    kbv_gpu phys[GPUS_MAX];
    int nphys = gpus_physical(root, phys, GPUS_MAX), n = 0;
    if (!cvd) {
        for (; n < nphys && n < max; n++) out[n] = phys[n];
        return n;
    }
    char list[1024];
    snprintf(list, sizeof list, "%s", cvd);
    for (char *e = list, *next; e && n < max; e = next) {
        next = strchr(e, ',');
        if (next) *next++ = '\0';
        e += strspn(e, " \t");
        e[strcspn(e, " \t")] = '\0';
        int p = entry_gpu(e, phys, nphys);
        kbv_gpu g;
        if (p == -1) break;
        if (p >= 0) {
            g = phys[p];
        } else {
            memset(&g, 0, sizeof g);
            g.index = -1;
            snprintf(g.id, sizeof g.id, "%s", e), snprintf(g.cvd, sizeof g.cvd, "%s", e);
        }
        int twice = 0;
        for (int j = 0; j < n && !twice; j++) twice = strcmp(out[j].id, g.id) == 0;
        if (twice) break; /* a GPU named twice: CUDA refuses the rest, and a lock is per GPU */
        out[n++] = g;
    }
    return n;
}

int gpus_default(const char *root, const char *cvd, kbv_gpu *g) {
    kbv_gpu vis[GPUS_MAX];
    if (gpus_visible(root, cvd, vis, GPUS_MAX) > 0) {
        *g = vis[0];
        return 1;
    }
    memset(g, 0, sizeof *g);
    g->index = -1;
    snprintf(g->id, sizeof g->id, "%s", cvd && *cvd ? cvd : "all");
    snprintf(g->cvd, sizeof g->cvd, "%s", cvd ? cvd : "");
    return 0;
}

int gpus_select(const char *root, const char *cvd, const char *spec, kbv_gpu *out, int max, kbv_err *err) {
    kbv_gpu vis[GPUS_MAX];
    int nvis = gpus_visible(root, cvd, vis, GPUS_MAX), n = 0;
    size_t len = strlen(spec);
    if (strcmp(spec, "all") != 0 && (len == 0 || len >= 512 || !isdigit((unsigned char)spec[0]) || spec[len - 1] == ',' ||
                                     strstr(spec, ",,") || strspn(spec, "0123456789,") != len)) {
        kbv_seterr(err, "--gpus needs 'all' or a list like 0,1,2, not '%s'", spec);
        return GPUS_BAD;
    }
    if (nvis == 0) {
        kbv_seterr(err, "--gpus %s: no NVIDIA GPU visible (%s/proc/driver/nvidia/gpus, CUDA_VISIBLE_DEVICES %s%s%s)", spec, root,
                   cvd ? "'" : "unset", cvd ? cvd : "", cvd ? "'" : "");
        return GPUS_NONE;
    }
    if (strcmp(spec, "all") == 0) {
        for (; n < nvis && n < max; n++) out[n] = vis[n];
        return n;
    }
    char list[512];
    snprintf(list, sizeof list, "%s", spec);
    for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        long i = strlen(t) < 8 ? strtol(t, NULL, 10) : GPUS_MAX;
        if (i >= nvis) {
            kbv_seterr(err, "--gpus %s: no GPU %s: this process sees %d (%s%s%s), which --gpus counts from 0", spec, t, nvis,
                       cvd ? "CUDA_VISIBLE_DEVICES='" : "every GPU of the driver", cvd ? cvd : "", cvd ? "'" : "");
            return GPUS_BAD;
        }
        for (int j = 0; j < n; j++)
            if (strcmp(out[j].id, vis[i].id) == 0) {
                kbv_seterr(err, "--gpus %s: GPU %s is listed twice", spec, t);
                return GPUS_BAD;
            }
        if (n == max) {
            kbv_seterr(err, "--gpus %s: more than %d GPUs", spec, max);
            return GPUS_BAD;
        }
        out[n++] = vis[i];
    }
    return n;
}

int gpus_slot(int k, int ngpus) { return ngpus > 0 ? k % ngpus : 0; }

void gpus_lock_path(const char *scratch_base, const char *id, char *out, size_t outlen) {
    char safe[sizeof ((kbv_gpu *)0)->id];
    snprintf(safe, sizeof safe, "%s", id);
    for (char *p = safe; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '.') *p = '_';
    snprintf(out, outlen, "%s/kbv-gpu-%s.lock", scratch_base, safe);
}

int gpus_lock_held(const char *line, unsigned *maj, unsigned *min, unsigned long *ino, int *exclusive) {
    char type[16], mode[16];
    /* "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; "1: -> FLOCK ..." waits for it */
    if (strstr(line, "->") || sscanf(line, "%*d: %15s %*s %15s %*d %x:%x:%lu", type, mode, maj, min, ino) != 5 || strcmp(type, "FLOCK") != 0)
        return 0;
    *exclusive = strcmp(mode, "WRITE") == 0;
    return 1;
}
