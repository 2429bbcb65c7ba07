/* The .debug_aranges reader of info_aranges.h (DWARF 2-5: the format has
 * been version 2 throughout). */
#include "target/dwarf/info_aranges.h"

#include <stdlib.h>
#include <string.h>

#include "shared/files/cursor.h"
#include "shared/xalloc.h"

/* More tuples than this in one section is not real debug info (libc has
 * about 5,000): refuse rather than grow without end. */
#define ARANGES_MAX (1u << 22)

static void push(struct aranges *a, size_t *cap, uint64_t lo, uint64_t hi, uint64_t cu)
{
    if (a->count == *cap) {
        *cap = *cap ? *cap * 2 : 256;
        a->ranges = xreallocarray(a->ranges, *cap, sizeof(*a->ranges));
    }
    a->ranges[a->count++] = (struct arange){ lo, hi, cu };
}

/* One set (header at c's position, limited to the set's length): its
 * tuples are added only when the whole set reads cleanly. */
static void parse_set(struct cursor *c, bool is64, struct aranges *a, size_t *cap, size_t set_start)
{
    uint16_t version = cursor_u16(c);
    uint64_t cu = is64 ? cursor_u64(c) : cursor_u32(c);
    uint8_t addr_size = cursor_u8(c);
    uint8_t seg_size = cursor_u8(c);
    if (!cursor_ok(c) || version != 2 || (addr_size != 4 && addr_size != 8) || seg_size != 0)
        return;
    /* Tuples start at a multiple of their own size from the set's start. */
    size_t tuple = 2u * addr_size;
    size_t into = c->pos - set_start;
    if (into % tuple && !cursor_skip(c, tuple - into % tuple))
        return;
    size_t first = a->count;
    while (cursor_left(c) >= tuple) {
        uint64_t lo = cursor_uint(c, addr_size);
        uint64_t len = cursor_uint(c, addr_size);
        if (!cursor_ok(c))
            break;
        if (lo == 0 && len == 0)
            return; /* the terminator: the set is complete */
        if (a->count >= ARANGES_MAX) {
            a->count = first;
            return;
        }
        if (lo != 0 && len != 0 && len <= UINT64_MAX - lo)
            push(a, cap, lo, lo + len, cu);
    }
    /* No terminator within the set's length: keep what was read (gas and
     * gcc always terminate; a truncated set still says true things). */
}

static int cmp_range(const void *x, const void *y)
{
    const struct arange *a = x, *b = y;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi)
        return a->hi < b->hi ? -1 : 1;
    return (a->cu > b->cu) - (a->cu < b->cu);
}

/* Comparisons spent finding the shared spans: a real object needs a few
 * per range (libc i386: at most 35 ranges overlap one); a table that
 * needs more is refused the lookup by unit. */
#define OVERLAP_STEPS_PER_RANGE 64u

/* Every point covered by ranges of two units lies in the intersection of
 * one such pair, and with the ranges sorted by lo the ranges meeting
 * range i are the ones right after it that start before its end: those
 * intersections, sorted and merged, are the shared spans. */
static void find_shared(struct aranges *a)
{
    size_t budget = a->count * OVERLAP_STEPS_PER_RANGE, cap = 0;
    for (size_t i = 0; i < a->count; i++) {
        const struct arange *r = &a->ranges[i];
        for (size_t j = i + 1; j < a->count && a->ranges[j].lo < r->hi; j++) {
            if (budget-- == 0) {
                a->overlap = true;
                free(a->shared);
                a->shared = NULL;
                a->shared_count = 0;
                return;
            }
            const struct arange *q = &a->ranges[j];
            if (q->cu == r->cu)
                continue;
            if (a->shared_count == cap) {
                cap = cap ? cap * 2 : 16;
                a->shared = xreallocarray(a->shared, cap, sizeof(*a->shared));
            }
            a->shared[a->shared_count++] = (struct arange){ q->lo, q->hi < r->hi ? q->hi : r->hi, 0 };
        }
    }
    if (!a->shared_count)
        return;
    qsort(a->shared, a->shared_count, sizeof(*a->shared), cmp_range);
    size_t out = 0;
    for (size_t i = 1; i < a->shared_count; i++) {
        struct arange *last = &a->shared[out];
        if (a->shared[i].lo <= last->hi) {
            if (a->shared[i].hi > last->hi)
                last->hi = a->shared[i].hi;
        } else {
            a->shared[++out] = a->shared[i];
        }
    }
    a->shared_count = out + 1;
}

/* How many of v (sorted by lo) start at or below address. */
static size_t starting_by(const struct arange *v, size_t n, uint64_t address)
{
    size_t l = 0, u = n;
    while (l < u) {
        size_t m = l + (u - l) / 2;
        if (v[m].lo <= address)
            l = m + 1;
        else
            u = m;
    }
    return l;
}

static bool in_shared(const struct aranges *a, uint64_t address)
{
    size_t l = starting_by(a->shared, a->shared_count, address);
    return l > 0 && address < a->shared[l - 1].hi;
}

bool aranges_parse(const struct dwarf_span *s, bool big_endian, struct aranges *out)
{
    memset(out, 0, sizeof(*out));
    if (!s->data || !s->size)
        return false;
    size_t cap = 0;
    struct cursor c;
    cursor_init(&c, s->data, s->size, big_endian);
    while (cursor_left(&c) >= 4) {
        size_t start = c.pos;
        bool is64;
        uint64_t length = cursor_initial_length(&c, &is64);
        size_t saved;
        if (!cursor_ok(&c) || length == 0 || !cursor_limit(&c, length, &saved))
            break; /* a length past the end: nothing after it can be found */
        size_t next = c.pos + (size_t)length;
        parse_set(&c, is64, out, &cap, start);
        cursor_restore_end(&c, saved);
        c.error = false;
        if (!cursor_seek(&c, next))
            break;
    }
    if (!out->count) {
        aranges_free(out);
        return false;
    }
    qsort(out->ranges, out->count, sizeof(*out->ranges), cmp_range);
    out->ranges = xreallocarray(out->ranges, out->count, sizeof(*out->ranges));
    find_shared(out);
    return true;
}

void aranges_free(struct aranges *a)
{
    free(a->ranges);
    free(a->shared);
    memset(a, 0, sizeof(*a));
}

bool aranges_find(const struct aranges *a, uint64_t address, uint64_t *cu)
{
    if (a->overlap || in_shared(a, address))
        return false;
    /* The last range starting at or below address; outside the shared
     * spans, the only unit that can cover it. */
    size_t l = starting_by(a->ranges, a->count, address);
    /* Ranges of one unit may nest or repeat: look back while they could
     * still reach address (they are few). */
    for (size_t i = l; i-- > 0;) {
        const struct arange *r = &a->ranges[i];
        if (address < r->hi) {
            *cu = r->cu;
            return true;
        }
        if (l - i > 64)
            break;
    }
    return false;
}

size_t aranges_memory(const struct aranges *a)
{
    return a->count * sizeof(*a->ranges) + a->shared_count * sizeof(*a->shared);
}
