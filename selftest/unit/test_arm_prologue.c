/* Thumb prologue analysis (target/unwind/arm_prologue.c) against the
 * compiler's own call frame information, read by binutils.
 *
 *   test_arm_prologue ELF < POINTS
 *
 * POINTS: lines "START PC CFA_OFFSET RA_OFFSET" (hex addresses, decimal
 * offsets; RA_OFFSET is where lr was saved relative to the CFA, 0 when it
 * was not), made by selftest/tests/arm_prologue.sh from `readelf -wF` of a
 * debug file's .debug_frame, for the prologue rows of Thumb functions.  The
 * analysis of ELF's code from START to PC must give the same frame size and
 * lr slot, or say it does not know; a different answer is a failure.
 * Prints "agree N unknown N wrong N" and each wrong point.
 *
 * Without arguments (as run by run-tests.sh): a few prologues copied from
 * Debian 12's armhf libc, with the rows `readelf -wF` prints for them from
 * libc6-dbg's .debug_frame. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/elf/elf_file.h"
#include "shared/files/byte_source.h"
#include "target/unwind/arm_prologue.h"

static int fails;

static void expect(const char *what, const char *hex, size_t len, int ret, uint32_t frame, int32_t lr)
{
    uint8_t code[ARM_PROLOGUE_MAX];
    size_t n = strlen(hex) / 2;
    for (size_t i = 0; i < n && i < sizeof(code); i++)
        sscanf(hex + 2 * i, "%2hhx", &code[i]);
    struct arm_prologue p;
    int r = arm_thumb_prologue(code, len, &p);
    if (r != ret || (r == 0 && (p.frame_size != frame || p.saved[14] != lr))) {
        printf("FAIL %s: ret %d frame %u lr %d, want ret %d frame %u lr %d\n", what, r, p.frame_size,
               p.saved[14], ret, frame, lr);
        fails++;
    }
}

/* _IO_doallocbuf (libc.so.6 0x585ac): ldr; cbz; bx lr; ldr; push {r4, r5,
 * r6, lr}; ... bpl; ... blx r3 at +0x2e.  readelf -wF: from 0x585b6 (after
 * the push) CFA r13+16, ra c-4; before, r13+0, ra u. */
static const char doallocbuf[] = "c36903b17047036870b50446990702d5c26e002a1ddd154a154bd4f898507a447b44"
                                 "a91a9b1a8b421cd96b6b20469847";

static int builtin(void)
{
    expect("shrink-wrapped, at the call", doallocbuf, 0x30, 0, 16, 12);
    expect("shrink-wrapped, after the push", doallocbuf, 0x0a, 0, 16, 12);
    expect("shrink-wrapped, before the push", doallocbuf, 0x08, 0, 0, -1);
    /* Before the early return: lr still holds the return address. */
    expect("shrink-wrapped, at the cbz", doallocbuf, 0x02, 0, 0, -1);
    /* cbz over a push (a path that skipped it joins one that did not):
     * cbz r0, +2; push {r4, lr}; nop */
    expect("paths that disagree", "08b110b500bf", 6, -1, 0, -1);
    /* b over data to the push: b +2; .short 0xffff; push {r4, lr}; nop */
    expect("branch over data", "00e0ffff10b500bf", 8, 0, 8, 4);
    /* bx lr with nothing after it that any path reaches: unknown. */
    expect("after a return", "704710b500bf", 6, -1, 0, -1);
    /* it eq; bxeq lr (a conditional return); push {r4, lr}; nop */
    expect("conditional return", "08bf704710b500bf", 8, 0, 8, 4);
    if (!fails)
        printf("PASS arm_thumb_prologue: 8 cases\n");
    return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 1)
        return builtin();
    if (argc != 2) {
        fprintf(stderr, "usage: %s [ELF < POINTS]\n", argv[0]);
        return 2;
    }
    char err[256];
    struct byte_source *src = byte_source_open_file(argv[1], err, sizeof(err));
    struct elf_file *f = src ? elf_file_open(src, err, sizeof(err)) : NULL;
    if (!f) {
        fprintf(stderr, "%s: %s\n", argv[1], err);
        return 2;
    }
    unsigned long agree = 0, unknown = 0, wrong = 0;
    unsigned long long start, pc;
    long cfa, ra;
    while (scanf("%llx %llx %ld %ld", &start, &pc, &cfa, &ra) == 4) {
        uint8_t code[ARM_PROLOGUE_MAX];
        if (pc < start || pc - start > sizeof(code))
            continue;
        size_t len = (size_t)(pc - start);
        if (len && elf_file_read_vaddr(f, start, code, len) < 0) {
            fprintf(stderr, "cannot read %zu bytes at 0x%llx\n", len, start);
            return 2;
        }
        struct arm_prologue p;
        if (arm_thumb_prologue(code, len, &p) < 0) {
            unknown++;
            continue;
        }
        long want_lr = ra ? cfa + ra : -1;
        if ((long)p.frame_size == cfa && (long)p.saved[14] == want_lr) {
            agree++;
        } else {
            wrong++;
            printf("wrong: function 0x%llx pc 0x%llx: CFI frame %ld lr %ld, analysis frame %u lr %d\n",
                   start, pc, cfa, want_lr, p.frame_size, p.saved[14]);
        }
    }
    printf("agree %lu unknown %lu wrong %lu\n", agree, unknown, wrong);
    elf_file_close(f);
    return wrong ? 1 : 0;
}
