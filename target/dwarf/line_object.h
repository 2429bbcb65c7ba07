/* The line index (and function index) of one ELF file: loads the
 * sections it needs through elf_file, reads .debug_info one unit at a time,
 * and keeps only what lookups need (.debug_line, .debug_line_str, the
 * indexes). */
#ifndef MT_DWARF_LINE_OBJECT_H
#define MT_DWARF_LINE_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target/dwarf/info_inline.h"
#include "target/dwarf/line_index.h"
#include "shared/elf/elf_file.h"

struct line_object;

/* NULL when f has no readable .debug_line.  With inline_names, also
 * indexes the functions of .debug_info (line_object_inline_name): for a
 * DWARF 5 object with .debug_aranges one unit at a time as lookups need
 * them, else by one walk over all of .debug_info, one unit at a time.
 * Without, DWARF 5 objects are indexed without reading .debug_info at
 * all. */
struct line_object *line_object_open(struct elf_file *f, bool inline_names);
/* The same, choosing whether function names may come one unit at a time
 * (unit_index.h; DWARF 5 objects with .debug_aranges) or only from the
 * whole walk, as before.  Answers are the same either way: this is for
 * the tests that prove it.  line_object_open is lazy unless the
 * environment has MEMTRACE_DWARF_WHOLE.  f must outlive the object. */
struct line_object *line_object_open_mode(struct elf_file *f, bool inline_names, bool lazy);
void line_object_close(struct line_object *o);

/* The units of these addresses, indexed now and in section order, for a
 * caller about to look them all up (unit_index_prefetch). */
void line_object_prefetch(struct line_object *o, const uint64_t *link_vaddrs, size_t n);
bool line_object_lookup(struct line_object *o, uint64_t link_vaddr, struct line_location *out);
struct line_index *line_object_index(struct line_object *o);
/* The innermost inlined function at link_vaddr among those starting at or
 * above lowest (see inline_index_lookup); NULL if none or not indexed. */
const char *line_object_inline_name(struct line_object *o, uint64_t link_vaddr, uint64_t lowest);
/* The inlined-call chain at link_vaddr (see inline_index_chain). */
size_t line_object_inline_chain(struct line_object *o, uint64_t link_vaddr, uint64_t lowest,
                                struct inline_frame *out, size_t max);
/* Call sites (see inline_index_call_target, inline_index_tail_calls).
 * Lookups may index a unit, or the whole object, on first use: hence not
 * const.  Names handed out stay valid until line_object_close. */
const char *line_object_call_target(struct line_object *o, uint64_t return_pc, bool *tail);
/* What line_object_call_target may answer, known from the units alone
 * (unit_index.h): it answers NULL or one of these.  Returns how many (the
 * first max written), or SIZE_MAX when only the whole walk can tell (no
 * units, more than max, or an address they do not cover).  A caller that
 * can decide from these alone spares the whole walk. */
size_t line_object_call_candidates(struct line_object *o, uint64_t return_pc, const char **out, size_t max);
size_t line_object_tail_calls(struct line_object *o, const char *caller, struct inline_tail_call *out,
                              size_t max);
/* The same jumps from the units alone, given the starts of every function
 * that may be caller (symtab_function_starts): a function's jumps are in
 * its own unit.  SIZE_MAX when the units cannot tell (a start no single
 * unit covers, too many units, max reached, no units): then ask
 * line_object_tail_calls. */
size_t line_object_tail_calls_at(struct line_object *o, const char *caller, const uint64_t *starts, size_t nstarts,
                                 struct inline_tail_call *out, size_t max);
/* The return addresses of the whole index's calls (inline_index_call_pcs;
 * indexes the whole object).  For tests. */
size_t line_object_call_pcs(struct line_object *o, uint64_t *out, size_t max);
/* A file of the line program at line_offset, by number (DW_AT_call_file). */
bool line_object_file_name(struct line_object *o, uint64_t line_offset, uint64_t file, char *buf, size_t len);
/* Whether function lookups are still answered unit by unit (no whole
 * walk happened yet); *units (may be NULL) gets how many were indexed. */
bool line_object_lazy(const struct line_object *o, size_t *units);
/* Heap bytes held: kept sections plus the indexes. */
size_t line_object_memory(const struct line_object *o);

#endif
