/* The agent engine's entry trampolines on arm (arch/arm_patch.c), executed
 * for real (under qemu-arm here, or on a board): each function below is
 * patched as memtrace patches malloc (its first instructions moved out of
 * line behind the stub, a b.w or b over them), then called through the
 * patch and through the moved copy: both must give what the unpatched
 * function gave on the same CPU (no expected value is written down here).
 * The stub loads its target into pc as it loads the agent's entry, here
 * the copy itself (with the Thumb bit for Thumb code: the load
 * interworks).  The instructions' bytes are llvm-mc's.  Entries that must
 * not move (an IT block, a function shorter than the jump) are refused
 * with a reason, and the functions memtrace intercepts in the libc this
 * runs with are not refused.
 *
 *   arm_patch_check        exit 0 when every case agrees */
#if defined(__arm__)
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "arch/arm_patch.h"
#include "selftest/unit/test.h"

#define PAGE 4096
#define STUB 2048

typedef long (*fn1)(long);

struct entry {
    const char *name;
    int thumb;
    unsigned at;          /* offset of the function in the page */
    uint16_t code[8];     /* halfwords (ARM words as two) */
    unsigned n;
    long args[2];
};

/* PC-relative operands point at a constant 0x100 bytes into the page. */
static const struct entry entries[] = {
    {"adds r0, #1; bx lr", 1, 0, {0x3001, 0x4770}, 2, {0, 41}},
    {"push {r4, lr}; ldr r4, konst; adds r0, r4; pop {r4, pc}", 1, 0, {0xb510, 0x4c3f, 0x1900, 0xbd10}, 4,
     {1, 2}},
    {"add.w r0, r0, #3; bx lr (at 2 mod 4)", 1, 2, {0xf100, 0x0003, 0x4770}, 3, {0, 7}},
    {"cbz r0, 1f; movs r0, #5; bx lr; 1: movs r0, #9; bx lr", 1, 0, {0xb108, 0x2005, 0x4770, 0x2009, 0x4770},
     5, {0, 3}},
    {"movs r1, #1; add.w r0, r0, r1, lsl #2; bx lr (6 bytes moved)", 1, 2, {0x2101, 0xeb00, 0x0081, 0x4770},
     4, {5, 6}},
    {"nop; adds r0, #7; bx lr", 1, 0, {0xbf00, 0x3007, 0x4770}, 3, {1, 2}},
    {"adr r1, konst; ldr r1, [r1]; adds r0, r0, r1; bx lr", 1, 0, {0xa13f, 0x6809, 0x1840, 0x4770}, 4,
     {0, 9}},
    {"ldr.w r1, konst; adds r0, r1; bx lr (at 2 mod 4)", 1, 2, {0xf8df, 0x10fc, 0x1840, 0x4770}, 4, {4, 8}},
    {"b.w +4; udf; adds r0, #2; bx lr", 1, 0, {0xf000, 0xb802, 0xde00, 0xde00, 0x3002, 0x4770}, 6, {1, 5}},
    /* a tail branch padded by a nop (jemalloc's operator new[] on armhf) */
    {"b.n 1f; nop (padding); 1: adds r0, #2; bx lr", 1, 0, {0xe000, 0xbf00, 0x3002, 0x4770}, 4, {1, 5}},
    {"add r0, r0, #1; bx lr (ARM)", 0, 0, {0x0001, 0xe280, 0xff1e, 0xe12f}, 4, {0, 41}},
    {"ldr r1, konst; add r0, r0, r1; bx lr (ARM)", 0, 0, {0x10f8, 0xe59f, 0x0001, 0xe080, 0xff1e, 0xe12f}, 6,
     {2, 3}},
};

static void protect(uint8_t *page, int prot)
{
    if (mprotect(page, PAGE, prot) < 0) {
        perror("mprotect");
        failures++;
    }
    if (prot & PROT_EXEC)
        __builtin___clear_cache((char *)page, (char *)page + PAGE);
}

static fn1 as_fn(uint32_t addr) { return (fn1)(uintptr_t)addr; }

static void run_entry(uint8_t *page, const struct entry *e)
{
    uint8_t *fn = page + e->at, *stub = page + STUB, *copy = stub + ARM_PATCH_STUB_LEN;
    uint32_t bit = e->thumb ? 1u : 0u, fn_addr = (uint32_t)(uintptr_t)fn | bit;
    memset(page, 0, PAGE);
    memcpy(fn, e->code, e->n * 2);
    uint32_t konst = 0x1234;
    memcpy(page + 0x100, &konst, sizeof(konst));
    protect(page, PROT_READ | PROT_EXEC);
    long want[2];
    for (int i = 0; i < 2; i++)
        want[i] = as_fn(fn_addr)(e->args[i]);
    protect(page, PROT_READ | PROT_WRITE);
    const char *why = NULL;
    uint8_t out[STUB - ARM_PATCH_STUB_LEN];
    size_t n = arm_patch_relocate(fn, e->n * 2, fn_addr, (uint32_t)(uintptr_t)copy, out, 52, &why);
    CHECK(n > 0 && n % 2 == 0, "%s: refused (%s)", e->name, why ? why : "?");
    if (!n)
        return;
    memcpy(copy, out, n);
    uint8_t stub_bytes[ARM_PATCH_STUB_LEN];
    arm_patch_stub(stub_bytes, fn_addr, 7, (uint32_t)(uintptr_t)copy | bit);
    /* movw ip, #7 as llvm-mc encodes it */
    static const uint8_t movw_t[4] = {0x40, 0xf2, 0x07, 0x0c}, movw_a[4] = {0x07, 0xc0, 0x00, 0xe3};
    CHECK(memcmp(stub_bytes, e->thumb ? movw_t : movw_a, 4) == 0, "%s: the stub does not load the index",
          e->name);
    memcpy(stub, stub_bytes, sizeof(stub_bytes));
    uint8_t jump[ARM_PATCH_JMP_LEN];
    CHECK(arm_patch_jump(jump, fn_addr, (uint32_t)(uintptr_t)stub) == 0, "%s: jump", e->name);
    memcpy(fn, jump, sizeof(jump));
    protect(page, PROT_READ | PROT_EXEC);
    for (int i = 0; i < 2; i++) {
        long via_patch = as_fn(fn_addr)(e->args[i]);
        long via_copy = as_fn((uint32_t)(uintptr_t)copy | bit)(e->args[i]);
        CHECK(via_patch == want[i] && via_copy == want[i], "%s (%ld): %ld / %ld, want %ld", e->name,
              e->args[i], via_patch, via_copy, want[i]);
    }
    protect(page, PROT_READ | PROT_WRITE);
    printf("ok   %s: moved into %zu bytes\n", e->name, n);
}

