/* charts.c -- the figures of `kbv report --format html` (see charts.h), drawn by gnuplot.
 *
 * What a figure shows that comes from a database -- model names (free text from a manifest),
 * detector ids, legends with counts -- reaches gnuplot only in files: numbers in data files,
 * text in a labels file that the script reads into an array L (one label a line, tab as the
 * separator, no comment characters). A script holds only kbv's own fixed text and numbers kbv
 * formatted, so nothing a candidate or a manifest wrote is ever part of a gnuplot command
 * (gnuplot runs `...` in its commands, and a quote would end a string). gnuplot itself runs
 * without a shell (fork and exec, its init file skipped with -d) in a private folder, so no
 * path appears in a script either; every text is noenhanced, so identity_output is drawn as
 * it is (enhanced text makes "_output" a subscript).
 *
 * It computes no metrics (report.c does) and writes no page around the figures (write_html).
 */
#include "charts.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* One evaluation as the figures see it (an entry of the report's chart_rows). */
typedef struct chart_row {
    const char *model, *status; /* borrowed from the report */
    double ver, std, pap;       /* speedups over PyTorch: verified, standard, paper; NAN: none */
    int ver_ran, std_ran, std_ok, pap_ran, pap_ok;
    double peak; /* peak memory, candidate / reference; NAN: not measured */
} chart_row;

/* One figure being written: its script after the preamble, and its labels. */
typedef struct chart {
    const char *dir;   /* the private folder gnuplot runs in */
    char name[32];     /* [a-z0-9_]: NAME.gp, NAME.svg, NAME.labels, NAME_K.dat */
    int width, height; /* pixels */
    kbv_buf gp, labels;
    int nlabels, ndata;
} chart;

enum { P_STD, P_PAPER, P_VER, P_COUNT };
static const char *const kProto[P_COUNT] = {"standard (KernelBench)", "paper", "verified (kbv)"};
/* colour and dash per protocol: told apart without colour too */
static const char *const kProtoStyle[P_COUNT] = {"lw 2 dt 2 lc rgb '#d95f02'", "lw 2 dt 4 lc rgb '#1b9e77'", "lw 2.5 dt 1 lc rgb '#1f5fa8'"};

enum { C_VERIFIED, C_HACK, C_OTHER, C_COUNT };
static const char *const kCat[C_COUNT] = {"verified", "hack", "other verdicts (overfit, incorrect, errors)"};
static const char *const kCatStyle[C_COUNT] = {"pt 7 ps 0.9 lc rgb '#1f5fa8'", "pt 2 ps 1.6 lw 2 lc rgb '#d62728'", "pt 8 ps 1.1 lc rgb '#7f7f7f'"};

static const char kNoData[] = "<p><em>No data for this chart: %s.</em></p>\n";

void charts_html_text(FILE *f, const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
        if (*p == '<') fputs("&lt;", f);
        else if (*p == '>') fputs("&gt;", f);
        else if (*p == '&') fputs("&amp;", f);
        else if (*p == '"') fputs("&quot;", f);
        else if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f) fprintf(f, "\\x%02x", *p);
        else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) fprintf(f, "\\xc2\\x%02x", *++p);
        else fputc(*p, f);
    }
}

/* The length of the UTF-8 sequence at p if it is a character an SVG (XML) may hold and gnuplot
 * draws as text (U+00A0 and up, no surrogate, no U+FFFE/U+FFFF, shortest form); 0 if not. */
static int utf8_char(const unsigned char *p) {
    int len = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? (p[0] <= 0xef ? 3 : 0) : p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : 0;
    unsigned cp = len == 2 ? p[0] & 0x1f : len == 3 ? p[0] & 0x0f : p[0] & 0x07;
    for (int i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if (!len || cp < 0xa0 || (len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff))) return 0;
    if ((cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff) return 0;
    return len;
}

void charts_label(const char *s, int max_chars, char *out, size_t n) {
    size_t o = 0;
    int chars = 0;
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p && o + 8 < n) {
        if (chars == max_chars) {
            memcpy(out + o, "...", 3), o += 3;
            break;
        }
        int len = *p >= 0x20 && *p < 0x7f ? 1 : utf8_char(p);
        if (len == 0) out[o++] = '?', p++;
        else if (*p == '"') out[o++] = '\'', p++;
        else memcpy(out + o, p, (size_t)len), o += (size_t)len, p += len;
        chars++;
    }
    if (o == 0) memcpy(out, "(empty)", 7), o = 7;
    out[o] = '\0';
}

