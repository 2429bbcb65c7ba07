/* The agent engine's entry trampolines on aarch64 (arch/aarch64_patch.c),
 * executed for real (under qemu-aarch64 here, or on a board): each
 * function below is patched as memtrace patches malloc (its first
 * instruction moved out of line behind the stub, a B over it), then called
 * through the patch and through the moved copy: both must give what the
 * unpatched function gave on the same CPU (no expected value is written
 * down here).  The stub branches straight to the copy (the agent is not
 * here); it may clobber only x16 and x17.
 *
 *   a64_patch_check        exit 0 when every case agrees */
#if defined(__aarch64__)
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "arch/aarch64_patch.h"
#include "selftest/unit/test.h"

#define PAGE 4096

typedef long (*fn1)(long);

struct entry {
    const char *name;
    uint32_t code[8];
    unsigned n;
    long args[2];
};

/* PC-relative operands point at a constant 0x100 bytes into the page. */
static const struct entry entries[] = {
    {"add x0, x0, #1; ret", {0x91000400u, 0xd65f03c0u}, 2, {0, 41}},
    {"adr x1, konst; ldr x1, [x1]; add x0, x0, x1; ret",
     {0x10000801u, 0xf9400021u, 0x8b010000u, 0xd65f03c0u}, 4, {0, 5}},
    {"ldr x1, konst; add x0, x0, x1; ret", {0x58000801u, 0x8b010000u, 0xd65f03c0u}, 3, {2, 7}},
    {"cbz x0, +12; mov x0, #5; ret; mov x0, #9; ret",
     {0xb4000060u, 0xd28000a0u, 0xd65f03c0u, 0xd2800120u, 0xd65f03c0u}, 5, {0, 3}},
    {"bti c; add x0, x0, #3; ret", {0xd503245fu, 0x91000c00u, 0xd65f03c0u}, 3, {1, 100}},
    {"b +8; brk #0; add x0, x0, #7; ret", {0x14000002u, 0xd4200000u, 0x91001c00u, 0xd65f03c0u}, 4,
     {1, 2}},
    {"stp x29, x30, [sp, #-16]!; add x0, x0, #2; ldp x29, x30, [sp], #16; ret",
     {0xa9bf7bfdu, 0x91000800u, 0xa8c17bfdu, 0xd65f03c0u}, 4, {3, 4}},
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

static void run_entry(uint8_t *page, const struct entry *e)
{
    uint8_t *fn = page, *stub = page + 2048, *copy = stub + A64_PATCH_STUB_LEN;
    memset(page, 0, PAGE);
    memcpy(fn, e->code, e->n * 4);
    uint64_t konst = 0x1234;
    memcpy(page + 0x100, &konst, sizeof(konst));
    protect(page, PROT_READ | PROT_EXEC);
    long want[2];
    for (int i = 0; i < 2; i++)
        want[i] = ((fn1)(void *)fn)(e->args[i]);
    protect(page, PROT_READ | PROT_WRITE);
    const char *why = NULL;
    uint8_t out[40];
    size_t n = a64_patch_relocate(e->code[0], (uint64_t)(uintptr_t)fn, (uint64_t)(uintptr_t)copy, out,
                                  sizeof(out), &why);
    CHECK(n > 0 && n % 4 == 0, "%s: refused (%s)", e->name, why ? why : "?");
    if (!n)
        return;
    memcpy(copy, out, n);
    uint8_t stub_bytes[A64_PATCH_STUB_LEN];
    a64_patch_stub(stub_bytes, 7, (uint64_t)(uintptr_t)copy);
    uint32_t movz;
    memcpy(&movz, stub_bytes, 4);
    CHECK(movz == (0xd2800000u | (7u << 5) | 17u), "%s: the stub does not load the index", e->name);
    memcpy(stub, stub_bytes, sizeof(stub_bytes));
    uint8_t jump[A64_PATCH_JMP_LEN];
    CHECK(a64_patch_jump(jump, (uint64_t)(uintptr_t)fn, (uint64_t)(uintptr_t)stub) == 0, "%s: jump",
          e->name);
    memcpy(fn, jump, sizeof(jump));
    protect(page, PROT_READ | PROT_EXEC);
    for (int i = 0; i < 2; i++) {
        long via_patch = ((fn1)(void *)fn)(e->args[i]);
        long via_copy = ((fn1)(void *)copy)(e->args[i]);
        CHECK(via_patch == want[i] && via_copy == want[i], "%s (%ld): %ld / %ld, want %ld", e->name,
              e->args[i], via_patch, via_copy, want[i]);
    }
    protect(page, PROT_READ | PROT_WRITE);
    printf("ok   %s: moved into %zu bytes\n", e->name, n);
}

int main(void)
{
    uint8_t *page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        return 1;
    for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
        run_entry(page, &entries[i]);
    uint8_t jump[A64_PATCH_JMP_LEN];
    CHECK(a64_patch_jump(jump, 0x10000000000ull, 0x10000000000ull + (128ull << 20)) < 0,
          "a B beyond +128 MiB was made");
    CHECK(a64_patch_jump(jump, 0x10000000000ull, 0x10000000000ull - (128ull << 20) - 4) < 0,
          "a B beyond -128 MiB was made");
    CHECK(a64_patch_jump(jump, 0x10000000000ull, 0x10000000000ull - (128ull << 20)) == 0,
          "a B to -128 MiB was refused");
    CHECK(a64_patch_jump(jump, 0x10000000002ull, 0x10000000000ull) < 0, "a B from a misaligned entry");
    const char *why = NULL;
    uint8_t out[8];
    CHECK(a64_patch_relocate(0xb4000060u, 0x400000, 0x300000, out, sizeof(out), &why) == 0 && why,
          "a cbz copy that does not fit its room was not refused");
    return test_end("a64_patch_check");
}

#else
#include <stdio.h>

int main(void)
{
    printf("a64_patch_check runs on aarch64 only\n");
    return 77;
}
#endif
