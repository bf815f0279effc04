/* generate.c -- `kbv generate` and `kbv bench` (see generate.h; docs/generate.md).
 *
 * Threads: each model gets `concurrency` request threads (llm_complete, which blocks); they
 * only take tasks and hand back responses through a queue. The main thread alone extracts
 * code, writes files, stores rows, prints progress and watches the signals and the spending
 * cap, so the database connection and the run folder have one writer.
 * Not here: the HTTP client and the providers' wire formats (llm.c), evaluation (run.c),
 * reporting (report.c); bench runs those as the kbv binary's own commands.
 */
#include "generate.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "db.h"
#include "eval.h"
#include "llm.h"
#include "run.h"
#include "util.h"

#define GEN_TEXT_MAX    (1 << 20)   /* bytes of a response's text stored (and extracted from) */
#define GEN_RAW_MAX     (256 << 10) /* bytes of a response's raw HTTP body stored */
#define GEN_STOP_AFTER  5           /* consecutive errors, with no answer yet, that stop a model */
#define GEN_MAX_PROBLEM 100000      /* largest problem number in --problems */

static const char kTable[] = "CREATE TABLE IF NOT EXISTS generations(id INTEGER PRIMARY KEY, created TEXT NOT NULL,"
                             "  model TEXT NOT NULL, provider TEXT, model_id TEXT, prompt_sha256 TEXT NOT NULL, sample INTEGER NOT NULL,"
                             "  problem_path TEXT, problem_sha256 TEXT, level INTEGER, problem INTEGER, input_blind INTEGER,"
                             "  status TEXT NOT NULL, response TEXT, raw TEXT, code TEXT, candidate TEXT, tokens_in INTEGER,"
                             "  tokens_out INTEGER, cost_usd REAL, latency_s REAL, attempts INTEGER, http_status INTEGER,"
                             "  finish_reason TEXT, error TEXT);"
                             "CREATE INDEX IF NOT EXISTS generations_key ON generations(model, prompt_sha256, sample);";

/* KernelBench problems whose inputs give the answer away: the KernelBench-Verified paper
 * shows these without get_inputs (level, problem). */
static const int kInputBlind[][2] = {{1, 90}, {1, 100}, {3, 35}, {3, 47}};

typedef struct gen_opts {
    const char *manifest, *kernelbench, *levels, *problems, *device;
    const char *models_path, *model_filter, *out, *db, *tmpl;
    int samples;
    long long max_tokens; /* 0: no cap */
    double max_cost;      /* USD; 0: no cap */
    double timeout_s;     /* 0: the client's default */
    int retries;          /* -1: the client's default */
    int quiet;
} gen_opts;

typedef struct gen_problem {
    char path[PATH_MAX]; /* absolute */
    char sha[65];
    int level, number; /* level -1: unknown (0 in file names) */
    int input_blind;
    char prompt_sha[65];
    char *prompt;
} gen_problem;

typedef struct gen_task {
    int problem, model, sample;
    char status[16]; /* "ok", "no_code", "error" or "" (not asked yet) */
    char error[300]; /* the last error, for the summary */
} gen_task;

typedef struct gen_done {
    int task;
    llm_response r;
    struct gen_done *next;
} gen_done;

typedef struct gen_model {
    llm_model m;
    char dir[128]; /* the name made safe for a path */
    int *pending;  /* task indexes to ask for */
    int npending, next, threads;
    int ok, no_code, errors, asked, consecutive_errors, stopped;
    int answered; /* answers received by the request threads in this run */
    char stop_why[400];
} gen_model;

typedef struct gen_state {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const gen_opts *o;
    llm_opts lo;
    gen_model *models;
    int nmodels;
    gen_problem *problems;
    int nproblems;
    gen_task *tasks;
    int ntasks;
    gen_done *head, *tail; /* answers waiting for the main thread */
    int alive;             /* request threads still running */
    int stop, capped;
    long long tokens_in, tokens_out; /* this invocation's */
    double cost;                     /* USD, this invocation's estimate */
    const char *keys[64];            /* the API keys in use, scrubbed from what is stored or shown */
    int nkeys;
} gen_state;

static volatile int g_cancel;          /* the client's cancel flag (llm_opts.cancel) */
static volatile sig_atomic_t g_signal; /* SIGINT or SIGTERM received, 0 before */

static void on_signal(int sig) {
    g_signal = sig;
    g_cancel = 1;
}

#define say kbv_say /* one line on stderr, control characters shown as '?' (util.h) */

/* ---------------------------------------------------------------------------------------
 * Extraction and the input-blind cut (pure functions, exported for tests)
 * ------------------------------------------------------------------------------------- */

/* Whether the n bytes at s define class ModelNew: a line "class ModelNew" followed by '(',
 * ':' or a blank. */
static int defines_modelnew(const char *s, size_t n) {
    static const char want[] = "class ModelNew";
    size_t w = sizeof want - 1;
    for (size_t i = 0; i + w < n; i++) {
        if (memcmp(s + i, want, w) != 0) continue;
        size_t j = i;
        while (j > 0 && (s[j - 1] == ' ' || s[j - 1] == '\t')) j--;
        char after = s[i + w];
        if ((j == 0 || s[j - 1] == '\n') && (after == '(' || after == ':' || after == ' ')) return 1;
    }
    return 0;
}

/* A fence line: up to three spaces, then three or more backticks. Returns the number of
 * backticks (0: not a fence) and points *info at what follows them. */
static size_t fence(const char *line, size_t len, const char **info) {
    size_t i = 0;
    while (i < len && i < 3 && line[i] == ' ') i++;
    size_t k = i;
    while (k < len && line[k] == '`') k++;
    if (k - i < 3) return 0;
    *info = line + k;
    return k - i;
}

/* Whether a fence's info string names Python (or nothing). */
static int python_info(const char *info, const char *end) {
    while (info < end && (*info == ' ' || *info == '\t')) info++;
    const char *w = info;
    while (w < end && !isspace((unsigned char)*w) && *w != '{') w++;
    size_t n = (size_t)(w - info);
    if (n == 0) return 1;
    char word[16] = "";
    if (n >= sizeof word) return 0;
    for (size_t i = 0; i < n; i++) word[i] = (char)tolower((unsigned char)info[i]);
    return strcmp(word, "python") == 0 || strcmp(word, "py") == 0 || strcmp(word, "python3") == 0;
}

char *generate_extract(const char *text) {
    const char *best = NULL, *open_body = NULL;
    size_t best_len = 0, open_ticks = 0;
    int open_py = 0;
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        const char *next = nl ? nl + 1 : NULL;
        const char *info = NULL;
        size_t ticks = fence(line, len, &info);
        if (!open_body && ticks) {
            open_body = next ? next : line + len, open_ticks = ticks;
            open_py = python_info(info, line + len) && !memchr(info, '`', (size_t)(line + len - info));
        } else if (open_body && ticks >= open_ticks) {
            const char *rest = info;
            while (rest < line + len && (*rest == ' ' || *rest == '\t' || *rest == '\r')) rest++;
            if (rest == line + len) { /* a closing fence: nothing after the backticks */
                size_t body = (size_t)(line - open_body);
                if (open_py && defines_modelnew(open_body, body)) best = open_body, best_len = body;
                open_body = NULL;
            }
        }
        line = next;
    }
    if (!best) return NULL; /* a block still open at the end was cut short: never chosen */
    char *code = malloc(best_len + 2);
    if (!code) return NULL;
    memcpy(code, best, best_len);
    if (best_len && code[best_len - 1] != '\n') code[best_len++] = '\n';
    code[best_len] = '\0';
    return code;
}

/* Whether a line starts the Model class: "class Model" then '(', ':' or a blank. */
static int model_class_line(const char *s) {
    if (strncmp(s, "class Model", 11) != 0) return 0;
    return s[11] == '(' || s[11] == ':' || s[11] == ' ' || s[11] == '\t';
}