static void chart_init(chart *c, const char *dir, const char *name, int width, int height) {
    memset(c, 0, sizeof *c);
    c->dir = dir, c->width = width, c->height = height;
    snprintf(c->name, sizeof c->name, "%s", name);
    kbv_buf_init(&c->gp), kbv_buf_init(&c->labels);
}

static void chart_free(chart *c) { kbv_buf_free(&c->gp), kbv_buf_free(&c->labels); }

/* Add a label; the script names it L[returned index]. */
static int chart_label(chart *c, const char *text, int max_chars) {
    char l[1024];
    charts_label(text, max_chars, l, sizeof l);
    kbv_buf_printf(&c->labels, "%s\n", l);
    return ++c->nlabels;
}

/* Write a data file of the figure (numbers only, one point a line); its index K names it
 * NAME_K.dat in the script. -1 with err set when it cannot be written. */
static int chart_data(chart *c, const kbv_buf *points, kbv_err *err) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s_%d.dat", c->dir, c->name, ++c->ndata);
    FILE *f = fopen(path, "w");
    if (!f) return kbv_seterr(err, "%s: %s", path, strerror(errno));
    if (points->len) fwrite(points->data, 1, points->len, f);
    if (fclose(f) != 0) return kbv_seterr(err, "%s: cannot write it", path);
    return c->ndata;
}

static int write_text_file(const char *dir, const char *name, const char *ext, const kbv_buf *b, kbv_err *err) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext);
    FILE *f = fopen(path, "w");
    if (!f) return kbv_seterr(err, "%s: %s", path, strerror(errno));
    if (b->len) fwrite(b->data, 1, b->len, f);
    return fclose(f) == 0 ? 0 : kbv_seterr(err, "%s: cannot write it", path);
}

/* Run gnuplot on NAME.gp in dir, its messages to NAME.err: no shell, stdin /dev/null. */
static int run_gnuplot(const char *dir, const char *name, kbv_err *err) {
    char gp[64], ef[64];
    snprintf(gp, sizeof gp, "%s.gp", name);
    snprintf(ef, sizeof ef, "%s.err", name);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return kbv_seterr(err, "cannot start gnuplot: fork: %s", strerror(errno));
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int out = chdir(dir) == 0 ? open(ef, O_WRONLY | O_CREAT | O_TRUNC, 0600) : -1;
        if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0) _exit(126);
        close_range(3, ~0U, 0); /* nothing of kbv's (the report's file) left open to it */
        execlp("gnuplot", "gnuplot", "-d", gp, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return kbv_seterr(err, "gnuplot: waitpid: %s", strerror(errno));
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
    char path[4096], *text = NULL;
    size_t len = 0;
    kbv_err e2;
    snprintf(path, sizeof path, "%s/%s", dir, ef);
    if (kbv_read_file(path, &text, &len, &e2) < 0) text = NULL;
    for (char *q = text; q && *q; q++)
        if (*q == '\n' || *q == '\t') *q = ' ';
    if (WIFEXITED(st) && WEXITSTATUS(st) == 127) kbv_seterr(err, "cannot run gnuplot to draw the charts: install it (Debian: gnuplot-nox)");
    else kbv_seterr(err, "gnuplot failed drawing %s (%s %d): %.300s", name, WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
                    text && *text ? text : "no message");
    free(text);
    return -1;
}

