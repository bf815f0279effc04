/* test_finding.c -- finding.c: the catalogue of findings (src/finding.h, FINDING_TABLE).
 *
 * Checks that every entry is well formed (id [a-z0-9_]{1,48} and unique, a valid severity, a
 * known step) and found by the look-ups; that docs/hacks.md's "Catalogue" section has exactly
 * one row per entry, with its anchor, severity and step as in the table; and that every entry
 * is produced by at least one example, that is, some test asserts that an evaluation reports
 * it. An assertion is one of:
 *   - the detect= list of a zoo header (examples/hacks/ and examples/honest/; tests/zoo.sh);
 *   - the `@jq EXPR` of a case line (tests/gpu/cases.txt; tests/e2e/cases.txt once its runner
 *     reads @jq);
 *   - the EVIDENCE expression of a fault or an attack (tests/faults/cases.txt, tests/attacks/cases.txt);
 *   - a jq program or a grep in a test script (tests/ *.sh, tests/ * / *.sh).
 * In a jq expression the id must be a whole word inside a string literal ("ID", "ID:suspect")
 * or a report's `.hacks_by_detector.ID`, and not negated (`| not`, `== null`, `!= "ID"`, a
 * check whose `then` branch is not_ok); comments and failure messages never count. Whether the
 * asserting test passes is that test's business: nothing is run here.
 * Run from the repository root (make test-unit does); `-v` prints where each id is asserted.
 */
#include <ctype.h>
#include <glob.h>
#include <stdarg.h>
#include <stdlib.h>

#include "check.h"
#include "finding.h"
#include "util.h"

/* The steps of finding.h's comment (docs/hacks.md, "Where the evidence comes from"). */
static const char *const kSteps[] = {"cases", "guard", "inspect", "audit", "memo_probe", "timing", "worker", "sandbox", "reference", "verdict"};

/* Ids no example here can produce, and why. Their docs/hacks.md rows say "no example: ...".
 * Keep this list minimal: an id that some test asserts may not be on it. */
static const struct {
    const char *id, *why;
} kExempt[] = {
    /* CUPTI must drop activity records or lose a marker kernel of the audited call: nothing a
     * candidate here does makes it (the fault suite cannot inject it either). */
    {"audit_incomplete", "needs CUPTI to drop records or miss a marker"},
    /* Needs a kbv-worker built without CUPTI, or a CUPTI that fails to start, on a GPU. */
    {"audit_unavailable", "needs a GPU worker built without CUPTI, or a CUPTI that fails to start"},
};
#define NEXEMPT ((int)(sizeof kExempt / sizeof *kExempt))

static void failf(const char *fmt, ...) KBV_PRINTF(1, 2);
static void failf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    check_failures++;
    fputs("test_finding: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static char *slurp(const char *path) {
    char *s = NULL;
    size_t n;
    kbv_err e;
    check_count++;
    if (kbv_read_file(path, &s, &n, &e) < 0) {
        failf("cannot read %s (run from the repository root)", e.msg);
        return NULL;
    }
    return s;
}

static int exempt_index(const char *id) {
    for (int i = 0; i < NEXEMPT; i++)
        if (strcmp(kExempt[i].id, id) == 0) return i;
    return -1;
}

/* ---- the table ---------------------------------------------------------------------------- */

static int valid_id(const char *s) {
    size_t n = s ? strlen(s) : 0;
    if (n < 1 || n > 48) return 0;
    for (size_t i = 0; i < n; i++)
        if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '_')) return 0;
    return 1;
}

