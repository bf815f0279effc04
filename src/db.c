/* db.c -- the results database (see db.h; schema in docs/results.md). */
#include "db.h"

#include "judge.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SCHEMA_VERSION "1"

static const char kSchema[] = "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);"
                              "CREATE TABLE IF NOT EXISTS runs(id INTEGER PRIMARY KEY, uuid TEXT UNIQUE NOT NULL, started TEXT NOT NULL,"
                              "  seed TEXT NOT NULL, settings TEXT NOT NULL, kbv_version TEXT, device TEXT, gpu TEXT, torch TEXT, python TEXT);"
                              "CREATE TABLE IF NOT EXISTS problems(id INTEGER PRIMARY KEY, sha256 TEXT UNIQUE NOT NULL, name TEXT, path TEXT);"
                              "CREATE TABLE IF NOT EXISTS candidates(id INTEGER PRIMARY KEY, sha256 TEXT UNIQUE NOT NULL, name TEXT, path TEXT);"
                              "CREATE TABLE IF NOT EXISTS evaluations(id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id),"
                              "  key TEXT NOT NULL, problem_id INTEGER REFERENCES problems(id), candidate_id INTEGER REFERENCES candidates(id),"
                              "  model TEXT NOT NULL, sample INTEGER, level INTEGER, protocol TEXT, status TEXT NOT NULL, accuracy_class TEXT,"
                              "  speedup REAL, speedup_lo REAL, speedup_hi REAL, speedup_strict REAL, peak_ratio REAL,"
                              "  std_status TEXT, std_correct INTEGER, std_speedup REAL, hacks TEXT, wall_s REAL, result TEXT NOT NULL,"
                              "  created TEXT NOT NULL, paper_status TEXT, paper_correct INTEGER, paper_speedup REAL, UNIQUE(run_id, key));"
                              "CREATE TABLE IF NOT EXISTS cases(evaluation_id INTEGER NOT NULL REFERENCES evaluations(id), idx INTEGER,"
                              "  distribution TEXT, domain TEXT, skipped INTEGER, evaluated INTEGER, passed INTEGER, norm_rel_err REAL,"
                              "  accuracy_class TEXT);"
                              "CREATE TABLE IF NOT EXISTS timings(evaluation_id INTEGER NOT NULL REFERENCES evaluations(id), arm TEXT,"
                              "  median_ms REAL, q1_ms REAL, q3_ms REAL, mean_ms REAL, samples INTEGER);"
                              "CREATE TABLE IF NOT EXISTS memory(evaluation_id INTEGER PRIMARY KEY REFERENCES evaluations(id),"
                              "  peak_candidate INTEGER, peak_reference INTEGER, persistent_candidate INTEGER, persistent_reference INTEGER,"
                              "  torch_peak_candidate INTEGER, torch_peak_reference INTEGER);"
                              "CREATE TABLE IF NOT EXISTS flags(evaluation_id INTEGER NOT NULL REFERENCES evaluations(id), flag TEXT,"
                              "  severity TEXT, message TEXT, evidence TEXT);"
                              "CREATE INDEX IF NOT EXISTS cases_eval ON cases(evaluation_id);"
                              "CREATE INDEX IF NOT EXISTS flags_eval ON flags(evaluation_id);"
                              "CREATE INDEX IF NOT EXISTS timings_eval ON timings(evaluation_id);";

/* "<path>: <what>: <SQLite's message>", with what SQLite's result code means for the user
 * in place of what for the codes a bad file gives (docs/RELIABILITY.md, "Bad input"). */
static int dberr_code(const char *path, sqlite3 *h, int rc, const char *what, kbv_err *err) {
    const char *msg = h ? sqlite3_errmsg(h) : sqlite3_errstr(rc);
    int sys = h ? sqlite3_system_errno(h) : 0;
    char extra[160] = "";
    if (sys && ((rc & 0xff) == SQLITE_CANTOPEN || (rc & 0xff) == SQLITE_IOERR)) snprintf(extra, sizeof extra, " (%s)", strerror(sys));
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return kbv_seterr(err, "%s: locked by another process (still locked after %d s): %s", path, DB_BUSY_TIMEOUT_MS / 1000, msg);
    case SQLITE_NOTADB: return kbv_seterr(err, "%s: not a SQLite database: %s", path, msg);
    case SQLITE_CORRUPT: return kbv_seterr(err, "%s: the database is corrupt: %s", path, msg);
    case SQLITE_READONLY: return kbv_seterr(err, "%s: read-only, and kbv needs to write to it: %s", path, msg);
    case SQLITE_CANTOPEN: return kbv_seterr(err, "%s: cannot open it: %s%s", path, msg, extra);
    case SQLITE_FULL: return kbv_seterr(err, "%s: %s: the disk is full: %s", path, what, msg);
    default: return kbv_seterr(err, "%s: %s: %s%s", path, what, msg, extra);
    }
}

