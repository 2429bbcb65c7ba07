/* libFuzzer harness for CFI parsing, FDE lookup, the CFA interpreter, the
 * expression evaluator and the unwinder.
 *
 * Input: a 13-byte header, then the sections back to back:
 *   [0]     flags: bit 0 big-endian, bit 1 4-byte addresses
 *   [1..2]  .eh_frame_hdr length (little-endian u16)
 *   [3..4]  .eh_frame length (u16)
 *   [5..8]  .eh_frame_hdr vaddr (u32)
 *   [9..12] .eh_frame vaddr (u32)
 *   then .eh_frame_hdr, .eh_frame, and the rest is .debug_frame.
 * Each section is copied to its own allocation, so AddressSanitizer sees
 * any read past its end.  Seeds: selftest/fuzz/seeds/cfi/.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. selftest/fuzz/fuzz_cfi.c \
 *       target/dwarf/cfi_*.c target/dwarf/expr.c shared/files/cursor.c \
 *       target/unwind/unwind.c -o fuzz_cfi
 *   ./fuzz_cfi -max_total_time=60 selftest/fuzz/seeds/cfi */
#include <stdlib.h>
#include <string.h>

#include "target/dwarf/cfi.h"
#include "target/unwind/unwind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fake {
    const uint8_t *mem;
    size_t size;
    struct cfi_table *table;
};

/* Target memory is the input itself, mapped at 0x10000. */
static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
    const struct fake *f = ctx;
    if (addr < 0x10000 || addr - 0x10000 > f->size || len > f->size - (addr - 0x10000))
        return -1;
    memcpy(buf, f->mem + (addr - 0x10000), len);
    return 0;
}

static struct cfi_table *fake_find(void *ctx, uint64_t pc, uint64_t *bias)
{
    const struct fake *f = ctx;
    *bias = 0;
    return pc < 0x100000000ull ? f->table : NULL;
}

static uint8_t *copy(const uint8_t *p, size_t n)
{
    uint8_t *c = malloc(n ? n : 1);
    if (c && n)
        memcpy(c, p, n);
    return c;
}

static uint32_t rd32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 13)
        return 0;
    struct cfi_sources s;
    memset(&s, 0, sizeof(s));
    s.big_endian = data[0] & 1;
    s.addr_size = data[0] & 2 ? 4 : 8;
    size_t hdr_len = data[1] | data[2] << 8;
    size_t eh_len = data[3] | data[4] << 8;
    s.eh_frame_hdr_vaddr = rd32(data + 5);
    s.eh_frame_vaddr = rd32(data + 9);
    s.text_vaddr = 0x1000;
    s.data_vaddr = 0x2000;
    const uint8_t *p = data + 13;
    size_t left = size - 13;
    if (hdr_len > left)
        hdr_len = left;
    uint8_t *hdr = copy(p, hdr_len);
    p += hdr_len;
    left -= hdr_len;
    if (eh_len > left)
        eh_len = left;
    uint8_t *eh = copy(p, eh_len);
    p += eh_len;
    left -= eh_len;
    uint8_t *dbg = copy(p, left);
    if (hdr_len) {
        s.eh_frame_hdr = hdr;
        s.eh_frame_hdr_size = hdr_len;
    }
    if (eh_len) {
        s.eh_frame = eh;
        s.eh_frame_size = eh_len;
    }
    if (left) {
        s.debug_frame = dbg;
        s.debug_frame_size = left;
    }

    struct fake f = { data, size, cfi_table_new(&s) };
    if (f.table) {
        struct cfi_row row;
        /* pcs: words of the input (FDE starts in seeds), and a sweep. */
        for (size_t i = 0; i + 4 <= size && i < 256; i += 4) {
            uint64_t pc = rd32(data + i);
            cfi_find_row(f.table, pc, &row);
            cfi_find_row(f.table, pc + 1, &row);
        }
        for (uint64_t pc = 0; pc < 0x3000; pc += 0x33)
            cfi_find_row(f.table, pc, &row);

        struct unwind_memory mem = { fake_read, &f };
        struct unwind_lookup lookup = { fake_find, &f, NULL, NULL };
        uint64_t pcs[32];
        for (size_t i = 0; i + 8 <= size && i < 64; i += 8) {
            struct unwind_regs regs;
            memset(&regs, 0, sizeof(regs));
            for (int r = 0; r < ARCH_DWARF_NREGS; r++)
                regs.r[r] = 0x10000 + (uint64_t)r * 8;
            regs.r[UNWIND_DWARF_PC] = rd32(data + i);
            regs.r[ARCH_DWARF_SP] = 0x10000 + (rd32(data + i + 4) % (size + 1));
            regs.valid = (1ull << ARCH_DWARF_NREGS) - 1;
            unwind_stack(&regs, &mem, &lookup, pcs, 32);
        }
        cfi_table_free(f.table);
    }
    free(hdr);
    free(eh);
    free(dbg);
    return 0;
}
