/* The arm unwinder's step at one pc (unwind.c: EHABI opcodes, else the
 * Thumb prologue, where no CFI covers it), said as fixed offsets when it
 * can be: the caller's sp (the CFA) as sp or r11 plus an offset, the
 * return address and r11 read at offsets from it.  The agent unwinds in
 * the target with such rows (target/agent/agent_rows.c); everything else
 * (a frame pointer in r7, a signal frame, a return address left in lr)
 * stays with the tracer.  The opcodes are run on symbolic registers, so
 * the form is exactly what they would do. */
#ifndef MT_UNWIND_ARM_STEP_FORM_H
#define MT_UNWIND_ARM_STEP_FORM_H

#include <stdbool.h>
#include <stdint.h>

#include "target/unwind/unwind.h"

enum arm_step_kind {
    ARM_STEP_NONE,       /* the step cannot be said in the form */
    ARM_STEP_ROW,        /* the fields below */
    ARM_STEP_STOP,       /* the unwinder stops here (nothing describes the pc) */
    ARM_STEP_OUTERMOST,  /* EXIDX_CANTUNWIND and no prologue: the outermost frame */
};

struct arm_step_form {
    enum arm_step_kind kind;
    bool cfa_from_fp;    /* CFA = r7 + cfa_off, else sp + cfa_off */
    int32_t cfa_off;
    int32_t ra_off;      /* the return address at CFA + ra_off */
    bool fp_saved;       /* r7 at CFA + fp_off, else unchanged */
    int32_t fp_off;
};

/* The step at probe (a return address - 1, without the Thumb bit), as the
 * unwinder takes it where no CFI row covers the pc (lookup: its find_exidx
 * and func_code). */
struct arm_step_form arm_step_form(const struct unwind_lookup *lookup, uint64_t probe);

#endif
