/* The function index (info_inline.h) and the line index (line_index.h)
 * one compilation unit at a time:
 * .debug_aranges tells which unit holds the code at an address, and only
 * that unit's DIEs are walked, the first time one of its addresses is
 * asked for.  Naming a few libc frames then reads a few of libc's ~1,900
 * units instead of all 5.8 MiB of .debug_info.  Whatever this cannot
 * answer (no aranges, an address they do not cover or give to two units)
 * the caller asks of the whole-object index instead, so answers are those
 * of the whole walk: a unit's index holds exactly the ranges and call
 * sites the whole walk takes from that unit, in the same order. */
#ifndef MT_DWARF_UNIT_INDEX_H
#define MT_DWARF_UNIT_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/elf/elf_file.h"
#include "target/dwarf/dwarf_sections.h"
#include "target/dwarf/info_inline.h"
#include "target/dwarf/line_index.h"

/* Units indexed at most; past that the caller's whole-object index is
 * smaller than the units' indexes together would grow. */
#define UNIT_INDEX_MAX 128

struct unit_index;

/* NULL when f has no .debug_info or no usable .debug_aranges (absent,
 * malformed, or overlapping too much to work out).  secs holds the
 * sections a DIE walk reads besides .debug_info (abbrev, strings, addr,
 * ranges): kept by the caller for as long as the unit_index. */
struct unit_index *unit_index_open(struct elf_file *f, const struct dwarf_sections *secs);
void unit_index_close(struct unit_index *u);

/* The function index of the unit whose code covers address.  NULL when
 * the aranges name no unit there, the unit cannot be read, or
 * UNIT_INDEX_MAX units are indexed already.  Valid until unit_index_close
 * (names handed out by it too). */
const struct inline_index *unit_index_at(struct unit_index *u, uint64_t address);
/* Indexes, in the order of their offsets, the units that cover these
 * addresses and are not indexed yet: a compressed .debug_info is then
 * inflated once, front to back, instead of again from a checkpoint for
 * each unit met behind the last (a report names its frames in stack
 * order, which is no order of the section).  All or none: nothing when
 * they would pass UNIT_INDEX_MAX.  Answers are the same as without. */
void unit_index_prefetch(struct unit_index *u, const uint64_t *addresses, size_t n);
/* The line index of that unit's line program alone (line_index.h); NULL
 * as above, or when the unit names no line program. */
struct line_index *unit_index_lines_at(struct unit_index *u, uint64_t address);
/* line_index_file_name for a line program of a unit indexed already;
 * *known false when none of them has the program at line_offset. */
bool unit_index_file_name(struct unit_index *u, uint64_t line_offset, uint64_t file, char *buf, size_t len,
                          bool *known);

size_t unit_index_count(const struct unit_index *u);
/* Heap bytes held: the aranges, the .debug_info map, the units' indexes. */
size_t unit_index_memory(const struct unit_index *u);

#endif