/* Draw the figure: the SVG element as text in *svg (caller frees), without the XML prolog. */
static int chart_draw(chart *c, char **svg, kbv_err *err) {
    *svg = NULL;
    kbv_buf s;
    kbv_buf_init(&s);
    kbv_buf_printf(&s,
                   "set terminal svg size %d,%d dynamic font 'sans,11' noenhanced\nset termoption noenhanced\nset encoding utf8\n"
                   "set output '%s.svg'\narray L[%d]\n",
                   c->width, c->height, c->name, c->nlabels ? c->nlabels : 1);
    /* the labels: each line whole as one string (tab-separated; a label holds no tab) */
    if (c->nlabels)
        kbv_buf_printf(&s, "set datafile separator \"\\t\"\nset datafile commentschars \"\"\n"
                           "stats '%s.labels' using (L[int(column(0)) + 1] = strcol(1), 0) nooutput\n"
                           "set datafile separator whitespace\nset datafile commentschars \"#\"\n",
                       c->name);
    kbv_buf_append(&s, c->gp.data ? c->gp.data : "", c->gp.len);
    kbv_buf_printf(&s, "unset output\n");
    int rc = write_text_file(c->dir, c->name, "labels", &c->labels, err) < 0 || write_text_file(c->dir, c->name, "gp", &s, err) < 0 ||
                     run_gnuplot(c->dir, c->name, err) < 0
                 ? -1
                 : 0;
    kbv_buf_free(&s);
    if (rc < 0) return -1;
    char path[4096], *text = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/%s.svg", c->dir, c->name);
    if (kbv_read_file(path, &text, &len, err) < 0) return -1;
    char *start = strstr(text, "<svg");
    if (!start) {
        free(text);
        return kbv_seterr(err, "gnuplot drew no SVG for %s", c->name);
    }
    memmove(text, start, strlen(start) + 1);
    *svg = text;
    return 0;
}

/* Under protocol p: whether r ran it; *ok whether it was correct there, *x its speedup. */
static int proto_of(const chart_row *r, int p, int *ok, double *x) {
    if (p == P_VER) return *ok = strcmp(r->status, "verified") == 0, *x = r->ver, r->ver_ran;
    if (p == P_STD) return *ok = r->std_ok, *x = r->std, r->std_ran;
    return *ok = r->pap_ok, *x = r->pap, r->pap_ran;
}

static int timed(double x) { return isfinite(x) && x > 0; }

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A log axis over [lo, hi] widened to show 1 and a margin; base 2 over a narrow span (ticks
 * 0.5, 1, 2), 10 over a wide one. */
static void log_axis(double lo, double hi, double *a, double *b, int *base) {
    if (!(lo > 0) || !isfinite(lo)) lo = 1;
    if (!(hi > 0) || !isfinite(hi)) hi = 1;
    *a = fmin(lo, 1) / 1.3, *b = fmax(hi, 1) * 1.3;
    if (*a > 0.7) *a = 0.7;
    if (*b < 1.4) *b = 1.4;
    *base = *b / *a <= 128 ? 2 : 10;
}

/* The ticks of a log axis over [a, b]: 1-2-5 steps, finer over a narrow span and whole decades
 * (every k-th) over a wide one, so that a short span still has labels and a long one no crowd. */
static void log_tics(kbv_buf *gp, const char *axis, double a, double b) {
    static const double fine[] = {1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8}, mid[] = {1, 2, 5};
    double span = b / a;
    const double *m = span <= 8 ? fine : mid;
    int nm = span <= 8 ? 10 : span <= 200 ? 3 : 1, step = span <= 1e8 ? 1 : (int)ceil(log10(span) / 8);
    kbv_buf_printf(gp, "set %stics (", axis);
    int first = 1;
    for (int e = (int)floor(log10(a)) - 1; e <= (int)ceil(log10(b)); e++) {
        if (((e % step) + step) % step) continue;
        for (int i = 0; i < nm; i++) {
            double v = m[i] * pow(10, e);
            if (v < a * 0.999 || v > b * 1.001) continue;
            kbv_buf_printf(gp, "%s%.9g", first ? "" : ", ", v);
            first = 0;
        }
    }
    kbv_buf_printf(gp, ")\n");
}

static int category(const chart_row *r) {
    return strcmp(r->status, "verified") == 0 ? C_VERIFIED : strcmp(r->status, "hack") == 0 ? C_HACK : C_OTHER;
}

