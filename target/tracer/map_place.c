/* The neutral places for the tracer's mappings (map_place.h): the
 * decisions, from facts read elsewhere (map_place_proc.c). */
#include "target/tracer/map_place.h"

#include <string.h>

#define PAGE 4096ull
/* Nothing of ours below this: a wild pointer near NULL must still fault. */
#define PLACE_FLOOR (16ull << 20)

static uint64_t page_down(uint64_t a) { return a & ~(PAGE - 1); }
static uint64_t page_up(uint64_t a) { return a > UINT64_MAX - (PAGE - 1) ? 0 : (a + PAGE - 1) & ~(PAGE - 1); }

static bool is_named(const struct map_entry *e, const char *name)
{
    return e->path && strcmp(e->path, name) == 0;
}

/* [lo, lo + size) overlaps no mapping, nor any mapping's guard page (the
 * kernel refuses a hint that touches a growing stack's gap anyway). */
static bool range_free(const struct proc_maps *m, uint64_t lo, uint64_t size)
{
    if (!size || lo > UINT64_MAX - size)
        return false;
    uint64_t hi = lo + size;
    for (size_t i = 0; i < m->count; i++) {
        const struct map_entry *e = &m->entries[i];
        uint64_t start = e->start, end = e->end;
        if (is_named(e, "[stack]"))
            start = start > PLACE_STACK_GUARD ? start - PLACE_STACK_GUARD : 0;
        if (lo < end && start < hi)
            return false;
    }
    return true;
}

/* The end of the run of mappings that starts at the interpreter's base:
 * its file's mappings and its .bss, contiguous.  Anything of the program's
 * placed right above it by a hint only makes the bound higher (safer). */
static uint64_t interp_end(const struct proc_maps *m, uint64_t base)
{
    const struct map_entry *first = proc_maps_find(m, base);
    if (!first || first->start != base)
        return 0;
    uint64_t end = first->end;
    for (bool grew = true; grew;) {
        grew = false;
        for (size_t i = 0; i < m->count; i++) {
            const struct map_entry *e = &m->entries[i];
            if (e->start == end && e->end > end) {
                end = e->end;
                grew = true;
            }
        }
    }
    return end;
}

void place_layout_of(const struct place_facts *f, struct place_layout *out)
{
    memset(out, 0, sizeof(*out));
    const struct map_entry *stack = NULL;
    for (size_t i = 0; i < f->maps.count; i++)
        if (is_named(&f->maps.entries[i], "[stack]"))
            stack = &f->maps.entries[i];
    const struct map_entry *exe = f->entry ? proc_maps_find(&f->maps, f->entry) : NULL;
    if (exe && exe->inode) {
        out->exe_lo = exe->start;
        for (size_t i = 0; i < f->maps.count; i++) {
            const struct map_entry *e = &f->maps.entries[i];
            if (e->inode == exe->inode && e->path && exe->path && strcmp(e->path, exe->path) == 0 &&
                e->start < out->exe_lo)
                out->exe_lo = e->start;
        }
    }
    if (f->legacy || f->stack_limit == UINT64_MAX) {
        /* mmap_is_legacy(): the search goes up from TASK_UNMAPPED_BASE,
         * through everything above it; no gap is out of its way. */
        out->why = "the bottom-up layout (an unlimited stack, vm.legacy_va_layout or ADDR_COMPAT_LAYOUT)";
        return;
    }
    if (!f->interp_base || !(out->mmap_base = interp_end(&f->maps, f->interp_base))) {
        out->why = "no ELF interpreter to find mmap_base by";
        return;
    }
    if (!stack || !f->stack_limit) {
        out->why = "no [stack] or stack limit";
        return;
    }
    uint64_t need = f->stack_limit > stack->end - stack->start ? f->stack_limit : stack->end - stack->start;
    uint64_t keep = need + PLACE_STACK_GUARD + PLACE_STACK_MARGIN;
    if (need > UINT64_MAX / 2 || stack->end < keep || page_down(stack->end - keep) <= out->mmap_base) {
        out->why = "no room between mmap_base and the stack's limit";
        return;
    }
    out->room_top = page_down(stack->end - keep);
}

