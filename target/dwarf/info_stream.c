#include "target/dwarf/info_stream.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "shared/xalloc.h"
#include "target/files/cursor.h"

/* Compressed input read at a time: small, the unit buffer is the big one. */
#define CHUNK 8192

struct info_stream {
    struct elf_file *f;
    bool compressed;
    bool failed;
    bool done;
    uint64_t file_pos;        /* next file byte to read (raw or compressed) */
    uint64_t file_end;
    uint64_t size;            /* uncompressed section size */
    uint64_t pos;             /* section offset of the next unit */
    z_stream z;
    bool z_live;
    uint8_t *in;              /* compressed input chunk */
    uint8_t *unit;            /* the current unit */
    size_t unit_cap;
};

/* The header in front of SHF_COMPRESSED data: type and uncompressed size. */
static bool read_chdr(struct info_stream *s, const struct elf_section *sec)
{
    bool is64 = elf_file_class(s->f) == 64;
    size_t hdr = is64 ? 24 : 12;
    uint8_t buf[24];
    if (sec->size < hdr || elf_file_read(s->f, sec->offset, buf, hdr) != 0)
        return false;
    struct cursor c;
    cursor_init(&c, buf, hdr, elf_file_big_endian(s->f));
    uint32_t type = cursor_u32(&c);
    if (is64)
        cursor_u32(&c);
    s->size = is64 ? cursor_u64(&c) : cursor_u32(&c);
    s->file_pos = sec->offset + hdr;
    return type == ELFCOMPRESS_ZLIB;
}

/* Legacy .zdebug: "ZLIB" and the size as 8 big-endian bytes. */
static bool read_zdebug_header(struct info_stream *s, const struct elf_section *sec)
{
    uint8_t buf[12];
    if (sec->size < 12 || elf_file_read(s->f, sec->offset, buf, 12) != 0 || memcmp(buf, "ZLIB", 4) != 0)
        return false;
    s->size = 0;
    for (int i = 4; i < 12; i++)
        s->size = s->size << 8 | buf[i];
    s->file_pos = sec->offset + 12;
    return true;
}

struct info_stream *info_stream_open(struct elf_file *f)
{
    const struct elf_section *sec = elf_file_find_section(f, ".debug_info");
    if (!sec)
        return NULL;
    struct info_stream *s = xcalloc(1, sizeof(*s));
    s->f = f;
    s->file_end = sec->offset + sec->size;
    bool ok = true;
    if (sec->flags & SHF_COMPRESSED) {
        s->compressed = true;
        ok = read_chdr(s, sec);
    } else if (strncmp(sec->name, ".zdebug", 7) == 0) {
        s->compressed = true;
        ok = read_zdebug_header(s, sec);
    } else {
        s->size = sec->size;
        s->file_pos = sec->offset;
    }
    if (ok && s->compressed) {
        s->in = xmalloc(CHUNK);
        ok = inflateInit(&s->z) == Z_OK;
        s->z_live = ok;
    }
    if (!ok) {
        info_stream_close(s);
        return NULL;
    }
    return s;
}

void info_stream_close(struct info_stream *s)
{
    if (!s)
        return;
    if (s->z_live)
        inflateEnd(&s->z);
    free(s->in);
    free(s->unit);
    free(s);
}

bool info_stream_failed(const struct info_stream *s) { return s->failed; }

/* Reads the next n bytes of the section into out. */
static bool read_bytes(struct info_stream *s, uint8_t *out, size_t n)
{
    if (!s->compressed) {
        if (n > s->file_end - s->file_pos || elf_file_read(s->f, s->file_pos, out, n) != 0)
            return false;
        s->file_pos += n;
        return true;
    }
    s->z.next_out = out;
    s->z.avail_out = 0;
    size_t produced = 0;
    while (produced < n) {
        if (s->z.avail_in == 0) {
            uint64_t left = s->file_end - s->file_pos;
            size_t take = left < CHUNK ? (size_t)left : CHUNK;
            if (take == 0 || elf_file_read(s->f, s->file_pos, s->in, take) != 0)
                return false;
            s->file_pos += take;
            s->z.next_in = s->in;
            s->z.avail_in = (uInt)take;
        }
        size_t want = n - produced;
        s->z.next_out = out + produced;
        s->z.avail_out = want > UINT32_MAX ? UINT32_MAX : (uInt)want;
        uInt before = s->z.avail_out;
        int rc = inflate(&s->z, Z_NO_FLUSH);
        produced += before - s->z.avail_out;
        if (rc == Z_STREAM_END && produced < n)
            return false;
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
            return false;
        if (rc == Z_BUF_ERROR && s->z.avail_in != 0)
            return false;
    }
    return true;
}

static bool reserve(struct info_stream *s, size_t n)
{
    if (n > INFO_STREAM_MAX_UNIT)
        return false;
    if (n > s->unit_cap) {
        s->unit_cap = n < 4096 ? 4096 : n;
        free(s->unit);
        s->unit = xmalloc(s->unit_cap);
    }
    return true;
}

bool info_stream_next(struct info_stream *s, const uint8_t **data, size_t *size, uint64_t *offset)
{
    if (s->done || s->failed)
        return false;
    if (s->pos >= s->size) {
        s->done = true;
        return false;
    }
    uint8_t head[12];
    bool big = elf_file_big_endian(s->f);
    if (s->size - s->pos < 4 || !read_bytes(s, head, 4)) {
        s->failed = true;
        return false;
    }
    struct cursor c;
    cursor_init(&c, head, 4, big);
    uint64_t length = cursor_u32(&c);
    size_t head_len = 4;
    if (length == 0xffffffffu) {
        if (s->size - s->pos < 12 || !read_bytes(s, head + 4, 8)) {
            s->failed = true;
            return false;
        }
        cursor_init(&c, head + 4, 8, big);
        length = cursor_u64(&c);
        head_len = 12;
    }
    if (length > s->size - s->pos - head_len || !reserve(s, head_len + (size_t)length)) {
        s->failed = true;
        return false;
    }
    memcpy(s->unit, head, head_len);
    if (!read_bytes(s, s->unit + head_len, (size_t)length)) {
        s->failed = true;
        return false;
    }
    *data = s->unit;
    *size = head_len + (size_t)length;
    *offset = s->pos;
    s->pos += *size;
    return true;
}
