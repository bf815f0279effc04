/* finding.c -- the catalogue of findings (see finding.h). Data and look-ups only. */
#include "finding.h"

#include <string.h>

#define FINDING_ROW(e, id_, sev, step_) [e] = {.id = id_, .severity = sev, .step = step_},
const finding_def finding_catalog[FIND_COUNT] = {FINDING_TABLE(FINDING_ROW)};
#undef FINDING_ROW

static const char *const kSeverity[SEV_COUNT] = {"info", "suspect", "hack"};

const char *severity_name(kbv_severity s) { return s >= 0 && s < SEV_COUNT ? kSeverity[s] : "?"; }

int severity_from_name(const char *s) {
    for (int i = 0; s && i < SEV_COUNT; i++)
        if (strcmp(s, kSeverity[i]) == 0) return i;
    return -1;
}

int finding_lookup(const char *id) {
    for (int i = 0; id && i < FIND_COUNT; i++)
        if (strcmp(finding_catalog[i].id, id) == 0) return i;
    return -1;
}
