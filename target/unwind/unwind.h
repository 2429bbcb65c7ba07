/* Stack unwinding from DWARF CFI.  No allocation: the tracer calls this on
 * every intercepted malloc.
 *
 * Frame 0's pc must be where the thread really is (at a breakpoint trap,
 * the breakpoint's address, not the pc the kernel reports after it).
 * Memory is read only through unwind_memory (a stack window copied once
 * per stop is enough for ordinary and signal frames).  On arm, a pc that
 * no CFI covers is unwound with the module's EHABI tables (exidx.h),
 * signal frames included (glibc's restorer pops the whole context).  On
 * aarch64 return addresses lose their pointer-authentication bits
 * (ARCH_RA_TO_PC).  Not done here: frame-pointer fallback without CFI. */
#ifndef MT_UNWIND_UNWIND_H
#define MT_UNWIND_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"
#include "target/dwarf/cfi.h"
#include "target/unwind/exidx.h"

/* pcs[i] (i > 0) carries this bit when the frame was interrupted by a signal:
 * the pc is exact (look up pc itself), not a return address (look up pc-1). */
#define UNWIND_PC_EXACT (1ull << 63)

/* The pc is the last DWARF register on every supported CPU (x86_64 16,
 * i386 8, aarch64 32, arm 15). */
#define UNWIND_DWARF_PC (ARCH_DWARF_NREGS - 1)

struct unwind_memory {
    /* Target memory, 0 on success.  Usually a stack window already copied. */
    int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
    void *ctx;
};

struct unwind_lookup {
    /* The CFI table of the module containing pc (a runtime address) and its
     * load bias (runtime minus link-time address), or NULL. */
    struct cfi_table *(*find)(void *ctx, uint64_t pc, uint64_t *bias);
    void *ctx;
    /* arm: the EHABI tables (.ARM.exidx) of the module containing pc, for
     * where no CFI row covers it (NULL: none). */
    struct exidx_table *(*find_exidx)(void *ctx, uint64_t pc, uint64_t *bias);
    /* arm: the code of the function containing pc, from its start up to pc
     * (at most max bytes), for prologue analysis where neither CFI nor
     * exidx describe it; the byte count, 0 when unknown (NULL: none). */
    size_t (*func_code)(void *ctx, uint64_t pc, uint64_t *start, uint8_t *code, size_t max);
};

/* Fills pcs[0..n) and returns n: pcs[0] is regs' pc, the others return
 * addresses (or exact pcs, see UNWIND_PC_EXACT).  Stops cleanly at the
 * outermost frame (undefined return address), a pc of 0, a pc without CFI,
 * a CFA that does not grow, unreadable memory, or max. */
int unwind_stack(const struct unwind_regs *regs, const struct unwind_memory *mem,
                 const struct unwind_lookup *lookup, uint64_t *pcs, int max);

/* The same for a thread stopped at a function's first instruction (every
 * intercepted call): where the return address is in a register, frame 1
 * comes from it without CFI.  Elsewhere the same as unwind_stack. */
int unwind_stack_at_entry(const struct unwind_regs *regs, const struct unwind_memory *mem,
                          const struct unwind_lookup *lookup, uint64_t *pcs, int max);

/* One step: from the registers of a frame (at pc, exact or a return address)
 * to its caller's.  0 on success, 1 at the outermost frame, -1 on error.
 * *signal_frame says the caller was interrupted (its pc is exact). */
int unwind_step(struct unwind_regs *regs, bool pc_is_exact, const struct unwind_memory *mem,
                const struct unwind_lookup *lookup, uint64_t *cfa_out, bool *signal_frame);

#endif