static void test_table(void) {
    for (int i = 0; i < FIND_COUNT; i++) {
        const finding_def *f = &finding_catalog[i];
        const char *id = f->id ? f->id : "(null)";
        check_count += 4;
        if (!valid_id(f->id)) failf("entry %d: id \"%s\" does not match [a-z0-9_]{1,48}", i, id);
        for (int j = 0; j < i; j++)
            if (f->id && finding_catalog[j].id && strcmp(f->id, finding_catalog[j].id) == 0)
                failf("entries %d and %d have the same id \"%s\"", j, i, id);
        if ((int)f->severity < 0 || (int)f->severity >= SEV_COUNT) failf("%s: severity %d is none of info, suspect, hack", id, (int)f->severity);
        int known = 0;
        for (size_t k = 0; f->step && k < sizeof kSteps / sizeof *kSteps; k++) known |= strcmp(f->step, kSteps[k]) == 0;
        if (!known)
            failf("%s: step \"%s\" is none of finding.h's (cases, guard, inspect, audit, memo_probe, timing, worker, sandbox, reference, verdict)",
                  id, f->step ? f->step : "(null)");
    }
}

static void test_lookup(void) {
    for (int i = 0; i < FIND_COUNT; i++) {
        check_count++;
        int got = finding_lookup(finding_catalog[i].id);
        if (got != i) failf("finding_lookup(\"%s\") is %d, expected %d", finding_catalog[i].id, got, i);
    }
    CHECK(finding_lookup("no_such_finding") == -1);
    CHECK(finding_lookup("") == -1);
    CHECK(finding_lookup(NULL) == -1);
    CHECK(finding_lookup("Constant_output") == -1);
    CHECK(finding_lookup("constant_output ") == -1);
    for (int s = 0; s < SEV_COUNT; s++) {
        check_count++;
        int back = severity_from_name(severity_name((kbv_severity)s));
        if (back != s) failf("severity_from_name(severity_name(%d) = \"%s\") is %d", s, severity_name((kbv_severity)s), back);
    }
    CHECK_STR(severity_name(SEV_INFO), "info");
    CHECK_STR(severity_name(SEV_SUSPECT), "suspect");
    CHECK_STR(severity_name(SEV_HACK), "hack");
    CHECK_STR(severity_name(SEV_COUNT), "?");
    CHECK(severity_from_name("fatal") == -1);
    CHECK(severity_from_name("Hack") == -1);
    CHECK(severity_from_name(NULL) == -1);
}

/* ---- docs/hacks.md ------------------------------------------------------------------------ */

/* Cell k (0-based) of the table row line, trimmed of spaces and of one pair of backticks. */
static void cell(const char *line, int k, char *out, size_t len) {
    const char *p = line;
    out[0] = '\0';
    if (*p == '|') p++;
    for (int i = 0; i < k; i++) {
        p = strchr(p, '|');
        if (!p) return;
        p++;
    }
    size_t n = strcspn(p, "|");
    while (n && isspace((unsigned char)*p)) p++, n--;
    while (n && isspace((unsigned char)p[n - 1])) n--;
    if (n >= 2 && p[0] == '`' && p[n - 1] == '`') p++, n -= 2;
    snprintf(out, len, "%.*s", (int)n, p);
}

