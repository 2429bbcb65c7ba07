/* The agent engine's entry trampolines on i386 (arch/i386_patch.c): each
 * function below is patched as memtrace patches malloc in a 32-bit process
 * (its first instructions moved out of line, a jmp rel32 over them, a stub
 * between), then called through the patch and through the moved copy:
 * both must give what the original gave.  The first is glibc's i386 entry
 * shape: a push, then a call to the PIC thunk whose return address is the
 * base the function reads its data with.  Entries that cannot move are
 * refused with a reason. */
#if defined(__i386__)
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "arch/i386_patch.h"

static int failures;

#define CHECK(cond, ...)                                  \
    do {                                                  \
        if (!(cond)) {                                    \
            failures++;                                   \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);   \
            printf(__VA_ARGS__);                          \
            printf("\n");                                 \
        }                                                 \
    } while (0)

typedef int (*fn1)(int);

struct entry {
    const char *name;
    uint8_t code[80];
    size_t len;
    int args[2];
};

/* A constant sits 0x100 bytes into the page. */
static const struct entry entries[] = {
    {"push ebx; call thunk; mov eax,[esp+8]; add eax,[ebx+0xfa]; pop ebx; ret",
     {0x53, 0xe8, 0x3a, 0x00, 0x00, 0x00, 0x8b, 0x44, 0x24, 0x08, 0x03, 0x83, 0xfa, 0x00, 0x00,
      0x00, 0x5b, 0xc3, [0x40] = 0x8b, 0x1c, 0x24, 0xc3},
     0x44, {5, 7}},
    {"endbr32; push ebp; mov ebp,esp; mov eax,[ebp+8]; add eax,3; pop ebp; ret",
     {0xf3, 0x0f, 0x1e, 0xfb, 0x55, 0x89, 0xe5, 0x8b, 0x45, 0x08, 0x83, 0xc0, 0x03, 0x5d, 0xc3},
     15, {0, 9}},
    {"mov ecx,[esp+4]; jecxz +6; mov eax,1; ret; mov eax,2; ret",
     {0x8b, 0x4c, 0x24, 0x04, 0xe3, 0x06, 0xb8, 0x01, 0x00, 0x00, 0x00, 0xc3, 0xb8, 0x02, 0x00,
      0x00, 0x00, 0xc3},
     18, {0, 3}},
    {"nop; jmp rel32 (a thunk)",
     {0x90, 0xe9, 0x0a, 0x00, 0x00, 0x00, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
      0xcc, 0x8b, 0x44, 0x24, 0x04, 0x83, 0xc0, 0x2a, 0xc3},
     24, {1, 9}},
};

