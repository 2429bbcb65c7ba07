#include "shared/files/cursor.h"

#include <string.h>

static bool cursor_take(struct cursor *c, size_t n)
{
    if (c->error || n > cursor_left(c)) {
        c->error = true;
        c->pos = c->end;
        return false;
    }
    return true;
}

bool cursor_seek(struct cursor *c, size_t pos)
{
    if (pos > c->end) {
        c->error = true;
        return false;
    }
    c->pos = pos;
    return true;
}

bool cursor_skip(struct cursor *c, uint64_t n)
{
    if (n > cursor_left(c)) {
        c->error = true;
        c->pos = c->end;
        return false;
    }
    c->pos += (size_t)n;
    return true;
}

bool cursor_limit(struct cursor *c, uint64_t n, size_t *saved_end)
{
    *saved_end = c->end;
    if (n > cursor_left(c)) {
        c->error = true;
        return false;
    }
    c->end = c->pos + (size_t)n;
    return true;
}

static uint64_t cursor_read_n(struct cursor *c, unsigned n)
{
    if (!cursor_take(c, n))
        return 0;
    const uint8_t *p = c->base + c->pos;
    uint64_t v = 0;
    if (c->big_endian) {
        for (unsigned i = 0; i < n; i++)
            v = (v << 8) | p[i];
    } else {
        for (unsigned i = n; i > 0; i--)
            v = (v << 8) | p[i - 1];
    }
    c->pos += n;
    return v;
}

uint8_t cursor_u8(struct cursor *c) { return (uint8_t)cursor_read_n(c, 1); }
uint16_t cursor_u16(struct cursor *c) { return (uint16_t)cursor_read_n(c, 2); }
uint32_t cursor_u24(struct cursor *c) { return (uint32_t)cursor_read_n(c, 3); }
uint32_t cursor_u32(struct cursor *c) { return (uint32_t)cursor_read_n(c, 4); }
uint64_t cursor_u64(struct cursor *c) { return cursor_read_n(c, 8); }

uint64_t cursor_uint(struct cursor *c, unsigned size)
{
    switch (size) {
    case 1: case 2: case 4: case 8:
        return cursor_read_n(c, size);
    default:
        c->error = true;
        return 0;
    }
}

int64_t cursor_sint(struct cursor *c, unsigned size)
{
    uint64_t v = cursor_uint(c, size);
    if (size < 8 && size > 0) {
        uint64_t sign = 1ull << (size * 8 - 1);
        v = (v ^ sign) - sign;
    }
    return (int64_t)v;
}

uint64_t cursor_uleb128(struct cursor *c)
{
    uint64_t v = 0;
    unsigned shift = 0;
    for (;;) {
        if (!cursor_take(c, 1))
            return 0;
        uint8_t b = c->base[c->pos++];
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80))
            return v;
    }
}

int64_t cursor_sleb128(struct cursor *c)
{
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t b;
    do {
        if (!cursor_take(c, 1))
            return 0;
        b = c->base[c->pos++];
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40))
        v |= ~0ull << shift;
    return (int64_t)v;
}

const char *cursor_cstr(struct cursor *c)
{
    if (c->error)
        return NULL;
    const uint8_t *start = c->base + c->pos;
    const uint8_t *nul = memchr(start, 0, cursor_left(c));
    if (!nul) {
        c->error = true;
        c->pos = c->end;
        return NULL;
    }
    c->pos += (size_t)(nul - start) + 1;
    return (const char *)start;
}

bool cursor_bytes(struct cursor *c, void *out, size_t n)
{
    if (!cursor_take(c, n))
        return false;
    memcpy(out, c->base + c->pos, n);
    c->pos += n;
    return true;
}

uint64_t cursor_initial_length(struct cursor *c, bool *is64)
{
    uint64_t len = cursor_u32(c);
    *is64 = false;
    if (len == 0xffffffffu) {
        *is64 = true;
        len = cursor_u64(c);
    } else if (len >= 0xfffffff0u) {
        c->error = true; /* reserved values */
        return 0;
    }
    return len;
}
