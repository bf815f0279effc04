/* perf.c -- timing summaries and authored-kernel names (see perf.h). */
#include "perf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

void perf_times(const double *ms, int n, kbv_times *out) {
    memset(out, 0, sizeof *out);
    double *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
    if (!x) return;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (ms[i] > 0) x[m++] = ms[i];
    if (m > 0) {
        out->n = m;
        out->median = stats_median(x, (size_t)m);
        out->q1 = stats_quantile(x, (size_t)m, 0.25);
        out->q3 = stats_quantile(x, (size_t)m, 0.75);
        out->mean = stats_mean(x, (size_t)m);
    }
    free(x);
}

void perf_ratio(const double *num, const double *den, int n, uint64_t seed, kbv_ratio *out) {
    memset(out, 0, sizeof *out);
    double *q = malloc((size_t)(n > 0 ? n : 1) * sizeof *q);
    if (!q) return;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (num[i] > 0 && den[i] > 0) q[m++] = num[i] / den[i];
    if (m > 0 && stats_bootstrap_median_ci(q, (size_t)m, 2000, 0.95, seed, &out->lo, &out->hi) == 0) {
        out->measured = 1;
        out->value = stats_median(q, (size_t)m);
    }
    free(q);
}

static int ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

static void add_name(json_t *names, const char *p, size_t n) {
    if (n == 0 || n > 200) return;
    char buf[201];
    memcpy(buf, p, n), buf[n] = '\0';
    for (size_t i = 0; i < json_array_size(names); i++)
        if (strcmp(json_string_value(json_array_get(names, i)), buf) == 0) return;
    json_array_append_new(names, json_string(buf));
}

/* The identifier just before the first '(' after p (skipping template arguments and
 * __launch_bounds__(...) / __attribute__((...))). */
static void name_before_paren(json_t *names, const char *p) {
    for (;;) {
        const char *open = p;
        int angle = 0;
        for (; *open && *open != ';' && *open != '{'; open++) {
            if (*open == '<') angle++;
            else if (*open == '>') angle--;
            else if (*open == '(' && angle <= 0) break;
        }
        if (*open != '(') return;
        const char *e = open;
        while (e > p && isspace((unsigned char)e[-1])) e--;
        const char *b = e;
        while (b > p && ident_char(b[-1])) b--;
        size_t n = (size_t)(e - b);
        if ((n == 17 && strncmp(b, "__launch_bounds__", 17) == 0) || (n == 13 && strncmp(b, "__attribute__", 13) == 0)) {
            int depth = 0; /* skip the qualifier's parentheses */
            for (p = open; *p; p++) {
                if (*p == '(') depth++;
                else if (*p == ')' && --depth == 0) break;
            }
            if (!*p) return;
            p++;
            continue;
        }
        if (n && !isdigit((unsigned char)*b)) add_name(names, b, n);
        return;
    }
}

json_t *perf_authored_kernels(const char *src) {
    json_t *names = json_array();
    if (!src) return names;
    for (const char *p = strstr(src, "__global__"); p; p = strstr(p + 1, "__global__"))
        name_before_paren(names, p + 10);
    for (const char *p = strstr(src, "triton.jit"); p; p = strstr(p + 1, "triton.jit")) {
        const char *d = strstr(p, "def ");
        if (!d) break;
        d += 4;
        while (*d == ' ') d++;
        const char *e = d;
        while (ident_char(*e)) e++;
        add_name(names, d, (size_t)(e - d));
    }
    return names;
}
