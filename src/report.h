/* report.h -- `kbv report`: the paper metrics of a results database, verified and standard
 * side by side, overall, per model and per level (docs/results.md).
 */
#ifndef KBV_REPORT_H
#define KBV_REPORT_H

#include <jansson.h>

#include "util.h"

/* One evaluation as the report sees it. */
typedef struct report_row {
    char model[128];
    int level; /* -1 unknown */
    char status[32];
    int has_speedup;
    double speedup;
    int has_peak;
    double peak_ratio;
    int std_ran, std_correct, std_has_speedup;
    double std_speedup;
    char hacks[512];                   /* comma-separated detector ids of severity hack */
    char problem[128], candidate[128]; /* file stems, from the stored result */
    int has_share;
    double authored_share; /* the CUPTI audit's authored share of the call's GPU time (perf.h) */
} report_row;

/* The metrics of a set of rows (docs/results.md): a new JSON object. */
json_t *report_metrics(const report_row *rows, int n, uint64_t seed);
/* The whole report from a database: {overall, models, levels, evaluations, paper_tables}; with rows set,
 * also "rows": per evaluation {model, problem, candidate, status, speedup, std_speedup,
 * peak_ratio, authored_share, hacks} (the JSON form and the charts). */
int report_build(const char *db_path, int rows, json_t **out, kbv_err *err);
/* Render: "json", "table", "md", "csv" or "html" (charts drawn by gnuplot). */
int report_write(const json_t *rep, const char *format, FILE *f, kbv_err *err);

#endif