static void test_docs(void) {
    const char *path = "docs/hacks.md";
    char *md = slurp(path);
    if (!md) return;
    check_count++;
    char *sec = strstr(md, "\n## Catalogue\n");
    if (!sec) {
        failf("%s has no \"## Catalogue\" section", path);
        free(md);
        return;
    }
    char *end = strstr(sec + 1, "\n## ");
    if (end) *end = '\0';
    int rows[FIND_COUNT] = {0}, last = -1;
    for (char *l = sec + 1; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        char line[4096], c0[512], id[64], sev[64], step[64], ex[2048];
        snprintf(line, sizeof line, "%.*s", (int)strcspn(l, "\n"), l);
        if (line[0] != '|') continue;
        cell(line, 0, c0, sizeof c0);
        if (strcmp(c0, "id") == 0 || strncmp(c0, "---", 3) == 0) continue; /* header, separator */
        check_count++;
        const char *a = strncmp(c0, "<a id=\"", 7) == 0 ? c0 + 7 : NULL;
        size_t n = a ? strcspn(a, "\"") : 0;
        const char *tail = a ? strstr(a, "</a>") : NULL;
        if (!a || !tail || n == 0 || n >= sizeof id) {
            failf("%s, Catalogue: a row without its <a id=\"ID\"></a> anchor: %s", path, line);
            continue;
        }
        snprintf(id, sizeof id, "%.*s", (int)n, a);
        char shown[128];
        snprintf(shown, sizeof shown, "`%s`", id);
        if (strcmp(tail + 4, shown) != 0) failf("%s, Catalogue: the row of anchor %s shows %s, expected %s", path, id, tail + 4, shown);
        int i = finding_lookup(id);
        if (i < 0) {
            failf("%s, Catalogue: a row for \"%s\", which is not in src/finding.h's table", path, id);
            continue;
        }
        if (rows[i]++) {
            failf("%s, Catalogue: two rows for \"%s\"", path, id);
            continue;
        }
        if (i < last) failf("%s, Catalogue: \"%s\" comes after \"%s\"; the rows follow the table's order", path, id, finding_catalog[last].id);
        last = i;
        cell(line, 1, sev, sizeof sev);
        cell(line, 2, step, sizeof step);
        cell(line, 4, ex, sizeof ex);
        const finding_def *f = &finding_catalog[i];
        if (strcmp(sev, severity_name(f->severity)) != 0)
            failf("%s, Catalogue: %s has severity \"%s\", the table says \"%s\"", path, id, sev, severity_name(f->severity));
        if (strcmp(step, f->step) != 0) failf("%s, Catalogue: %s has step \"%s\", the table says \"%s\"", path, id, step, f->step);
        int says_none = strstr(ex, "no example") != NULL, ex_i = exempt_index(id);
        if (ex_i >= 0 && !says_none)
            failf("%s, Catalogue: %s is exempt (%s) but its row does not say \"no example: ...\"", path, id, kExempt[ex_i].why);
        if (ex_i < 0 && (says_none || !ex[0])) failf("%s, Catalogue: %s names no example", path, id);
    }
    for (int i = 0; i < FIND_COUNT; i++) {
        check_count++;
        if (!rows[i])
            failf("%s, Catalogue: no row for \"%s\" (%s, step %s)", path, finding_catalog[i].id, severity_name(finding_catalog[i].severity),
                  finding_catalog[i].step);
    }
    free(md);
}

/* ---- produced by an example --------------------------------------------------------------- */

static char where[FIND_COUNT][512]; /* the files that assert each id, "; "-separated */

static void note(int i, const char *path) {
    if (strstr(where[i], path)) return;
    size_t n = strlen(where[i]);
    snprintf(where[i] + n, sizeof where[i] - n, "%s%s", n ? "; " : "", path);
}

static int word_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* The first whole-word occurrence of w in [s, end), or NULL. */
static const char *find_word(const char *s, const char *end, const char *w) {
    size_t n = strlen(w);
    for (const char *p = s; p + n <= end; p++)
        if (memcmp(p, w, n) == 0 && (p == s || !word_char(p[-1])) && (p + n == end || !word_char(p[n]))) return p;
    return NULL;
}

static int starts(const char *p, const char *end, const char *w) {
    size_t n = strlen(w);
    return (size_t)(end - p) >= n && memcmp(p, w, n) == 0;
}

/* Is w a whole word at p, in the line [line, eol)? */
static int word_here(const char *line, const char *p, const char *eol, const char *w) {
    size_t n = strlen(w);
    return starts(p, eol, w) && (p == line || !word_char(p[-1])) && (p + n == eol || !word_char(p[n]));
}