/* The figure's end: draw it and add it to the page, captioned (caption: kbv's text, model: a
 * name to escape, or NULL). */
static int emit(chart *c, FILE *html, const char *caption, const char *model, kbv_err *err) {
    char *svg = NULL;
    if (chart_draw(c, &svg, err) < 0) return -1;
    fprintf(html, "<figure>\n%s\n<figcaption>%s", svg, caption);
    if (model) charts_html_text(html, model);
    fputs("</figcaption></figure>\n", html);
    free(svg);
    return 0;
}

/* 1. One model's speedup CDF: the share of its evaluations at or below each speedup, per
 * protocol. A failure (not correct under that protocol) counts as slower than any speedup, so
 * each curve starts at the left edge at the share that failed, and 1 - height at x is fast_x;
 * a correct evaluation that was not timed is left out and counted in the legend. */
static int cdf_chart(const char *dir, int idx, const char *model, const chart_row *rows, int n, double lo, double hi, int base, FILE *html,
                     kbv_err *err) {
    double *x = malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (!x) return kbv_seterr(err, "out of memory");
    chart c;
    char name[32];
    snprintf(name, sizeof name, "cdf_%d", idx);
    chart_init(&c, dir, name, 720, 470);
    char title[320];
    snprintf(title, sizeof title, "Speedup CDF: %s", model);
    kbv_buf_printf(&c.gp,
                   "set title L[%d]\nset logscale x %d\nset xrange [%.9g:%.9g]\nset yrange [0:1.05]\nset format x '%%g'\n"
                   "set ytics 0, 0.2, 1 format '%%.1f'\nset xlabel 'speedup over PyTorch (log scale)'\n"
                   "set ylabel 'share of evaluations at or below x'\nset grid\nset key outside below left Left reverse vertical height 1.5\n"
                   "set arrow from 1, graph 0 to 1, graph 1 nohead dt 3 lc rgb '#888888'\n",
                   chart_label(&c, title, 80), base, lo, hi);
    log_tics(&c.gp, "x", lo, hi);
    kbv_buf plot, pts;
    kbv_buf_init(&plot);
    int any_timed = 0, rc = 0;
    for (int p = P_COUNT - 1; rc == 0 && p >= 0; p--) { /* verified first in the legend */
        int ran = 0, failed = 0, untimed = 0, m = 0;
        for (int i = 0; i < n; i++) {
            int ok;
            double v;
            if (strcmp(rows[i].model, model) != 0 || !proto_of(&rows[i], p, &ok, &v)) continue;
            ran++;
            if (!ok) failed++;
            else if (timed(v)) x[m++] = v;
            else untimed++;
        }
        char key[256];
        kbv_buf_printf(&plot, "%s", plot.len ? ", " : "plot ");
        if (!ran) {
            snprintf(key, sizeof key, "%s: not run", kProto[p]);
            kbv_buf_printf(&plot, "keyentry with lines %s title L[%d]", kProtoStyle[p], chart_label(&c, key, 120));
            continue;
        }
        any_timed += m > 0;
        qsort(x, (size_t)m, sizeof *x, cmp_double);
        int len = snprintf(key, sizeof key, "%s: %d timed", kProto[p], m);
        if (failed) len += snprintf(key + len, sizeof key - (size_t)len, ", %d failed (at the left edge)", failed);
        if (untimed) snprintf(key + len, sizeof key - (size_t)len, ", %d correct but not timed (left out)", untimed);
        int total = m + failed;
        kbv_buf_init(&pts);
        kbv_buf_printf(&pts, "%.9g %.9g\n", lo, total ? (double)failed / total : 0.0);
        for (int i = 0; i < m; i++) kbv_buf_printf(&pts, "%.9g %.9g\n", x[i], (double)(failed + i + 1) / total);
        if (total) kbv_buf_printf(&pts, "%.9g 1\n", hi);
        int k = chart_data(&c, &pts, err);
        kbv_buf_free(&pts);
        if (k < 0) rc = -1;
        else kbv_buf_printf(&plot, "'%s_%d.dat' using 1:2 with steps %s title L[%d]", c.name, k, kProtoStyle[p], chart_label(&c, key, 120));
    }
    free(x);
    if (rc == 0 && !any_timed) {
        fprintf(html, "<figure><p><em>No timed evaluation of model ");
        charts_html_text(html, model);
        fprintf(html, " under any protocol.</em></p></figure>\n");
    } else if (rc == 0) {
        kbv_buf_printf(&c.gp, "%s\n", plot.data);
        rc = emit(&c, html, "Model ", model, err);
    }
    kbv_buf_free(&plot);
    chart_free(&c);
    return rc;
}