static int dberr(kbv_db *db, kbv_err *err, const char *what) {
    return dberr_code(db->path, db->h, db->h ? sqlite3_extended_errcode(db->h) : SQLITE_CANTOPEN, what, err);
}

int db_fail(kbv_db *db, const char *what, kbv_err *err) { return dberr(db, err, what); }

static int exec(kbv_db *db, const char *sql, kbv_err *err) {
    char *msg = NULL;
    if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
        sqlite3_free(msg); /* sqlite3_errmsg() holds the same text */
        return dberr(db, err, "cannot update it");
    }
    return 0;
}

/* What the open file holds: 0 a kbv results database of this schema version, 1 nothing yet
 * (a new or empty file), or -1 with err naming what it is instead. Reads only. */
static int classify(kbv_db *db, kbv_err *err) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db->h, "SELECT COUNT(*) FROM sqlite_master", -1, &st, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    long long objects = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) return dberr(db, err, "cannot read it");
    if (objects == 0) return 1;
    rc = sqlite3_prepare_v2(db->h, "SELECT value FROM meta WHERE key = 'schema'", -1, &st, NULL);
    if (rc != SQLITE_OK) {
        int code = sqlite3_extended_errcode(db->h) & 0xff;
        if (code == SQLITE_ERROR) /* no table meta */
            return kbv_seterr(err, "%s: not a kbv results database (a SQLite database without kbv's tables)", db->path);
        return dberr(db, err, "cannot read it");
    }
    rc = sqlite3_step(st);
    char version[32] = "";
    if (rc == SQLITE_ROW) snprintf(version, sizeof version, "%s", (const char *)sqlite3_column_text(st, 0) ?: "");
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE) return kbv_seterr(err, "%s: not a kbv results database (no schema version in its meta table)", db->path);
    if (rc != SQLITE_ROW) return dberr(db, err, "cannot read it");
    if (strcmp(version, SCHEMA_VERSION) != 0)
        return kbv_seterr(err, "%s: a results database of schema version %s; this kbv (%s) reads version %s only", db->path, version, KBV_VERSION,
                          SCHEMA_VERSION);
    return 0;
}

/* Whether table (in schema sch: main, src) has column col: 1, 0, or -1 (err set). */
static int has_column(kbv_db *db, const char *sch, const char *table, const char *col, kbv_err *err) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->h, "SELECT COUNT(*) FROM pragma_table_info(?, ?) WHERE name = ?", -1, &st, NULL) != SQLITE_OK)
        return dberr(db, err, "cannot read its tables");
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, sch, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, col, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    long long n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    return n < 0 ? dberr(db, err, "cannot read its tables") : n > 0;
}

/* The paper protocol's columns (paper_status, paper_correct, paper_speedup) came after
 * schema version 1's first tables: nullable columns added at the end of evaluations, which
 * kbv versions without them neither read nor miss (their inserts name their columns). A
 * database made before them gets them the first time a kbv that writes them opens it for
 * writing, in one transaction; readers need none of them (merge copies NULLs from a source
 * without them). 0, or -1 (err set). */
static int add_paper_columns(kbv_db *db, kbv_err *err) {
    int has = has_column(db, "main", "evaluations", "paper_status", err);
    if (has != 0) return has < 0 ? -1 : 0;
    if (exec(db, "BEGIN IMMEDIATE;", err) < 0) return -1;
    has = has_column(db, "main", "evaluations", "paper_status", err); /* another kbv may have added them meanwhile */
    if (has == 0)
        has = exec(db,
                   "ALTER TABLE evaluations ADD COLUMN paper_status TEXT; ALTER TABLE evaluations ADD COLUMN paper_correct INTEGER;"
                   " ALTER TABLE evaluations ADD COLUMN paper_speedup REAL;",
                   err);
    if (has < 0) {
        kbv_err e2;
        exec(db, "ROLLBACK;", &e2);
        return -1;
    }
    return exec(db, "COMMIT;", err);
}

/* A folder given as a database: SQLite would only say "unable to open database file". */
static int not_a_folder(const char *path, kbv_err *err) {
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) return kbv_seterr(err, "%s: is a folder, not a database", path);
    return 0;
}

/* Whether kbv may make files in path's folder (SQLite's -wal and -shm go there): 0, or -1
 * with errno set. */
static int folder_writable(const char *path) {
    char copy[sizeof((kbv_db *)0)->path];
    snprintf(copy, sizeof copy, "%s", path);
    return access(dirname(copy), W_OK);
}