/* Does the jq expression [s, end) assert that id is among the findings? */
static int jq_asserts(const char *s, const char *end, const char *id) {
    static const char by[] = "hacks_by_detector.";
    size_t n = strlen(id), nb = sizeof by - 1;
    for (const char *p = s; (p = find_word(p, end, id)); p += n) {
        if (p > s && p[-1] == '.') { /* a field: only a report's count per detector */
            if ((size_t)(p - s) >= nb && memcmp(p - nb, by, nb) == 0) return 1;
            continue;
        }
        if (p == s || p[-1] != '"') continue; /* not a string literal */
        const char *a = p + n;
        while (a < end && *a != '"') a++;
        if (a < end) a++;
        while (a < end && (*a == ')' || *a == ' ')) a++;
        if (starts(a, end, "| not") || starts(a, end, "|not") || starts(a, end, "== null")) continue;
        const char *b = p - 1;
        while (b > s && b[-1] == ' ') b--;
        if (b - s >= 2 && memcmp(b - 2, "!=", 2) == 0) continue;
        return 1;
    }
    return 0;
}

/* The zoo headers: "# kbv-zoo: ... detect=ID|ID ...". */
static void scan_zoo(const char *path, const char *text) {
    for (const char *l = text; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncmp(l, "# kbv-zoo:", 10) != 0) continue;
        const char *eol = l + strcspn(l, "\n"), *d = l;
        while ((d = find_word(d, eol, "detect")) && d[6] != '=') d += 6;
        if (!d) return;
        d += 7;
        const char *e = d + strcspn(d, " \t\n");
        for (const char *t = d; t < e;) {
            size_t k = strcspn(t, "| \t\n");
            if (k > (size_t)(e - t)) k = (size_t)(e - t);
            for (int i = 0; i < FIND_COUNT; i++)
                if (strlen(finding_catalog[i].id) == k && memcmp(finding_catalog[i].id, t, k) == 0) note(i, path);
            t += k + 1;
        }
        return; /* zoo.sh reads the first header only */
    }
}

/* Case lines: "STATUS RC PROBLEM CANDIDATE [OPTIONS] [@jq EXPR]". */
static void scan_cases(const char *path, const char *text) {
    for (const char *l = text; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *eol = l + strcspn(l, "\n");
        if (*l == '#') continue;
        const char *j = l;
        while (j < eol && !starts(j, eol, " @jq ")) j++;
        if (j >= eol) continue;
        for (int i = 0; i < FIND_COUNT; i++)
            if (jq_asserts(j + 5, eol, finding_catalog[i].id)) note(i, path);
    }
}

/* Faults: "NAME ;; DEVICE ;; STATUS ;; EVIDENCE ;; CANDIDATE ;; OPTIONS". */
static void scan_faults(const char *path, const char *text) {
    for (const char *l = text; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *eol = l + strcspn(l, "\n"), *f = l;
        if (*l == '#') continue;
        for (int k = 0; k < 3 && f; k++) {
            while (f < eol && !starts(f, eol, ";;")) f++;
            f = f < eol ? f + 2 : NULL;
        }
        if (!f) continue;
        const char *fe = f;
        while (fe < eol && !starts(fe, eol, ";;")) fe++;
        for (int i = 0; i < FIND_COUNT; i++)
            if (jq_asserts(f, fe, finding_catalog[i].id)) note(i, path);
    }
}

/* A test script: each single-quoted program after `jq [-opts]`, and the arguments of each grep,
 * outside comments and failure messages. A program negated by `! jq` or whose `then` branch is
 * not_ok asserts absence. */