char *generate_cut_after_model(const char *src) {
    const char *p = src, *cls = NULL;
    for (const char *line = src; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
        if (model_class_line(line)) {
            cls = line;
            break;
        }
    if (!cls) return NULL;
    /* The body ends before the first later line that starts in column 0 with code; blank
     * lines and column-0 comments between are the module's, not the class's, once code
     * follows them. */
    const char *end = NULL, *keep = NULL; /* keep: end of the last line of the body */
    p = strchr(cls, '\n');
    keep = p ? p + 1 : cls + strlen(cls);
    for (const char *line = keep; line && *line;) {
        const char *nl = strchr(line, '\n');
        const char *next = nl ? nl + 1 : line + strlen(line);
        const char *q = line;
        while (*q == ' ' || *q == '\t' || *q == '\r') q++;
        int blank = *q == '\n' || *q == '\0';
        if (!blank && q == line && *q != '#') {
            end = line;
            break;
        }
        if (!blank && q != line) keep = next; /* an indented line: part of the body */
        line = nl ? next : NULL;
    }
    if (!end) end = keep;
    size_t n = (size_t)(keep - src);
    char *out = malloc(n + 2);
    if (!out) return NULL;
    memcpy(out, src, n);
    if (n && out[n - 1] != '\n') out[n++] = '\n';
    out[n] = '\0';
    return out;
}

/* ---------------------------------------------------------------------------------------
 * Options, problems and the prompt
 * ------------------------------------------------------------------------------------- */

/* A list of numbers and ranges ("1-10,19") into set[0..max]: 0, or -1 when malformed. */
static int parse_set(const char *s, unsigned char *set, int max) {
    if (!s || !*s) return -1;
    for (const char *p = s; *p;) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p || a < 0 || a > max) return -1;
        if (*end == '-') {
            const char *q = end + 1;
            b = strtol(q, &end, 10);
            if (end == q || b < a || b > max) return -1;
        }
        for (long i = a; i <= b; i++) set[i] = 1;
        if (*end == ',') end++;
        else if (*end) return -1;
        p = end;
    }
    return 0;
}

/* The number a problem file's name starts with ("19_ReLU.py": 19), or -1. */
static int leading_number(const char *path) {
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    char *end;
    long v = strtol(b, &end, 10);
    if (end == b || *end != '_' || v < 0 || v > GEN_MAX_PROBLEM || !isdigit((unsigned char)b[0])) return -1;
    return (int)v;
}

/* The level named by the problem's folder ("level2/"), or -1. */
static int folder_level(const char *path) {
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", path);
    char *d = dirname(copy), *b = strrchr(d, '/');
    b = b ? b + 1 : d;
    char *end;
    if (strncmp(b, "level", 5) != 0 || !isdigit((unsigned char)b[5])) return -1;
    long v = strtol(b + 5, &end, 10);
    return *end || v > 1000 ? -1 : (int)v;
}

static int add_problem(gen_problem **ps, int *n, int *cap, const char *path, int level, int number, int blind, kbv_err *err) {
    char abs[PATH_MAX];
    if (kbv_abspath(path, abs, sizeof abs, err) < 0) return -1;
    for (int i = 0; i < *n; i++)
        if (strcmp((*ps)[i].path, abs) == 0) { /* listed twice (the suite has many candidates per problem) */
            (*ps)[i].input_blind |= blind;
            return 0;
        }
    if (*n == *cap) {
        int c = *cap ? *cap * 2 : 32;
        gen_problem *q = realloc(*ps, (size_t)c * sizeof *q);
        if (!q) return kbv_seterr(err, "out of memory");
        *ps = q, *cap = c;
    }
    gen_problem *p = &(*ps)[(*n)++];
    memset(p, 0, sizeof *p);
    snprintf(p->path, sizeof p->path, "%s", abs);
    p->level = level >= 0 ? level : folder_level(abs);
    p->number = number;
    p->input_blind = blind;
    return kbv_sha256_file(abs, p->sha, err);
}

/* Problems from a JSON Lines manifest: "problem" (relative to the manifest's folder),
 * optionally "level" and "input_blind"; other fields (a candidate) are ignored. */
static int problems_from_manifest(const char *path, gen_problem **ps, int *n, int *cap, kbv_err *err) {
    char *text = NULL;
    size_t len = 0;
    if (kbv_read_file(path, &text, &len, err) < 0) return -1;
    char copy[PATH_MAX], dir[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", path);
    snprintf(dir, sizeof dir, "%s", dirname(copy));
    int rc = 0, lineno = 0;
    for (char *line = text, *next; line && rc == 0; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        lineno++;
        char *s = line;
        while (*s == ' ' || *s == '\t' || *s == '\r') s++;
        if (!*s || *s == '#') continue;
        json_error_t je;
        json_t *o = json_loads(s, 0, &je);
        const json_t *pv = json_object_get(o, "problem"), *lv = json_object_get(o, "level"), *bv = json_object_get(o, "input_blind");
        if (!json_is_object(o)) rc = kbv_seterr(err, "%s:%d: not a JSON object: %s", path, lineno, o ? "another JSON value" : je.text);
        else if (!json_is_string(pv) || !*json_string_value(pv)) rc = kbv_seterr(err, "%s:%d: needs 'problem' (a path)", path, lineno);
        else if (lv && (!json_is_integer(lv) || json_integer_value(lv) < 0 || json_integer_value(lv) > 1000))
            rc = kbv_seterr(err, "%s:%d: 'level' must be an integer from 0 to 1000", path, lineno);
        else if (bv && !json_is_boolean(bv)) rc = kbv_seterr(err, "%s:%d: 'input_blind' must be true or false", path, lineno);
        else {
            const char *p = json_string_value(pv);
            char full[PATH_MAX];
            if ((p[0] == '/' ? snprintf(full, sizeof full, "%s", p) : snprintf(full, sizeof full, "%s/%s", dir, p)) >= (int)sizeof full)
                rc = kbv_seterr(err, "%s:%d: the problem path is too long", path, lineno);
            else if (add_problem(ps, n, cap, full, lv ? (int)json_integer_value(lv) : -1, leading_number(full), json_is_true(bv), err) < 0)
                rc = kbv_wraperr(err, "%s:%d", path, lineno);
        }
        json_decref(o);
    }
    free(text);
    if (rc == 0 && *n == 0) rc = kbv_seterr(err, "%s: no problems in the manifest", path);
    return rc;
}

static int cmp_problem(const void *a, const void *b) {
    const gen_problem *x = a, *y = b;
    return x->level != y->level ? x->level - y->level : x->number - y->number;
}

/* KernelBench's DIR/levelL/P_Name.py for the chosen levels and problem numbers. */
static int problems_from_kernelbench(const char *kb, const char *levels, const char *problems, gen_problem **ps, int *n, int *cap, kbv_err *err) {
    unsigned char lv[101] = {0};
    unsigned char *pv = calloc(GEN_MAX_PROBLEM + 1, 1);
    if (!pv) return kbv_seterr(err, "out of memory");
    int rc = 0;
    if (parse_set(levels ? levels : "1,2,3", lv, 100) < 0) rc = kbv_seterr(err, "--levels needs a list like 1,2,3, not '%s'", levels);
    else if (problems && parse_set(problems, pv, GEN_MAX_PROBLEM) < 0)
        rc = kbv_seterr(err, "--problems needs numbers and ranges like 1-10,19, not '%s'", problems);
    for (int l = 0; rc == 0 && l <= 100; l++) {
        if (!lv[l]) continue;
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/level%d", kb, l);
        DIR *d = opendir(dir);
        if (!d) {
            rc = kbv_seterr(err, "%s: %s (is --kernelbench a KernelBench problem folder, with level1/ ...?)", dir, strerror(errno));
            break;
        }
        for (struct dirent *e; rc == 0 && (e = readdir(d));) {
            size_t len = strlen(e->d_name);
            int num = leading_number(e->d_name);
            if (num < 0 || len < 4 || strcmp(e->d_name + len - 3, ".py") != 0 || (problems && !pv[num])) continue;
            int blind = 0;
            for (size_t k = 0; k < sizeof kInputBlind / sizeof kInputBlind[0]; k++) blind |= kInputBlind[k][0] == l && kInputBlind[k][1] == num;
            char path[PATH_MAX];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            rc = add_problem(ps, n, cap, path, l, num, blind, err);
        }
        closedir(d);
    }
    free(pv);
    if (rc == 0 && *n == 0)
        rc = kbv_seterr(err, "%s: no problem matches --levels %s%s%s", kb, levels ? levels : "1,2,3", problems ? " --problems " : "",
                        problems ? problems : "");
    if (rc == 0) qsort(*ps, (size_t)*n, sizeof **ps, cmp_problem);
    return rc;
}

/* Problem numbers for the file names: the number a file's name starts with while these are
 * unique within a level, else each problem's place in the list (1, 2, ...). */
static void number_problems(gen_problem *ps, int n) {
    int clash = 0;
    for (int i = 0; i < n && !clash; i++) {
        clash = ps[i].number < 0;
        for (int j = 0; j < i && !clash; j++) clash = ps[i].level == ps[j].level && ps[i].number == ps[j].number;
    }
    if (clash)
        for (int i = 0; i < n; i++) ps[i].number = i + 1;
}

/* The folder of kbv's own prompt files: $KBV_PROMPTS, else prompts/ beside the kbv binary,
 * else ../share/kbv/prompts from it (an installed kbv). */
static int prompts_dir(char *out, size_t n) {
    const char *env = getenv("KBV_PROMPTS");
    if (env && *env) return snprintf(out, n, "%s", env) < (int)n ? 0 : -1;
    char self[PATH_MAX];
    ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
    if (l <= 0) return -1;
    self[l] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash) return -1;
    *slash = '\0';
    const char *tries[2] = {"%s/prompts", "%s/../share/kbv/prompts"};
    for (int i = 0; i < 2; i++) {
        char t[PATH_MAX + 32], f[PATH_MAX + 64];
        snprintf(t, sizeof t, tries[i], self);
        snprintf(f, sizeof f, "%s/kernelbench.txt", t);
        if (access(f, R_OK) == 0) return snprintf(out, n, "%s", t) < (int)n ? 0 : -1;
    }
    return -1;
}

