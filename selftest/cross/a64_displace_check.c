/* Displaced A64 instructions executed for real (under qemu-aarch64 here, or
 * on a board): each instruction runs once in place and once as
 * arch_displace planned it (emulated, or copied to a slot near it and to
 * one more than 128 MiB away), and the registers afterwards must be equal.
 * The CPU is the oracle: no expected value is written down here.
 *
 *   a64_displace_check        exit 0 when every case agrees
 *
 * Layout of the code page at A: the instruction at A, "br x12" at A+4 (x12
 * holds the harness's return point); a branch target at A+0x100 sets x0 and
 * copies lr to x1 before "br x12"; a literal for the loads at A+0x200. */
#if defined(__aarch64__)
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "arch/aarch64_insn.h"

#define PAGE 4096
#define NREGS 8

static void put32(uint8_t *p, uint32_t w) { memcpy(p, &w, 4); }

/* Sets x0-x7 and nzcv from r/flags, jumps to entry, and stores x0-x7 and
 * nzcv when the code comes back through x12. */
static void run(uint64_t entry, uint64_t *r, uint64_t *flags)
{
    __asm__ volatile(
        "stp x29, x30, [sp, #-32]!\n"
        "stp %0, %1, [sp, #16]\n"
        "mov x9, %0\n"
        "ldr x10, [%2]\n"
        "msr nzcv, x10\n"
        "mov x10, %1\n"
        "ldp x0, x1, [x10]\n"
        "ldp x2, x3, [x10, #16]\n"
        "ldp x4, x5, [x10, #32]\n"
        "ldp x6, x7, [x10, #48]\n"
        "adr x12, 1f\n"
        "mov x30, #0x7777\n"   /* a known lr: the branch target reports it */
        "br x9\n"
        "1:\n"
        "ldr x10, [sp, #24]\n"
        "stp x0, x1, [x10]\n"
        "stp x2, x3, [x10, #16]\n"
        "stp x4, x5, [x10, #32]\n"
        "stp x6, x7, [x10, #48]\n"
        "mrs x11, nzcv\n"
        "str x11, [%2]\n"
        "ldp x29, x30, [sp], #32\n"
        :
        : "r"(entry), "r"(r), "r"(flags)
        : "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x9", "x10", "x11", "x12", "x13",
          "x14", "x15", "x16", "x17", "x30", "memory", "cc");
}

struct a64_case {
    const char *what;
    uint32_t insn;
    uint64_t nzcv;   /* flags before (for b.cond) */
};

static const struct a64_case cases[] = {
    {"add x0, x0, #1", 0x91000400u, 0},
    {"nop", 0xd503201fu, 0},
    {"bti c", 0xd503245fu, 0},
    {"adr x3, .+0x204", 0x10001023u, 0},
    {"adr x2, .-8", 0x10ffffc2u, 0},
    {"adrp x4, +1 page", 0xb0000004u, 0},
    {"adrp x5, -1 page", 0xf0ffffe5u, 0},
    {"ldr x6, .+0x200", 0x58001006u, 0},
    {"ldr w7, .+0x200", 0x18001007u, 0},
    {"ldrsw x2, .+0x200", 0x98001002u, 0},
    {"prfm pldl1keep, .+0x200", 0xd8001000u, 0},
    {"b .+0x100", 0x14000040u, 0},
    {"bl .+0x100", 0x94000040u, 0},
    {"b.eq .+0x100 (taken)", 0x54000800u, 0x40000000u},
    {"b.eq .+0x100 (not taken)", 0x54000800u, 0},
    {"cbz x2, .+0x100 (x2 != 0)", 0xb4000802u, 0},
    {"cbnz x2, .+0x100", 0xb5000802u, 0},
    {"tbz w3, #1, .+0x100", 0x36080803u, 0},
    {"tbnz w3, #1, .+0x100", 0x37080803u, 0},
    {"mov x3, x4", 0xaa0403e3u, 0},
    {"orr x7, xzr, #1", 0xb24003e7u, 0},
};

static uint8_t *map_at(uint64_t hint)
{
    void *p = mmap((void *)hint, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void fill_code_page(uint8_t *a)
{
    for (int off = 0; off < PAGE; off += 4)
        put32(a + off, A64_BRK0);
    put32(a + 4, 0xd61f0180u);           /* br x12 */
    put32(a + 0x100, 0xd2800aa0u);       /* mov x0, #0x55 */
    put32(a + 0x104, 0xaa1e03e1u);       /* mov x1, x30 */
    put32(a + 0x108, 0xd61f0180u);       /* br x12 */
    uint64_t lit = 0x8123456789abcdefull;
    memcpy(a + 0x200, &lit, 8);
}

int main(void)
{
    uint8_t *a = map_at(0);
    uint8_t *near_slot = map_at(0);
    uint8_t *far_slot = a ? map_at((uint64_t)(uintptr_t)a + (1ull << 30)) : NULL;
    if (!a || !near_slot || !far_slot) {
        perror("mmap");
        return 1;
    }
    uint64_t A = (uint64_t)(uintptr_t)a;
    uint64_t far = (uint64_t)(uintptr_t)far_slot;
    if ((far > A ? far - A : A - far) < (128ull << 20)) {
        printf("FAIL the far slot is within reach of b: the long jump is not tested\n");
        return 1;
    }
    int bad = 0, runs = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct a64_case *c = &cases[i];
        uint64_t want[NREGS], want_flags = c->nzcv;
        const uint64_t init[NREGS] = {10, 11, 12, 0x1e, 14, 15, 16, 17};
        fill_code_page(a);
        put32(a, c->insn);
        __builtin___clear_cache((char *)a, (char *)a + PAGE);
        memcpy(want, init, sizeof(want));
        run(A, want, &want_flags);

        uint8_t *slots[2] = {near_slot, far_slot};
        for (int s = 0; s < 2; s++) {
            uint64_t S = (uint64_t)(uintptr_t)slots[s];
            struct displace_plan p = a64_displace(c->insn, A, S);
            uint64_t entry;
            if (p.kind == DISPLACE_EMULATE) {
                entry = p.new_pc;
            } else if (p.kind == DISPLACE_OUT_OF_LINE) {
                memcpy(slots[s], p.slot_bytes, p.slot_len);
                __builtin___clear_cache((char *)slots[s], (char *)slots[s] + p.slot_len);
                entry = S;
            } else {
                printf("FAIL %-45s unsupported\n", c->what);
                bad++;
                continue;
            }
            /* The breakpoint stays at A while the displaced copy runs. */
            put32(a, A64_BRK0);
            __builtin___clear_cache((char *)a, (char *)a + 4);
            uint64_t got[NREGS], got_flags = c->nzcv;
            memcpy(got, init, sizeof(got));
            run(entry, got, &got_flags);
            put32(a, c->insn);
            __builtin___clear_cache((char *)a, (char *)a + 4);
            runs++;
            bool same = memcmp(want, got, sizeof(want)) == 0 && want_flags == got_flags;
            printf("%s %-45s %s slot %s\n", same ? "ok  " : "FAIL", c->what,
                   p.kind == DISPLACE_EMULATE ? "emulated" : "copied to", s ? "far" : "near");
            if (!same) {
                bad++;
                for (int r = 0; r < NREGS; r++)
                    if (want[r] != got[r])
                        printf("     x%d: in place 0x%llx, displaced 0x%llx\n", r,
                               (unsigned long long)want[r], (unsigned long long)got[r]);
            }
        }
    }
    printf("aarch64: %d displaced runs, %d differ from running in place\n", runs, bad);
    return bad ? 1 : 0;
}
#else
int main(void) { return 77; }
#endif
