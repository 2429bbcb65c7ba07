#include "target/dwarf/info_lazy.h"

#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"
#include "target/elf/elf_section_map.h"

/* Units indexed at once: a stack's frames fall in a few units, and a
 * lookup whose address more units cover than this answers from the first
 * ones only. */
#define LAZY_CACHE_UNITS 4
/* Two ranges of a unit this close are one span (the gap is alignment, or
 * another unit's code, which then is looked at too). */
#define SPAN_GAP 1024
/* .debug_info resident beyond the unit being indexed. */
#define INFO_BUDGET (16u * 1024)
/* Calls returning to one address that are weighed (more: ambiguous). */
#define CALLS_MAX 16

struct unit_ref {
    uint64_t offset, size;
};

/* Where a unit's code is: [lo, lo + size). */
struct span {
    uint64_t lo;
    uint32_t size, unit;
};

struct jump {
    uint64_t return_pc;
    const char *caller, *target;
    uint32_t seq;
};

/* Strings that never move: blocks chained, a hash of pointers to dedupe. */
struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    char data[];
};

struct cached {
    struct inline_index *idx;
    uint32_t unit;
    uint64_t used;                /* clock of the last use, 0 = empty */
};

struct lazy_index {
    struct elf_file *f;
    struct dwarf_sections secs;
    struct section_map *info;     /* opened at the first unit indexed again */
    struct unit_ref *units;
    size_t unit_count, unit_cap;
    struct span *spans;
    size_t span_count, span_cap;
    uint64_t span_max;            /* the largest size */
    uint64_t *code;               /* hashes of names with code, sorted */
    size_t code_count, code_cap;
    struct jump *jumps;
    size_t jump_count, jump_cap;
    struct arena_block *blocks;
    const char **strings;         /* hash set over the arena's strings */
    size_t string_count, string_cap, arena_bytes;
    struct cached cache[LAZY_CACHE_UNITS];
    uint64_t clock;
};

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

/* ---- persistent strings --------------------------------------------- */

static void strings_rehash(struct lazy_index *lz, size_t cap)
{
    const char **old = lz->strings;
    size_t old_cap = lz->string_cap;
    lz->strings = xcalloc(cap, sizeof(*lz->strings));
    lz->string_cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
        if (!old[i])
            continue;
        size_t j = hash_name(old[i]) & (cap - 1);
        while (lz->strings[j])
            j = (j + 1) & (cap - 1);
        lz->strings[j] = old[i];
    }
    free(old);
}

/* s copied into the arena (once); the copy lives as long as lz. */
static const char *persist(struct lazy_index *lz, const char *s)
{
    if (!s)
        return NULL;
    if (lz->string_cap == 0)
        strings_rehash(lz, 64);
    size_t j = hash_name(s) & (lz->string_cap - 1);
    for (; lz->strings[j]; j = (j + 1) & (lz->string_cap - 1))
        if (strcmp(lz->strings[j], s) == 0)
            return lz->strings[j];
    size_t n = strlen(s) + 1;
    struct arena_block *b = lz->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 4096 - sizeof(*b) ? n : 4096 - sizeof(*b);
        b = xmalloc(sizeof(*b) + cap);
        b->next = lz->blocks;
        b->used = 0;
        b->cap = cap;
        lz->blocks = b;
        lz->arena_bytes += sizeof(*b) + cap;
    }
    char *copy = b->data + b->used;
    memcpy(copy, s, n);
    b->used += n;
    lz->strings[j] = copy;
    if (++lz->string_count * 2 > lz->string_cap)
        strings_rehash(lz, lz->string_cap * 2);
    return copy;
}

/* ---- the first pass ------------------------------------------------- */

struct lazy_index *lazy_index_new(struct elf_file *f, const struct dwarf_sections *secs)
{
    struct lazy_index *lz = xcalloc(1, sizeof(*lz));
    lz->f = f;
    lz->secs = *secs;
    return lz;
}

struct unit_pass {
    struct lazy_index *lz;
    uint32_t unit;
    bool open;
    uint64_t lo, hi;
};

static void push_span(struct unit_pass *p)
{
    struct lazy_index *lz = p->lz;
    if (lz->span_count == lz->span_cap) {
        lz->span_cap = lz->span_cap ? lz->span_cap + lz->span_cap / 2 : 256;
        lz->spans = xreallocarray(lz->spans, lz->span_cap, sizeof(*lz->spans));
    }
    uint64_t size = p->hi - p->lo;
    if (size > UINT32_MAX)
        size = UINT32_MAX; /* cannot happen: each range is below 4 GiB, gaps are small */
    if (size > lz->span_max)
        lz->span_max = size;
    lz->spans[lz->span_count++] = (struct span){ .lo = p->lo, .size = (uint32_t)size, .unit = p->unit };
}

