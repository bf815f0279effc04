/* test_protocol_doc.c -- docs/protocol.md's command table against the code: every command of
 * proto_commands (the table kbv and the worker share) has a row whose fields are exactly the
 * command's, every reply row lists exactly the fields kbv's decoder reads (reply_fields), and
 * the document has no row for a command that does not exist. Run from the repository root. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "proto.h"
#include "reply.h"

#define MAXF 40

/* The backticked names in cell s, into names (at most MAXF). */
static int names_in(const char *s, char names[MAXF][48]) {
    int n = 0;
    for (const char *p = strchr(s, '`'); p && n < MAXF; p = strchr(p + 1, '`')) {
        const char *e = strchr(p + 1, '`');
        if (!e) break;
        snprintf(names[n], 48, "%.*s", (int)(e - p - 1), p + 1);
        n++;
        p = e;
    }
    return n;
}

static int in_list(const char *name, const char *const *list, int max) {
    for (int i = 0; list && i < max && list[i]; i++)
        if (strcmp(list[i], name) == 0) return 1;
    return 0;
}

/* The names of a row against the code's list: the same set. */
static void same_set(const char *row, const char *what, char names[MAXF][48], int n, const char *const *list, int max) {
    for (int i = 0; i < n; i++)
        if (!in_list(names[i], list, max)) {
            fprintf(stderr, "test_protocol_doc: row %s documents %s `%s`, which the code does not have\n", row, what, names[i]);
            CHECK(0);
        }
    for (int i = 0; list && i < max && list[i]; i++) {
        int found = 0;
        for (int j = 0; j < n; j++) found |= strcmp(names[j], list[i]) == 0;
        if (!found) {
            fprintf(stderr, "test_protocol_doc: row %s does not document %s `%s`\n", row, what, list[i]);
            CHECK(0);
        }
    }
}

int main(void) {
    FILE *f = fopen("docs/protocol.md", "r");
    CHECK(f != NULL);
    if (!f) CHECK_DONE("test_protocol_doc");
    char line[8192];
    int in_table = 0, rows = 0, seen[64] = {0}, seen_any = 0, seen_hello = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "| command | fields | reply fields |", 35) == 0) {
            in_table = 1;
            continue;
        }
        if (!in_table) continue;
        if (line[0] != '|') break;
        if (strncmp(line, "|---", 4) == 0) continue;
        /* cells: | name | fields | reply fields | what it does | */
        char *cell[5] = {0};
        int nc = 0;
        for (char *p = line + 1; nc < 5 && p && *p;) {
            cell[nc++] = p;
            char *bar = strchr(p, '|');
            if (!bar) break;
            *bar = '\0';
            p = bar + 1;
        }
        CHECK(nc >= 4);
        if (nc < 4) continue;
        char rowname[64], f1[MAXF][48], f2[MAXF][48], nm[MAXF][48];
        int n1 = names_in(cell[1], f1), n2 = names_in(cell[2], f2);
        const char *op;
        if (strstr(cell[0], "(any reply)")) op = "*", seen_any = 1;
        else if (strstr(cell[0], "(hello)")) op = "hello", seen_hello = 1;
        else if (names_in(cell[0], nm) == 1) op = nm[0];
        else {
            fprintf(stderr, "test_protocol_doc: a row names no command: %s\n", cell[0]);
            CHECK(0);
            continue;
        }
        snprintf(rowname, sizeof rowname, "%s", op);
        rows++;
        const char *const *rf = reply_fields(op);
        if (!rf) fprintf(stderr, "test_protocol_doc: the decoder has no reply fields for %s\n", op);
        CHECK(rf != NULL);
        same_set(rowname, "reply field", f2, n2, rf, 20);
        if (strcmp(op, "*") == 0 || strcmp(op, "hello") == 0) {
            CHECK(n1 == 0);
            continue;
        }
        const proto_command *pc = proto_command_find(op);
        if (!pc) fprintf(stderr, "test_protocol_doc: documented command %s is not in proto_commands\n", op);
        CHECK(pc != NULL);
        if (!pc) continue;
        seen[pc - proto_commands] = 1;
        same_set(rowname, "field", f1, n1, pc->fields, PROTO_MAX_FIELDS);
    }
    fclose(f);
    CHECK(seen_any && seen_hello);
    for (int i = 0; i < proto_ncommands; i++) {
        if (!seen[i]) fprintf(stderr, "test_protocol_doc: command %s has no row in docs/protocol.md\n", proto_commands[i].op);
        CHECK(seen[i]);
    }
    CHECK(rows == proto_ncommands + 2);
    CHECK_DONE("test_protocol_doc");
}