/* Replace every {{name}} in *text by value (a new string replaces *text). */
static int fill(char **text, const char *name, const char *value) {
    char ph[64];
    snprintf(ph, sizeof ph, "{{%s}}", name);
    if (!strstr(*text, ph)) return 0;
    kbv_buf b;
    kbv_buf_init(&b);
    const char *p = *text;
    for (const char *q; (q = strstr(p, ph)); p = q + strlen(ph))
        if (kbv_buf_append(&b, p, (size_t)(q - p)) < 0 || kbv_buf_append(&b, value, strlen(value)) < 0) {
            kbv_buf_free(&b);
            return -1;
        }
    if (kbv_buf_append(&b, p, strlen(p)) < 0) {
        kbv_buf_free(&b);
        return -1;
    }
    free(*text);
    *text = b.data;
    return 0;
}

/* Each problem's prompt and its hash. The examples are read from the template's folder when
 * both files are there, else from kbv's prompts folder, and only when the template uses them. */
static int make_prompts(const gen_opts *o, gen_problem *ps, int n, kbv_err *err) {
    char dflt[PATH_MAX], tpath[PATH_MAX + 32];
    int have_dflt = prompts_dir(dflt, sizeof dflt) == 0;
    if (o->tmpl) snprintf(tpath, sizeof tpath, "%s", o->tmpl);
    else if (have_dflt) snprintf(tpath, sizeof tpath, "%s/kernelbench.txt", dflt);
    else
        return kbv_seterr(err,
                          "cannot find kbv's prompt template prompts/kernelbench.txt beside the kbv binary: give --template FILE or set KBV_PROMPTS");
    char *tmpl = NULL, *ex = NULL, *exnew = NULL;
    size_t len;
    if (kbv_read_file(tpath, &tmpl, &len, err) < 0) return kbv_wraperr(err, "--template");
    int rc = 0;
    if (!strstr(tmpl, "{{problem_source}}")) rc = kbv_seterr(err, "%s: the template has no {{problem_source}} placeholder", tpath);
    if (rc == 0 && (strstr(tmpl, "{{example_source}}") || strstr(tmpl, "{{example_new_source}}"))) {
        char tdir[PATH_MAX], copy[PATH_MAX + 32], a[PATH_MAX + 64], b[PATH_MAX + 64];
        snprintf(copy, sizeof copy, "%s", tpath);
        snprintf(tdir, sizeof tdir, "%s", dirname(copy));
        snprintf(a, sizeof a, "%s/example_model.py", tdir);
        snprintf(b, sizeof b, "%s/example_model_new.py", tdir);
        if ((access(a, R_OK) < 0 || access(b, R_OK) < 0) && have_dflt) {
            snprintf(a, sizeof a, "%s/example_model.py", dflt);
            snprintf(b, sizeof b, "%s/example_model_new.py", dflt);
        }
        if (kbv_read_file(a, &ex, &len, err) < 0 || kbv_read_file(b, &exnew, &len, err) < 0)
            rc = kbv_wraperr(err, "the template's example (example_model.py, example_model_new.py)");
    }
    for (int i = 0; rc == 0 && i < n; i++) {
        char *src = NULL;
        if (kbv_read_file(ps[i].path, &src, &len, err) < 0) {
            rc = -1;
            break;
        }
        if (ps[i].input_blind) {
            char *cut = generate_cut_after_model(src);
            free(src);
            if (!cut) {
                rc = kbv_seterr(err, "%s: input-blind, but the source has no 'class Model' to cut after", ps[i].path);
                break;
            }
            src = cut;
        }
        char *p = strdup(tmpl);
        if (!p || fill(&p, "example_source", ex ? ex : "") < 0 || fill(&p, "example_new_source", exnew ? exnew : "") < 0 ||
            fill(&p, "problem_source", src) < 0)
            rc = kbv_seterr(err, "out of memory");
        free(src);
        ps[i].prompt = p;
        if (rc == 0) kbv_sha256_hex(p, strlen(p), ps[i].prompt_sha);
    }
    free(tmpl), free(ex), free(exnew);
    return rc;
}

/* A model's name as a folder name: characters other than letters, digits and . _ + - become
 * '_', and a leading '.' too (no hidden folders, no "..", no '/'). llm.c accepts no other
 * names today; this keeps the run folder safe whatever a config may hold later. */
static void safe_name(const char *name, char *out, size_t n) {
    size_t i = 0;
    for (; name[i] && i + 1 < n; i++) {
        unsigned char c = (unsigned char)name[i];
        out[i] = (char)(isalnum(c) || c == '_' || c == '-' || c == '+' || (c == '.' && i > 0) ? c : '_');
    }
    out[i] = '\0';
    if (i == 0) snprintf(out, n, "model");
}

/* ---------------------------------------------------------------------------------------
 * Storage
 * ------------------------------------------------------------------------------------- */