/* Ranges come sorted by start. */
static void pass_range(void *ctx, uint64_t lo, uint64_t size, const char *name, bool inlined)
{
    struct unit_pass *p = ctx;
    struct lazy_index *lz = p->lz;
    if (!inlined) {
        if (lz->code_count == lz->code_cap) {
            lz->code_cap = lz->code_cap ? lz->code_cap + lz->code_cap / 2 : 1024;
            lz->code = xreallocarray(lz->code, lz->code_cap, sizeof(*lz->code));
        }
        lz->code[lz->code_count++] = hash_name(name);
    }
    uint64_t hi = lo + size;
    if (p->open && lo <= p->hi + SPAN_GAP && lo >= p->lo) {
        if (hi > p->hi)
            p->hi = hi;
        return;
    }
    if (p->open)
        push_span(p);
    p->open = true;
    p->lo = lo;
    p->hi = hi;
}

void lazy_index_add_unit(struct lazy_index *lz, const struct dwarf_sections *unit, uint64_t offset)
{
    struct inline_index *u = inline_index_new();
    inline_index_add_unit(u, unit, 0, offset);
    inline_index_finish(u);
    if (inline_index_range_count(u) && lz->unit_count < UINT32_MAX) {
        if (lz->unit_count == lz->unit_cap) {
            lz->unit_cap = lz->unit_cap ? lz->unit_cap + lz->unit_cap / 2 : 256;
            lz->units = xreallocarray(lz->units, lz->unit_cap, sizeof(*lz->units));
        }
        struct unit_pass p = { .lz = lz, .unit = (uint32_t)lz->unit_count };
        lz->units[lz->unit_count++] = (struct unit_ref){ offset, unit->info.size };
        inline_index_each_range(u, pass_range, &p);
        if (p.open)
            push_span(&p);
    }
    for (size_t i = 0; i < inline_index_jump_count(u); i++) {
        const char *caller, *target;
        uint64_t return_pc;
        inline_index_jump(u, i, &caller, &target, &return_pc);
        if (!target || lz->jump_count >= UINT32_MAX)
            continue;
        if (lz->jump_count == lz->jump_cap) {
            lz->jump_cap = lz->jump_cap ? lz->jump_cap + lz->jump_cap / 2 : 64;
            lz->jumps = xreallocarray(lz->jumps, lz->jump_cap, sizeof(*lz->jumps));
        }
        lz->jumps[lz->jump_count] = (struct jump){
            .return_pc = return_pc, .caller = persist(lz, caller), .target = persist(lz, target),
            .seq = (uint32_t)lz->jump_count,
        };
        lz->jump_count++;
    }
    inline_index_free(u);
}

