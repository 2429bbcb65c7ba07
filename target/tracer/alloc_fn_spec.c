#include "target/tracer/alloc_fn_spec.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "shared/config_line.h"

static const struct {
    const char *word;
    enum intercept_op op;
    unsigned nargs;  /* the op's own arguments, each may be given a position */
} kinds[] = {
    {"malloc", OP_MALLOC, 1},        /* (size) */
    {"calloc", OP_CALLOC, 2},        /* (n, size) */
    {"realloc", OP_REALLOC, 2},      /* (ptr, size) */
    {"free", OP_FREE, 1},            /* (ptr) */
    {"aligned", OP_ALIGNED_ALLOC, 2}, /* (alignment, size), as aligned_alloc */
};


/* POSITIONS (n bytes at s): want numbers 1..ALLOC_FN_POS_MAX, comma-separated,
 * all different. */
static int parse_positions(const char *s, size_t n, unsigned want, unsigned char *pos, char *err,
                           size_t errlen)
{
    unsigned got = 0;
    size_t i = 0;
    for (;;) {
        unsigned v = 0;
        size_t start = i;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            v = v * 10 + (unsigned)(s[i] - '0');
            if (v > ALLOC_FN_POS_MAX)
                break;
            i++;
        }
        if (i == start || v == 0 || v > ALLOC_FN_POS_MAX) {
            snprintf(err, errlen, "argument positions are numbers 1 to %d, comma-separated",
                     ALLOC_FN_POS_MAX);
            return -1;
        }
        if (got == want) {
            snprintf(err, errlen, "this KIND takes %u argument position%s", want,
                     want == 1 ? "" : "s");
            return -1;
        }
        for (unsigned k = 0; k < got; k++)
            if (pos[k] == v) {
                snprintf(err, errlen, "argument position %u given twice", v);
                return -1;
            }
        pos[got++] = (unsigned char)v;
        if (i == n)
            break;
        if (s[i] != ',') {
            snprintf(err, errlen, "argument positions are numbers 1 to %d, comma-separated",
                     ALLOC_FN_POS_MAX);
            return -1;
        }
        i++;
    }
    if (got != want) {
        snprintf(err, errlen, "this KIND takes %u argument position%s", want, want == 1 ? "" : "s");
        return -1;
    }
    return 0;
}

int alloc_fn_spec_parse(const char *s, size_t n, struct alloc_fn_spec *out, char *err,
                        size_t errlen)
{
    memset(out, 0, sizeof(*out));
    const char *eq = memchr(s, '=', n);
    if (!eq) {
        snprintf(err, errlen, "NAME=KIND expected");
        return -1;
    }
    size_t nlen = (size_t)(eq - s);
    if (nlen == 0) {
        snprintf(err, errlen, "empty NAME");
        return -1;
    }
    if (nlen > ALLOC_FN_NAME_MAX) {
        snprintf(err, errlen, "NAME longer than %d bytes", ALLOC_FN_NAME_MAX);
        return -1;
    }
    for (size_t i = 0; i < nlen; i++)
        if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f || (s[i] == '@' && i == 0)) {
            snprintf(err, errlen, "NAME with a blank, control character or leading @");
            return -1;
        }
    const char *kind = eq + 1;
    size_t rest = n - nlen - 1;
    const char *colon = memchr(kind, ':', rest);
    size_t klen = colon ? (size_t)(colon - kind) : rest;
    size_t k = 0;
    while (k < sizeof(kinds) / sizeof(kinds[0]) &&
           (strlen(kinds[k].word) != klen || memcmp(kinds[k].word, kind, klen) != 0))
        k++;
    if (k == sizeof(kinds) / sizeof(kinds[0])) {
        snprintf(err, errlen, "KIND is malloc, calloc, realloc, free or aligned");
        return -1;
    }
    if (colon && parse_positions(colon + 1, rest - klen - 1, kinds[k].nargs, out->pos, err,
                                 errlen) < 0)
        return -1;
    memcpy(out->name, s, nlen);
    out->name[nlen] = '\0';
    out->op = kinds[k].op;
    return 0;
}

int alloc_fn_file_parse(const char *text, size_t len, const char *name, struct alloc_fn_spec *out,
                        size_t cap, size_t *n, char *err, size_t errlen)
{
    *n = 0;
    unsigned lineno = 0;
    size_t pos = 0, ln;
    const char *line;
    while (config_line_next(text, len, &pos, &line, &ln)) {
        lineno++;
        if (ln > ALLOC_FN_LINE_MAX) {
            snprintf(err, errlen, "%s:%u: line longer than %d bytes", name, lineno,
                     ALLOC_FN_LINE_MAX);
            return -1;
        }
        if (memchr(line, '\0', ln)) {
            snprintf(err, errlen, "%s:%u: NUL byte", name, lineno);
            return -1;
        }
        config_line_trim(&line, &ln);
        if (ln == 0 || line[0] == '#')
            continue;
        if (*n == cap) {
            snprintf(err, errlen, "%s:%u: too many functions (%zu at most)", name, lineno, cap);
            return -1;
        }
        char why[128];
        if (alloc_fn_spec_parse(line, ln, &out[*n], why, sizeof(why)) < 0) {
            snprintf(err, errlen, "%s:%u: %s: \"%.*s\"", name, lineno, why, ln > 60 ? 60 : (int)ln,
                     line);
            return -1;
        }
        out[*n].line = lineno;
        (*n)++;
    }
    return 0;
}

int alloc_fn_file_load(const char *path, struct alloc_fn_spec *out, size_t cap, size_t *n,
                       char *err, size_t errlen)
{
    *n = 0;
    FILE *f = fopen(path, "re");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    static char buf[ALLOC_FN_FILE_MAX_BYTES + 1];
    size_t got = fread(buf, 1, sizeof(buf), f);
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        snprintf(err, errlen, "%s: read error", path);
        return -1;
    }
    if (got > ALLOC_FN_FILE_MAX_BYTES) {
        snprintf(err, errlen, "%s: larger than %d bytes", path, ALLOC_FN_FILE_MAX_BYTES);
        return -1;
    }
    return alloc_fn_file_parse(buf, got, path, out, cap, n, err, errlen);
}