/* The points of one category in a data file; the plot clause for them appended to plot. */
static int category_points(chart *c, const kbv_buf *pts, int cat, int count, kbv_buf *plot, kbv_err *err) {
    if (!count) return 0;
    int k = chart_data(c, pts, err);
    if (k < 0) return -1;
    char key[160];
    snprintf(key, sizeof key, "%s: %d", kCat[cat], count);
    kbv_buf_printf(plot, "%s'%s_%d.dat' using 1:2 with points %s title L[%d]", plot->len ? ", " : "plot ", c->name, k, kCatStyle[cat],
                   chart_label(c, key, 120));
    return 0;
}

/* The points of every category (category_points), then the chart with caption cap; frees
 * pts, plot and the chart. */
static int category_plot(chart *c, kbv_buf *plot, kbv_buf pts[C_COUNT], const int cnt[C_COUNT], const char *cap, FILE *html, kbv_err *err) {
    int rc = 0;
    for (int k = 0; k < C_COUNT && rc == 0; k++) rc = category_points(c, &pts[k], k, cnt[k], plot, err);
    for (int k = 0; k < C_COUNT; k++) kbv_buf_free(&pts[k]);
    if (rc == 0) {
        kbv_buf_printf(&c->gp, "%s\n", plot->data);
        rc = emit(c, html, cap, NULL, err);
    }
    kbv_buf_free(plot);
    chart_free(c);
    return rc;
}

/* 2. Standard against verified speedup, one point per evaluation that KernelBench's protocol
 * timed; one without a verified speedup (a hack, an overfit: not correct, so not timed) sits
 * on the rail "none" below the axis's range, where the hacks KernelBench called fast show. */
static int scatter_chart(const char *dir, const chart_row *rows, int n, FILE *html, kbv_err *err) {
    double lo = INFINITY, hi = 0;
    int placed = 0, rail = 0;
    for (int i = 0; i < n; i++) {
        if (!timed(rows[i].std)) continue;
        placed++;
        lo = fmin(lo, rows[i].std), hi = fmax(hi, rows[i].std);
        if (timed(rows[i].ver)) lo = fmin(lo, rows[i].ver), hi = fmax(hi, rows[i].ver);
        else rail++;
    }
    fputs("<h2>Standard against verified speedup, per evaluation</h2>\n", html);
    if (!placed) return fprintf(html, kNoData, "no evaluation has a speedup under the standard protocol"), 0;
    double a, b;
    int base;
    log_axis(lo, hi, &a, &b, &base);
    double r = a / (base == 2 ? 1.6 : 2.5); /* the rail: below every measured speedup */
    chart c;
    chart_init(&c, dir, "scatter", 680, 720);
    kbv_buf_printf(&c.gp,
                   "set title 'Speedup per evaluation: standard (KernelBench) against verified (kbv)'\nset logscale xy %d\n"
                   "set xrange [%.9g:%.9g]\nset yrange [%.9g:%.9g]\nset size square\nset format xy '%%g'\n"
                   "set xlabel 'standard speedup (KernelBench timing, log scale)'\n"
                   "set ylabel 'verified speedup (kbv timing, log scale)'\nset grid\nset key outside below left Left reverse vertical height 1.5\n"
                   "set arrow from graph 0, first %.9g to graph 1, first %.9g nohead dt 3 lc rgb '#aaaaaa'\n"
                   "set samples 200\n",
                   base, a, b, r / 1.4, b, r, r);
    log_tics(&c.gp, "x", a, b);
    log_tics(&c.gp, "y", a, b);
    kbv_buf_printf(&c.gp, "set ytics add ('none' %.9g)\n", r);
    kbv_buf plot, pts[C_COUNT];
    kbv_buf_init(&plot);
    kbv_buf_printf(&plot, "plot x with lines dt 2 lc rgb '#888888' title 'y = x: the same speedup under both'");
    int cnt[C_COUNT] = {0};
    for (int k = 0; k < C_COUNT; k++) kbv_buf_init(&pts[k]);
    for (int i = 0; i < n; i++) {
        if (!timed(rows[i].std)) continue;
        int k = category(&rows[i]);
        cnt[k]++;
        kbv_buf_printf(&pts[k], "%.9g %.9g\n", rows[i].std, timed(rows[i].ver) ? rows[i].ver : r);
    }
    char cap[512];
    snprintf(cap, sizeof cap,
             "%d evaluation(s) with a standard speedup; %d without a verified one sit on the line marked none. "
             "%d without a standard speedup (not correct under KernelBench's check, not timed, or no standard protocol) are left out.",
             placed, rail, n - placed);
    return category_plot(&c, &plot, pts, cnt, cap, html, err);
}

