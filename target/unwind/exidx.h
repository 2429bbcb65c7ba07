/* ARM EHABI unwind tables (.ARM.exidx, .ARM.extab): what a 32-bit ARM
 * object carries instead of .eh_frame.  Debian's armhf libraries have only
 * these without their debug files, so the unwinder falls back to them
 * wherever no DWARF CFI covers a pc.
 *
 * .ARM.exidx is a table of 8-byte entries sorted by function: a prel31
 * offset to the function's start, then EXIDX_CANTUNWIND (1), an inline
 * compact entry (bit 31 set: personality 0, three opcode bytes), or a prel31
 * offset to the entry in .ARM.extab (compact personality 0/1/2, or a
 * generic personality routine followed by the same opcode words).  The
 * opcodes (EHABI section 10.3) restore the caller's registers from the
 * stack: vsp adjustments, pops of r0-r15 under a mask, VFP pops (skipped
 * over), finish.
 *
 * Every read is checked against the section bytes the caller keeps alive
 * for the table's lifetime, and against the memory callback for the stack.
 * No allocation after exidx_table_new. */
#ifndef MT_UNWIND_EXIDX_H
#define MT_UNWIND_EXIDX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct exidx_table;

struct exidx_sources {
    bool big_endian;
    const uint8_t *exidx;
    size_t exidx_size;
    uint64_t exidx_vaddr;   /* link-time address of .ARM.exidx */
    const uint8_t *extab;   /* may be NULL */
    size_t extab_size;
    uint64_t extab_vaddr;
};

/* NULL when the section is empty or not a whole number of entries (or out
 * of memory). */
struct exidx_table *exidx_table_new(const struct exidx_sources *src);
void exidx_table_free(struct exidx_table *t);
/* The byte order of the object (and so of its stack words). */
bool exidx_big_endian(const struct exidx_table *t);

/* At most 3 + 255 words * 4 opcode bytes. */
#define EXIDX_OPS_MAX 1024

enum exidx_find_result {
    EXIDX_FOUND,
    EXIDX_NONE,          /* no entry covers the pc, or it is malformed */
    EXIDX_CANTUNWIND,    /* the function says no frame can be unwound (outermost) */
};

/* The opcodes of the function containing link_pc: ops[0..*n), and the
 * link-time start of that function. */
enum exidx_find_result exidx_find(const struct exidx_table *t, uint64_t link_pc, uint8_t *ops,
                                  size_t *n, uint64_t *fn_start);

/* The registers of one frame, r0-r15; bit n of valid says r[n] is known. */
struct exidx_regs {
    uint32_t r[16];
    uint32_t valid;
};

/* Executes ops on regs: on success (0) regs are the caller's, with r15 the
 * return address (bit 0: Thumb) or, when *full_context, the exact pc of a
 * frame interrupted by a signal (the restorer popped sp and pc together).
 * -1: a malformed or refused sequence, or stack memory not readable. */
int exidx_execute(const uint8_t *ops, size_t n, struct exidx_regs *regs,
                  int (*read)(void *ctx, uint64_t addr, void *buf, size_t len), void *ctx,
                  bool big_endian, bool *full_context);

#endif