static void scan_script(const char *path, const char *text) {
    const char *end = text + strlen(text);
    for (const char *l = text; l && l < end;) {
        const char *eol = l + strcspn(l, "\n"), *p = l, *next = *eol ? eol + 1 : NULL;
        while (p < eol && (*p == ' ' || *p == '\t')) p++;
        if (*p == '#') {
            l = next;
            continue;
        }
        for (; p < eol; p++) {
            if (starts(p, eol, "not_ok")) break; /* the rest of the line is a failure message */
            if (word_here(l, p, eol, "grep")) {
                const char *ge = p + strcspn(p, "\n|;&)");
                for (int i = 0; i < FIND_COUNT; i++)
                    if (find_word(p + 4, ge, finding_catalog[i].id)) note(i, path);
                continue;
            }
            if (!word_here(l, p, eol, "jq")) continue;
            const char *b = p;
            while (b > l && b[-1] == ' ') b--;
            int negated = b > l && b[-1] == '!';
            const char *q = p + 2;
            for (;;) {
                while (*q == ' ') q++;
                if (*q != '-') break;
                while (*q && *q != ' ' && *q != '\n') q++;
            }
            if (*q != '\'') continue;
            const char *prog = q + 1, *pe = strchr(prog, '\'');
            if (!pe) break;
            const char *stmt_end = pe + strcspn(pe, "\n"), *t = find_word(pe, stmt_end, "then");
            if (t) {
                t += 4;
                while (*t == ' ' || *t == '\n' || *t == '\t') t++;
                negated |= starts(t, end, "not_ok");
            }
            for (int i = 0; !negated && i < FIND_COUNT; i++)
                if (jq_asserts(prog, pe, finding_catalog[i].id)) note(i, path);
            /* go on after the program, which may span lines */
            eol = pe + strcspn(pe, "\n");
            next = *eol ? eol + 1 : NULL;
            p = pe;
        }
        l = next;
    }
}

static void scan_glob(const char *pattern, void (*scan)(const char *, const char *)) {
    glob_t g;
    check_count++;
    if (glob(pattern, 0, NULL, &g) != 0) {
        failf("no file matches %s (run from the repository root)", pattern);
        return;
    }
    for (size_t k = 0; k < g.gl_pathc; k++) {
        char *s = slurp(g.gl_pathv[k]);
        if (s) scan(g.gl_pathv[k], s);
        free(s);
    }
    globfree(&g);
}

static void test_produced(int verbose) {
    scan_glob("examples/hacks/*.py", scan_zoo);
    scan_glob("examples/honest/*.py", scan_zoo);
    scan_glob("tests/gpu/cases.txt", scan_cases);
    /* tests/e2e/cases.txt's @jq counts only where its runner reads it */
    char *runner = slurp("tests/e2e/run.sh");
    if (runner && strstr(runner, "@jq")) scan_glob("tests/e2e/cases.txt", scan_cases);
    free(runner);
    scan_glob("tests/faults/cases.txt", scan_faults);
    scan_glob("tests/attacks/cases.txt", scan_faults); /* the same format */
    scan_glob("tests/*.sh", scan_script);
    scan_glob("tests/*/*.sh", scan_script);
    for (int k = 0; k < NEXEMPT; k++) {
        check_count++;
        if (finding_lookup(kExempt[k].id) < 0) failf("exempt id \"%s\" is not in src/finding.h's table: remove it from kExempt", kExempt[k].id);
    }
    for (int i = 0; i < FIND_COUNT; i++) {
        const char *id = finding_catalog[i].id;
        int ex = exempt_index(id);
        check_count++;
        if (ex >= 0 && where[i][0])
            failf("%s is exempt (%s) but is asserted in %s: remove it from kExempt in tests/unit/test_finding.c", id, kExempt[ex].why, where[i]);
        else if (ex < 0 && !where[i][0])
            failf("no example produces %s (%s, step %s): no zoo detect=, @jq, fault evidence, or jq/grep check in tests/ asserts it; "
                  "add one, or exempt it in tests/unit/test_finding.c with the reason",
                  id, severity_name(finding_catalog[i].severity), finding_catalog[i].step);
        if (verbose) printf("  %-30s %s%s\n", id, ex >= 0 ? "exempt: " : "", ex >= 0 ? kExempt[ex].why : where[i]);
    }
}

int main(int argc, char **argv) {
    int verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
    test_table();
    test_lookup();
    test_docs();
    test_produced(verbose);
    CHECK_DONE("test_finding");
}
