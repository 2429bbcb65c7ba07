/* Address -> file:line for one object, without holding its line table in
 * memory.  Building the index decodes every line program once and keeps
 * only, per sequence, its address range and where it starts (16 bytes a
 * sequence); a lookup then decodes just the one sequence that covers the
 * address.  Semantics follow elfutils (dwfl_module_getsrc): the row with
 * the highest address <= the address wins (the later one among rows at the
 * same address), never past the sequence's end. */
#ifndef MT_DWARF_LINE_INDEX_H
#define MT_DWARF_LINE_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target/dwarf/dwarf_sections.h"

#define LINE_PATH_MAX 1024

struct line_location {
    char file[LINE_PATH_MAX];   /* joined like eu-addr2line; "" if unknown */
    uint32_t line;
    uint64_t column;
    uint32_t discriminator;
};

struct line_index;

/* Builds the index.  secs->info/abbrev/str_offsets are read only during the
 * build (the caller may drop them after); secs->line, line_str and str must
 * stay alive until line_index_free.  Returns an index even when nothing
 * could be read (lookups then fail): never NULL. */
struct line_index *line_index_build(const struct dwarf_sections *secs);
void line_index_free(struct line_index *idx);

/* The same in steps, for a caller that reads .debug_info one unit at a
 * time (info_stream): new() with the sections that stay (line, line_str,
 * str); add_unit() for each unit, with secs whose info span holds it at
 * offset (and abbrev, str, str_offsets, line_str for its DIE); finish(). */
struct line_index *line_index_new(const struct dwarf_sections *secs);
void line_index_add_unit(struct line_index *idx, const struct dwarf_sections *secs, uint64_t offset);
void line_index_finish(struct line_index *idx);

/* True when every line program in secs->line is DWARF 5: their directory 0
 * is the compilation directory, so the index needs no .debug_info (and
 * line_index_build without it gives the same names).  *needs_str tells
 * whether a header names files through .debug_str. */
bool line_section_self_contained(const struct dwarf_sections *secs, bool *needs_str);

/* Comp_dir strings are copied at build time, so .debug_str is only needed
 * when a DWARF 5 line header names files through it.  When not, the index
 * forgets it and returns true: the caller may then free the section. */
bool line_index_release_debug_str(struct line_index *idx);

/* Looks up a link-time address.  false when no sequence covers it. */
bool line_index_lookup(struct line_index *idx, uint64_t address, struct line_location *out);

/* The path of file number file of the line program at line_offset (a
 * unit's DW_AT_stmt_list), joined as lookups join them: for
 * DW_AT_call_file.  false when unknown. */
bool line_index_file_name(struct line_index *idx, uint64_t line_offset, uint64_t file, char *buf, size_t len);

/* Whether the index holds the line program at line_offset. */
bool line_index_has_unit(const struct line_index *idx, uint64_t line_offset);

size_t line_index_sequence_count(const struct line_index *idx);
size_t line_index_unit_count(const struct line_index *idx);
/* Heap bytes the index holds (for the memory budget). */
size_t line_index_memory(const struct line_index *idx);

#endif