static void now_iso(char *out, size_t n) {
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* A copy of s (at most max bytes) with every API key in use replaced by "[api key]". */
static char *scrub(const gen_state *s, const char *text, size_t max) {
    if (!text) return NULL;
    size_t n = strnlen(text, max);
    char *out = malloc(n + 1);
    if (!out) return NULL;
    memcpy(out, text, n);
    out[n] = '\0';
    for (int k = 0; k < s->nkeys; k++) {
        size_t kl = strlen(s->keys[k]);
        if (kl < 4) continue;
        char *q;
        while ((q = strstr(out, s->keys[k]))) { /* same length or shorter: in place */
            static const char mask[] = "[api key]";
            size_t ml = kl < sizeof mask - 1 ? kl : sizeof mask - 1;
            memcpy(q, mask, ml);
            memmove(q + ml, q + kl, strlen(q + kl) + 1);
        }
    }
    return out;
}

/* Tokens a response used, unknown counts (-1) as 0. */
static long long known(long long tokens) { return tokens > 0 ? tokens : 0; }

/* One answer (or error) as one row: a single INSERT, so SQLite commits it on its own. */
static int store_row(kbv_db *db, const gen_state *s, const gen_task *t, const char *status, const llm_response *r, const char *code,
                     const char *candidate, kbv_err *err) {
    const gen_problem *p = &s->problems[t->problem];
    const llm_model *m = &s->models[t->model].m;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->h,
                           "INSERT INTO generations(created, model, provider, model_id, prompt_sha256, sample, problem_path, problem_sha256,"
                           " level, problem, input_blind, status, response, raw, code, candidate, tokens_in, tokens_out, cost_usd, latency_s,"
                           " attempts, http_status, finish_reason, error) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, "cannot store a generation", err);
    char when[32];
    now_iso(when, sizeof when);
    char *text = scrub(s, r->text, GEN_TEXT_MAX), *raw = scrub(s, r->raw, GEN_RAW_MAX), *error = scrub(s, r->error, sizeof r->error);
    int i = 1;
    sqlite3_bind_text(st, i++, when, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, i++, m->name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, i++, llm_provider_name(m->provider), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, i++, m->model_id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, i++, p->prompt_sha, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, i++, t->sample);
    sqlite3_bind_text(st, i++, p->path, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, i++, p->sha, -1, SQLITE_TRANSIENT);
    if (p->level >= 0) sqlite3_bind_int(st, i++, p->level);
    else sqlite3_bind_null(st, i++);
    sqlite3_bind_int(st, i++, p->number);
    sqlite3_bind_int(st, i++, p->input_blind);
    sqlite3_bind_text(st, i++, status, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, i++, text, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, i++, raw, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, i++, code, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, i++, candidate, -1, SQLITE_TRANSIENT);
    if (r->tokens_in >= 0) sqlite3_bind_int64(st, i++, r->tokens_in);
    else sqlite3_bind_null(st, i++);
    if (r->tokens_out >= 0) sqlite3_bind_int64(st, i++, r->tokens_out);
    else sqlite3_bind_null(st, i++);
    sqlite3_bind_double(st, i++, llm_cost_usd(m, r->tokens_in, r->tokens_out));
    sqlite3_bind_double(st, i++, r->latency_s);
    sqlite3_bind_int(st, i++, r->attempts);
    sqlite3_bind_int(st, i++, r->http_status);
    sqlite3_bind_text(st, i++, r->finish_reason, -1, SQLITE_TRANSIENT);
    if (error && *error) sqlite3_bind_text(st, i++, error, -1, SQLITE_TRANSIENT);
    else sqlite3_bind_null(st, i++);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    free(text), free(raw), free(error);
    return rc == SQLITE_DONE ? 0 : db_fail(db, "cannot store a generation", err);
}

/* The stored answer of a task, if any: its status ("ok"/"no_code") and code. 1 found, 0 not,
 * -1 error. */
static int stored_answer(kbv_db *db, const gen_state *s, gen_task *t, char **code, kbv_err *err) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->h,
                           "SELECT status, code FROM generations WHERE model = ? AND prompt_sha256 = ? AND sample = ?"
                           " AND status IN ('ok', 'no_code') ORDER BY id DESC LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, "cannot read the generations", err);
    sqlite3_bind_text(st, 1, s->models[t->model].m.name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, s->problems[t->problem].prompt_sha, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 3, t->sample);
    int rc = sqlite3_step(st), found = 0;
    *code = NULL;
    if (rc == SQLITE_ROW) {
        found = 1;
        snprintf(t->status, sizeof t->status, "%s", (const char *)sqlite3_column_text(st, 0));
        const char *c = (const char *)sqlite3_column_text(st, 1);
        if (c && !(*code = strdup(c))) rc = SQLITE_NOMEM;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return db_fail(db, "cannot read the generations", err);
    return found;
}

/* mkdir -p for one or two levels under an existing root. */
static int make_dir(const char *path, kbv_err *err) {
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", path);
    for (char *p = copy + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(copy, 0777) < 0 && errno != EEXIST) return kbv_seterr(err, "%s: cannot make the folder: %s", copy, strerror(errno));
            *p = '/';
        }
    if (mkdir(copy, 0777) < 0 && errno != EEXIST) return kbv_seterr(err, "%s: cannot make the folder: %s", copy, strerror(errno));
    return 0;
}

/* Write a file whole or not at all (a temporary beside it, then rename). */
static int write_atomic(const char *path, const char *data, size_t n, kbv_err *err) {
    char tmp[PATH_MAX + 16];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return kbv_seterr(err, "%s: %s", tmp, strerror(errno));
    int bad = fwrite(data, 1, n, f) != n;
    if (fclose(f) != 0) bad = 1;
    if (bad || rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        return kbv_seterr(err, "%s: cannot write it: %s", path, strerror(e));
    }
    return 0;
}

/* The candidate's path relative to the run folder (OUT/<rel>). */
static void candidate_rel(const gen_state *s, const gen_task *t, char *out, size_t n) {
    const gen_problem *p = &s->problems[t->problem];
    snprintf(out, n, "%s/level_%d_problem_%d_sample_%d_kernel.py", s->models[t->model].dir, p->level >= 0 ? p->level : 0, p->number, t->sample);
}

/* Write a task's candidate: the extracted code, or for no_code a file that fails at import,
 * so the sample counts as a failure (a load error) when kbv runs it. */
static int write_candidate(const gen_state *s, const gen_task *t, const char *code, kbv_err *err) {
    char rel[512], path[PATH_MAX + 600], dir[PATH_MAX + 200];
    candidate_rel(s, t, rel, sizeof rel);
    snprintf(dir, sizeof dir, "%s/%s", s->o->out, s->models[t->model].dir);
    snprintf(path, sizeof path, "%s/%s", s->o->out, rel);
    if (make_dir(dir, err) < 0) return -1;
    kbv_buf b;
    kbv_buf_init(&b);
    int rc = code ? kbv_buf_append(&b, code, strlen(code))
                  : kbv_buf_printf(&b,
                                   "# kbv generate: the response of model %s for this problem (sample %d) had no usable code:\n"
                                   "# no complete fenced Python block defining class ModelNew. The response is kept in the\n"
                                   "# results database (table generations). Loading this file fails, so the sample counts as a\n"
                                   "# failure (docs/generate.md).\n"
                                   "raise RuntimeError(\"kbv generate: no_code: the model's response had no complete code block "
                                   "defining class ModelNew\")\n",
                                   s->models[t->model].dir, t->sample);
    if (rc < 0) rc = kbv_seterr(err, "out of memory");
    else {
        char *old = NULL;
        size_t len = 0;
        kbv_err ignore;
        /* Unchanged files are left alone (their times tell when they were made). */
        if (kbv_read_file(path, &old, &len, &ignore) < 0 || len != b.len || memcmp(old, b.data, len) != 0)
            rc = write_atomic(path, b.data, b.len, err);
        free(old);
    }
    kbv_buf_free(&b);
    return rc;
}

/* OUT/manifest.jsonl: every answered (problem, model, sample) of this selection. */
static int write_manifest(const gen_state *s, int *entries, kbv_err *err) {
    kbv_buf b;
    kbv_buf_init(&b);
    int rc = 0;
    *entries = 0;
    for (int i = 0; rc == 0 && i < s->ntasks; i++) {
        const gen_task *t = &s->tasks[i];
        if (strcmp(t->status, "ok") != 0 && strcmp(t->status, "no_code") != 0) continue;
        const gen_problem *p = &s->problems[t->problem];
        char rel[512];
        candidate_rel(s, t, rel, sizeof rel);
        json_t *j = json_pack("{s:s, s:s, s:s, s:i}", "problem", p->path, "candidate", rel, "model", s->models[t->model].m.name, "sample", t->sample);
        if (j && p->level >= 0) json_object_set_new(j, "level", json_integer(p->level));
        char *line = j ? json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER) : NULL;
        json_decref(j);
        if (!line || kbv_buf_printf(&b, "%s\n", line) < 0) rc = kbv_seterr(err, "out of memory");
        free(line);
        ++*entries;
    }
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/manifest.jsonl", s->o->out);
    if (rc == 0) rc = write_atomic(path, b.data ? b.data : "", b.len, err);
    kbv_buf_free(&b);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * Requests
 * ------------------------------------------------------------------------------------- */

static int over_cap(const gen_state *s) {
    return (s->o->max_cost > 0 && s->cost >= s->o->max_cost) || (s->o->max_tokens > 0 && s->tokens_in + s->tokens_out >= s->o->max_tokens);
}

typedef struct gen_thread_arg {
    gen_state *s;
    int model;
} gen_thread_arg;

