#include "target/report/report_gzip.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>

#include "shared/xalloc.h"

struct gz {
    FILE *under;
    z_stream zs;
    bool failed;
    unsigned char buf[16384];
};

/* Runs deflate over the pending input with flush, writing all it makes. */
static void pump(struct gz *g, int flush)
{
    int rc;
    do {
        g->zs.next_out = g->buf;
        g->zs.avail_out = sizeof(g->buf);
        rc = deflate(&g->zs, flush);
        if (rc == Z_STREAM_ERROR) {
            g->failed = true;
            return;
        }
        size_t have = sizeof(g->buf) - g->zs.avail_out;
        if (have && fwrite(g->buf, 1, have, g->under) != have) {
            g->failed = true;
            return;
        }
    } while (g->zs.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
}

static ssize_t gz_write(void *cookie, const char *data, size_t len)
{
    struct gz *g = cookie;
    size_t left = len;
    while (left && !g->failed) {
        /* avail_in is an unsigned int. */
        size_t chunk = left > (1u << 30) ? (1u << 30) : left;
        g->zs.next_in = (Bytef *)(uintptr_t)data;
        g->zs.avail_in = (uInt)chunk;
        pump(g, Z_NO_FLUSH);
        data += chunk;
        left -= chunk;
    }
    return g->failed ? -1 : (ssize_t)len;
}

static int gz_close(void *cookie)
{
    struct gz *g = cookie;
    if (!g->failed) {
        g->zs.next_in = NULL;
        g->zs.avail_in = 0;
        pump(g, Z_FINISH);
    }
    deflateEnd(&g->zs);
    bool failed = g->failed || fflush(g->under) != 0 || ferror(g->under);
    free(g);
    return failed ? -1 : 0;
}

FILE *report_gzip_open(FILE *under)
{
    struct gz *g = xcalloc(1, sizeof(*g));
    g->under = under;
    /* 15 + 16: a gzip header and trailer around the deflate stream. */
    if (deflateInit2(&g->zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(g);
        return NULL;
    }
    cookie_io_functions_t io = { .write = gz_write, .close = gz_close };
    FILE *z = fopencookie(g, "w", io);
    if (!z) {
        deflateEnd(&g->zs);
        free(g);
    }
    return z;
}

int report_gzip_close(FILE *z)
{
    return fclose(z) == 0 ? 0 : -1;
}
