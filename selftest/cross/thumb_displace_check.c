/* Displaced Thumb instructions executed for real (under qemu-arm here, or
 * on a board): each runs once in place and once as arch_displace planned
 * it, and r0-r7 and the flags afterwards must be equal.  The CPU is the
 * oracle, and the instructions come from an assembler (llvm-mc, in
 * selftest/tests/arch_cross_displace.sh), one per line on stdin:
 *
 *     OFFSET FLAGS EXPECT HEX... # what
 *
 * OFFSET is where the instruction sits past the code base C (0 or 2: both
 * halves of a word, since Thumb literal addresses are word aligned), FLAGS
 * the APSR before it, EXPECT "run" (must be displaced and give the same
 * result), "refuse" (must be refused), "plan" (a function's first
 * instruction: the trap and the plan must cover exactly its bytes, and a
 * refusal is counted) or "must" (the same, and it must not be refused: the
 * functions memtrace intercepts), HEX its bytes (2 or 4).
 *
 * The page: C = page + 0x400; the instruction at C + OFFSET, then
 * "bx r8" (r8 holds the harness's return point); Thumb branch targets at
 * C + 0x40 and C + 0x100 and an ARM one at C + 0x180 set r0 and copy lr to
 * r1; every other word holds a pattern that literal loads read. */
#if defined(__arm__)
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "arch/arch.h"

#define PAGE 4096
#define CODE 0x400

struct arm_ctx {
    uint32_t entry, flags, r[8];
};
void thumb_run(struct arm_ctx *ctx);

/* ARM state whatever the C code is compiled as; the code returns through
 * r8, and r12 is free for the displaced code to use.  sp is put back from
 * r11 after it (a push leaves it moved). */
__asm__(".text\n"
        ".arm\n"
        ".global thumb_run\n"
        ".type thumb_run, %function\n"
        "thumb_run:\n"
        "push {r4-r11, lr}\n"
        "push {r0, r1}\n"
        "mov r10, r0\n"
        "ldr r9, [r10]\n"
        "ldr r11, [r10, #4]\n"
        "msr APSR_nzcvq, r11\n"
        "add r10, r10, #8\n"
        "ldm r10, {r0-r7}\n"
        "adr r8, 1f\n"
        "mov r11, sp\n"
        "mov lr, #0x7700\n"
        "mov r12, #0x3300\n"
        "bx r9\n"
        "1:\n"
        "mov sp, r11\n"
        "pop {r10, r11}\n"
        "mrs r11, APSR\n"
        "str r11, [r10, #4]\n"
        "add r10, r10, #8\n"
        "stm r10, {r0-r7}\n"
        "pop {r4-r11, pc}\n");

static void put16(uint8_t *p, uint16_t h) { memcpy(p, &h, 2); }
static void put32(uint8_t *p, uint32_t w) { memcpy(p, &w, 4); }

static void thumb_stub(uint8_t *p, uint16_t mov_r0)
{
    put16(p, mov_r0);     /* movs r0, #imm */
    put16(p + 2, 0x4671); /* mov r1, lr */
    put16(p + 4, 0x4740); /* bx r8 */
}

/* The page with the instruction bytes (or the breakpoint) at C + off. */
static void fill(uint8_t *a, unsigned off, const uint8_t *insn, unsigned len)
{
    for (unsigned o = 0; o < PAGE; o += 4)
        put32(a + o, 0x81000000u | o << 4 | o);
    memset(a + CODE, 0, 0x20);
    memcpy(a + CODE + off, insn, len);
    put16(a + CODE + off + len, 0x4740);          /* bx r8 */
    thumb_stub(a + CODE + 0x40, 0x2055);
    thumb_stub(a + CODE + 0x100, 0x2056);
    put32(a + CODE + 0x180, 0xe3a00066u);         /* mov r0, #0x66 */
    put32(a + CODE + 0x184, 0xe1a0100eu);         /* mov r1, lr */
    put32(a + CODE + 0x188, 0xe12fff18u);         /* bx r8 */
    __builtin___clear_cache((char *)a, (char *)a + PAGE);
}

