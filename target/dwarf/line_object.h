/* The line index (and function index) of one ELF file: loads the
 * sections it needs through elf_file, reads .debug_info one unit at a time,
 * and keeps only what lookups need (.debug_line, .debug_line_str, the
 * indexes). */
#ifndef MT_DWARF_LINE_OBJECT_H
#define MT_DWARF_LINE_OBJECT_H

#include <stdbool.h>
#include <stdint.h>

#include "target/dwarf/info_inline.h"
#include "target/dwarf/line_index.h"
#include "shared/elf/elf_file.h"

struct line_object;

/* NULL when f has no readable .debug_line.  With inline_names, also
 * indexes the functions of .debug_info (line_object_inline_name); that
 * walks all of .debug_info once, one unit at a time.  Without, DWARF 5
 * objects are indexed without reading .debug_info at all. */
struct line_object *line_object_open(struct elf_file *f, bool inline_names);
void line_object_close(struct line_object *o);

bool line_object_lookup(struct line_object *o, uint64_t link_vaddr, struct line_location *out);
struct line_index *line_object_index(struct line_object *o);
/* The innermost inlined function at link_vaddr among those starting at or
 * above lowest (see inline_index_lookup); NULL if none or not indexed. */
const char *line_object_inline_name(const struct line_object *o, uint64_t link_vaddr, uint64_t lowest);
/* The inlined-call chain at link_vaddr (see inline_index_chain). */
size_t line_object_inline_chain(const struct line_object *o, uint64_t link_vaddr, uint64_t lowest,
                                struct inline_frame *out, size_t max);
/* Call sites (see inline_index_call_target, inline_index_tail_calls). */
const char *line_object_call_target(const struct line_object *o, uint64_t return_pc, bool *tail);
size_t line_object_tail_calls(const struct line_object *o, const char *caller, struct inline_tail_call *out,
                              size_t max);
/* A file of the line program at line_offset, by number (DW_AT_call_file). */
bool line_object_file_name(struct line_object *o, uint64_t line_offset, uint64_t file, char *buf, size_t len);
/* Heap bytes held: kept sections plus the index. */
size_t line_object_memory(const struct line_object *o);

#endif
