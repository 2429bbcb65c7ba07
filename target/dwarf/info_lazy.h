/* The function, inline and tail-call index of one object, built one
 * compilation unit at a time on demand.  A first pass over .debug_info
 * (info_stream, one unit in memory) keeps only what every lookup needs:
 * where each unit's code is (address spans, coalesced), the jumps
 * (DW_AT_call_tail_call: few), and a hash of each function name with code
 * (to tell which calls a tail-call search can use).  A lookup indexes the
 * units whose spans cover its address (info_inline), keeping the last
 * LAZY_CACHE_UNITS of them (least recently used goes first).  Names handed
 * out stay valid until the index is freed. */
#ifndef MT_DWARF_INFO_LAZY_H
#define MT_DWARF_INFO_LAZY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target/dwarf/dwarf_sections.h"
#include "target/dwarf/info_inline.h"
#include "target/elf/elf_file.h"

struct lazy_index;

/* secs: the sections the units need besides .debug_info (abbrev, str,
 * str_offsets, addr, ranges, rnglists), kept alive by the caller for the
 * index's life; f: where .debug_info is read again from. */
struct lazy_index *lazy_index_new(struct elf_file *f, const struct dwarf_sections *secs);
/* The first pass: unit holds one unit at offset 0; offset is its section offset. */
void lazy_index_add_unit(struct lazy_index *lz, const struct dwarf_sections *unit, uint64_t offset);
void lazy_index_finish(struct lazy_index *lz);
void lazy_index_free(struct lazy_index *lz);

/* As inline_index_lookup, _chain, _call_target and _tail_calls. */
const char *lazy_index_lookup(struct lazy_index *lz, uint64_t address, uint64_t lowest);
size_t lazy_index_chain(struct lazy_index *lz, uint64_t address, uint64_t lowest, struct inline_frame *out,
                        size_t max);
const char *lazy_index_call_target(struct lazy_index *lz, uint64_t return_pc);
size_t lazy_index_tail_calls(const struct lazy_index *lz, const char *caller, struct inline_tail_call *out,
                             size_t max);
size_t lazy_index_memory(const struct lazy_index *lz);

#endif