/* path as a SQLite URI: file:PATH (file:///PATH when absolute), with the characters a URI
 * gives meaning to escaped, and query appended ("" for none). */
static void db_uri(const char *path, const char *query, char *out, size_t n) {
    size_t o = (size_t)snprintf(out, n, "%s", path[0] == '/' ? "file://" : "file:");
    for (const char *p = path; *p && o + 4 < n; p++) {
        if (*p == '%' || *p == '?' || *p == '#') o += (size_t)snprintf(out + o, n - o, "%%%02X", (unsigned char)*p);
        else out[o++] = *p;
    }
    out[o < n ? o : n - 1] = '\0';
    if (*query && o + strlen(query) + 2 < n) snprintf(out + o, n - o, "?%s", query);
}

/* How to read an existing database without leaving anything behind: read-write where kbv
 * may write the file and its folder (nothing is written, and the last connection to close
 * removes the WAL files); else read-only, and immutable when no WAL file exists (nothing is
 * in one to read, and SQLite would leave a -shm file beside it, or fail to make one in a
 * read-only folder). Fills uri and returns the sqlite3_open_v2() flags. */
static int read_target(const char *path, char *uri, size_t n) {
    char wal[sizeof((kbv_db *)0)->path + 8];
    snprintf(wal, sizeof wal, "%s-wal", path);
    if (access(path, W_OK) == 0 && folder_writable(path) == 0) return db_uri(path, "", uri, n), SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI;
    db_uri(path, access(wal, F_OK) == 0 ? "mode=ro" : "immutable=1", uri, n);
    return SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
}

int db_open(kbv_db *db, const char *path, kbv_err *err) {
    memset(db, 0, sizeof *db);
    snprintf(db->path, sizeof db->path, "%s", path);
    if (not_a_folder(path, err) < 0) return -1;
    /* What SQLite would only say at the first write, or as "unable to open database file". */
    if (access(path, F_OK) < 0 && folder_writable(path) < 0) return kbv_seterr(err, "%s: cannot create it: %s", path, strerror(errno));
    if (access(path, F_OK) == 0 && access(path, W_OK) < 0)
        return kbv_seterr(err, "%s: read-only, and kbv needs to write to it: %s", path, strerror(errno));
    if (access(path, F_OK) == 0 && folder_writable(path) < 0)
        return kbv_seterr(err, "%s: its folder is read-only, and SQLite writes its journal there: %s", path, strerror(errno));
    char uri[sizeof db->path * 3 + 32];
    db_uri(path, "", uri, sizeof uri);
    int rc = sqlite3_open_v2(uri, &db->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, NULL);
    if (rc != SQLITE_OK) {
        dberr_code(path, db->h, rc, "cannot open it", err);
        db_close(db);
        return -1;
    }
    sqlite3_busy_timeout(db->h, DB_BUSY_TIMEOUT_MS);
    if (sqlite3_db_readonly(db->h, "main") == 1) {
        kbv_seterr(err, "%s: read-only, and kbv needs to write to it", path);
        db_close(db);
        return -1;
    }
    /* Look before writing: a file that is not kbv's is never changed. */
    int fresh = classify(db, err);
    if (fresh < 0 || exec(db, "PRAGMA foreign_keys=ON; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", err) < 0 ||
        (fresh && (exec(db, "BEGIN IMMEDIATE;", err) < 0 || exec(db, kSchema, err) < 0 ||
                   exec(db, "INSERT OR IGNORE INTO meta(key, value) VALUES('schema', '" SCHEMA_VERSION "'); COMMIT;", err) < 0)) ||
        (!fresh && add_paper_columns(db, err) < 0)) {
        db_close(db); /* an open transaction is rolled back */
        return -1;
    }
    return 0;
}

int db_open_read(kbv_db *db, const char *path, kbv_err *err) {
    memset(db, 0, sizeof *db);
    snprintf(db->path, sizeof db->path, "%s", path);
    if (not_a_folder(path, err) < 0) return -1;
    char uri[sizeof db->path * 3 + 32];
    int flags = read_target(path, uri, sizeof uri);
    int rc = sqlite3_open_v2(uri, &db->h, flags, NULL);
    if (rc != SQLITE_OK) {
        dberr_code(path, db->h, rc, "cannot open it", err);
        db_close(db);
        return -1;
    }
    sqlite3_busy_timeout(db->h, DB_BUSY_TIMEOUT_MS);
    int kind = classify(db, err);
    int code = sqlite3_extended_errcode(db->h) & 0xff;
    if (kind < 0 && strstr(uri, "?mode=ro") && (code == SQLITE_CANTOPEN || code == SQLITE_READONLY)) {
        /* A WAL file, but in a folder kbv may not write to: SQLite cannot make the -shm file
         * it needs to read the WAL, so read the database file as it is. */
        db_close(db);
        db_uri(path, "immutable=1", uri, sizeof uri);
        if (sqlite3_open_v2(uri, &db->h, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) != SQLITE_OK) {
            dberr(db, err, "cannot open it");
            db_close(db);
            return -1;
        }
        kind = classify(db, err);
    }
    if (kind == 1) kbv_seterr(err, "%s: not a kbv results database (an empty file)", path);
    if (kind != 0) {
        db_close(db);
        return -1;
    }
    return 0;
}