static void *request_thread(void *arg) {
    gen_thread_arg *a = arg;
    gen_state *s = a->s;
    gen_model *gm = &s->models[a->model];
    pthread_mutex_lock(&s->mu);
    for (;;) {
        if (s->stop || gm->stopped || gm->next >= gm->npending) break;
        if (over_cap(s)) {
            s->capped = 1;
            break;
        }
        int ti = gm->pending[gm->next++];
        gm->asked++;
        pthread_mutex_unlock(&s->mu);
        gen_done *d = calloc(1, sizeof *d);
        int rc = d ? llm_complete(&gm->m, s->problems[s->tasks[ti].problem].prompt, &s->lo, &d->r) : -1;
        pthread_mutex_lock(&s->mu);
        if (rc < 0) { /* out of memory: nothing to store, the task stays unanswered */
            if (d) llm_response_free(&d->r);
            free(d);
            snprintf(s->tasks[ti].error, sizeof s->tasks[ti].error, "out of memory");
            snprintf(s->tasks[ti].status, sizeof s->tasks[ti].status, "error");
            gm->errors++;
            continue;
        }
        d->task = ti;
        s->tokens_in += known(d->r.tokens_in), s->tokens_out += known(d->r.tokens_out);
        s->cost += llm_cost_usd(&gm->m, d->r.tokens_in, d->r.tokens_out);
        /* A key or endpoint the server refuses will refuse every request: stop asking. */
        if (!d->r.ok && (d->r.http_status == 401 || d->r.http_status == 403 || d->r.http_status == 404) && !gm->stopped) {
            gm->stopped = 1;
            snprintf(gm->stop_why, sizeof gm->stop_why, "HTTP %d: %s", d->r.http_status, d->r.error);
        }
        /* An endpoint that never answered: after its retries, no HTTP response at all (refused,
         * unresolvable, timed out), or GEN_STOP_AFTER failures in a row before any answer. */
        gm->consecutive_errors = d->r.ok ? 0 : gm->consecutive_errors + 1;
        if (!d->r.ok && !d->r.cancelled && !g_cancel && !gm->stopped && gm->answered == 0 &&
            (d->r.http_status == 0 || gm->consecutive_errors >= GEN_STOP_AFTER)) {
            gm->stopped = 1;
            snprintf(gm->stop_why, sizeof gm->stop_why, "%s (no answer from it yet)", d->r.error);
        }
        if (d->r.ok) gm->answered++;
        if (s->tail) s->tail->next = d;
        else s->head = d;
        s->tail = d;
        pthread_cond_signal(&s->cv);
    }
    s->alive--;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* An answer, on the main thread: extract, write the candidate, store the row. 0, or -1 when
 * the database or the run folder failed (err set: *db_failed says which). */
static int take_answer(kbv_db *db, gen_state *s, gen_done *d, int *db_failed, kbv_err *err) {
    gen_task *t = &s->tasks[d->task];
    gen_model *gm = &s->models[t->model];
    const llm_response *r = &d->r;
    *db_failed = 0;
    if (!r->ok && (r->cancelled || g_cancel)) { /* cut short by a signal: no answer, and nothing to store */
        snprintf(t->error, sizeof t->error, "interrupted");
        return 0;
    }
    const char *status = "error";
    char *code = NULL;
    if (r->ok) {
        char *text = r->text ? strndup(r->text, GEN_TEXT_MAX) : NULL;
        code = text ? generate_extract(text) : NULL;
        free(text);
        status = code ? "ok" : "no_code";
    }
    char rel[512];
    candidate_rel(s, t, rel, sizeof rel);
    int rc = 0;
    if (r->ok && write_candidate(s, t, code, err) < 0) rc = -1;
    if (rc == 0 && store_row(db, s, t, status, r, code, r->ok ? rel : NULL, err) < 0) rc = -1, *db_failed = 1;
    int got_code = code != NULL;
    free(code);
    if (rc < 0) return -1;
    snprintf(t->status, sizeof t->status, "%s", status);
    pthread_mutex_lock(&s->mu);
    if (r->ok) *(got_code ? &gm->ok : &gm->no_code) += 1;
    else gm->errors++;
    pthread_mutex_unlock(&s->mu);
    if (!r->ok) {
        char *e = scrub(s, r->error, sizeof r->error);
        snprintf(t->error, sizeof t->error, "%s", e ? e : r->error);
        free(e);
    }
    return 0;
}

static void fmt_duration(double s, char *out, size_t n) {
    if (!isfinite(s) || s < 0) snprintf(out, n, "?");
    else if (s < 120) snprintf(out, n, "%.0f s", s);
    else if (s < 7200) snprintf(out, n, "%.0f min", s / 60);
    else snprintf(out, n, "%.1f h", s / 3600);
}

/* Answers and errors so far (all models). */
static int progress_count(gen_state *s) {
    int n = 0;
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->nmodels; i++) n += s->models[i].ok + s->models[i].no_code + s->models[i].errors;
    pthread_mutex_unlock(&s->mu);
    return n;
}

/* One progress line: answered/total, per model, rate and ETA of this run, tokens, cost. */
static void progress(gen_state *s, int total, int before, double t0, int final) {
    kbv_buf b;
    kbv_buf_init(&b);
    int done = 0, errs = 0;
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->nmodels; i++) {
        gen_model *gm = &s->models[i];
        done += gm->ok + gm->no_code, errs += gm->errors;
        kbv_buf_printf(&b, "%s%s %d ok %d no_code %d error%s", i ? "; " : "", gm->m.name, gm->ok, gm->no_code, gm->errors,
                       gm->stopped ? " (stopped)" : "");
    }
    long long tin = s->tokens_in, tout = s->tokens_out;
    double cost = s->cost;
    pthread_mutex_unlock(&s->mu);
    double el = kbv_now() - t0, rate = el > 0 ? (done + errs - before) / el : 0;
    char eta[32] = "-";
    int left = total - done - errs;
    if (!final && rate > 0) fmt_duration(left / rate, eta, sizeof eta);
    fprintf(stderr, "kbv generate: %d/%d answered (%s), %.2f/s, ETA %s, tokens %lld in %lld out, ~$%.4f\n", done, total, b.data ? b.data : "", rate,
            eta, tin, tout, cost);
    kbv_buf_free(&b);
}

/* One line for a model with samples that have no answer: how many, and why (the model was
 * stopped, their common error, or nothing asked); then, when their errors differ, one line
 * per sample (20 at most). */
static void say_missing(const gen_state *s, int m) {
    const gen_model *gm = &s->models[m];
    int n = 0, with_error = 0, same = 1;
    const char *first = NULL;
    for (int i = 0; i < s->ntasks; i++) {
        const gen_task *t = &s->tasks[i];
        if (t->model != m || strcmp(t->status, "ok") == 0 || strcmp(t->status, "no_code") == 0) continue;
        n++;
        if (!t->error[0]) continue;
        with_error++;
        if (!first) first = t->error;
        else same &= strcmp(first, t->error) == 0;
    }
    if (n == 0) return;
    if (gm->stopped) say("kbv generate: model %s: %d sample(s) without an answer; stopped asking: %s", gm->m.name, n, gm->stop_why);
    else if (with_error && same) say("kbv generate: model %s: %d sample(s) without an answer: %s", gm->m.name, n, first);
    else say("kbv generate: model %s: %d sample(s) without an answer (%d not asked)", gm->m.name, n, n - with_error);
    if (gm->stopped || same) return;
    int listed = 0;
    for (int i = 0; i < s->ntasks; i++) {
        const gen_task *t = &s->tasks[i];
        if (t->model != m || !t->error[0] || strcmp(t->status, "ok") == 0 || strcmp(t->status, "no_code") == 0) continue;
        if (listed++ == 20) {
            say("kbv generate: model %s: ... and more (the table generations holds every error)", gm->m.name);
            break;
        }
        say("kbv generate: model %s: no answer for %s, sample %d: %s", gm->m.name, s->problems[t->problem].path, t->sample, t->error);
    }
}

/* ---------------------------------------------------------------------------------------
 * The command
 * ------------------------------------------------------------------------------------- */