/* 3. Peak memory ratio against verified speedup, one point per evaluation with both. */
static int memory_chart(const char *dir, const chart_row *rows, int n, FILE *html, kbv_err *err) {
    double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
    int placed = 0, nospeed = 0;
    for (int i = 0; i < n; i++) {
        if (!timed(rows[i].peak)) continue;
        if (!timed(rows[i].ver)) {
            nospeed++;
            continue;
        }
        placed++;
        xlo = fmin(xlo, rows[i].ver), xhi = fmax(xhi, rows[i].ver), ylo = fmin(ylo, rows[i].peak), yhi = fmax(yhi, rows[i].peak);
    }
    fputs("<h2>Memory</h2>\n", html);
    if (!placed)
        return fprintf(html, kNoData, "no evaluation has both a peak memory ratio (a GPU run with CUPTI) and a verified speedup"), 0;
    double xa, xb, ya, yb;
    int xbase, ybase;
    log_axis(xlo, xhi, &xa, &xb, &xbase);
    log_axis(ylo, yhi, &ya, &yb, &ybase);
    chart c;
    chart_init(&c, dir, "memory", 720, 520);
    kbv_buf_printf(&c.gp,
                   "set title 'Peak memory (candidate / reference) against verified speedup'\nset logscale x %d\nset logscale y %d\n"
                   "set xrange [%.9g:%.9g]\nset yrange [%.9g:%.9g]\nset format xy '%%g'\n"
                   "set xlabel 'verified speedup over PyTorch (log scale)'\nset ylabel 'peak memory ratio (log scale)'\nset grid\n"
                   "set key outside below left Left reverse vertical height 1.5\n"
                   "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#888888'\n"
                   "set arrow from 1, graph 0 to 1, graph 1 nohead dt 3 lc rgb '#888888'\n",
                   xbase, ybase, xa, xb, ya, yb);
    log_tics(&c.gp, "x", xa, xb);
    log_tics(&c.gp, "y", ya, yb);
    kbv_buf plot, pts[C_COUNT];
    kbv_buf_init(&plot);
    int cnt[C_COUNT] = {0};
    for (int k = 0; k < C_COUNT; k++) kbv_buf_init(&pts[k]);
    for (int i = 0; i < n; i++) {
        if (!timed(rows[i].peak) || !timed(rows[i].ver)) continue;
        int k = category(&rows[i]);
        cnt[k]++;
        kbv_buf_printf(&pts[k], "%.9g %.9g\n", rows[i].ver, rows[i].peak);
    }
    char cap[384];
    snprintf(cap, sizeof cap,
             "%d evaluation(s); above the dashed line a candidate peaks higher than the reference. %d with a memory figure but no "
             "verified speedup are left out.",
             placed, nospeed);
    return category_plot(&c, &plot, pts, cnt, cap, html, err);
}