void db_close(kbv_db *db) {
    if (db->h) sqlite3_close(db->h); /* finalized statements only: nothing to report */
    db->h = NULL;
}

static void now_iso(char *out, size_t n) {
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int db_run(kbv_db *db, const char *settings, int resume, uint64_t *seed, long long *run_id, const char *uuid, kbv_err *err) {
    sqlite3_stmt *st = NULL;
    if (resume) {
        if (sqlite3_prepare_v2(db->h, "SELECT id, seed FROM runs WHERE settings = ? ORDER BY id DESC LIMIT 1", -1, &st, NULL) != SQLITE_OK)
            return dberr(db, err, "cannot look up the run");
        sqlite3_bind_text(st, 1, settings, -1, SQLITE_TRANSIENT);
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *run_id = sqlite3_column_int64(st, 0);
            *seed = strtoull((const char *)sqlite3_column_text(st, 1), NULL, 10);
            sqlite3_finalize(st);
            return 1; /* resumed */
        }
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE) return dberr(db, err, "cannot look up the run");
    }
    char when[32], seedtxt[32];
    now_iso(when, sizeof when);
    snprintf(seedtxt, sizeof seedtxt, "%llu", (unsigned long long)*seed);
    if (sqlite3_prepare_v2(db->h, "INSERT INTO runs(uuid, started, seed, settings) VALUES(?, ?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
        return dberr(db, err, "cannot add the run");
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, when, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, seedtxt, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, settings, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return dberr(db, err, "cannot add the run");
    *run_id = sqlite3_last_insert_rowid(db->h);
    return 0;
}

int db_run_env(kbv_db *db, long long run_id, const kbv_result *r, kbv_err *err) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->h, "UPDATE runs SET kbv_version = ?, device = ?, gpu = ?, torch = ?, python = ? WHERE id = ? AND torch IS NULL", -1,
                           &st, NULL) != SQLITE_OK)
        return dberr(db, err, "cannot update the run");
    sqlite3_bind_text(st, 1, KBV_VERSION, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, r->device, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, r->gpu, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, r->torch, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 5, r->python, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 6, run_id);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : dberr(db, err, "cannot update the run");
}

int db_has(kbv_db *db, long long run_id, const char *key, kbv_err *err) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->h, "SELECT 1 FROM evaluations WHERE run_id = ? AND key = ?", -1, &st, NULL) != SQLITE_OK)
        return dberr(db, err, "cannot query evaluations");
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW) return 1;
    return rc == SQLITE_DONE ? 0 : dberr(db, err, "cannot query evaluations");
}

/* Bind helpers: NULL for missing values. */
static void bind_real(sqlite3_stmt *st, int i, int have, double v) {
    if (have) sqlite3_bind_double(st, i, v);
    else sqlite3_bind_null(st, i);
}
static void bind_bytes(sqlite3_stmt *st, int i, long long v) {
    if (v >= 0) sqlite3_bind_int64(st, i, v);
    else sqlite3_bind_null(st, i);
}

static long long file_row(kbv_db *db, const char *table, const kbv_file_id *f, kbv_err *err) {
    char sql[200];
    sqlite3_stmt *st = NULL;
    snprintf(sql, sizeof sql, "INSERT OR IGNORE INTO %s(sha256, name, path) VALUES(?, ?, ?)", table);
    if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK) return dberr(db, err, "cannot add a file");
    sqlite3_bind_text(st, 1, f->sha256, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, f->name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, f->path, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return dberr(db, err, "cannot add a file");
    snprintf(sql, sizeof sql, "SELECT id FROM %s WHERE sha256 = ?", table);
    if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK) return dberr(db, err, "cannot find a file");
    sqlite3_bind_text(st, 1, f->sha256, -1, SQLITE_TRANSIENT);
    long long id = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    return id >= 0 ? id : dberr(db, err, "cannot find a file");
}

