/* slurm.h -- `kbv slurm`: a sweep as a Slurm job array, one task per shard, merged into one
 * results database (docs/cluster.md), and the seed file that keeps a run's seed off every
 * command line (`kbv run --seed-file`).
 */
#ifndef KBV_SLURM_H
#define KBV_SLURM_H

#include <stdint.h>

#include "util.h"

/* Read a run's seed from path: a regular file of the calling user that nobody else may read
 * or write (mode 0600 or 0400), holding one non-negative integer (decimal, or 0x hex) and
 * perhaps a newline. 0, or -1 with err saying what is wrong with the file (never its text). */
int slurm_read_seed_file(const char *path, uint64_t *seed, kbv_err *err);

/* `kbv slurm ARGS` (argv without "kbv slurm"). Returns the exit status: 0 every shard done
 * and merged (or submitted, with --no-wait), 2 usage error or a bad manifest, 4 Slurm could
 * not be used or a shard failed past its retries, 5 the database cannot be used, 130/143
 * interrupted (the jobs go on; --resume picks them up). */
int slurm_main(int argc, char **argv);

#endif