static uint8_t *map_page(void)
{
    void *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int main(void)
{
    uint8_t *a = map_page(), *slot = map_page();
    if (!a || !slot) {
        perror("mmap");
        return 1;
    }
    uint32_t C = (uint32_t)(uintptr_t)a + CODE, S = (uint32_t)(uintptr_t)slot + 64;
    int bad = 0, runs = 0, refused = 0, lines = 0, planned = 0, plan_refused = 0;
    char line[512];
    while (fgets(line, sizeof(line), stdin)) {
        unsigned off, flags;
        char expect[16];
        int used = 0;
        if (line[0] == '\n' || line[0] == '#')
            continue;
        if (sscanf(line, "%u %x %15s %n", &off, &flags, expect, &used) != 3 || off > 2) {
            printf("FAIL malformed case: %s", line);
            bad++;
            continue;
        }
        lines++;
        uint8_t insn[4];
        unsigned len = 0;
        char *p = line + used, *end;
        while (len < 4 && *p && *p != '#') {
            unsigned long v = strtoul(p, &end, 16);
            if (end == p)
                break;
            insn[len++] = (uint8_t)v;
            p = end;
            while (*p == ' ')
                p++;
        }
        char *what = strchr(line, '#');
        what = what ? what + 1 : "?";
        what[strcspn(what, "\n")] = '\0';
        uint8_t bkpt[ARCH_BREAKPOINT_LEN];
        unsigned bplen = arch_breakpoint_for((C + off) | 1u, insn, len, bkpt);
        struct displace_plan pl = arch_displace(insn, len, (C + off) | 1u, S);
        bool want_refuse = strcmp(expect, "refuse") == 0;
        bool plan_only = strcmp(expect, "plan") == 0, must = strcmp(expect, "must") == 0;
        if (len < 2 || bplen != len || (pl.kind != DISPLACE_UNSUPPORTED && pl.insn_len != len)) {
            printf("FAIL %-44s off %u: %u bytes, trap %u, planned length %u\n", what, off, len,
                   bplen, pl.insn_len);
            bad++;
            continue;
        }
        if (plan_only || must) {
            planned++;
            if (pl.kind == DISPLACE_UNSUPPORTED) {
                plan_refused++;
                printf("note %-44s refused (%s)\n", what, line);
            }
            if (must && pl.kind == DISPLACE_UNSUPPORTED) {
                printf("FAIL %-44s refused\n", what);
                bad++;
            }
            continue;
        }
        if (want_refuse || pl.kind == DISPLACE_UNSUPPORTED) {
            bool ok = want_refuse && pl.kind == DISPLACE_UNSUPPORTED;
            printf("%s %-44s off %u %s\n", ok ? "ok  " : "FAIL", what, off,
                   pl.kind == DISPLACE_UNSUPPORTED ? "refused" : "not refused");
            bad += !ok;
            refused += ok;
            continue;
        }
        struct arm_ctx want = {.entry = (C + off) | 1u, .flags = flags << 28,
                               .r = {10, 11, 0, 13, 14, 15, 16, 17}};
        struct arm_ctx got = want;
        fill(a, off, insn, len);
        thumb_run(&want);
        /* The breakpoint stays in place while the displaced copy runs. */
        fill(a, off, bkpt, bplen);
        if (pl.kind == DISPLACE_EMULATE) {
            got.entry = (uint32_t)pl.new_pc;
        } else {
            memset(slot, 0, PAGE);
            memcpy(slot + 64, pl.slot_bytes, pl.slot_len);
            __builtin___clear_cache((char *)slot, (char *)slot + PAGE);
            got.entry = S + pl.slot_entry;
        }
        thumb_run(&got);
        runs++;
        bool same = memcmp(want.r, got.r, sizeof(want.r)) == 0 &&
                    (want.flags >> 27) == (got.flags >> 27);
        printf("%s %-44s off %u %s\n", same ? "ok  " : "FAIL", what, off,
               pl.kind == DISPLACE_EMULATE ? "emulated" : "copied");
        if (!same) {
            bad++;
            for (int r = 0; r < 8; r++)
                if (want.r[r] != got.r[r])
                    printf("     r%d: in place 0x%x, displaced 0x%x\n", r, want.r[r], got.r[r]);
            if ((want.flags >> 27) != (got.flags >> 27))
                printf("     flags: in place 0x%x, displaced 0x%x\n", want.flags, got.flags);
        }
    }
    printf("thumb: %d cases, %d displaced runs, %d refused as expected, %d function entries "
           "planned (%d refused), %d wrong\n",
           lines, runs, refused, planned, plan_refused, bad);
    return bad || lines == 0 ? 1 : 0;
}
#else
int main(void) { return 77; }
#endif
