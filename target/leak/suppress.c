#include "target/leak/suppress.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "shared/config_line.h"
#include "shared/xalloc.h"

/* Suppression files are small: anything bigger is not one. */
#define SUPPRESSIONS_MAX_BYTES (16u << 20)

struct suppressions {
    char **patterns;
    unsigned long *hits;
    size_t n;
};

/* '*' runs over [p, pend) against [s, send), anchored at both ends: the
 * classic backtrack to the last star (linear in practice, never
 * exponential). */
static bool glob_anchored(const char *p, const char *pend, const char *s, const char *send)
{
    const char *star = NULL, *resume = NULL;
    while (s < send) {
        if (p < pend && *p == '*') {
            star = ++p;
            resume = s;
        } else if (p < pend && *p == *s) {
            p++;
            s++;
        } else if (star) {
            p = star;
            s = ++resume;
        } else {
            return false;
        }
    }
    while (p < pend && *p == '*')
        p++;
    return p == pend;
}

bool suppress_pattern_match(const char *pattern, const char *str)
{
    if (!str || !*str)
        return false;
    size_t plen = strlen(pattern);
    bool at_start = plen && pattern[0] == '^';
    bool at_end = plen > (size_t)at_start && pattern[plen - 1] == '$';
    /* An unanchored side is a star there. */
    char *p = xreallocarray(NULL, plen + 3, 1);
    size_t n = 0;
    if (!at_start)
        p[n++] = '*';
    size_t core = plen - at_start - at_end;
    memcpy(p + n, pattern + at_start, core);
    n += core;
    if (!at_end)
        p[n++] = '*';
    bool m = glob_anchored(p, p + n, str, str + strlen(str));
    free(p);
    return m;
}

static void add_pattern(struct suppressions *s, const char *p, size_t len)
{
    s->patterns = xreallocarray(s->patterns, s->n + 1, sizeof(*s->patterns));
    s->hits = xreallocarray(s->hits, s->n + 1, sizeof(*s->hits));
    char *copy = xreallocarray(NULL, len + 1, 1);
    memcpy(copy, p, len);
    copy[len] = '\0';
    s->patterns[s->n] = copy;
    s->hits[s->n] = 0;
    s->n++;
}


struct suppressions *suppressions_parse(const char *text, size_t len, const char *name, char *err,
                                        size_t errlen)
{
    struct suppressions *s = xcalloc(1, sizeof(*s));
    unsigned lineno = 0;
    size_t pos = 0, n;
    const char *line;
    while (config_line_next(text, len, &pos, &line, &n)) {
        lineno++;
        if (memchr(line, '\0', n)) {
            snprintf(err, errlen, "%s:%u: NUL byte in a suppression", name, lineno);
            suppressions_free(s);
            return NULL;
        }
        config_line_trim(&line, &n);
        if (n == 0 || line[0] == '#')
            continue;
        const char *colon = memchr(line, ':', n);
        if (!colon) {
            snprintf(err, errlen, "%s:%u: expected leak:PATTERN, not \"%.*s\"", name, lineno,
                     n > 60 ? 60 : (int)n, line);
            suppressions_free(s);
            return NULL;
        }
        size_t tlen = (size_t)(colon - line);
        if (tlen != 4 || memcmp(line, "leak", 4) != 0) {
            snprintf(err, errlen, "%s:%u: unsupported suppression type \"%.*s\" (only leak:)", name,
                     lineno, tlen > 40 ? 40 : (int)tlen, line);
            suppressions_free(s);
            return NULL;
        }
        add_pattern(s, colon + 1, n - tlen - 1);
    }
    return s;
}

struct suppressions *suppressions_load(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && st.st_size > (off_t)SUPPRESSIONS_MAX_BYTES) {
        snprintf(err, errlen, "%s: too big for a suppressions file", path);
        fclose(f);
        return NULL;
    }
    size_t cap = 4096, n = 0, got;
    char *buf = xreallocarray(NULL, cap, 1);
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n > SUPPRESSIONS_MAX_BYTES) {
            snprintf(err, errlen, "%s: too big for a suppressions file", path);
            free(buf);
            fclose(f);
            return NULL;
        }
        if (n == cap) {
            cap *= 2;
            buf = xreallocarray(buf, cap, 1);
        }
    }
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        snprintf(err, errlen, "%s: read error", path);
        free(buf);
        return NULL;
    }
    struct suppressions *s = suppressions_parse(buf, n, path, err, errlen);
    free(buf);
    return s;
}

void suppressions_free(struct suppressions *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        free(s->patterns[i]);
    free(s->patterns);
    free(s->hits);
    free(s);
}

size_t suppressions_count(const struct suppressions *s) { return s ? s->n : 0; }

bool suppressions_match(struct suppressions *s, const char *str)
{
    if (!s)
        return false;
    for (size_t i = 0; i < s->n; i++)
        if (suppress_pattern_match(s->patterns[i], str)) {
            s->hits[i]++;
            return true;
        }
    return false;
}

const char *suppressions_pattern(const struct suppressions *s, size_t i, unsigned long *hits)
{
    if (!s || i >= s->n)
        return NULL;
    if (hits)
        *hits = s->hits[i];
    return s->patterns[i];
}
