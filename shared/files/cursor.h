/* A bounds-checked reader over bytes that came from outside (ELF sections,
 * DWARF, wire frames).  Reading past the end never touches memory: it sets
 * the sticky error flag and yields zero, so a parser can read a whole record
 * and check cursor_ok() once.  Byte order and address size follow the file,
 * not the host. */
#ifndef MT_DWARF_CURSOR_H
#define MT_DWARF_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cursor {
    const uint8_t *base;   /* start of the whole buffer (for offsets) */
    size_t size;           /* bytes in the whole buffer */
    size_t pos;            /* next byte to read */
    size_t end;            /* reads stop here (<= size); a sub-range limit */
    bool big_endian;
    bool error;
};

static inline void cursor_init(struct cursor *c, const void *data, size_t size, bool big_endian)
{
    c->base = data;
    c->size = size;
    c->pos = 0;
    c->end = size;
    c->big_endian = big_endian;
    c->error = false;
}

static inline bool cursor_ok(const struct cursor *c) { return !c->error; }
static inline size_t cursor_left(const struct cursor *c) { return c->pos < c->end ? c->end - c->pos : 0; }
static inline bool cursor_at_end(const struct cursor *c) { return c->pos >= c->end; }
static inline const uint8_t *cursor_ptr(const struct cursor *c) { return c->base + c->pos; }

/* Moves to an absolute offset within [0, end]; an offset beyond fails. */
bool cursor_seek(struct cursor *c, size_t pos);
/* Skips n bytes; fails (and stays at end) when fewer are left. */
bool cursor_skip(struct cursor *c, uint64_t n);
/* Limits reads to the next n bytes (a record of known length).  Returns the
 * previous end for cursor_restore_end, or fails when n is more than is left. */
bool cursor_limit(struct cursor *c, uint64_t n, size_t *saved_end);
static inline void cursor_restore_end(struct cursor *c, size_t saved_end) { c->end = saved_end; }

uint8_t cursor_u8(struct cursor *c);
uint16_t cursor_u16(struct cursor *c);
uint32_t cursor_u24(struct cursor *c);
uint32_t cursor_u32(struct cursor *c);
uint64_t cursor_u64(struct cursor *c);
/* An unsigned value of 1, 2, 4 or 8 bytes (address and offset sizes). */
uint64_t cursor_uint(struct cursor *c, unsigned size);
int64_t cursor_sint(struct cursor *c, unsigned size);
uint64_t cursor_uleb128(struct cursor *c);
int64_t cursor_sleb128(struct cursor *c);
/* A NUL-terminated string inside the buffer; NULL (and error) when no NUL
 * comes before end. */
const char *cursor_cstr(struct cursor *c);
/* Copies n bytes out; fails without copying when fewer are left. */
bool cursor_bytes(struct cursor *c, void *out, size_t n);

/* DWARF initial length: 32-bit, or 0xffffffff then 64-bit.  Sets *is64. */
uint64_t cursor_initial_length(struct cursor *c, bool *is64);

#endif