typedef struct hack_count {
    const char *id;
    long long n;
} hack_count;

static int cmp_hack(const void *a, const void *b) {
    const hack_count *x = a, *y = b;
    return x->n != y->n ? (x->n < y->n ? 1 : -1) : strcmp(x->id, y->id);
}

/* 4. Hacks by detector: a horizontal bar per detector id, most first, its id drawn literally
 * in a left margin wide enough for the longest. */
static int hacks_chart(const char *dir, const json_t *byhack, FILE *html, kbv_err *err) {
    fputs("<h2>Hacks by detector</h2>\n", html);
    size_t nh = json_object_size(byhack);
    if (!nh) return fprintf(html, kNoData, "no evaluation has a hack verdict"), 0;
    hack_count *h = calloc(nh, sizeof *h);
    if (!h) return kbv_seterr(err, "out of memory");
    const char *k;
    json_t *v;
    size_t m = 0;
    json_object_foreach((json_t *)byhack, k, v) if (m < nh) h[m].id = k, h[m++].n = json_integer_value(v);
    qsort(h, m, sizeof *h, cmp_hack);
    chart c;
    chart_init(&c, dir, "hacks", 720, 110 + 28 * (int)m);
    kbv_buf pts;
    kbv_buf_init(&pts);
    int width = 8, first = 0;
    long long most = 1;
    for (size_t i = 0; i < m; i++) {
        char l[256];
        charts_label(h[i].id, 60, l, sizeof l);
        int chars = 0;
        for (const unsigned char *p = (const unsigned char *)l; *p; p++) chars += (*p & 0xc0) != 0x80;
        width = chars > width ? chars : width;
        int idx = chart_label(&c, h[i].id, 60);
        if (i == 0) first = idx;
        most = h[i].n > most ? h[i].n : most;
        kbv_buf_printf(&pts, "%lld %zu\n", h[i].n, i);
    }
    free(h);
    if (480 + 8 * (width + 3) > c.width) c.width = 480 + 8 * (width + 3); /* a plot area as wide beside long ids */
    int rc = chart_data(&c, &pts, err) < 0 ? -1 : 0;
    kbv_buf_free(&pts);
    /* the margin in characters: the longest id, and room for the tick and a gap */
    kbv_buf_printf(&c.gp,
                   "set title 'Hack verdicts by detector'\nunset key\nset lmargin %d\nset rmargin 6\nset style fill solid 0.75 border lc rgb '#8c1d1d'\n"
                   "set yrange [%g:-0.6]\nset xrange [0:%g]\nset ytics scale 0\nset xtics %s\nset format x '%%.0f'\nset grid xtics back lc rgb '#cccccc'\n"
                   "set xlabel 'evaluations with a hack verdict from this detector'\n"
                   "plot '%s_1.dat' using 1:2:(0):1:($2 - 0.32):($2 + 0.32):ytic(L[int($2) + %d]) with boxxyerror lc rgb '#d62728', "
                   "'' using 1:2:(sprintf(' %%d', int($1))) with labels left offset 0.6,0\n",
                   width + 3, (double)m - 0.4, (double)most * 1.15 + 0.5, most <= 10 ? "1" : "autofreq", c.name, first);
    if (rc == 0) rc = emit(&c, html, "Each bar counts the evaluations a detector's finding made a hack (severity hack).", NULL, err);
    chart_free(&c);
    return rc;
}

static double jnum(const json_t *x) { return json_is_number(x) ? json_number_value(x) : NAN; }

