/* What the three parts of the function index share (info_inline.h is
 * the interface): info_inline.c walks the DIEs and builds it,
 * info_inline_ranges.c sorts and searches the ranges, info_call_sites.c
 * keeps the call sites a tail-call search can use. */
#ifndef MT_DWARF_INFO_INLINE_INTERNAL_H
#define MT_DWARF_INFO_INLINE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "shared/intern.h"
#include "target/dwarf/info_abbrev.h"
#include "target/dwarf/info_inline.h"

struct inline_range {
    uint64_t lo;
    uint32_t size;
    /* Name number << 8 | DIE depth (capped at 255): an inlined
     * call that is all of its caller's body has the caller's range, and
     * then the deeper one is the innermost. */
    uint32_t name_depth;
    /* Of an inlined subroutine: the line it was called from, and where
     * (1 + index in wheres); 0 for a subprogram. */
    uint32_t call_line, where;
};

/* A call_file: file number in the line table at line_offset (UINT32_MAX
 * when unknown).  Few distinct ones, shared by many ranges. */
struct call_where {
    uint32_t line_offset, file;
};

#define NAMES_MAX (UINT32_MAX >> 8)

/* A DW_TAG_call_site: the call returning to return_pc calls target (a
 * name's number, NO_NAME if unknown), made by the function named
 * caller; tail when it is a jump (DW_AT_call_tail_call). */
#define NO_NAME UINT32_MAX
struct call_site {
    uint64_t return_pc;
    uint32_t target, caller;
    bool tail;
};

struct call_entry {
    uint32_t pc_offset, target;
};

struct inline_index {
    struct inline_range *ranges;
    size_t count, cap;
    struct call_site *sites;      /* while building */
    size_t site_count, site_cap;
    size_t sites_filtered;        /* site_count after the last whole filter */
    /* Then the calls (8 bytes each, by return_pc - call_base) and the
     * jumps (by caller name). */
    struct call_entry *calls;
    size_t call_count;
    uint64_t call_base;
    struct call_site *jumps;
    size_t jump_count;
    struct interner wheres;       /* of struct call_where */
    uint32_t cur_caller;          /* while building: the subprogram being walked */
    unsigned cur_depth;
    struct interner names;        /* of functions: linkage name, else name */
    struct abbrev_table abbrevs;  /* of the last unit, while building */
};

static inline const char *name_of(const struct inline_index *idx, uint32_t name)
{
    return interner_key(&idx->names, name, NULL);
}

static inline struct call_where where_of(const struct inline_index *idx, uint32_t where)
{
    struct call_where w;
    memcpy(&w, interner_key(&idx->wheres, where - 1, NULL), sizeof(w));
    return w;
}

/* ---- info_inline_ranges.c ---- */

/* Sorts the ranges (lookups search them by start) and trims the array. */
void inline_ranges_sort(struct inline_index *idx);

/* ---- info_call_sites.c ---- */

void call_sites_add(struct inline_index *idx, struct call_site site);
/* Drops the sites from site_first on that a tail-call search cannot use,
 * knowing the functions defined by the ranges from range_first on. */
void call_sites_filter(struct inline_index *idx, size_t site_first, size_t range_first);
/* After the last unit: the kept sites become the calls and the jumps. */
void call_sites_finish(struct inline_index *idx);

#endif
