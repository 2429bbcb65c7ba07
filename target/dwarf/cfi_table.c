/* The CFI table of one module: FDE lookup plus a per-pc row cache, because
 * the tracer asks about the same call sites millions of times. */
#include "target/dwarf/cfi_internal.h"

#include <stdlib.h>
#include <string.h>

/* Direct-mapped: a collision replaces the older row.  A row is ~350 bytes,
 * so the cache starts at 32 rows (11 KiB) and grows four times over each
 * time it is half full of distinct pcs, up to 1024 rows (~350 KiB) for a
 * module with that many hot call sites: most modules are unwound through
 * at a handful of pcs, and the tracer's memory is counted on small boards. */
#define CFI_CACHE_MIN_BITS 5
#define CFI_CACHE_MAX_BITS 10

enum { SLOT_EMPTY = 0, SLOT_ROW, SLOT_NONE };

struct cache_slot {
    uint64_t pc;
    uint8_t state;
    struct cfi_row row;
};

struct cfi_table {
    struct cfi_env env;
    struct cfi_sources src;
    struct cfi_section eh, debug;
    struct cfi_hdr hdr;
    struct cfi_index eh_index, debug_index;
    bool eh_indexed, debug_indexed;
    struct cache_slot *cache;
    unsigned cache_bits;
    unsigned cache_filled;     /* slots holding a pc */
    struct cfi_row scratch;    /* the answer when the cache could not be allocated */
    struct cfi_stats stats;
};

struct cfi_table *cfi_table_new(const struct cfi_sources *src)
{
    struct cfi_table *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->src = *src;
    t->env.big_endian = src->big_endian;
    t->env.addr_size = src->addr_size == 4 ? 4 : 8;
    t->env.text_vaddr = src->text_vaddr;
    t->env.data_vaddr = src->data_vaddr;
    t->eh = (struct cfi_section){ src->eh_frame, src->eh_frame ? src->eh_frame_size : 0,
                                  src->eh_frame_vaddr, true };
    t->debug = (struct cfi_section){ src->debug_frame,
                                     src->debug_frame ? src->debug_frame_size : 0, 0, false };
    cfi_hdr_init(&t->hdr, &t->env, src);
    t->stats.used_eh_frame_hdr = t->hdr.usable;
    return t;
}

void cfi_table_free(struct cfi_table *t)
{
    if (!t)
        return;
    cfi_index_free(&t->eh_index);
    cfi_index_free(&t->debug_index);
    free(t->cache);
    free(t);
}

void cfi_table_stats(const struct cfi_table *t, struct cfi_stats *out)
{
    *out = t->stats;
}

static void ensure_index(struct cfi_table *t, struct cfi_index *ix, bool *done,
                         const struct cfi_section *s, uint8_t section)
{
    if (*done)
        return;
    *done = true;
    if (s->size == 0)
        return;
    cfi_index_add(ix, &t->env, s, section);
    cfi_index_sort(ix);
    t->stats.fdes_indexed += ix->count;
}

/* Parses the FDE at off in s and runs its program if it covers pc. */
static int row_from_fde(struct cfi_table *t, const struct cfi_section *s, size_t off,
                        uint64_t pc, struct cfi_row *out)
{
    struct cfi_cie cie;
    struct cfi_fde fde;
    if (cfi_parse_fde(&t->env, s, off, &cie, &fde) != 0)
        return -1;
    if (pc < fde.pc_begin || pc >= fde.pc_end)
        return -1;
    return cfi_run_program(&t->env, s, &cie, &fde, pc, out);
}

static int lookup_uncached(struct cfi_table *t, uint64_t pc, struct cfi_row *out)
{
    if (t->eh.size) {
        if (t->hdr.usable) {
            uint64_t fde_vaddr;
            if (cfi_hdr_find(&t->hdr, &t->env, pc, &fde_vaddr) &&
                row_from_fde(t, &t->eh, (size_t)(fde_vaddr - t->eh.vaddr), pc, out) == 0)
                return 0;
        } else {
            ensure_index(t, &t->eh_index, &t->eh_indexed, &t->eh, CFI_SECTION_EH);
            const struct cfi_fde_ref *r = cfi_index_find(&t->eh_index, pc);
            if (r && row_from_fde(t, &t->eh, r->off, pc, out) == 0)
                return 0;
        }
    }
    if (t->debug.size) {
        ensure_index(t, &t->debug_index, &t->debug_indexed, &t->debug, CFI_SECTION_DEBUG);
        const struct cfi_fde_ref *r = cfi_index_find(&t->debug_index, pc);
        if (r && row_from_fde(t, &t->debug, r->off, pc, out) == 0)
            return 0;
    }
    return -1;
}

static inline uint32_t cache_hash(uint64_t pc, unsigned bits)
{
    return (uint32_t)((pc * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

/* A bigger cache with the rows of the old one rehashed (a collision in the
 * new one keeps either row: it is only a cache).  On failure the old one
 * stays. */
static void cache_grow(struct cfi_table *t)
{
    unsigned bits = t->cache_bits ? t->cache_bits + 2 : CFI_CACHE_MIN_BITS;
    if (bits > CFI_CACHE_MAX_BITS)
        bits = CFI_CACHE_MAX_BITS;
    struct cache_slot *cache = calloc((size_t)1 << bits, sizeof(*cache));
    if (!cache)
        return;
    unsigned filled = 0;
    for (size_t i = 0; t->cache && i < ((size_t)1 << t->cache_bits); i++) {
        if (t->cache[i].state == SLOT_EMPTY)
            continue;
        struct cache_slot *to = &cache[cache_hash(t->cache[i].pc, bits)];
        filled += to->state == SLOT_EMPTY;
        *to = t->cache[i];
    }
    free(t->cache);
    t->cache = cache;
    t->cache_bits = bits;
    t->cache_filled = filled;
}

const struct cfi_row *cfi_lookup(struct cfi_table *t, uint64_t link_pc)
{
    t->stats.lookups++;
    if (!t->cache ||
        (t->cache_bits < CFI_CACHE_MAX_BITS && t->cache_filled * 2 > (1u << t->cache_bits)))
        cache_grow(t);
    if (!t->cache)
        return lookup_uncached(t, link_pc, &t->scratch) == 0 ? &t->scratch : NULL;
    struct cache_slot *slot = &t->cache[cache_hash(link_pc, t->cache_bits)];
    if (slot->state != SLOT_EMPTY && slot->pc == link_pc) {
        t->stats.cache_hits++;
        return slot->state == SLOT_ROW ? &slot->row : NULL;
    }
    t->cache_filled += slot->state == SLOT_EMPTY;
    int rc = lookup_uncached(t, link_pc, &slot->row);
    slot->pc = link_pc;
    slot->state = rc == 0 ? SLOT_ROW : SLOT_NONE;
    return rc == 0 ? &slot->row : NULL;
}

int cfi_find_row(struct cfi_table *t, uint64_t link_pc, struct cfi_row *out)
{
    const struct cfi_row *row = cfi_lookup(t, link_pc);
    if (!row)
        return -1;
    *out = *row;
    return 0;
}