static int store(kbv_db *db, long long run_id, const char *key, const char *model, int sample, int level, const kbv_result *r, kbv_err *err) {
    long long pid = file_row(db, "problems", &r->problem, err);
    long long cid = pid < 0 ? -1 : file_row(db, "candidates", &r->candidate, err);
    if (cid < 0) return -1;
    json_t *j = result_to_json(r);
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    if (!text) return kbv_seterr(err, "out of memory");
    char hacks[512] = "", when[32];
    for (int i = 0; i < r->nflags; i++)
        if (r->flags[i].severity == SEV_HACK && strlen(hacks) + strlen(r->flags[i].id) + 2 < sizeof hacks)
            strcat(hacks, *hacks ? "," : ""), strcat(hacks, r->flags[i].id);
    now_iso(when, sizeof when);
    const kbv_perf *p = &r->perf;
    const kbv_memory *m = &r->memory;
    sqlite3_stmt *st = NULL;
    const char *sql = "INSERT INTO evaluations(run_id, key, problem_id, candidate_id, model, sample, level, protocol, status,"
                      " accuracy_class, speedup, speedup_lo, speedup_hi, speedup_strict, peak_ratio, std_status, std_correct,"
                      " std_speedup, hacks, wall_s, result, created, paper_status, paper_correct, paper_speedup)"
                      " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
    if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK) {
        free(text);
        return dberr(db, err, "cannot add the evaluation");
    }
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 3, pid);
    sqlite3_bind_int64(st, 4, cid);
    sqlite3_bind_text(st, 5, model, -1, SQLITE_TRANSIENT);
    if (sample >= 0) sqlite3_bind_int(st, 6, sample);
    else sqlite3_bind_null(st, 6);
    if (level >= 0) sqlite3_bind_int(st, 7, level);
    else sqlite3_bind_null(st, 7);
    sqlite3_bind_text(st, 8, r->protocol, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 9, kbv_status_name(r->status), -1, SQLITE_STATIC);
    if (r->klass >= 0) sqlite3_bind_text(st, 10, judge_class_name((judge_class)r->klass), -1, SQLITE_STATIC);
    else sqlite3_bind_null(st, 10);
    bind_real(st, 11, p->speedup.measured, p->speedup.value);
    bind_real(st, 12, p->speedup.measured, p->speedup.lo);
    bind_real(st, 13, p->speedup.measured, p->speedup.hi);
    bind_real(st, 14, p->speedup_strict.measured, p->speedup_strict.value);
    bind_real(st, 15, m->peak_cand >= 0 && m->peak_ref > 0, m->peak_ref > 0 ? (double)m->peak_cand / (double)m->peak_ref : 0);
    if (r->standard.ran) {
        sqlite3_bind_text(st, 16, kbv_status_name(r->standard.status), -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 17, r->standard.correct);
    } else {
        sqlite3_bind_null(st, 16), sqlite3_bind_null(st, 17);
    }
    bind_real(st, 18, r->standard.timed && r->standard.correct && r->standard.time_cand_ms > 0,
              r->standard.time_cand_ms > 0 ? r->standard.time_ref_ms / r->standard.time_cand_ms : 0);
    sqlite3_bind_text(st, 19, hacks, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(st, 20, r->wall_s);
    sqlite3_bind_text(st, 21, text, -1, free);
    sqlite3_bind_text(st, 22, when, -1, SQLITE_TRANSIENT);
    const kbv_paper *pp = &r->paper;
    if (pp->ran) {
        sqlite3_bind_text(st, 23, kbv_status_name(pp->status), -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 24, pp->correct);
    } else {
        sqlite3_bind_null(st, 23), sqlite3_bind_null(st, 24);
    }
    /* the paper's speedup: the TF32 baseline's mean over the candidate's, correct only (result.c) */
    bind_real(st, 25, pp->timed && pp->correct && pp->time_cand_ms > 0, pp->time_cand_ms > 0 ? pp->time_tf32_ms / pp->time_cand_ms : 0);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return dberr(db, err, "cannot add the evaluation");
    long long eid = sqlite3_last_insert_rowid(db->h);

    if (sqlite3_prepare_v2(db->h, "INSERT INTO cases VALUES(?,?,?,?,?,?,?,?,?)", -1, &st, NULL) != SQLITE_OK)
        return dberr(db, err, "cannot add cases");
    for (int i = 0; i < r->ncases && rc == SQLITE_DONE; i++) {
        const kbv_case *c = &r->cases[i];
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, eid);
        sqlite3_bind_int(st, 2, i);
        sqlite3_bind_text(st, 3, c->distribution, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 4, c->domain, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(st, 5, c->skipped);
        sqlite3_bind_int(st, 6, c->evaluated);
        sqlite3_bind_int(st, 7, c->passed);
        bind_real(st, 8, c->evaluated, c->norm_rel_err);
        if (c->klass >= 0) sqlite3_bind_text(st, 9, judge_class_name((judge_class)c->klass), -1, SQLITE_STATIC);
        else sqlite3_bind_null(st, 9);
        rc = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return dberr(db, err, "cannot add cases");

    const struct {
        const char *arm;
        const kbv_times *t;
    } arms[] = {
        {"candidate", &p->cand},
        {"reference", &p->ref},
        {"reference_strict", &p->ref_strict},
        {"reference_compile", &p->ref_compile},
        {"candidate_graph", &p->cand_graph},
        {"reference_graph", &p->ref_graph},
    };
    if (sqlite3_prepare_v2(db->h, "INSERT INTO timings VALUES(?,?,?,?,?,?,?)", -1, &st, NULL) != SQLITE_OK)
        return dberr(db, err, "cannot add timings");
    for (size_t a = 0; a < sizeof arms / sizeof *arms && rc == SQLITE_DONE; a++) {
        if (!arms[a].t->n) continue;
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, eid);
        sqlite3_bind_text(st, 2, arms[a].arm, -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 3, arms[a].t->median);
        sqlite3_bind_double(st, 4, arms[a].t->q1);
        sqlite3_bind_double(st, 5, arms[a].t->q3);
        sqlite3_bind_double(st, 6, arms[a].t->mean);
        sqlite3_bind_int(st, 7, arms[a].t->n);
        rc = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return dberr(db, err, "cannot add timings");

    if (sqlite3_prepare_v2(db->h, "INSERT INTO memory VALUES(?,?,?,?,?,?,?)", -1, &st, NULL) != SQLITE_OK) return dberr(db, err, "cannot add memory");
    sqlite3_bind_int64(st, 1, eid);
    bind_bytes(st, 2, m->peak_cand), bind_bytes(st, 3, m->peak_ref), bind_bytes(st, 4, m->pers_cand);
    bind_bytes(st, 5, m->pers_ref), bind_bytes(st, 6, m->torch_peak_cand), bind_bytes(st, 7, m->torch_peak_ref);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return dberr(db, err, "cannot add memory");

    if (sqlite3_prepare_v2(db->h, "INSERT INTO flags VALUES(?,?,?,?,?)", -1, &st, NULL) != SQLITE_OK) return dberr(db, err, "cannot add flags");
    for (int i = 0; i < r->nflags && rc == SQLITE_DONE; i++) {
        char *ev = r->flags[i].evidence ? json_dumps(r->flags[i].evidence, JSON_COMPACT) : NULL;
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, eid);
        sqlite3_bind_text(st, 2, r->flags[i].id, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 3, severity_name(r->flags[i].severity), -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, r->flags[i].message, -1, SQLITE_TRANSIENT);
        if (ev) sqlite3_bind_text(st, 5, ev, -1, free);
        else sqlite3_bind_null(st, 5);
        rc = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : dberr(db, err, "cannot add flags");
}

int db_run_seed(kbv_db *db, long long run_id, uint64_t *seed, kbv_err *err) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->h, "SELECT seed FROM runs WHERE id = ?", -1, &st, NULL) != SQLITE_OK) return dberr(db, err, "cannot find the run");
    sqlite3_bind_int64(st, 1, run_id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *seed = strtoull((const char *)sqlite3_column_text(st, 0), NULL, 10);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : kbv_seterr(err, "database %s: no run %lld", db->path, run_id);
}

