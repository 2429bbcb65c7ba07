#include "shared/text_escape.h"

#include "shared/xalloc.h"

#include <stdlib.h>
#include <string.h>

size_t utf8_sequence(const unsigned char *s, size_t *bad)
{
    /* RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF. */
    unsigned char c = s[0];
    unsigned char lo = 0x80, hi = 0xbf;
    size_t len;
    *bad = 1;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0;
        else if (c == 0xed)
            hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90;
        else if (c == 0xf4)
            hi = 0x8f;
    } else
        return 0;
    /* A NUL terminator fails every continuation test, so no overrun. */
    for (size_t i = 1; i < len; i++) {
        if (s[i] < lo || s[i] > hi) {
            *bad = i;
            return 0;
        }
        lo = 0x80;
        hi = 0xbf;
    }
    return len;
}

/* How many bytes at s form the next unit, and whether it is escaped. */
static size_t next_unit(const unsigned char *s, bool *escape)
{
    if (*s < 0x80) {
        *escape = *s < 0x20 || *s == 0x7f;
        return 1;
    }
    size_t bad, len = utf8_sequence(s, &bad);
    /* U+0080..U+009F (C2 80..C2 9F): the C1 controls, CSI among them. */
    *escape = !len || (len == 2 && s[0] == 0xc2 && s[1] < 0xa0);
    return len ? len : bad;
}

/* Writes the escaped s to dst (when not NULL, with room for all of it,
 * or for max bytes: a unit that does not fit ends it); its length. */
static size_t escape_into(char *dst, size_t max, const unsigned char *s)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    while (*s) {
        bool esc;
        size_t len = next_unit(s, &esc);
        size_t need = esc ? 4 * len : len;
        if (n + need > max)
            break;
        if (dst) {
            for (size_t i = 0; i < len; i++) {
                if (esc) {
                    dst[n++] = '\\';
                    dst[n++] = 'x';
                    dst[n++] = hex[s[i] >> 4];
                    dst[n++] = hex[s[i] & 15];
                } else {
                    dst[n++] = (char)s[i];
                }
            }
        } else {
            n += need;
        }
        s += len;
    }
    return n;
}

bool text_escape_clean(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        bool esc;
        p += next_unit(p, &esc);
        if (esc)
            return false;
    }
    return true;
}

char *text_escape_dup(const char *s)
{
    size_t n = escape_into(NULL, (size_t)-1, (const unsigned char *)s);
    char *out = xmalloc(n + 1);
    escape_into(out, n, (const unsigned char *)s);
    out[n] = '\0';
    return out;
}

char *text_escape_buf(char *buf, size_t len, const char *s)
{
    size_t n = escape_into(buf, len - 1, (const unsigned char *)s);
    buf[n] = '\0';
    return buf;
}

void text_escape_put(FILE *out, const char *s)
{
    if (text_escape_clean(s)) {
        fputs(s, out);
        return;
    }
    char *e = text_escape_dup(s);
    fputs(e, out);
    free(e);
}
