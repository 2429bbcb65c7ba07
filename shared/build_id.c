#include "shared/build_id.h"

#include <stdio.h>

size_t build_id_hex(char *out, size_t outlen, const uint8_t *id, size_t len)
{
    static const char digits[] = "0123456789abcdef";
    size_t n = 0;
    if (outlen == 0)
        return 0;
    for (size_t i = 0; i < len && n + 2 < outlen; i++) {
        out[n++] = digits[id[i] >> 4];
        out[n++] = digits[id[i] & 0xf];
    }
    out[n] = 0;
    return n;
}

size_t build_id_link_path(char *out, size_t outlen, const uint8_t *id, size_t len,
                          const char *suffix)
{
    char rest[2 * 64 + 1];
    if (len > 65)
        len = 65;
    build_id_hex(rest, sizeof(rest), id + 1, len - 1);
    int n = snprintf(out, outlen, "/usr/lib/debug/.build-id/%02x/%s%s", id[0], rest, suffix);
    return n < 0 ? outlen : (size_t)n;
}