/* The report's chart_rows (report_build) as chart_row entries; *n their count. */
static chart_row *read_rows(const json_t *rep, int *n) {
    const json_t *a = json_object_get(rep, "chart_rows");
    size_t na = json_array_size(a);
    chart_row *rows = calloc(na ? na : 1, sizeof *rows);
    *n = 0;
    for (size_t i = 0; rows && i < na; i++) {
        const json_t *e = json_array_get(a, i), *st = json_object_get(e, "standard"), *pa = json_object_get(e, "paper");
        chart_row *r = &rows[(*n)++];
        r->model = json_string_value(json_object_get(e, "model")) ?: "default";
        r->status = json_string_value(json_object_get(e, "status")) ?: "";
        r->ver = jnum(json_object_get(e, "verified"));
        const char *proto = json_string_value(json_object_get(e, "protocol")) ?: "";
        r->ver_ran = strcmp(proto, "standard") != 0 && strcmp(proto, "paper") != 0; /* "verified", "both" */
        r->std_ran = json_is_object(st), r->std_ok = json_is_true(json_object_get(st, "correct")), r->std = jnum(json_object_get(st, "speedup"));
        r->pap_ran = json_is_object(pa), r->pap_ok = json_is_true(json_object_get(pa, "correct")), r->pap = jnum(json_object_get(pa, "speedup"));
        r->peak = jnum(json_object_get(e, "peak_ratio"));
    }
    return rows;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* The CDFs: one figure per model (by name), on a common axis so that they compare. */
static int cdf_charts(const char *dir, const chart_row *rows, int n, FILE *html, kbv_err *err) {
    fputs("<h2>Speedups: cumulative distribution per model</h2>\n"
          "<p>For each model, the share of its evaluations whose speedup over PyTorch is at or below x, one curve per protocol: "
          "standard (KernelBench's check and timing), paper, and verified (kbv's hidden inputs, float64 oracle and timing). "
          "An evaluation that is not correct under a protocol counts as slower than any speedup: its curve starts at the left "
          "edge at the share that failed, so 1 minus the height at x is fast_x. A correct evaluation that was not timed is left "
          "out, and each legend gives the counts. The dotted line is PyTorch's speed (1).</p>\n",
          html);
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < n; i++)
        for (int p = 0; p < P_COUNT; p++) {
            int ok;
            double x;
            if (proto_of(&rows[i], p, &ok, &x) && ok && timed(x)) lo = fmin(lo, x), hi = fmax(hi, x);
        }
    if (hi == 0) return fprintf(html, kNoData, "no evaluation was timed (a run with --no-timing?)"), 0;
    double a, b;
    int base;
    log_axis(lo, hi, &a, &b, &base);
    const char **models = malloc(sizeof *models * (size_t)(n ? n : 1));
    if (!models) return kbv_seterr(err, "out of memory");
    int nm = 0;
    for (int i = 0; i < n; i++) models[nm++] = rows[i].model;
    qsort(models, (size_t)nm, sizeof *models, cmp_str);
    int rc = 0, idx = 0;
    fputs("<div class=\"charts\">\n", html);
    for (int i = 0; rc == 0 && i < nm; i++)
        if (i == 0 || strcmp(models[i], models[i - 1]) != 0) rc = cdf_chart(dir, idx++, models[i], rows, n, a, b, base, html, err);
    fputs("</div>\n", html);
    free(models);
    return rc;
}

int charts_html(const json_t *rep, char **html, kbv_err *err) {
    *html = NULL;
    int n = 0;
    chart_row *rows = read_rows(rep, &n);
    if (!rows) return kbv_seterr(err, "out of memory");
    char dir[4096];
    if (kbv_mkscratch(NULL, dir, sizeof dir, err) < 0) return free(rows), -1;
    size_t len = 0;
    FILE *f = open_memstream(html, &len);
    int rc = f ? 0 : kbv_seterr(err, "out of memory");
    if (rc == 0) rc = cdf_charts(dir, rows, n, f, err);
    if (rc == 0) rc = scatter_chart(dir, rows, n, f, err);
    if (rc == 0) rc = memory_chart(dir, rows, n, f, err);
    if (rc == 0) rc = hacks_chart(dir, json_object_get(json_object_get(rep, "overall"), "hacks_by_detector"), f, err);
    if (f && fclose(f) != 0 && rc == 0) rc = kbv_seterr(err, "out of memory");
    kbv_rmtree(dir); /* a temporary folder left behind is not an error */
    free(rows);
    if (rc < 0) free(*html), *html = NULL;
    return rc;
}
