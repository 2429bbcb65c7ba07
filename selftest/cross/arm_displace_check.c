/* Displaced A32 (ARM-state) instructions executed for real (under qemu-arm
 * here, or on a board): each runs once in place and once as arch_displace
 * planned it, and r0-r7 and the flags afterwards must be equal.  The CPU is
 * the oracle.  Instructions that read the pc in ways the planner does not
 * rewrite must be refused, not copied.
 *
 * Code page at A: the instruction, "bx r12" at A+4 (r12 holds the harness's
 * return point); at A+0x100 a branch target sets r0 and copies lr to r1;
 * a literal word at A+0x200. */
#if defined(__arm__)
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "arch/arm_insn.h"

#define PAGE 4096

struct arm_ctx {
    uint32_t entry, flags, r[8];
};
void arm_run(struct arm_ctx *ctx);

/* ARM state whatever the C code is compiled as; returns through r12. */
__asm__(".text\n"
        ".arm\n"
        ".global arm_run\n"
        ".type arm_run, %function\n"
        "arm_run:\n"
        "push {r4-r11, lr}\n"
        "push {r0, r1}\n"
        "mov r10, r0\n"
        "ldr r9, [r10]\n"
        "ldr r11, [r10, #4]\n"
        "msr APSR_nzcvq, r11\n"
        "add r10, r10, #8\n"
        "ldm r10, {r0-r7}\n"
        "adr r12, 1f\n"
        "mov lr, #0x7700\n"
        "bx r9\n"
        "1:\n"
        "pop {r10, r11}\n"
        "mrs r11, APSR\n"
        "str r11, [r10, #4]\n"
        "add r10, r10, #8\n"
        "stm r10, {r0-r7}\n"
        "pop {r4-r11, pc}\n");

static void put32(uint8_t *p, uint32_t w) { memcpy(p, &w, 4); }

struct arm_case {
    const char *what;
    uint32_t insn;
    uint32_t flags;
    bool refuse;
};

#define Z_FLAG 0x40000000u

static const struct arm_case cases[] = {
    {"add r0, r0, #1", 0xe2800001u, 0, false},
    {"mov r3, r4", 0xe1a03004u, 0, false},
    {"addeq r0, r0, #1 (not executed)", 0x02800001u, 0, false},
    {"adds r2, r2, #0 (sets flags)", 0xe2922000u, Z_FLAG, false},
    {"ldr r6, [pc, #0x1f8]", 0xe59f61f8u, 0, false},
    {"ldrb r7, [pc, #0x1f8]", 0xe5df71f8u, 0, false},
    {"ldr r2, [pc, #-4]", 0xe51f2004u, 0, false},
    {"ldreq r6, [pc, #0x1f8] (taken)", 0x059f61f8u, Z_FLAG, false},
    {"ldreq r6, [pc, #0x1f8] (not taken)", 0x059f61f8u, 0, false},
    {"b .+0x100", 0xea00003eu, 0, false},
    {"bl .+0x100", 0xeb00003eu, 0, false},
    {"beq .+0x100 (taken)", 0x0a00003eu, Z_FLAG, false},
    {"beq .+0x100 (not taken)", 0x0a00003eu, 0, false},
    {"bleq .+0x100 (taken)", 0x0b00003eu, Z_FLAG, false},
    {"mov r0, pc (refused)", 0xe1a0000fu, 0, true},
    {"add r0, pc, #4 (refused)", 0xe28f0004u, 0, true},
    {"blx imm (refused)", 0xfa00003eu, 0, true},
};

static uint8_t *map_page(void)
{
    void *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void fill(uint8_t *a, uint32_t insn)
{
    for (int off = 0; off < PAGE; off += 4)
        put32(a + off, ARM_BREAKPOINT);
    put32(a, insn);
    put32(a + 4, 0xe12fff1cu);       /* bx r12 */
    put32(a + 0x100, 0xe3a00055u);   /* mov r0, #0x55 */
    put32(a + 0x104, 0xe1a0100eu);   /* mov r1, lr */
    put32(a + 0x108, 0xe12fff1cu);   /* bx r12 */
    put32(a + 0x200, 0x81234567u);
    __builtin___clear_cache((char *)a, (char *)a + PAGE);
}

int main(void)
{
    uint8_t *a = map_page(), *slot = map_page();
    if (!a || !slot) {
        perror("mmap");
        return 1;
    }
    uint32_t A = (uint32_t)(uintptr_t)a, S = (uint32_t)(uintptr_t)slot;
    int bad = 0, runs = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct arm_case *c = &cases[i];
        struct displace_plan p = arm_displace(c->insn, A, S);
        if (c->refuse || p.kind == DISPLACE_UNSUPPORTED) {
            bool ok = c->refuse && p.kind == DISPLACE_UNSUPPORTED;
            printf("%s %-40s %s\n", ok ? "ok  " : "FAIL", c->what,
                   p.kind == DISPLACE_UNSUPPORTED ? "refused" : "not refused");
            bad += !ok;
            continue;
        }
        struct arm_ctx want = {.entry = A, .flags = c->flags, .r = {10, 11, 12, 13, 14, 15, 16, 17}};
        struct arm_ctx got = want;
        fill(a, c->insn);
        arm_run(&want);
        /* The breakpoint stays in place while the displaced copy runs. */
        fill(a, ARM_BREAKPOINT);
        if (p.kind == DISPLACE_EMULATE) {
            got.entry = (uint32_t)p.new_pc;
        } else {
            memcpy(slot, p.slot_bytes, p.slot_len);
            __builtin___clear_cache((char *)slot, (char *)slot + p.slot_len);
            got.entry = S;
        }
        arm_run(&got);
        runs++;
        bool same = memcmp(want.r, got.r, sizeof(want.r)) == 0 && want.flags == got.flags;
        printf("%s %-40s %s\n", same ? "ok  " : "FAIL", c->what,
               p.kind == DISPLACE_EMULATE ? "emulated" : "copied");
        if (!same) {
            bad++;
            for (int r = 0; r < 8; r++)
                if (want.r[r] != got.r[r])
                    printf("     r%d: in place 0x%x, displaced 0x%x\n", r, want.r[r], got.r[r]);
        }
    }
    printf("arm: %d displaced runs, %d cases wrong\n", runs, bad);
    return bad ? 1 : 0;
}
#else
int main(void) { return 77; }
#endif