static int cmp_span(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return (x->unit > y->unit) - (x->unit < y->unit);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* By caller, then as one index orders a caller's jumps: by address, then
 * in DIE order. */
static int cmp_jump(const void *a, const void *b)
{
    const struct jump *x = a, *y = b;
    int c = strcmp(x->caller, y->caller);
    if (c)
        return c;
    if (x->return_pc != y->return_pc)
        return x->return_pc < y->return_pc ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

void lazy_index_finish(struct lazy_index *lz)
{
    if (lz->span_count) {
        qsort(lz->spans, lz->span_count, sizeof(*lz->spans), cmp_span);
        lz->spans = xreallocarray(lz->spans, lz->span_count, sizeof(*lz->spans));
        lz->span_cap = lz->span_count;
    }
    if (lz->code_count) {
        qsort(lz->code, lz->code_count, sizeof(*lz->code), cmp_u64);
        size_t out = 1;
        for (size_t i = 1; i < lz->code_count; i++)
            if (lz->code[i] != lz->code[out - 1])
                lz->code[out++] = lz->code[i];
        lz->code_count = lz->code_cap = out;
        lz->code = xreallocarray(lz->code, out, sizeof(*lz->code));
    }
    if (lz->unit_count) {
        lz->units = xreallocarray(lz->units, lz->unit_count, sizeof(*lz->units));
        lz->unit_cap = lz->unit_count;
    }
    if (lz->jump_count) {
        qsort(lz->jumps, lz->jump_count, sizeof(*lz->jumps), cmp_jump);
        lz->jumps = xreallocarray(lz->jumps, lz->jump_count, sizeof(*lz->jumps));
        lz->jump_cap = lz->jump_count;
    }
}

void lazy_index_free(struct lazy_index *lz)
{
    if (!lz)
        return;
    for (size_t i = 0; i < LAZY_CACHE_UNITS; i++)
        inline_index_free(lz->cache[i].idx);
    section_map_close(lz->info);
    while (lz->blocks) {
        struct arena_block *next = lz->blocks->next;
        free(lz->blocks);
        lz->blocks = next;
    }
    free(lz->strings);
    free(lz->units);
    free(lz->spans);
    free(lz->code);
    free(lz->jumps);
    free(lz);
}

/* ---- units on demand ------------------------------------------------ */

/* The units whose spans cover address, added to out[*n] in ascending
 * order without repeats (at most LAZY_CACHE_UNITS). */
static void units_at(const struct lazy_index *lz, uint64_t address, uint32_t *out, size_t *n)
{
    size_t l = 0, u = lz->span_count;
    while (l < u) {
        size_t m = l + (u - l) / 2;
        if (lz->spans[m].lo <= address)
            l = m + 1;
        else
            u = m;
    }
    /* Spans starting more than the largest size below cannot cover it. */
    for (size_t i = l; i-- > 0 && address - lz->spans[i].lo < lz->span_max;) {
        if (address - lz->spans[i].lo >= lz->spans[i].size)
            continue;
        uint32_t unit = lz->spans[i].unit;
        size_t k = 0;
        while (k < *n && out[k] < unit)
            k++;
        if (k < *n && out[k] == unit)
            continue;
        if (*n == LAZY_CACHE_UNITS) {
            if (k == *n)
                continue;
            (*n)--; /* the last (highest) goes */
        }
        memmove(out + k + 1, out + k, (*n - k) * sizeof(*out));
        out[k] = unit;
        (*n)++;
    }
}

/* The index of unit, built if not cached; NULL when it cannot be read. */
static const struct inline_index *unit_index(struct lazy_index *lz, uint32_t unit)
{
    struct cached *slot = &lz->cache[0];
    for (size_t i = 0; i < LAZY_CACHE_UNITS; i++) {
        struct cached *c = &lz->cache[i];
        if (c->used && c->unit == unit) {
            c->used = ++lz->clock;
            return c->idx;
        }
        if (c->used < slot->used)
            slot = c;
    }
    if (!lz->info) {
        const struct elf_section *sec = elf_file_find_section(lz->f, ".debug_info");
        lz->info = sec ? section_map_open(lz->f, sec, INFO_BUDGET, NULL) : NULL;
        if (!lz->info)
            return NULL;
    }
    const struct unit_ref *r = &lz->units[unit];
    if (r->offset > section_map_size(lz->info) || r->size > section_map_size(lz->info) - r->offset ||
        !section_map_ensure(lz->info, r->offset, r->size))
        return NULL;
    struct dwarf_sections s = lz->secs;
    s.info = (struct dwarf_span){ section_map_data(lz->info) + r->offset, (size_t)r->size, NULL };
    struct inline_index *idx = inline_index_new();
    inline_index_keep_calls(idx);
    inline_index_add_unit(idx, &s, 0, r->offset);
    inline_index_finish(idx);
    /* Streams are freed until the next unit (about 40 KiB each). */
    section_map_park(lz->info);
    const struct dwarf_span *used[] = { &s.abbrev, &s.str, &s.str_offsets, &s.addr, &s.ranges, &s.rnglists };
    for (size_t i = 0; i < sizeof(used) / sizeof(*used); i++)
        if (used[i]->map)
            section_map_park(used[i]->map);
    inline_index_free(slot->idx);
    *slot = (struct cached){ .idx = idx, .unit = unit, .used = ++lz->clock };
    return idx;
}

/* The ranges of every unit covering address, in the order one index of
 * all units would weigh them: nearest start first, then smaller, then
 * later in DIE order (later unit, later place). */
static size_t gather(struct lazy_index *lz, uint64_t address, uint64_t lowest, struct inline_hit *hits)
{
    uint32_t units[LAZY_CACHE_UNITS], of[INLINE_HITS_MAX];
    size_t nu = 0, n = 0;
    units_at(lz, address, units, &nu);
    for (size_t k = 0; k < nu; k++) {
        const struct inline_index *idx = unit_index(lz, units[k]);
        if (!idx)
            continue;
        size_t got = inline_index_covering(idx, address, lowest, hits + n, INLINE_HITS_MAX - n);
        for (size_t i = n; i < n + got; i++)
            of[i] = units[k];
        n += got;
    }
    if (nu < 2)
        return n;
    for (size_t i = 1; i < n; i++) {
        struct inline_hit h = hits[i];
        uint32_t hu = of[i];
        size_t j = i;
        for (; j > 0; j--) {
            const struct inline_hit *p = &hits[j - 1];
            bool before = h.lo != p->lo ? h.lo > p->lo
                        : h.size != p->size ? h.size < p->size
                        : hu != of[j - 1] ? hu > of[j - 1]
                        : h.pos > p->pos;
            if (!before)
                break;
            hits[j] = hits[j - 1];
            of[j] = of[j - 1];
        }
        hits[j] = h;
        of[j] = hu;
    }
    return n;
}

const char *lazy_index_lookup(struct lazy_index *lz, uint64_t address, uint64_t lowest)
{
    struct inline_hit hits[INLINE_HITS_MAX];
    return persist(lz, inline_hits_lookup(hits, gather(lz, address, lowest, hits)));
}

size_t lazy_index_chain(struct lazy_index *lz, uint64_t address, uint64_t lowest, struct inline_frame *out,
                        size_t max)
{
    struct inline_hit hits[INLINE_HITS_MAX];
    size_t n = inline_hits_chain(hits, gather(lz, address, lowest, hits), out, max);
    for (size_t i = 0; i < n; i++)
        out[i].name = persist(lz, out[i].name);
    return n;
}

/* First jump made by caller, or jump_count. */
static size_t first_jump(const struct lazy_index *lz, const char *caller)
{
    size_t l = 0, u = lz->jump_count;
    while (l < u) {
        size_t m = l + (u - l) / 2;
        if (strcmp(lz->jumps[m].caller, caller) < 0)
            l = m + 1;
        else
            u = m;
    }
    return l < lz->jump_count && strcmp(lz->jumps[l].caller, caller) == 0 ? l : lz->jump_count;
}

static bool has_code(const struct lazy_index *lz, const char *name)
{
    uint64_t h = hash_name(name);
    size_t l = 0, u = lz->code_count;
    while (l < u) {
        size_t m = l + (u - l) / 2;
        if (lz->code[m] < h)
            l = m + 1;
        else
            u = m;
    }
    return l < lz->code_count && lz->code[l] == h;
}

/* A call a tail-call search can use (as the whole-object index keeps
 * them): of a function that makes jumps, or has no code here. */
static bool useful_call(const struct lazy_index *lz, const char *target)
{
    return first_jump(lz, target) < lz->jump_count || !has_code(lz, target);
}

const char *lazy_index_call_target(struct lazy_index *lz, uint64_t return_pc)
{
    uint32_t units[LAZY_CACHE_UNITS];
    size_t nu = 0, found = 0;
    units_at(lz, return_pc, units, &nu);
    if (return_pc)
        units_at(lz, return_pc - 1, units, &nu); /* a call that ends its function */
    const char *answer = NULL;
    for (size_t k = 0; k < nu; k++) {
        const struct inline_index *idx = unit_index(lz, units[k]);
        const char *targets[CALLS_MAX];
        size_t n = idx ? inline_index_calls_at(idx, return_pc, targets, CALLS_MAX) : 0;
        if (n > CALLS_MAX)
            return NULL;
        for (size_t i = 0; i < n; i++) {
            if (!useful_call(lz, targets[i]))
                continue;
            found++;
            answer = targets[i];
        }
    }
    return found == 1 ? persist(lz, answer) : NULL;
}

size_t lazy_index_tail_calls(const struct lazy_index *lz, const char *caller, struct inline_tail_call *out,
                             size_t max)
{
    size_t n = 0;
    for (size_t i = first_jump(lz, caller); i < lz->jump_count && n < max; i++) {
        if (strcmp(lz->jumps[i].caller, caller) != 0)
            break;
        out[n++] = (struct inline_tail_call){ .target = lz->jumps[i].target, .return_pc = lz->jumps[i].return_pc };
    }
    return n;
}

size_t lazy_index_memory(const struct lazy_index *lz)
{
    size_t m = sizeof(*lz) + lz->unit_cap * sizeof(*lz->units) + lz->span_cap * sizeof(*lz->spans) +
               lz->code_cap * sizeof(*lz->code) + lz->jump_cap * sizeof(*lz->jumps) + lz->arena_bytes +
               lz->string_cap * sizeof(*lz->strings);
    for (size_t i = 0; i < LAZY_CACHE_UNITS; i++)
        if (lz->cache[i].idx)
            m += inline_index_memory(lz->cache[i].idx);
    if (lz->info)
        m += section_map_memory(lz->info);
    return m;
}
