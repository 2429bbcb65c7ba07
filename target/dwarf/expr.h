/* A DWARF expression evaluator for CFI (DW_CFA_def_cfa_expression,
 * DW_CFA_expression, DW_CFA_val_expression): the DW_OP_* stack machine
 * without DIE context.  Bounded stack and step count, so hostile input
 * cannot loop or overflow; target memory is read through a callback. */
#ifndef MT_DWARF_EXPR_H
#define MT_DWARF_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"

#define EXPR_STACK_MAX 64
#define EXPR_STEPS_MAX 4096

struct expr_context {
    unsigned addr_size;                  /* 4 or 8: arithmetic wraps at this width */
    bool big_endian;                     /* of target memory */
    const struct unwind_regs *regs;      /* DW_OP_breg*, DW_OP_regx; NULL: none known */
    /* Reads len bytes of target memory; 0 on success. */
    int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
    void *read_ctx;
    bool has_cfa;                        /* DW_OP_call_frame_cfa */
    uint64_t cfa;
};

enum expr_status {
    EXPR_OK = 0,
    EXPR_ERR_MALFORMED = -1,     /* truncated operand, unknown opcode, bad branch */
    EXPR_ERR_STACK = -2,         /* underflow or overflow */
    EXPR_ERR_REGISTER = -3,      /* register not known */
    EXPR_ERR_MEMORY = -4,        /* unreadable target memory */
    EXPR_ERR_DIV_ZERO = -5,
    EXPR_ERR_STEPS = -6,         /* too many steps: a loop */
    EXPR_ERR_UNSUPPORTED = -7,   /* needs context CFI does not have */
};

/* Evaluates ops[0..len) with the npush values of initial[] pushed first
 * (the CFA for DW_CFA_expression).  The result is the top of the stack. */
enum expr_status expr_eval(const uint8_t *ops, size_t len, const struct expr_context *ctx,
                           const uint64_t *initial, size_t npush, uint64_t *result);

/* Reads an address-size value of target memory in target byte order. */
int expr_read_addr(const struct expr_context *ctx, uint64_t addr, unsigned size, uint64_t *out);

#endif