int db_status(kbv_db *db, long long run_id, const char *key, char *out, size_t n, kbv_err *err) {
    sqlite3_stmt *st = NULL;
    out[0] = '\0';
    if (sqlite3_prepare_v2(db->h, "SELECT status FROM evaluations WHERE run_id = ? AND key = ?", -1, &st, NULL) != SQLITE_OK)
        return dberr(db, err, "cannot query evaluations");
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) snprintf(out, n, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : dberr(db, err, "cannot query evaluations");
}

int db_store(kbv_db *db, long long run_id, const char *key, const char *model, int sample, int level, const kbv_result *r, kbv_err *err) {
    if (exec(db, "BEGIN IMMEDIATE", err) < 0) return -1;
    int has = db_has(db, run_id, key, err);
    if (has != 0) {
        kbv_err e2;
        exec(db, "ROLLBACK", &e2);
        return has;
    }
    if (store(db, run_id, key, model, sample, level, r, err) < 0) {
        kbv_err e2;
        exec(db, "ROLLBACK", &e2);
        return -1;
    }
    return exec(db, "COMMIT", err);
}

/* Shards of one run (kbv run --shard I/N, kbv slurm) differ in I only: the same manifest, seed
 * and other settings. Whether the runs db_merge has just copied (temp.runmap) agree with every
 * other shard of the same manifest in dst, new or old: 0, or -1 with err naming the two shards
 * and what differs (never the seed itself: it is the run's secret). A shard of another seed or
 * other settings would mix two runs' verdicts in one result. Runs that are not shards, and
 * shards of other manifests, are left alone. */
