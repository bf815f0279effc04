/* gpus.h -- which physical GPU a kbv process, a `kbv run` slot and a GPU lock mean
 * (docs/timing.md, "Several GPUs").
 *
 * Two kbv processes that time on one physical GPU must take the same lock (util.h,
 * kbv_gpulock), however each names the GPU: CUDA_VISIBLE_DEVICES by index, by UUID, or unset.
 * So a GPU is keyed by its UUID, read from the driver's /proc/driver/nvidia/gpus/<PCI bus
 * id>/information, and CUDA_VISIBLE_DEVICES is read as CUDA reads it: over the GPUs whose
 * device file (/dev/nvidia<minor>) this process can open, as CUDA counts only those (a Slurm
 * job whose cgroup holds the node's GPUs 2 and 3 sees them as 0 and 1), indices (in PCI bus
 * order: kbv assumes CUDA_DEVICE_ORDER=PCI_BUS_ID, and sets it for its children), "GPU-"
 * UUIDs or unique prefixes of one, the list ending at its first entry that names no GPU (or one
 * already named), unset meaning every GPU and empty meaning none. What kbv cannot map (a MIG
 * instance, "MIG-...", or any entry where the driver's /proc tree is absent) keeps the entry's
 * own text as its identity, as before.
 *
 * Functions of the root folder (ROOT/proc, ROOT/dev; "" for the real ones) and the
 * CUDA_VISIBLE_DEVICES value they are given, so that tests build fake trees; nothing here reads
 * the environment, starts or locks anything.
 */
#ifndef KBV_GPUS_H
#define KBV_GPUS_H

#include <stddef.h>

#include "util.h"

#define GPUS_MAX  64      /* GPUs kbv tells apart, as --gpus's 64 */
#define GPUS_ROOT ""      /* the real /proc and /dev (tests pass a folder of their own) */

typedef struct kbv_gpu {
    char id[96];  /* its identity, the key of its lock: "GPU-<uuid>"; "pci-<bus id>" where its UUID
                     cannot be read; where kbv cannot map the entry, the entry's own text */
    char cvd[96]; /* CUDA_VISIBLE_DEVICES that shows a child this GPU alone: its UUID, else its index
                     in PCI bus order, else the entry as the user wrote it */
    char bus[20]; /* PCI bus id ("0000:3b:00.0"); "" where not mapped */
    int index;    /* its place among the GPUs this process can open, in PCI bus order; -1 where not mapped */
} kbv_gpu;

/* The driver's GPUs under ROOT/proc/driver/nvidia/gpus that this process can open (ROOT/dev/
 * nvidia<minor>), in PCI bus order: how many (0: none, or no driver), at most max. */
int gpus_physical(const char *root, kbv_gpu *out, int max);

/* The GPUs a process with CUDA_VISIBLE_DEVICES = cvd (NULL: unset) sees, in CUDA's order: how
 * many, at most max. */
int gpus_visible(const char *root, const char *cvd, kbv_gpu *out, int max);

/* The GPU a process that picks none uses: the first one it sees (torch's cuda:0). 1 with *g
 * set; 0 when it sees none, *g then keyed by cvd's text ("all" when unset or empty): no GPU
 * to share, and the lock file as kbv named it before. */
int gpus_default(const char *root, const char *cvd, kbv_gpu *g);

/* `kbv run --gpus SPEC`: "all" (every GPU this process sees) or a list of indices into what
 * it sees ("0,2"), as CUDA counts them. How many (out[k] the k-th listed), or GPUS_BAD (a
 * malformed list, an index past the visible ones, a GPU listed twice) or GPUS_NONE (no GPU
 * visible), err set. */
enum { GPUS_BAD = -1, GPUS_NONE = -2 };
int gpus_select(const char *root, const char *cvd, const char *spec, kbv_gpu *out, int max, kbv_err *err);

/* The GPU (index into --gpus) of `kbv run`'s slot k of ngpus: slot k on GPU k mod ngpus, so
 * the first slots go to distinct GPUs. 0 without --gpus. */
int gpus_slot(int k, int ngpus);

/* One line of /proc/locks as a GPU lock record: 1 for a lock held (not waited for: "->") by
 * flock, with the device and inode of its file and whether it is held alone (WRITE: timing)
 * or shared (READ: cases); 0 for any other line. */
int gpus_lock_held(const char *line, unsigned *maj, unsigned *min, unsigned long *ino, int *exclusive);

/* The lock file of the GPU with identity id: BASE/kbv-gpu-<id>.lock, each character of id
 * other than letters, digits, '-' and '.' made '_'. */
void gpus_lock_path(const char *scratch_base, const char *id, char *out, size_t outlen);

#endif
