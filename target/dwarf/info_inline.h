/* Which function an address is in, as addr2line -f and eu-addr2line -f
 * name it from DWARF: the innermost DW_TAG_inlined_subroutine, else the
 * DW_TAG_subprogram (which also covers .cold parts the symbol table names
 * separately).  Built once per object by walking every DIE of .debug_info;
 * afterwards only the ranges (16 bytes each) and their distinct names are
 * kept, so .debug_info can be dropped. */
#ifndef MT_DWARF_INFO_INLINE_H
#define MT_DWARF_INFO_INLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target/dwarf/dwarf_sections.h"

struct inline_index;

/* Needs secs->info, abbrev and the string sections, plus addr, ranges and
 * rnglists when present; none of them afterwards.  Never NULL. */
struct inline_index *inline_index_build(const struct dwarf_sections *secs);
void inline_index_free(struct inline_index *idx);

/* The same in steps, one unit at a time (info_stream): secs->info holds
 * the unit at offset, and span_base is the section offset of that span's
 * first byte (for DW_FORM_ref_addr). */
struct inline_index *inline_index_new(void);
void inline_index_add_unit(struct inline_index *idx, const struct dwarf_sections *secs, uint64_t offset,
                           uint64_t span_base);
void inline_index_finish(struct inline_index *idx);

/* The innermost function whose code contains address, among
 * ranges starting at or above lowest (pass the enclosing function's start,
 * so that nothing outside it can answer).  Its linkage name when it has
 * one (as binutils and elfutils print), else DW_AT_name.  NULL if none. */
const char *inline_index_lookup(const struct inline_index *idx, uint64_t address, uint64_t lowest);

/* The chain of functions at address, innermost first: each inlined
 * subroutine (inlined = true, with the place it was called from in the
 * next one: call_file of the line program at line_offset, call_line;
 * line_offset UINT32_MAX when unknown), ending with the subprogram they
 * were inlined into.  Returns the number written (at most max); 0 when no
 * function covers address. */
struct inline_frame {
    const char *name;
    bool inlined;
    uint32_t call_line, call_file, line_offset;
};
size_t inline_index_chain(const struct inline_index *idx, uint64_t address, uint64_t lowest,
                          struct inline_frame *out, size_t max);

/* Call sites (DW_TAG_call_site, DW_TAG_GNU_call_site) of functions with
 * code, as far as a tail-call search can use them: jumps, and calls of
 * functions that make jumps or have no code in this object.  The function
 * the call returning to return_pc calls (by its linkage name, else name),
 * and whether it is a tail call; NULL when there is no such site (or it
 * was not kept), more than one, or its target is not named. */
const char *inline_index_call_target(const struct inline_index *idx, uint64_t return_pc, bool *tail);
/* How many of the kept calls return to return_pc; their targets (up to
 * max) in targets. */
size_t inline_index_calls_at(const struct inline_index *idx, uint64_t return_pc, const char **targets,
                             size_t max);
/* The return addresses of the kept calls, ascending, repeats included
 * (up to max); returns how many there are.  For tests. */
size_t inline_index_call_pcs(const struct inline_index *idx, uint64_t *out, size_t max);
/* The tail calls (jumps) that the function named caller makes: target
 * (NULL if not named) and the address after the jump.  Returns how many
 * were written (at most max). */
struct inline_tail_call {
    const char *target;
    uint64_t return_pc;
};
size_t inline_index_tail_calls(const struct inline_index *idx, const char *caller, struct inline_tail_call *out,
                               size_t max);

/* ---- the pieces of the lookups above ---- */

/* The ranges covering address at or above lowest, in the order lookups
 * weigh them (nearest start first; pos is the range's place in the
 * index).  Lookup and chain are these, chosen by inline_hits_lookup and
 * inline_hits_chain, so hits of several indexes merged in the same order
 * choose as one index would. */
struct inline_hit {
    uint64_t lo;
    uint32_t size, pos;
    unsigned depth;
    const char *name;
    bool inlined;
    uint32_t call_line, call_file, line_offset;
};
#define INLINE_HITS_MAX 256
size_t inline_index_covering(const struct inline_index *idx, uint64_t address, uint64_t lowest,
                             struct inline_hit *out, size_t max);
const char *inline_hits_lookup(const struct inline_hit *hits, size_t n);
size_t inline_hits_chain(const struct inline_hit *hits, size_t n, struct inline_frame *out, size_t max);

size_t inline_index_range_count(const struct inline_index *idx);
size_t inline_index_memory(const struct inline_index *idx);

#endif