static void usage_generate(FILE *f, int bench) {
    if (bench)
        fprintf(f, "usage: kbv bench --models FILE [PROBLEMS] [options] [-- kbv run options]\n\n"
                   "The experiment in one command: kbv generate, then kbv run --resume over the run folder's\n"
                   "manifest, then kbv report. Re-running the same command resumes all three.\n\n");
    else
        fprintf(f, "usage: kbv generate --models FILE [PROBLEMS] [options]\n\n"
                   "Asks each model of FILE for N kernels per problem (single turn, the prompt from a template),\n"
                   "stores every answer in the results database as it arrives, and writes the code blocks as a\n"
                   "KernelBench run folder OUT/<model>/level_L_problem_P_sample_S_kernel.py with a kbv manifest\n"
                   "OUT/manifest.jsonl. Re-running the same command asks only for what has no answer.\n\n");
    fprintf(f, "problems (one source; default: kbv's built-in suite problems/default-<device>.jsonl):\n"
               "  --manifest FILE         JSON Lines: \"problem\" (path), optional \"level\" and \"input_blind\": true\n"
               "  --kernelbench DIR       KernelBench's DIR/levelL/P_Name.py, with\n"
               "  --levels LIST           levels (default 1,2,3), and\n"
               "  --problems LIST         problem numbers and ranges, e.g. 1-10,19 (default all)\n"
               "options:\n"
               "  --models FILE           the models config (JSON, {\"models\": [...]}; docs/generate.md)\n"
               "  --model NAME[,NAME]     only these models of FILE\n"
               "  --samples N             answers per problem and model (default 5)\n"
               "  --out DIR               the run folder (default runs)\n"
               "  --db FILE               results database (default kbv.db; table generations)\n"
               "  --template FILE         the prompt template (default kbv's prompts/kernelbench.txt)\n"
               "  --max-cost USD          start no request once this run's estimated spend reaches USD\n"
               "  --max-tokens-total N    start no request once this run's tokens (in + out) reach N\n"
               "  --timeout S             limit of one HTTP request, seconds (default 600)\n"
               "  --retries N             retries of a request after 429, 5xx, a timeout or a cut answer (default 6)\n"
               "  --device cuda|cpu|auto  which built-in suite (and, for bench, where kbv run evaluates)\n"
               "  --quiet                 no progress lines\n");
    if (bench)
        fprintf(f, "  --protocol P            kbv run's --protocol (default all)\n"
                   "  --report FILE           write the report there (default stdout)\n"
                   "  --format F              the report's format: md (default), table, json, csv, html\n"
                   "  -- ARGS                 more options for kbv run (e.g. -- --jobs 4 --cases 1)\n");
    fprintf(f,
            "  -h, --help              this text\n\n"
            "Requests run concurrently, up to each model's \"concurrency\". API keys come from the environment\n"
            "variables the config names and are never stored.\n"
            "Exit status: 0 every sample answered%s; 2 usage error, a bad config, manifest or\n"
            "template, or a missing API key; 4 kbv could not run; 5 the database cannot be used; 6 some\n"
            "requests got no answer (re-run to ask again); 7 the spending cap stopped new requests;\n"
            "130 or 143 interrupted by SIGINT or SIGTERM (docs/generate.md).\n",
            bench ? " and evaluated" : "");
}

typedef struct bench_opts {
    const char *protocol, *report, *format;
    int nextra;
    char **extra;
} bench_opts;

/* Parse the options of generate (bench non-NULL: bench's too). Returns -1 to go on, else an
 * exit status (help or a usage error). */
static int parse_opts(int argc, char **argv, gen_opts *o, bench_opts *b) {
    const char *cmd = b ? "bench" : "generate";
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage_generate(stdout, b != NULL);
            return 0;
        }
        if (b && strcmp(a, "--") == 0) {
            b->extra = argv + i + 1, b->nextra = argc - i - 1;
            break;
        }
        if (strcmp(a, "--quiet") == 0) {
            o->quiet = 1;
            continue;
        }
        const char **str = strcmp(a, "--manifest") == 0        ? &o->manifest
                           : strcmp(a, "--kernelbench") == 0   ? &o->kernelbench
                           : strcmp(a, "--levels") == 0        ? &o->levels
                           : strcmp(a, "--problems") == 0      ? &o->problems
                           : strcmp(a, "--device") == 0        ? &o->device
                           : strcmp(a, "--models") == 0        ? &o->models_path
                           : strcmp(a, "--model") == 0         ? &o->model_filter
                           : strcmp(a, "--out") == 0           ? &o->out
                           : strcmp(a, "--db") == 0            ? &o->db
                           : strcmp(a, "--template") == 0      ? &o->tmpl
                           : b && strcmp(a, "--protocol") == 0 ? &b->protocol
                           : b && strcmp(a, "--report") == 0   ? &b->report
                           : b && strcmp(a, "--format") == 0   ? &b->format
                                                               : NULL;
        int numeric = !str && (strcmp(a, "--samples") == 0 || strcmp(a, "--max-cost") == 0 || strcmp(a, "--max-tokens-total") == 0 ||
                               strcmp(a, "--timeout") == 0 || strcmp(a, "--retries") == 0);
        if (!str && !numeric) {
            say("kbv %s: unknown %s '%s' (see kbv %s --help)", cmd, a[0] == '-' ? "option" : "argument", a, cmd);
            return GEN_EXIT_USAGE;
        }
        if (!val) {
            say("kbv %s: %s needs a value (see kbv %s --help)", cmd, a, cmd);
            return GEN_EXIT_USAGE;
        }
        i++;
        if (str) {
            *str = val;
            continue;
        }
        char *end;
        errno = 0;
        double v = strtod(val, &end);
        int bad = errno || end == val || *end || !isfinite(v);
        if (strcmp(a, "--samples") == 0 && !bad && v >= 1 && v <= 1000 && v == (int)v) o->samples = (int)v;
        else if (strcmp(a, "--max-cost") == 0 && !bad && v > 0) o->max_cost = v;
        else if (strcmp(a, "--max-tokens-total") == 0 && !bad && v >= 1 && v <= 1e15 && v == floor(v)) o->max_tokens = (long long)v;
        else if (strcmp(a, "--timeout") == 0 && !bad && v >= 0.1 && v <= 86400) o->timeout_s = v;
        else if (strcmp(a, "--retries") == 0 && !bad && v >= 0 && v <= 100 && v == (int)v) o->retries = (int)v;
        else {
            const char *needs = strcmp(a, "--samples") == 0            ? "an integer from 1 to 1000"
                                : strcmp(a, "--max-cost") == 0         ? "a positive amount in USD"
                                : strcmp(a, "--max-tokens-total") == 0 ? "a positive integer"
                                : strcmp(a, "--timeout") == 0          ? "seconds between 0.1 and 86400"
                                                                       : "an integer from 0 to 100";
            say("kbv %s: %s needs %s, not '%s'", cmd, a, needs, val);
            return GEN_EXIT_USAGE;
        }
    }
    if (o->device && strcmp(o->device, "cuda") && strcmp(o->device, "cpu") && strcmp(o->device, "auto")) {
        say("kbv %s: --device must be cuda, cpu or auto, not '%s'", cmd, o->device);
        return GEN_EXIT_USAGE;
    }
    if (!o->models_path) {
        say("kbv %s: give --models FILE (the models config; docs/generate.md)", cmd);
        return GEN_EXIT_USAGE;
    }
    if (o->manifest && o->kernelbench) {
        say("kbv %s: give --manifest FILE or --kernelbench DIR, not both", cmd);
        return GEN_EXIT_USAGE;
    }
    if ((o->levels || o->problems) && !o->kernelbench) {
        say("kbv %s: --levels and --problems choose from --kernelbench DIR", cmd);
        return GEN_EXIT_USAGE;
    }
    if (b && b->format && strcmp(b->format, "md") && strcmp(b->format, "table") && strcmp(b->format, "json") && strcmp(b->format, "csv") &&
        strcmp(b->format, "html")) {
        say("kbv bench: --format must be md, table, json, csv or html, not '%s'", b->format);
        return GEN_EXIT_USAGE;
    }
    return -1;
}

/* The models of the config that --model names (all without it). */
static int select_models(const gen_opts *o, llm_model *all, int nall, gen_model **out, int *n, kbv_err *err) {
    *out = calloc((size_t)nall, sizeof **out);
    *n = 0;
    if (!*out) return kbv_seterr(err, "out of memory");
    if (!o->model_filter) {
        for (int i = 0; i < nall; i++) (*out)[(*n)++].m = all[i];
    } else {
        char list[4096];
        snprintf(list, sizeof list, "%s", o->model_filter);
        for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            int found = -1, dup = 0;
            for (int i = 0; i < nall; i++)
                if (strcmp(all[i].name, t) == 0) found = i;
            for (int i = 0; i < *n; i++) dup |= strcmp((*out)[i].m.name, t) == 0;
            if (found < 0) return kbv_seterr(err, "--model: no model named '%s' in %s", t, o->models_path);
            if (!dup) (*out)[(*n)++].m = all[found];
        }
        if (*n == 0) return kbv_seterr(err, "--model needs model names, not '%s'", o->model_filter);
    }
    for (int i = 0; i < *n; i++) {
        safe_name((*out)[i].m.name, (*out)[i].dir, sizeof(*out)[i].dir);
        for (int j = 0; j < i; j++)
            if (strcmp((*out)[i].dir, (*out)[j].dir) == 0)
                return kbv_seterr(err, "models '%s' and '%s' would share the folder %s/%s: rename one", (*out)[j].m.name, (*out)[i].m.name, o->out,
                                  (*out)[i].dir);
    }
    return 0;
}