static void run_entry(uint8_t *page, const struct entry *e)
{
    uint8_t *fn = page, *stub = page + 2048, *copy = stub + I386_PATCH_STUB_LEN;
    memset(page, 0xcc, 4096);
    memcpy(fn, e->code, e->len);
    int konst = 0x1234;
    memcpy(page + 0x100, &konst, sizeof(konst));
    if (mprotect(page, 4096, PROT_READ | PROT_EXEC) < 0) {
        perror("mprotect");
        failures++;
        return;
    }
    int want[2];
    for (int i = 0; i < 2; i++)
        want[i] = ((fn1)(void *)fn)(e->args[i]);
    mprotect(page, 4096, PROT_READ | PROT_WRITE);
    unsigned covered = 0;
    const char *why = NULL;
    uint8_t out[64];
    size_t n = i386_patch_relocate(fn, e->len, (uint32_t)(uintptr_t)fn, (uint32_t)(uintptr_t)copy, out,
                                   sizeof(out), &covered, &why);
    CHECK(n > 0, "%s: refused (%s)", e->name, why ? why : "?");
    if (!n)
        return;
    CHECK(covered >= I386_PATCH_JMP_LEN && covered <= I386_PATCH_MAX_COVER, "%s: covered %u", e->name,
          covered);
    memcpy(copy, out, n);
    /* The stub here jumps straight to the copy (the agent is not there). */
    uint8_t stub_bytes[I386_PATCH_STUB_LEN];
    i386_patch_stub(stub_bytes, (uint32_t)(uintptr_t)stub, 7, (uint32_t)(uintptr_t)copy);
    CHECK(stub_bytes[0] == 0xb8 && stub_bytes[1] == 7 && stub_bytes[5] == 0xe9, "%s: stub", e->name);
    memcpy(stub, stub_bytes, sizeof(stub_bytes));
    uint8_t jump[I386_PATCH_MAX_COVER];
    CHECK(i386_patch_jump(jump, covered, (uint32_t)(uintptr_t)fn, (uint32_t)(uintptr_t)stub) == 0,
          "%s: jump", e->name);
    memcpy(fn, jump, covered);
    mprotect(page, 4096, PROT_READ | PROT_EXEC);
    for (int i = 0; i < 2; i++) {
        int via_patch = ((fn1)(void *)fn)(e->args[i]);
        int via_copy = ((fn1)(void *)copy)(e->args[i]);
        CHECK(via_patch == want[i] && via_copy == want[i], "%s (%d): %d / %d, want %d", e->name,
              e->args[i], via_patch, via_copy, want[i]);
    }
    mprotect(page, 4096, PROT_READ | PROT_WRITE);
    printf("ok   %s: %u bytes moved into %zu\n", e->name, covered, n);
}

static void refused(const char *name, const uint8_t *code, size_t len)
{
    unsigned covered = 0;
    const char *why = NULL;
    uint8_t out[64];
    size_t n = i386_patch_relocate(code, len, 0x8048000, 0x7000000, out, sizeof(out), &covered, &why);
    CHECK(n == 0 && why, "%s: not refused", name);
    printf("ok   %s: refused (%s)\n", name, why ? why : "?");
}

int main(void)
{
    uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        return 1;
    for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
        run_entry(page, &entries[i]);
    static const uint8_t ret_first[] = {0xc3, 0x90, 0x90, 0x90, 0x90, 0x90};
    static const uint8_t short_jmp[] = {0xeb, 0x10, 0x90, 0x90, 0x90, 0x90};
    static const uint8_t je_first[] = {0x74, 0x10, 0x90, 0x90, 0x90, 0x90};
    static const uint8_t jmp_reg[] = {0x31, 0xc0, 0xff, 0xe1, 0x90, 0x90};
    static const uint8_t int80_first[] = {0xcd, 0x80, 0xc3, 0x90, 0x90, 0x90};
    refused("ret", ret_first, sizeof(ret_first));
    refused("jmp rel8 in 5 bytes", short_jmp, sizeof(short_jmp));
    refused("je rel8 going on in 5 bytes", je_first, sizeof(je_first));
    refused("jmp *%ecx in 5 bytes", jmp_reg, sizeof(jmp_reg));
    refused("int $0x80", int80_first, sizeof(int80_first));
    uint8_t jump[I386_PATCH_MAX_COVER];
    /* rel32 wraps: the top of the address space reaches the bottom. */
    CHECK(i386_patch_jump(jump, 5, 0xfffff000u, 0x1000) == 0 && jump[0] == 0xe9 &&
              (uint32_t)(jump[1] | jump[2] << 8 | jump[3] << 16 | (uint32_t)jump[4] << 24) == 0x1ffbu,
          "a jump across the 4 GiB wrap");
    CHECK(i386_patch_jump(jump, 4, 0x1000, 0x2000) < 0, "a jump over 4 bytes was made");
    if (failures) {
        printf("%d failures\n", failures);
        return 1;
    }
    printf("all passed\n");
    return 0;
}

#else
#include <stdio.h>

int main(void)
{
    printf("the i386 agent trampolines are tested by the i386 build (make ARCH=i386)\n");
    return 77;
}
#endif
