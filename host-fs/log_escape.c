#include "host-fs/log_escape.h"

#include <stdio.h>
#include <string.h>

char *log_escape(char *dst, size_t len, const char *src)
{
    if (len > LOG_ESCAPE_MAX + 1)
        len = LOG_ESCAPE_MAX + 1;
    size_t room = len - 4, n = 0;      /* "..." and the NUL stay free */
    const unsigned char *p = (const unsigned char *)src;
    for (; *p; p++) {
        char esc[5];
        size_t k;
        if (*p < 0x20 || *p >= 0x7f || *p == '\\') {
            snprintf(esc, sizeof(esc), "\\x%02x", *p);
            k = 4;
        } else {
            esc[0] = (char)*p;
            k = 1;
        }
        if (n + k > room)
            break;
        memcpy(dst + n, esc, k);
        n += k;
    }
    if (*p) {
        memcpy(dst + n, "...", 3);
        n += 3;
    }
    dst[n] = '\0';
    return dst;
}