static void free_state(gen_state *s) {
    for (int i = 0; i < s->nproblems; i++) free(s->problems[i].prompt);
    for (int i = 0; i < s->nmodels; i++) free(s->models[i].pending);
    free(s->problems), free(s->models), free(s->tasks);
    while (s->head) {
        gen_done *d = s->head;
        s->head = d->next;
        llm_response_free(&d->r);
        free(d);
    }
}

/* Everything before the first request: problems, prompts, models, keys, database, resume. 0,
 * or an exit status. */
static int prepare(const gen_opts *o, gen_state *s, kbv_db *db) {
    kbv_err err = {{0}};
    int cap = 0, rc = 0;
    char suite[64];
    const char *manifest = o->manifest;
    if (!manifest && !o->kernelbench) { /* kbv run's rule for the built-in suite */
        run_default_suite(o->device, suite, sizeof suite);
        if (access(suite, R_OK) < 0) {
            say("kbv generate: the built-in suite %s is not here: run kbv from the repository root, or give --manifest FILE or --kernelbench DIR",
                suite);
            return GEN_EXIT_USAGE;
        }
        manifest = suite;
    }
    rc = manifest ? problems_from_manifest(manifest, &s->problems, &s->nproblems, &cap, &err)
                  : problems_from_kernelbench(o->kernelbench, o->levels, o->problems, &s->problems, &s->nproblems, &cap, &err);
    if (rc == 0 && manifest) number_problems(s->problems, s->nproblems);
    if (rc == 0) rc = make_prompts(o, s->problems, s->nproblems, &err);
    llm_model *all = NULL;
    int nall = 0;
    if (rc == 0 && llm_load_models(o->models_path, &all, &nall, &err) < 0) rc = -1;
    if (rc == 0 && nall == 0) rc = kbv_seterr(&err, "%s: no models in the config", o->models_path);
    if (rc == 0) rc = select_models(o, all, nall, &s->models, &s->nmodels, &err);
    free(all);
    if (rc < 0) {
        say("kbv generate: %s", err.msg);
        return GEN_EXIT_USAGE;
    }
    s->ntasks = s->nproblems * s->nmodels * o->samples;
    s->tasks = calloc((size_t)s->ntasks, sizeof *s->tasks);
    for (int i = 0; s->tasks && i < s->nmodels; i++) s->models[i].pending = calloc((size_t)s->nproblems * (size_t)o->samples, sizeof(int));
    for (int i = 0; s->tasks && i < s->nmodels; i++)
        if (!s->models[i].pending) s->tasks = NULL;
    if (!s->tasks) {
        say("kbv generate: out of memory");
        return GEN_EXIT_INTERNAL;
    }
    /* Problem-major, then model, then sample: the requests of all models interleave. */
    int k = 0;
    for (int p = 0; p < s->nproblems; p++)
        for (int m = 0; m < s->nmodels; m++)
            for (int j = 0; j < o->samples; j++) s->tasks[k++] = (gen_task){.problem = p, .model = m, .sample = j};
    if (db_open(db, o->db, &err) < 0) {
        say("kbv generate: %s", err.msg);
        return GEN_EXIT_DATABASE;
    }
    if (make_dir(o->out, &err) < 0) {
        say("kbv generate: %s", err.msg);
        return GEN_EXIT_INTERNAL;
    }
    char *emsg = NULL;
    if (sqlite3_exec(db->h, kTable, NULL, NULL, &emsg) != SQLITE_OK) {
        sqlite3_free(emsg);
        db_fail(db, "cannot add the generations table", &err);
        say("kbv generate: %s", err.msg);
        return GEN_EXIT_DATABASE;
    }
    /* Resume: what has an answer is not asked again; its file is (re)written from the row. */
    for (int i = 0; i < s->ntasks; i++) {
        gen_task *t = &s->tasks[i];
        char *code = NULL;
        int found = stored_answer(db, s, t, &code, &err);
        if (found < 0) {
            say("kbv generate: %s", err.msg);
            return GEN_EXIT_DATABASE;
        }
        gen_model *gm = &s->models[t->model];
        if (!found) {
            gm->pending[gm->npending++] = i;
            continue;
        }
        *(strcmp(t->status, "ok") == 0 ? &gm->ok : &gm->no_code) += 1;
        rc = write_candidate(s, t, strcmp(t->status, "ok") == 0 ? code : NULL, &err);
        free(code);
        if (rc < 0) {
            say("kbv generate: %s", err.msg);
            return GEN_EXIT_INTERNAL;
        }
    }
    /* A key the config names must be set before anything is asked of its model. */
    for (int i = 0; i < s->nmodels; i++) {
        const llm_model *m = &s->models[i].m;
        if (!m->api_key_env[0]) continue;
        const char *key = getenv(m->api_key_env);
        if (s->models[i].npending && (!key || !*key)) {
            say("kbv generate: model '%s': the environment variable %s (its API key, named by %s) is not set", m->name, m->api_key_env,
                o->models_path);
            return GEN_EXIT_USAGE;
        }
        if (key && *key && s->nkeys < 64) s->keys[s->nkeys++] = key;
    }
    return 0;
}

