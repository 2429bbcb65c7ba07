#include "host-fs/http_request.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

enum http_kind http_parse_target(const char *url, struct http_target *t)
{
    memset(t, 0, sizeof(*t));
    if (strcmp(url, "/metrics") == 0)
        return t->kind = HTTP_METRICS;
    static const char prefix[] = "/buildid/";
    if (strncmp(url, prefix, sizeof(prefix) - 1) != 0)
        return HTTP_NONE;
    const char *p = url + sizeof(prefix) - 1;
    size_t n = 0;
    while (p[n] && p[n] != '/')
        n++;
    if (n < 4 || n % 2 || n / 2 > HTTP_BUILD_ID_MAX || p[n] != '/')
        return HTTP_NONE;
    for (size_t i = 0; i < n; i += 2) {
        int hi = hex_digit(p[i]), lo = hex_digit(p[i + 1]);
        if (hi < 0 || lo < 0)
            return HTTP_NONE;
        t->build_id[i / 2] = (uint8_t)(hi << 4 | lo);
    }
    t->build_id_len = n / 2;
    const char *what = p + n + 1;
    if (strcmp(what, "debuginfo") == 0)
        return t->kind = HTTP_DEBUGINFO;
    if (strcmp(what, "executable") == 0)
        return t->kind = HTTP_EXECUTABLE;
    if (strncmp(what, "source/", 7) == 0 && what[7]) {
        t->rest = what + 6; /* keeps the slash: an absolute path */
        return t->kind = HTTP_SOURCE;
    }
    if (strncmp(what, "section/", 8) == 0 && what[8] && !strchr(what + 8, '/')) {
        t->rest = what + 8;
        return t->kind = HTTP_SECTION;
    }
    t->build_id_len = 0;
    return HTTP_NONE;
}

static const char *skip_ows(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* Decimal digits into *v; false on none or overflow. */
static bool number(const char **p, uint64_t *v)
{
    const char *s = *p;
    uint64_t x = 0;
    if (*s < '0' || *s > '9')
        return false;
    while (*s >= '0' && *s <= '9') {
        unsigned d = (unsigned)(*s - '0');
        if (x > (UINT64_MAX - d) / 10)
            return false;
        x = x * 10 + d;
        s++;
    }
    *p = s;
    *v = x;
    return true;
}

int http_parse_range(const char *hdr, uint64_t size, uint64_t *off, uint64_t *len)
{
    if (!hdr)
        return HTTP_RANGE_FULL;
    const char *p = skip_ows(hdr);
    if (strncasecmp(p, "bytes", 5) != 0)
        return HTTP_RANGE_FULL;
    p = skip_ows(p + 5);
    if (*p != '=')
        return HTTP_RANGE_FULL;
    p = skip_ows(p + 1);
    uint64_t first = 0, last = 0;
    bool has_first = number(&p, &first);
    p = skip_ows(p);
    if (*p != '-')
        return HTTP_RANGE_FULL;
    p = skip_ows(p + 1);
    bool has_last = number(&p, &last);
    p = skip_ows(p);
    if (*p != 0) /* several ranges, or junk: the whole file */
        return HTTP_RANGE_FULL;
    if (!has_first && !has_last)
        return HTTP_RANGE_FULL;
    if (!has_first) { /* "-N": the last N bytes */
        if (last == 0 || size == 0)
            return HTTP_RANGE_BAD;
        *len = last < size ? last : size;
        *off = size - *len;
        return HTTP_RANGE_PART;
    }
    if (has_last && last < first)
        return HTTP_RANGE_FULL; /* invalid: ignored */
    if (first >= size)
        return HTTP_RANGE_BAD;
    if (!has_last || last >= size)
        last = size - 1;
    *off = first;
    *len = last - first + 1;
    return HTTP_RANGE_PART;
}
