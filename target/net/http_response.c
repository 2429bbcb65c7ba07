/* See http_response.h.  Written from RFC 9110/9112: status-line =
 * HTTP-version SP 3DIGIT SP reason; field-line = name ":" OWS value OWS;
 * obsolete line folding is refused. */
#include "target/net/http_response.h"

#include <string.h>

size_t http_head_end(const char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (buf[i] != '\n')
            continue;
        if (i + 1 < len && buf[i + 1] == '\n')
            return i + 2;
        if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
            return i + 3;
    }
    return 0;
}

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

static bool name_is(const char *p, size_t n, const char *name)
{
    if (strlen(name) != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (lower((unsigned char)p[i]) != lower((unsigned char)name[i]))
            return false;
    return true;
}

/* A decimal number taking all of p[0..n): at most 18 digits (below 2^63). */
static bool number(const char *p, size_t n, uint64_t *out)
{
    if (n == 0 || n > 18)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(p[i] - '0');
    }
    *out = v;
    return true;
}

/* "bytes FIRST-LAST/TOTAL" or "bytes FIRST-LAST/ *"; "bytes * /TOTAL" (a 416)
 * is not a range of content and is refused. */
static bool content_range(const char *p, size_t n, struct http_response *r)
{
    if (n < 6 || !name_is(p, 5, "bytes") || p[5] != ' ')
        return false;
    p += 6;
    n -= 6;
    const char *dash = memchr(p, '-', n);
    const char *slash = memchr(p, '/', n);
    if (!dash || !slash || dash > slash)
        return false;
    if (!number(p, (size_t)(dash - p), &r->range_first) ||
        !number(dash + 1, (size_t)(slash - dash - 1), &r->range_last) ||
        r->range_first > r->range_last)
        return false;
    size_t tn = n - (size_t)(slash + 1 - p);
    if (tn == 1 && slash[1] == '*') {
        r->has_total = false;
    } else {
        if (!number(slash + 1, tn, &r->range_total) || r->range_last >= r->range_total)
            return false;
        r->has_total = true;
    }
    r->has_range = true;
    return true;
}

/* Contains the token (comma-separated, case-insensitive). */
static bool has_token(const char *p, size_t n, const char *token)
{
    size_t tl = strlen(token);
    size_t i = 0;
    while (i < n) {
        while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == ','))
            i++;
        size_t s = i;
        while (i < n && p[i] != ',')
            i++;
        size_t e = i;
        while (e > s && (p[e - 1] == ' ' || p[e - 1] == '\t'))
            e--;
        if (e - s == tl && name_is(p + s, tl, token))
            return true;
    }
    return false;
}

static int field(const char *p, size_t n, struct http_response *r, const char **why)
{
    const char *colon = memchr(p, ':', n);
    if (!colon || colon == p) {
        *why = "header line without a name";
        return -1;
    }
    size_t nl = (size_t)(colon - p);
    for (size_t i = 0; i < nl; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c <= ' ' || c >= 127) {
            *why = "bad character in a header name";
            return -1;
        }
    }
    const char *v = colon + 1;
    size_t vl = n - nl - 1;
    while (vl > 0 && (*v == ' ' || *v == '\t'))
        v++, vl--;
    while (vl > 0 && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
        vl--;
    for (size_t i = 0; i < vl; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c < ' ' && c != '\t') {
            *why = "control character in a header value";
            return -1;
        }
    }
    if (name_is(p, nl, "content-length")) {
        uint64_t len;
        if (!number(v, vl, &len)) {
            *why = "bad Content-Length";
            return -1;
        }
        if (r->has_length && len != r->content_length) {
            *why = "two different Content-Length headers";
            return -1;
        }
        r->has_length = true;
        r->content_length = len;
    } else if (name_is(p, nl, "content-range")) {
        if (r->has_range || !content_range(v, vl, r)) {
            *why = "bad Content-Range";
            return -1;
        }
    } else if (name_is(p, nl, "transfer-encoding")) {
        if (!(vl == 8 && name_is(v, vl, "identity")))
            r->chunked = true;
    } else if (name_is(p, nl, "connection")) {
        if (has_token(v, vl, "close"))
            r->close = true;
    } else if (name_is(p, nl, "x-debuginfod-size")) {
        if (!number(v, vl, &r->debuginfod_size)) {
            *why = "bad X-DEBUGINFOD-SIZE";
            return -1;
        }
        r->has_debuginfod_size = true;
    }
    return 0;
}

int http_parse_response(const char *buf, size_t len, struct http_response *r, const char **why)
{
    memset(r, 0, sizeof(*r));
    if (len > HTTP_HEAD_MAX) {
        *why = "response header too long";
        return -1;
    }
    /* HTTP/1.x SP DDD (SP reason)? */
    if (len < 13 || memcmp(buf, "HTTP/1.", 7) != 0 || (buf[7] != '0' && buf[7] != '1') ||
        buf[8] != ' ' || buf[9] < '1' || buf[9] > '5' || buf[10] < '0' || buf[10] > '9' ||
        buf[11] < '0' || buf[11] > '9') {
        *why = "not an HTTP/1.x status line";
        return -1;
    }
    r->http10 = buf[7] == '0';
    r->status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
    if (buf[12] != ' ' && buf[12] != '\r' && buf[12] != '\n') {
        *why = "bad status line";
        return -1;
    }
    const char *p = memchr(buf, '\n', len);
    if (!p) {
        *why = "status line without an end";
        return -1;
    }
    const char *end = buf + len;
    p++;
    int lines = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) {
            *why = "header line without an end";
            return -1;
        }
        size_t n = (size_t)(nl - p);
        if (n > 0 && p[n - 1] == '\r')
            n--;
        if (n == 0)
            break; /* the blank line */
        if (p[0] == ' ' || p[0] == '\t') {
            *why = "folded header line";
            return -1;
        }
        if (++lines > HTTP_HEADERS_MAX) {
            *why = "too many header lines";
            return -1;
        }
        if (field(p, n, r, why) < 0)
            return -1;
        p = nl + 1;
    }
    if (r->has_range && r->has_length && r->content_length != r->range_last - r->range_first + 1) {
        *why = "Content-Length disagrees with Content-Range";
        return -1;
    }
    return 0;
}
