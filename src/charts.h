/* charts.h -- the figures of `kbv report --format html` (docs/results.md), drawn by gnuplot
 * from a report's "chart_rows" and "overall.hacks_by_detector" (report.h).
 */
#ifndef KBV_CHARTS_H
#define KBV_CHARTS_H

#include <jansson.h>
#include <stdio.h>

#include "util.h"

/* The figures as an HTML fragment (headings, captions, inline SVGs) in *html (caller frees):
 * a speedup CDF per model (standard, paper, verified), the per-candidate standard-vs-verified
 * scatter, peak memory ratio against speedup, and hacks by detector. A figure without data
 * says so in words. -1 with err set when gnuplot cannot be run or fails. */
int charts_html(const json_t *rep, char **html, kbv_err *err);

/* s as HTML text: <, >, & and " escaped, control characters as \xNN (as kbv_fputs_safe). */
void charts_html_text(FILE *f, const char *s);

/* s as a label gnuplot draws (out holds n bytes): valid UTF-8 kept, every other byte and
 * control character '?', '"' as '\'' (a data file's quote), at most max_chars characters
 * ("..." ending one cut short); never empty. */
void charts_label(const char *s, int max_chars, char *out, size_t n);

#endif
