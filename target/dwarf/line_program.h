/* The line-number state machine (DWARF 2-5, section 6.2): steps through a
 * program one row at a time, keeping nothing but the registers, so a caller
 * can index ranges or search for one address without storing the table. */
#ifndef MT_DWARF_LINE_PROGRAM_H
#define MT_DWARF_LINE_PROGRAM_H

#include <stdbool.h>
#include <stdint.h>

#include "shared/files/cursor.h"
#include "target/dwarf/dwarf_sections.h"
#include "target/dwarf/line_header.h"

struct line_row {
    uint64_t address;
    uint64_t file;
    uint32_t line;
    uint64_t column;
    uint32_t discriminator;
    bool is_stmt;
    bool end_sequence;
    uint64_t sequence_offset;  /* where this row's sequence starts in .debug_line */
};

struct line_program {
    const struct dwarf_sections *secs;
    const struct line_header *h;
    struct cursor c;
    struct line_row regs;
    uint64_t op_index;
    uint64_t address_mask;
    bool sequence_started;

    /* DW_LNE_define_file bookkeeping for line_program_find_defined_file. */
    uint64_t defines_seen;
    uint64_t define_wanted;
    uint64_t define_offset;
};

/* Starts at offset, which is h->program_offset or a sequence_offset from an
 * earlier run (registers are in their initial state there). */
void line_program_start(struct line_program *p, const struct dwarf_sections *secs,
                        const struct line_header *h, uint64_t offset);

/* Resumes after a row returned earlier (checkpoints): offset is where
 * decoding stood right after that row, op_index the VLIW register then. */
void line_program_resume(struct line_program *p, const struct dwarf_sections *secs,
                         const struct line_header *h, const struct line_row *after,
                         uint64_t op_index, uint64_t offset);

/* Where decoding stands: the offset in .debug_line of the next opcode. */
static inline uint64_t line_program_offset(const struct line_program *p) { return p->c.pos; }

/* The next row.  false at the end of the program or on malformed data
 * (line_program_failed tells which).  Always ends: every step reads at
 * least one byte. */
bool line_program_next(struct line_program *p, struct line_row *row);

static inline bool line_program_failed(const struct line_program *p) { return !cursor_ok(&p->c); }

/* Finds the n-th (1-based) DW_LNE_define_file entry of the program and
 * returns the offset of its name in .debug_line. */
bool line_program_find_defined_file(const struct dwarf_sections *secs, const struct line_header *h,
                                    uint64_t n, uint64_t *entry_offset);

#endif
