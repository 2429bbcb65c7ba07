#include "shared/elf/elf_compress.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <zlib.h>

#include "shared/xalloc.h"

/* Compressed input is read in pieces of this size: enough to keep zlib busy,
 * small enough that a remote source never ships a whole section at once. */
#define INFLATE_CHUNK (64u * 1024)

int elf_inflate_range(struct byte_source *src, uint64_t off, uint64_t len,
                      size_t out_size, uint8_t **out)
{
    if (out_size > ELF_SECTION_MAX_BYTES || out_size > UINT_MAX)
        return -EFBIG;
    if (off > src->size || len > src->size - off)
        return -ERANGE;
    /* Deflate cannot expand more than ~1032:1; a header claiming more is
     * lying, and believing it would allocate for nothing. */
    if (out_size / 1032 > len + 64)
        return -EINVAL;

    uint8_t *dst = xmalloc(out_size);
    uint8_t *chunk = xmalloc(INFLATE_CHUNK);
    z_stream zs = {0};
    int rc = 0;
    if (inflateInit(&zs) != Z_OK) {
        rc = -ENOMEM;
        goto done_noend;
    }
    zs.next_out = dst;
    zs.avail_out = (uInt)out_size;

    uint64_t pos = off, end = off + len;
    int zr = Z_OK;
    while (zr != Z_STREAM_END) {
        if (zs.avail_in == 0) {
            if (pos >= end) {
                rc = -EINVAL; /* the stream wants more than the section holds */
                break;
            }
            size_t n = end - pos < INFLATE_CHUNK ? (size_t)(end - pos) : INFLATE_CHUNK;
            rc = byte_source_read(src, pos, chunk, n);
            if (rc < 0)
                break;
            pos += n;
            zs.next_in = chunk;
            zs.avail_in = (uInt)n;
        }
        zr = inflate(&zs, Z_NO_FLUSH);
        if (zr == Z_STREAM_END)
            break;
        if (zr != Z_OK) {
            /* Z_BUF_ERROR with no room left means the data is longer than
             * its header said: as corrupt as a bad checksum. */
            rc = -EINVAL;
            break;
        }
        if (zs.avail_out == 0 && zs.avail_in == 0 && pos >= end) {
            rc = -EINVAL;
            break;
        }
    }
    if (rc == 0 && zs.total_out != out_size)
        rc = -EINVAL;
    inflateEnd(&zs);
done_noend:
    free(chunk);
    if (rc < 0) {
        free(dst);
        return rc;
    }
    *out = dst;
    return 0;
}