static uint64_t distance(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

static bool within(uint64_t lo, uint64_t size, uint64_t near, uint64_t reach)
{
    return distance(lo, near) <= reach && distance(lo + size, near) <= reach;
}

/* The lowest free spot in [lo, hi) for size bytes; 0: none.  Candidates
 * are lo and every mapping's end (a gap's first page). */
static uint64_t lowest_free(const struct proc_maps *m, uint64_t lo, uint64_t hi, uint64_t size)
{
    uint64_t best = 0;
    if (hi < size)
        return 0;
    if (range_free(m, lo, size) && lo <= hi - size)
        return lo;
    for (size_t i = 0; i < m->count; i++) {
        uint64_t at = page_up(m->entries[i].end);
        if (at > lo && at <= hi - size && (!best || at < best) && range_free(m, at, size))
            best = at;
    }
    return best;
}

/* The highest free spot for size bytes ending at or below hi, not below lo:
 * candidates are hi and every mapping's start. */
static uint64_t highest_free(const struct proc_maps *m, uint64_t lo, uint64_t hi, uint64_t size)
{
    uint64_t best = 0;
    if (hi < size || hi - size < lo)
        return 0;
    if (range_free(m, page_down(hi - size), size))
        return page_down(hi - size);
    for (size_t i = 0; i < m->count; i++) {
        uint64_t top = m->entries[i].start;
        if (top > hi || top < size || page_down(top - size) < lo)
            continue;
        uint64_t at = page_down(top - size);
        if (at > best && range_free(m, at, size))
            best = at;
    }
    return best;
}

uint64_t place_near(const struct place_layout *l, const struct proc_maps *m, uint64_t size,
                    uint64_t near, uint64_t reach)
{
    if (l->why || !size)
        return 0;
    size = page_up(size);
    /* Above mmap_base, within reach: the libraries are just below it. */
    uint64_t lo = l->mmap_base, hi = l->room_top;
    if (near > reach && near - reach > lo)
        lo = page_up(near - reach);
    if (near < UINT64_MAX - reach && near + reach < hi)
        hi = page_down(near + reach);
    if (lo < hi) {
        uint64_t at = lowest_free(m, lo, hi, size);
        if (at && within(at, size, near, reach))
            return at;
    }
    /* Just below the executable, for code it reaches: never above it,
     * where its break grows. */
    if (l->exe_lo && near >= l->exe_lo && l->exe_lo > PLACE_FLOOR) {
        uint64_t floor = near > reach && near - reach > PLACE_FLOOR ? page_up(near - reach) : PLACE_FLOOR;
        uint64_t at = highest_free(m, floor, l->exe_lo, size);
        if (at && within(at, size, near, reach))
            return at;
    }
    return 0;
}

uint64_t place_far(const struct place_layout *l, const struct proc_maps *m, uint64_t size,
                   unsigned word)
{
    if (l->why || !size)
        return 0;
    size = page_up(size);
    if (word == 8) {
        /* The middle of the largest free gap below mmap_base (above 4 GiB,
         * where low-address hints of JITs go): the search and the break
         * reach it after tebibytes. */
        uint64_t best_lo = 0, best_len = 0, prev = 4ull << 30;
        for (;;) {
            /* The next mapping above prev (maps need not be sorted here). */
            const struct map_entry *next = NULL;
            for (size_t i = 0; i < m->count; i++) {
                const struct map_entry *e = &m->entries[i];
                if (e->end > prev && (!next || e->start < next->start))
                    next = e;
            }
            uint64_t top = next && next->start < l->mmap_base ? next->start : l->mmap_base;
            if (top > prev && top - prev > best_len) {
                best_lo = prev;
                best_len = top - prev;
            }
            if (!next || next->end >= l->mmap_base)
                break;
            prev = next->end > prev ? next->end : prev;
        }
        if (best_len < 4 * size)
            return 0;
        uint64_t at = page_down(best_lo + (best_len - size) / 2);
        return range_free(m, at, size) ? at : 0;
    }
    /* 32-bit: no gap is far from everything.  Below the executable, the
     * lowest room the top-down search would reach last, the break never. */
    if (!l->exe_lo)
        return 0;
    return lowest_free(m, PLACE_FLOOR, l->exe_lo, size);
}