static int merge_shards_agree(kbv_db *dst, const char *src, kbv_err *err) {
    static const char kSql[] =
        "SELECT json_extract(n.settings, '$.shard_i'), json_extract(n.settings, '$.shard_n'), json_extract(n.settings, '$.manifest'),"
        "  json_extract(o.settings, '$.shard_i'), json_extract(o.settings, '$.shard_n'), n.seed = o.seed,"
        "  json_remove(n.settings, '$.shard_i', '$.manifest'), json_remove(o.settings, '$.shard_i', '$.manifest')"
        " FROM temp.runmap m JOIN main.runs n ON n.id = m.new JOIN main.runs o ON o.id <> n.id"
        " WHERE json_valid(n.settings) AND json_valid(o.settings)"
        "  AND json_extract(n.settings, '$.shard_n') > 1 AND json_extract(o.settings, '$.shard_n') > 1"
        "  AND json_extract(n.settings, '$.manifest') = json_extract(o.settings, '$.manifest')"
        "  AND (n.seed <> o.seed OR json_remove(n.settings, '$.shard_i') <> json_remove(o.settings, '$.shard_i'))"
        " ORDER BY n.id, o.id LIMIT 1";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(dst->h, kSql, -1, &st, NULL) != SQLITE_OK) return dberr(dst, err, "cannot compare the shards");
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        char why[600];
        if (!sqlite3_column_int(st, 5)) snprintf(why, sizeof why, "another seed");
        else snprintf(why, sizeof why, "other settings: %s, not %s", (const char *)sqlite3_column_text(st, 6), (const char *)sqlite3_column_text(st, 7));
        kbv_seterr(err,
                   "%s: shard %d/%d of %s is not from the run of shard %d/%d in %s (%s): merge the shards of each run into a database "
                   "of its own",
                   src, sqlite3_column_int(st, 0), sqlite3_column_int(st, 1), (const char *)sqlite3_column_text(st, 2), sqlite3_column_int(st, 3),
                   sqlite3_column_int(st, 4), dst->path, why);
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW) return -1;
    return rc == SQLITE_DONE ? 0 : dberr(dst, err, "cannot compare the shards");
}

