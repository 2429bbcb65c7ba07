/* PC -> function, file and line for one debug_object: the symbol table
 * gives the function name, the DWARF line table (the debug file's, found by
 * build-id or debuglink) gives file:line.  The line index is built on the
 * first lookup and kept, so a report resolving thousands of PCs decodes
 * only the few line sequences it touches. */
#ifndef MT_SYMBOLS_SYMBOLIZE_H
#define MT_SYMBOLS_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "target/dwarf/info_inline.h"
#include "target/dwarf/line_index.h"
#include "target/symbols/debug_object.h"

struct sym_info {
    /* The innermost inlined function at the address (as addr2line -f
     * prints), else the symbol containing it; owned by the symbolizer or
     * the object's symtab (valid while they live); NULL if unknown. */
    const char *function;
    uint64_t function_offset;  /* of the address in the symbol; 0 for an inlined function */
    char file[LINE_PATH_MAX];  /* "" when unknown */
    unsigned line;             /* 0 when unknown */
    unsigned discriminator;
    /* Chains (symbolizer_lookup_chain): this function was inlined into
     * the next frame's, which called it from that frame's file:line. */
    bool inlined;
};

/* Frames one address can stand for at most (inlining depth). */
#define SYM_CHAIN_MAX 32

struct symbolizer;

/* Does not own obj, which must outlive the symbolizer.  Never NULL. */
struct symbolizer *symbolizer_new(struct debug_object *obj);
void symbolizer_free(struct symbolizer *s);

/* Fills out for a link-time address of the object.  Returns a bit set:
 * SYM_FOUND_FUNCTION | SYM_FOUND_LINE (0 when nothing is known). */
#define SYM_FOUND_FUNCTION 1
#define SYM_FOUND_LINE 2
int symbolizer_lookup(struct symbolizer *s, uint64_t link_vaddr, struct sym_info *out);
/* Prepares lookups of these addresses (line_object_prefetch): the same
 * answers, sooner.  For a caller that knows all it will ask. */
void symbolizer_prefetch(struct symbolizer *s, const uint64_t *link_vaddrs, size_t n);

/* The whole chain at an address, innermost first, as addr2line -i prints
 * it: out[0] as symbolizer_lookup fills it, then for each inlined
 * function the one it was inlined into, at the place of the call (file
 * and line of the call, function_offset 0 except for the outermost when
 * the symbol table names it too).  Returns the number of frames written
 * (1..max; 0 only when max is 0); *found (may be NULL) gets out[0]'s
 * SYM_FOUND_* bits. */
unsigned symbolizer_lookup_chain(struct symbolizer *s, uint64_t link_vaddr, struct sym_info *out, unsigned max,
                                 int *found);

/* DWARF call sites of the object (link-time addresses): the function the
 * call returning to return_pc calls (NULL if unknown or ambiguous), and
 * the tail calls (jumps) the function named function makes. */
const char *symbolizer_call_target(struct symbolizer *s, uint64_t return_pc);
/* What symbolizer_call_target may answer (NULL or one of these), known
 * without indexing the whole object's call sites; SIZE_MAX when only
 * symbolizer_call_target can tell (line_object_call_candidates). */
size_t symbolizer_call_candidates(struct symbolizer *s, uint64_t return_pc, const char **out, size_t max);
size_t symbolizer_tail_calls(struct symbolizer *s, const char *function, struct inline_tail_call *out, size_t max);
struct debug_object *symbolizer_object(const struct symbolizer *s);

/* Heap bytes held for line lookups (sections kept + index). */
size_t symbolizer_memory(const struct symbolizer *s);

/* The same without managing a symbolizer: the indexes of each object are
 * kept in a small cache keyed by the object and the build-id (and path) of
 * its DWARF file, so a debug_object freed and another allocated at the same
 * address can never be answered from the old one's tables.  0 when a
 * function or a line was found, -ENOENT when neither.  out->function may
 * point into that cache: copy it before symbolizing another object. */
int debug_object_symbolize(struct debug_object *obj, uint64_t link_vaddr, struct sym_info *out);
/* Drops what debug_object_symbolize cached for obj (call before closing it
 * to give the memory back at once; not required for correctness). */
void debug_object_symbolize_forget(struct debug_object *obj);

/* Formats as binutils addr2line prints the second line: "file:line",
 * "file:line (discriminator N)", "file:?" or "??:0". */
void sym_info_format_location(const struct sym_info *info, char *buf, size_t len);

#endif
