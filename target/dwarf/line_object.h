/* The line index of one ELF file: loads the sections it needs through
 * elf_file, builds the index, and drops what lookups do not need
 * (.debug_info and .debug_abbrev go once the index is built). */
#ifndef MT_DWARF_LINE_OBJECT_H
#define MT_DWARF_LINE_OBJECT_H

#include <stdbool.h>
#include <stdint.h>

#include "target/dwarf/line_index.h"
#include "target/elf/elf_file.h"

struct line_object;

/* NULL when f has no readable .debug_line. */
struct line_object *line_object_open(struct elf_file *f);
void line_object_close(struct line_object *o);

bool line_object_lookup(struct line_object *o, uint64_t link_vaddr, struct line_location *out);
struct line_index *line_object_index(struct line_object *o);
/* Heap bytes held: kept sections plus the index. */
size_t line_object_memory(const struct line_object *o);

#endif