static void refused(const char *name, const uint16_t *code, unsigned n, uint32_t addr)
{
    const char *why = NULL;
    uint8_t out[64];
    size_t got = arm_patch_relocate((const uint8_t *)code, n * 2, addr, 0x20000000, out, sizeof(out), &why);
    CHECK(got == 0 && why, "%s: not refused", name);
    if (!got && why)
        printf("ok   %s: refused (%s)\n", name, why);
}

int main(void)
{
    uint8_t *page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        return 1;
    for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
        run_entry(page, &entries[i]);

    static const uint16_t it[] = {0xbf08, 0x2001, 0x4770};
    refused("it eq; moveq r0, #1; bx lr", it, 3, 0x10001);
    static const uint16_t it2[] = {0x2000, 0xbf08, 0x2001, 0x4770};
    refused("movs r0, #0; it eq; ...", it2, 4, 0x10001);
    static const uint16_t ret[] = {0x4770, 0x2001};
    refused("bx lr (2 bytes)", ret, 2, 0x10001);
    static const uint16_t pop[] = {0xbd10, 0x2001};
    refused("pop {r4, pc} (2 bytes)", pop, 2, 0x10001);
    /* a tail branch followed by code, or by a nop at a half-word address
     * (there it may be the entry of the next function) */
    static const uint16_t tail[] = {0xe000, 0x2001};
    refused("b.n (2 bytes) then movs", tail, 2, 0x10001);
    static const uint16_t tail_odd[] = {0xe000, 0xbf00};
    refused("b.n; nop at 2 mod 4", tail_odd, 2, 0x10003);

    /* Reach: b.w +-16 MiB, b +-32 MiB. */
    uint8_t jump[ARM_PATCH_JMP_LEN];
    CHECK(arm_patch_jump(jump, 0x10000001u, 0x10000004u + (16u << 20)) < 0, "a b.w beyond +16 MiB was made");
    CHECK(arm_patch_jump(jump, 0x10000001u, 0x10000000u + (16u << 20)) == 0, "a b.w to +16 MiB - 4 was refused");
    CHECK(arm_patch_jump(jump, 0x10000001u, 0x10000004u - (16u << 20)) == 0, "a b.w to -16 MiB was refused");
    CHECK(arm_patch_jump(jump, 0x10000001u, 0x10000000u - (16u << 20)) < 0, "a b.w beyond -16 MiB was made");
    CHECK(arm_patch_jump(jump, 0x10000000u, 0x10000008u + (32u << 20)) < 0, "a b beyond +32 MiB was made");
    CHECK(arm_patch_jump(jump, 0x10000000u, 0x10000008u - (32u << 20)) == 0, "a b to -32 MiB was refused");
    CHECK(arm_patch_jump(jump, 0x10000002u, 0x10001000u) < 0, "a b from a misaligned ARM entry");

    /* The functions memtrace intercepts, as this libc has them. */
    static const char *const must[] = {"malloc", "free", "calloc", "realloc", "posix_memalign",
                                       "aligned_alloc", "memalign", "valloc", "pvalloc", "mmap",
                                       "mmap64", "munmap", "mremap", "strdup", "strndup"};
    for (size_t i = 0; i < sizeof(must) / sizeof(must[0]); i++) {
        void *sym = dlsym(RTLD_DEFAULT, must[i]);
        CHECK(sym != NULL, "%s: not found", must[i]);
        if (!sym)
            continue;
        uint32_t a = (uint32_t)(uintptr_t)sym;
        const char *why = NULL;
        uint8_t out[64];
        size_t got = arm_patch_relocate((const uint8_t *)(uintptr_t)(a & ~1u), 32, a, 0x20000000, out, 52,
                                        &why);
        CHECK(got > 0, "libc %s (%s): refused (%s)", must[i], (a & 1) ? "Thumb" : "ARM", why ? why : "?");
        if (got)
            printf("ok   libc %s (%s): moved into %zu bytes\n", must[i], (a & 1) ? "Thumb" : "ARM", got);
    }
    return test_end("arm_patch_check");
}

#else
#include <stdio.h>

int main(void)
{
    printf("arm_patch_check runs on arm only\n");
    return 77;
}
#endif
