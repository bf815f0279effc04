/* db.h -- the results database (SQLite; schema in docs/results.md).
 *
 * One row per run (its settings and seed), per problem and candidate file (by content hash),
 * and per evaluation, with its cases, findings, timings and memory. Each evaluation is
 * written in one transaction: a kbv killed at any moment leaves either all of it or none.
 * An evaluation's key (problem hash, candidate hash, model, sample, protocol) is unique
 * within a run, so a resumed run skips what is stored and never stores anything twice.
 */
#ifndef KBV_DB_H
#define KBV_DB_H

#include <jansson.h>
#include <sqlite3.h>

#include "result.h"
#include "util.h"

typedef struct kbv_db {
    sqlite3 *h;
    char path[4096];
} kbv_db;

/* How long a statement waits for another process's lock before failing. */
#define DB_BUSY_TIMEOUT_MS 5000

/* Open (or create) a results database to write to. Errors name the file and say what it is
 * instead: a folder, not SQLite, corrupt, another SQLite database (never changed), another
 * schema version, read-only, or locked for longer than DB_BUSY_TIMEOUT_MS. */
int db_open(kbv_db *db, const char *path, kbv_err *err);
/* Open an existing results database to read it (report, merge's sources); nothing is written
 * to it. The same checks, and an empty or new file is an error too. */
int db_open_read(kbv_db *db, const char *path, kbv_err *err);
void db_close(kbv_db *db);
/* Fill err from the last failed call on db ("<path>: <what>: ...", or what its result code
 * means: locked, corrupt, read-only, ...). Returns -1. */
int db_fail(kbv_db *db, const char *what, kbv_err *err);

/* The run to continue: the latest with these settings (JSON text) when resume is set; else a
 * new one. *seed is the run's (drawn by the caller for a new run). */
int db_run(kbv_db *db, const char *settings, int resume, uint64_t *seed, long long *run_id, const char *uuid, kbv_err *err);
/* Store the run's environment once known (device, GPU, torch). */
int db_run_env(kbv_db *db, long long run_id, const kbv_result *r, kbv_err *err);
int db_has(kbv_db *db, long long run_id, const char *key, kbv_err *err); /* 1, 0, or -1 */
/* A run's seed. */
int db_run_seed(kbv_db *db, long long run_id, uint64_t *seed, kbv_err *err);
/* The stored status of a key in a run, into out ("" when none). */
int db_status(kbv_db *db, long long run_id, const char *key, char *out, size_t n, kbv_err *err);
/* One evaluation, in one transaction. Returns 0, 1 when the key was stored meanwhile (by
 * another process: nothing written), or -1. */
int db_store(kbv_db *db, long long run_id, const char *key, const char *model, int sample, int level, const kbv_result *r, kbv_err *err);
/* Copy every run and evaluation of src into dst (runs matched by uuid: none twice). Refuses,
 * copying nothing, a shard (settings shard_n > 1) whose manifest matches another shard's in
 * dst but whose seed or other settings differ: two runs' verdicts would mix. */
int db_merge(kbv_db *dst, const char *src, int *runs_added, int *evals_added, kbv_err *err);

#endif
