/* libFuzzer harness for the DWARF expression evaluator (target/dwarf/expr.c),
 * the DW_OP_* stack machine CFI uses for DW_CFA_*expression rules.
 * Built and run by selftest/fuzz/run-fuzzers.sh.
 *
 * Input: byte 0 flags (bit 0 big-endian, bit 1 4-byte addresses, bit 2 a CFA
 * is known, bit 3 registers are known), byte 1 how many values (0-3) are
 * pushed before the expression runs (DW_CFA_expression pushes the CFA), then
 * the expression bytes.  Target memory is the input itself, mapped at 0x10000,
 * and registers point into it, so DW_OP_deref of a register finds bytes.
 * Seeds: selftest/fuzz/seeds/expr/, expressions copied byte for byte from the
 * .eh_frame of /bin/ls (the PLT rule) and of glibc (__restore_rt's rules). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "target/dwarf/expr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fake_memory {
    const uint8_t *bytes;
    size_t size;
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
    const struct fake_memory *m = ctx;
    if (addr < 0x10000 || addr - 0x10000 > m->size || len > m->size - (addr - 0x10000))
        return -1;
    memcpy(buf, m->bytes + (addr - 0x10000), len);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    struct fake_memory mem = { data, size };
    struct unwind_regs regs;
    memset(&regs, 0, sizeof(regs));
    for (int r = 0; r < ARCH_DWARF_NREGS; r++)
        regs.r[r] = 0x10000 + (uint64_t)r * 8;
    regs.valid = (1ull << ARCH_DWARF_NREGS) - 1;

    struct expr_context ctx = {
        .addr_size = data[0] & 2 ? 4 : 8,
        .big_endian = data[0] & 1,
        .regs = data[0] & 8 ? &regs : NULL,
        .read = fake_read,
        .read_ctx = &mem,
        .has_cfa = data[0] & 4,
        .cfa = 0x10010,
    };
    uint64_t initial[3] = { 0x10010, 0x10000, 7 };
    size_t npush = data[1] % 4;
    /* The expression is copied to its own allocation so AddressSanitizer
     * sees a read one byte past its end. */
    size_t len = size - 2;
    uint8_t *ops = malloc(len ? len : 1);
    if (!ops)
        return 0;
    memcpy(ops, data + 2, len);

    uint64_t first = 0, again = 0;
    enum expr_status st = expr_eval(ops, len, &ctx, initial, npush, &first);
    enum expr_status st2 = expr_eval(ops, len, &ctx, initial, npush, &again);
    /* The machine is a pure function of its input, and arithmetic wraps at
     * the address size: a 4-byte target never sees a value above 32 bits. */
    if (st != st2 || (st == EXPR_OK && first != again))
        abort();
    if (st == EXPR_OK && ctx.addr_size == 4 && first > 0xffffffffull)
        abort();
    if (st > EXPR_OK || st < EXPR_ERR_UNSUPPORTED)
        abort();
    free(ops);
    return 0;
}