/* The generation itself; returns an exit status. *entries gets the manifest's length. */
static int generate_run(const gen_opts *o, int *entries) {
    gen_state s;
    memset(&s, 0, sizeof s);
    s.o = o;
    *entries = 0;
    kbv_db db = {0};
    int status = prepare(o, &s, &db);
    if (status) {
        db_close(&db);
        free_state(&s);
        return status;
    }
    kbv_err err = {{0}};
    if (llm_global_init(&err) < 0) {
        say("kbv generate: %s", err.msg);
        db_close(&db);
        free_state(&s);
        return GEN_EXIT_INTERNAL;
    }
    llm_opts_default(&s.lo);
    if (o->timeout_s > 0) s.lo.timeout_s = o->timeout_s;
    if (o->retries >= 0) s.lo.max_retries = o->retries;
    s.lo.cancel = &g_cancel;
    g_cancel = 0, g_signal = 0;
    int pending = 0, before = 0;
    for (int i = 0; i < s.nmodels; i++) pending += s.models[i].npending, before += s.models[i].ok + s.models[i].no_code;
    if (!o->quiet)
        say("kbv generate: %d problem(s) x %d model(s) x %d sample(s) = %d; %d answered before, %d to ask; database %s, run folder %s", s.nproblems,
            s.nmodels, o->samples, s.ntasks, before, pending, o->db, o->out);
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.cv, NULL);
    struct sigaction sa = {0}, old_int, old_term;
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    /* The signals go to the main thread: the request threads block them. */
    sigset_t block, prev;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &prev);
    int nthreads = 0;
    for (int i = 0; i < s.nmodels; i++) {
        int c = s.models[i].m.concurrency > 0 ? s.models[i].m.concurrency : 1;
        s.models[i].threads = c < s.models[i].npending ? c : s.models[i].npending;
        nthreads += s.models[i].threads;
    }
    pthread_t *th = calloc((size_t)nthreads + 1, sizeof *th);
    gen_thread_arg *args = calloc((size_t)nthreads + 1, sizeof *args);
    int started = 0, fatal = 0;
    if (!th || !args) fatal = GEN_EXIT_INTERNAL, say("kbv generate: out of memory");
    for (int i = 0; !fatal && i < s.nmodels; i++)
        for (int j = 0; j < s.models[i].threads; j++) {
            args[started] = (gen_thread_arg){.s = &s, .model = i};
            pthread_mutex_lock(&s.mu);
            s.alive++;
            pthread_mutex_unlock(&s.mu);
            int e = pthread_create(&th[started], NULL, request_thread, &args[started]);
            if (e) {
                pthread_mutex_lock(&s.mu);
                s.alive--, s.stop = 1;
                pthread_mutex_unlock(&s.mu);
                say("kbv generate: cannot start a request thread: %s", strerror(e));
                fatal = GEN_EXIT_INTERNAL;
                break;
            }
            started++;
        }
    pthread_sigmask(SIG_SETMASK, &prev, NULL);
    double t0 = kbv_now(), last = t0;
    int cap_said = 0, last_count = before;
    pthread_mutex_lock(&s.mu);
    while (s.alive > 0 || s.head) {
        if (!s.head) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 200 * 1000000L;
            if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
            pthread_cond_timedwait(&s.cv, &s.mu, &ts);
        }
        if (g_signal && !s.stop) s.stop = 1;
        int capped_now = s.capped && !cap_said;
        gen_done *d = s.head;
        if (d) {
            s.head = d->next;
            if (!s.head) s.tail = NULL;
        }
        pthread_mutex_unlock(&s.mu);
        if (capped_now && !o->quiet) {
            cap_said = 1;
            say("kbv generate: the spending cap is reached; no new requests (the ones in flight finish)");
        }
        if (d) {
            int dbf = 0;
            if (!fatal && take_answer(&db, &s, d, &dbf, &err) < 0) {
                say("kbv generate: %s", err.msg);
                fatal = dbf ? GEN_EXIT_DATABASE : GEN_EXIT_INTERNAL;
                g_cancel = 1;
                pthread_mutex_lock(&s.mu);
                s.stop = 1;
                pthread_mutex_unlock(&s.mu);
            }
            llm_response_free(&d->r);
            free(d);
        }
        /* A line when something changed (at most every 2 s), else one every 30 s. */
        double since = kbv_now() - last;
        int count = o->quiet ? 0 : progress_count(&s);
        if (!o->quiet && ((count != last_count && since >= 2.0) || since >= 30.0)) {
            last = kbv_now(), last_count = count;
            progress(&s, s.ntasks, before, t0, 0);
        }
        pthread_mutex_lock(&s.mu);
    }
    pthread_mutex_unlock(&s.mu);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    free(th), free(args);
    if (!fatal && write_manifest(&s, entries, &err) < 0) {
        say("kbv generate: %s", err.msg);
        fatal = GEN_EXIT_INTERNAL;
    }
    db_close(&db);
    /* Only now: a late second signal (timeout(1) signals the process group too) must not end
     * kbv before the manifest is written and the database closed. */
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    /* The summary: counts, and per model what has no answer and why. */
    int ok = 0, nc = 0, missing = 0;
    for (int i = 0; i < s.ntasks; i++) {
        const char *st = s.tasks[i].status;
        ok += strcmp(st, "ok") == 0, nc += strcmp(st, "no_code") == 0;
    }
    missing = s.ntasks - ok - nc;
    for (int i = 0; i < s.nmodels; i++) say_missing(&s, i);
    if (!o->quiet) progress(&s, s.ntasks, before, t0, 1);
    if (!o->quiet || missing)
        say("kbv generate: %d of %d samples answered (%d ok, %d no_code), %d without an answer; this run: %lld tokens, ~$%.4f; manifest "
            "%s/manifest.jsonl "
            "(%d entries)",
            ok + nc, s.ntasks, ok, nc, missing, s.tokens_in + s.tokens_out, s.cost, o->out, *entries);
    int capped = s.capped;
    pthread_mutex_destroy(&s.mu);
    pthread_cond_destroy(&s.cv);
    free_state(&s);
    if (fatal) return fatal;
    if (g_signal) {
        say("kbv generate: interrupted (signal %d): what finished is stored; run the same command again to resume", (int)g_signal);
        return GEN_EXIT_INTERRUPTED + (int)g_signal;
    }
    if (capped && missing) {
        say("kbv generate: stopped by the spending cap (%s): %d samples not asked; raise the cap and run the same command again to resume",
            o->max_cost > 0 ? "--max-cost" : "--max-tokens-total", missing);
        return GEN_EXIT_CAPPED;
    }
    if (missing) {
        say("kbv generate: %d samples have no answer: run the same command again to ask for them", missing);
        return GEN_EXIT_INCOMPLETE;
    }
    return GEN_EXIT_OK;
}

static void defaults(gen_opts *o) {
    memset(o, 0, sizeof *o);
    o->samples = 5;
    o->out = "runs";
    o->db = "kbv.db";
    o->retries = -1;
}

int generate_main(int argc, char **argv) {
    gen_opts o;
    defaults(&o);
    int rc = parse_opts(argc, argv, &o, NULL);
    if (rc >= 0) return rc;
    int entries;
    return generate_run(&o, &entries);
}

/* ---------------------------------------------------------------------------------------
 * bench
 * ------------------------------------------------------------------------------------- */

/* Run this kbv binary with args; returns its exit status, or 128 + the signal that ended it
 * (or that this process got and passed on). */
static int run_self(char **args, const char *what) {
    char self[PATH_MAX];
    ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
    if (l <= 0) {
        say("kbv bench: cannot find the kbv binary (/proc/self/exe): %s", strerror(errno));
        return GEN_EXIT_INTERNAL;
    }
    self[l] = '\0';
    args[0] = self;
    struct sigaction sa = {0}, old_int, old_term;
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    g_signal = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        say("kbv bench: cannot start %s: %s", what, strerror(errno));
        return GEN_EXIT_INTERNAL;
    }
    if (pid == 0) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        execv(self, args);
        _exit(127);
    }
    int st = 0, passed = 0;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            say("kbv bench: waiting for %s: %s", what, strerror(errno));
            return GEN_EXIT_INTERNAL;
        }
        if (g_signal && !passed) kill(pid, (int)g_signal), passed = 1; /* a SIGTERM sent to bench alone */
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (g_signal) return GEN_EXIT_INTERRUPTED + (int)g_signal;
    if (WIFSIGNALED(st)) return GEN_EXIT_INTERRUPTED + WTERMSIG(st);
    return WEXITSTATUS(st);
}

int bench_main(int argc, char **argv) {
    gen_opts o;
    defaults(&o);
    bench_opts b = {.protocol = "all", .format = "md"};
    int rc = parse_opts(argc, argv, &o, &b);
    if (rc >= 0) return rc;
    int entries = 0;
    int gen = generate_run(&o, &entries);
    if (gen != GEN_EXIT_OK && gen != GEN_EXIT_INCOMPLETE && gen != GEN_EXIT_CAPPED) return gen;
    if (entries == 0) {
        say("kbv bench: no answered sample to evaluate");
        return gen ? gen : GEN_EXIT_INCOMPLETE;
    }
    char manifest[PATH_MAX + 32];
    snprintf(manifest, sizeof manifest, "%s/manifest.jsonl", o.out);
    char **args = calloc((size_t)b.nextra + 16, sizeof *args);
    if (!args) return GEN_EXIT_INTERNAL;
    int n = 1;
    args[n++] = "run", args[n++] = "--manifest", args[n++] = manifest, args[n++] = "--db", args[n++] = (char *)o.db, args[n++] = "--resume";
    args[n++] = "--protocol", args[n++] = (char *)b.protocol;
    if (o.device) args[n++] = "--device", args[n++] = (char *)o.device;
    if (o.quiet) args[n++] = "--quiet";
    for (int i = 0; i < b.nextra; i++) args[n++] = b.extra[i];
    args[n] = NULL;
    if (!o.quiet)
        say("kbv bench: evaluating %d candidate(s): kbv run --manifest %s --db %s --resume --protocol %s", entries, manifest, o.db, b.protocol);
    rc = run_self(args, "kbv run");
    if (rc != 0) {
        free(args);
        say("kbv bench: kbv run ended with status %d; run the same command again to resume", rc);
        return rc;
    }
    n = 1;
    args[n++] = "report", args[n++] = "--db", args[n++] = (char *)o.db, args[n++] = "--format", args[n++] = (char *)b.format;
    if (b.report) args[n++] = "-o", args[n++] = (char *)b.report;
    args[n] = NULL;
    rc = run_self(args, "kbv report");
    free(args);
    if (rc != 0) return rc;
    if (!o.quiet && b.report) say("kbv bench: report written to %s", b.report);
    return gen;
}
