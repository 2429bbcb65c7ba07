/* The header of one line-number program in .debug_line (DWARF 2-5).  The
 * directory and file tables are not copied: the header remembers where they
 * are and line_header_file_path() walks them when a name is wanted, so a
 * parsed header is a fixed, small struct whatever the unit's size. */
#ifndef MT_DWARF_LINE_HEADER_H
#define MT_DWARF_LINE_HEADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target/dwarf/dwarf_sections.h"
#include "target/dwarf/info_form.h"

/* DWARF 5 entry formats longer than this are refused (real producers use
 * two to four). */
#define LINE_MAX_ENTRY_FORMATS 16

struct line_entry_format {
    uint8_t count;
    uint64_t content[LINE_MAX_ENTRY_FORMATS];  /* DW_LNCT_* */
    uint64_t form[LINE_MAX_ENTRY_FORMATS];     /* DW_FORM_* */
};

struct line_header {
    uint64_t offset;            /* of the unit in .debug_line */
    uint64_t end;               /* one past the unit */
    uint64_t program_offset;    /* first opcode of the program */
    struct form_unit unit;      /* version, address size, offset size */
    unsigned min_insn_length;
    unsigned max_ops_per_insn;  /* 1 for DWARF 2-3 */
    bool default_is_stmt;
    int line_base;
    unsigned line_range;        /* never 0 in a parsed header */
    unsigned opcode_base;       /* never 0 in a parsed header */
    uint64_t std_lengths_offset; /* opcode_base - 1 operand counts */

    /* Tables: for DWARF 2-4 offsets of the NUL-terminated lists (counts
     * found while parsing); for DWARF 5 the formats and entry counts. */
    uint64_t dirs_offset;
    uint64_t dir_count;
    uint64_t files_offset;
    uint64_t file_count;
    struct line_entry_format dir_format;
    struct line_entry_format file_format;
};

/* Parses the header of the unit at offset.  default_address_size is used
 * for DWARF 2-4 (whose line header does not say; take it from the CU).
 * false for anything malformed; then nothing in *h may be used except
 * h->end, which is set (> offset) whenever the unit length was readable so
 * a caller can skip to the next unit. */
bool line_header_parse(const struct dwarf_sections *secs, uint64_t offset,
                       unsigned default_address_size, struct line_header *h);

/* The operand count of standard opcode op (1 <= op < opcode_base). */
unsigned line_header_std_length(const struct dwarf_sections *secs, const struct line_header *h,
                                unsigned op);

/* Writes the path of file number index (1-based for DWARF 2-4, 0-based for
 * 5) to out, joined as elfutils does: an absolute name stays as it is,
 * otherwise it is prefixed by its directory entry, and a relative directory
 * by comp_dir (the CU's DW_AT_comp_dir; directory 0 of DWARF 2-4 is
 * comp_dir itself, and is prefixed by itself again when relative: elfutils
 * prints "rel/rel/x.h" there, binutils "rel/x.h"; elfutils is our
 * reference).  Names longer than outlen are cut.  false when there is no
 * such file. */
bool line_header_file_path(const struct dwarf_sections *secs, const struct line_header *h,
                           uint64_t index, const char *comp_dir, char *out, size_t outlen);

/* The raw name of directory entry index (DWARF 5: 0-based, entry 0 is the
 * compilation directory; DWARF 2-4: 1-based, 0 gives comp_dir).  NULL when
 * absent. */
const char *line_header_dir(const struct dwarf_sections *secs, const struct line_header *h,
                            uint64_t index, const char *comp_dir);

/* Joins dir and name into out the same way (either may be NULL). */
void line_join_path(const char *comp_dir, const char *dir, const char *name, char *out, size_t outlen);

/* Reads one DW_LNE_define_file entry (name, dir index, mtime, length) at c
 * and joins its path like a file table entry. */
bool line_header_defined_file_path(const struct dwarf_sections *secs, const struct line_header *h,
                                   struct cursor *c, const char *comp_dir, char *out, size_t outlen);

#endif
