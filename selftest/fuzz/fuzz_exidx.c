/* libFuzzer harness for the ARM EHABI reader (target/unwind/exidx.c): table
 * lookup through inline, compact and generic-personality entries, the
 * opcode interpreter, and the Thumb prologue analyser (arm_prologue.c).
 *
 * Input: a 5-byte header, then the sections back to back:
 *   [0]     flags: bit 0 big-endian
 *   [1..2]  .ARM.exidx length (little-endian u16)
 *   [3..4]  .ARM.extab length (u16)
 *   then .ARM.exidx (at link address 0x8000), .ARM.extab (at 0x9000), and
 *   the rest is the stack (at 0x10000), also given to the prologue
 *   analyser as code.
 * Each part is copied to its own allocation, so AddressSanitizer sees any
 * read past its end.  Seeds: selftest/fuzz/seeds/exidx/.
 *
 *   selftest/fuzz/run-fuzzers.sh 60 exidx */
#include <stdlib.h>
#include <string.h>

#include "target/unwind/arm_prologue.h"
#include "target/unwind/exidx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct stack {
    const uint8_t *mem;
    size_t size;
};

static int stack_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
    const struct stack *s = ctx;
    if (addr < 0x10000 || addr - 0x10000 > s->size || len > s->size - (addr - 0x10000))
        return -1;
    memcpy(buf, s->mem + (addr - 0x10000), len);
    return 0;
}

static uint8_t *copy(const uint8_t *p, size_t n)
{
    uint8_t *c = malloc(n ? n : 1);
    if (c && n)
        memcpy(c, p, n);
    return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 5)
        return 0;
    bool big_endian = data[0] & 1;
    size_t ix_len = (size_t)(data[1] | data[2] << 8);
    size_t tab_len = (size_t)(data[3] | data[4] << 8);
    const uint8_t *p = data + 5;
    size_t left = size - 5;
    if (ix_len > left)
        ix_len = left;
    uint8_t *ix = copy(p, ix_len);
    p += ix_len;
    left -= ix_len;
    if (tab_len > left)
        tab_len = left;
    uint8_t *tab = copy(p, tab_len);
    p += tab_len;
    left -= tab_len;
    uint8_t *stk = copy(p, left);

    struct exidx_sources src = {
        .big_endian = big_endian, .exidx = ix, .exidx_size = ix_len, .exidx_vaddr = 0x8000,
        .extab = tab_len ? tab : NULL, .extab_size = tab_len, .extab_vaddr = 0x9000,
    };
    struct exidx_table *t = exidx_table_new(&src);
    struct stack s = {stk, left};
    if (t) {
        uint8_t ops[EXIDX_OPS_MAX];
        /* pcs: a sweep over the link addresses the prel31 fields can reach
         * from the table, and the table's own words. */
        for (uint64_t pc = 0; pc < 0x20000; pc += 0x101) {
            size_t n = 0;
            uint64_t fn = 0;
            if (exidx_find(t, pc, ops, &n, &fn) != EXIDX_FOUND)
                continue;
            struct exidx_regs regs;
            for (unsigned r = 0; r < 16; r++)
                regs.r[r] = 0x10000 + r * 4;
            regs.valid = (uint32_t)(pc & 0xffff) | 0x6000;
            bool full;
            exidx_execute(ops, n, &regs, stack_read, &s, big_endian, &full);
        }
        exidx_table_free(t);
    }
    struct arm_prologue pro;
    arm_thumb_prologue(stk, left, &pro);
    free(ix);
    free(tab);
    free(stk);
    return 0;
}