int db_merge(kbv_db *dst, const char *src, int *runs_added, int *evals_added, kbv_err *err) {
    *runs_added = *evals_added = 0;
    kbv_db s;
    if (db_open_read(&s, src, err) < 0) return -1; /* a kbv database of this schema, and never written to */
    db_close(&s);
    struct stat a, b;
    if (stat(src, &a) == 0 && stat(dst->path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
        return kbv_seterr(err, "%s: is the output database itself", src);
    sqlite3_stmt *st = NULL;
    char uri[sizeof dst->path * 3 + 32];
    read_target(src, uri, sizeof uri); /* the open flags follow the URI's mode in an ATTACH */
    if (sqlite3_prepare_v2(dst->h, "ATTACH DATABASE ? AS src", -1, &st, NULL) != SQLITE_OK) return dberr(dst, err, "cannot attach");
    sqlite3_bind_text(st, 1, uri, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return dberr_code(src, dst->h, sqlite3_extended_errcode(dst->h), "cannot attach it", err);
    /* Everything in one transaction, with the id mappings in temporary tables. A deferred one:
     * BEGIN IMMEDIATE would take the write lock of the attached source too, and fail while
     * another process writes to it (reading it is all a merge needs). */
    /* A source made before the paper protocol's columns has none: NULLs for them. */
    int paper = has_column(dst, "src", "evaluations", "paper_status", err);
    if (paper < 0) {
        kbv_err e2;
        exec(dst, "DETACH DATABASE src;", &e2);
        return -1;
    }
    char sql[8192]; /* the statements below with the paper columns filled in */
    snprintf(
        sql, sizeof sql,
        "BEGIN;"
        "INSERT OR IGNORE INTO problems(sha256, name, path) SELECT sha256, name, path FROM src.problems;"
        "INSERT OR IGNORE INTO candidates(sha256, name, path) SELECT sha256, name, path FROM src.candidates;"
        "CREATE TEMP TABLE newruns AS SELECT * FROM src.runs WHERE uuid NOT IN (SELECT uuid FROM main.runs);"
        "INSERT INTO main.runs(uuid, started, seed, settings, kbv_version, device, gpu, torch, python)"
        "  SELECT uuid, started, seed, settings, kbv_version, device, gpu, torch, python FROM newruns ORDER BY id;"
        "CREATE TEMP TABLE runmap AS SELECT n.id AS old, r.id AS new FROM newruns n JOIN main.runs r ON r.uuid = n.uuid;"
        "CREATE TEMP TABLE evalmap(old INTEGER PRIMARY KEY, new INTEGER);"
        "INSERT INTO main.evaluations(run_id, key, problem_id, candidate_id, model, sample, level, protocol, status,"
        "  accuracy_class, speedup, speedup_lo, speedup_hi, speedup_strict, peak_ratio, std_status, std_correct, std_speedup,"
        "  hacks, wall_s, result, created, paper_status, paper_correct, paper_speedup)"
        "  SELECT m.new, e.key, (SELECT id FROM main.problems WHERE sha256 = p.sha256),"
        "    (SELECT id FROM main.candidates WHERE sha256 = c.sha256), e.model, e.sample, e.level, e.protocol, e.status,"
        "    e.accuracy_class, e.speedup, e.speedup_lo, e.speedup_hi, e.speedup_strict, e.peak_ratio, e.std_status,"
        "    e.std_correct, e.std_speedup, e.hacks, e.wall_s, e.result, e.created, %s"
        "  FROM src.evaluations e JOIN runmap m ON m.old = e.run_id"
        "    LEFT JOIN src.problems p ON p.id = e.problem_id LEFT JOIN src.candidates c ON c.id = e.candidate_id ORDER BY e.id;"
        "INSERT INTO evalmap SELECT e.id, n.id FROM src.evaluations e JOIN runmap m ON m.old = e.run_id"
        "  JOIN main.evaluations n ON n.run_id = m.new AND n.key = e.key;"
        "INSERT INTO main.cases SELECT m.new, x.idx, x.distribution, x.domain, x.skipped, x.evaluated, x.passed, x.norm_rel_err,"
        "  x.accuracy_class FROM src.cases x JOIN evalmap m ON m.old = x.evaluation_id;"
        "INSERT INTO main.timings SELECT m.new, x.arm, x.median_ms, x.q1_ms, x.q3_ms, x.mean_ms, x.samples"
        "  FROM src.timings x JOIN evalmap m ON m.old = x.evaluation_id;"
        "INSERT INTO main.memory SELECT m.new, x.peak_candidate, x.peak_reference, x.persistent_candidate,"
        "  x.persistent_reference, x.torch_peak_candidate, x.torch_peak_reference FROM src.memory x JOIN evalmap m ON m.old = x.evaluation_id;"
        "INSERT INTO main.flags SELECT m.new, x.flag, x.severity, x.message, x.evidence FROM src.flags x JOIN evalmap m ON m.old = x.evaluation_id;",
        paper ? "e.paper_status, e.paper_correct, e.paper_speedup" : "NULL, NULL, NULL");
    int ok = sqlite3_exec(dst->h, sql, NULL, NULL, NULL) == SQLITE_OK;
    if (!ok) { /* the fault may be either file's: a lock is the output's, damage most likely the source's */
        int code = sqlite3_extended_errcode(dst->h) & 0xff;
        if (code == SQLITE_BUSY || code == SQLITE_LOCKED || code == SQLITE_READONLY || code == SQLITE_FULL) dberr(dst, err, "cannot update it");
        else kbv_seterr(err, "%s: cannot copy it into %s: %s", src, dst->path, sqlite3_errmsg(dst->h));
    }
    if (ok) ok = merge_shards_agree(dst, src, err) == 0; /* before COMMIT: a refusal copies nothing */
    if (ok) {
        sqlite3_stmt *q = NULL;
        if (sqlite3_prepare_v2(dst->h, "SELECT (SELECT COUNT(*) FROM runmap), (SELECT COUNT(*) FROM evalmap)", -1, &q, NULL) == SQLITE_OK &&
            sqlite3_step(q) == SQLITE_ROW)
            *runs_added = sqlite3_column_int(q, 0), *evals_added = sqlite3_column_int(q, 1);
        sqlite3_finalize(q);
        ok = exec(dst, "COMMIT;", err) == 0;
    }
    kbv_err e2;
    if (!ok) exec(dst, "ROLLBACK;", &e2);
    exec(dst, "DROP TABLE IF EXISTS temp.newruns; DROP TABLE IF EXISTS temp.runmap; DROP TABLE IF EXISTS temp.evalmap; DETACH DATABASE src;", &e2);
    return ok ? 0 : -1;
}
