/* The agent engine's entry trampolines on x86_64 (arch/x86_64_patch.c):
 * each function below is patched as memtrace patches malloc (its first
 * instructions moved out of line, a jmp rel32 over them), then called
 * through the patch and through the moved copy: both must give what the
 * original gave.  Entries that cannot move are refused with a reason. */
#if defined(__x86_64__)
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "arch/x86_patch.h"

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

typedef long (*fn1)(long);

struct entry {
    const char *name;
    uint8_t code[48];
    size_t len;
    long args[2];
};

/* RIP-relative operands point at a constant placed 0x100 bytes into the page. */
static const struct entry entries[] = {
    {"endbr64; push rbp; mov rbp,rsp; lea rax,[rip+..]; pop rbp; ret",
     {0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5, 0x48, 0x8d, 0x05, 0xf1, 0x00, 0x00, 0x00,
      0x48, 0x2b, 0x05, 0xea, 0x00, 0x00, 0x00, 0x5d, 0xc3},
     24, {0, 0}},
    {"mov rax,[rip+..]; add rax,rdi; ret",
     {0x48, 0x8b, 0x05, 0xf9, 0x00, 0x00, 0x00, 0x48, 0x01, 0xf8, 0xc3}, 11, {5, 7}},
    {"test rdi,rdi; je +6; mov eax,1; ret; mov eax,2; ret",
     {0x48, 0x85, 0xff, 0x74, 0x06, 0xb8, 0x01, 0x00, 0x00, 0x00, 0xc3, 0xb8, 0x02, 0x00, 0x00,
      0x00, 0xc3},
     17, {0, 3}},
    {"nop; jmp rel32 (a thunk)",
     {0x90, 0xe9, 0x0a, 0x00, 0x00, 0x00, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
      0xcc, 0x48, 0x8d, 0x47, 0x2a, 0xc3},
     21, {1, 9}},
};

static void run_entry(uint8_t *page, const struct entry *e)
{
    uint8_t *fn = page, *stub = page + 2048, *copy = stub + X86_PATCH_STUB_LEN;
    memset(page, 0xcc, 4096);
    memcpy(fn, e->code, e->len);
    uint64_t konst = 0x1234;
    memcpy(page + 0x100, &konst, sizeof(konst));
    if (mprotect(page, 4096, PROT_READ | PROT_EXEC) < 0) {
        perror("mprotect");
        failures++;
        return;
    }
    long want[2];
    for (int i = 0; i < 2; i++)
        want[i] = ((fn1)(void *)fn)(e->args[i]);
    mprotect(page, 4096, PROT_READ | PROT_WRITE);
    unsigned covered = 0;
    const char *why = NULL;
    uint8_t out[64];
    size_t n = x86_patch_relocate(fn, e->len, (uint64_t)(uintptr_t)fn, (uint64_t)(uintptr_t)copy, out,
                                  sizeof(out), &covered, &why);
    CHECK(n > 0, "%s: refused (%s)", e->name, why ? why : "?");
    if (!n)
        return;
    CHECK(covered >= X86_PATCH_JMP_LEN && covered <= X86_PATCH_MAX_COVER, "%s: covered %u", e->name, covered);
    memcpy(copy, out, n);
    /* The stub here jumps straight to the copy (the agent is not there). */
    uint8_t stub_bytes[X86_PATCH_STUB_LEN];
    x86_patch_stub(stub_bytes, 7, (uint64_t)(uintptr_t)copy);
    CHECK(stub_bytes[0] == 0x41 && stub_bytes[1] == 0xbb && stub_bytes[2] == 7, "%s: stub", e->name);
    memcpy(stub, stub_bytes, sizeof(stub_bytes));
    uint8_t jump[X86_PATCH_MAX_COVER];
    CHECK(x86_patch_jump(jump, covered, (uint64_t)(uintptr_t)fn, (uint64_t)(uintptr_t)stub) == 0,
          "%s: jump", e->name);
    memcpy(fn, jump, covered);
    mprotect(page, 4096, PROT_READ | PROT_EXEC);
    for (int i = 0; i < 2; i++) {
        long via_patch = ((fn1)(void *)fn)(e->args[i]);
        long via_copy = ((fn1)(void *)copy)(e->args[i]);
        CHECK(via_patch == want[i] && via_copy == want[i], "%s (%ld): %ld / %ld, want %ld", e->name,
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
    size_t n = x86_patch_relocate(code, len, 0x400000, 0x300000, out, sizeof(out), &covered, &why);
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
    static const uint8_t jmp_reg[] = {0x31, 0xc0, 0xff, 0xe7, 0x90, 0x90};
    static const uint8_t syscall_first[] = {0x0f, 0x05, 0xc3, 0x90, 0x90, 0x90};
    refused("ret", ret_first, sizeof(ret_first));
    refused("jmp rel8 in 5 bytes", short_jmp, sizeof(short_jmp));
    refused("jmp *%rdi in 5 bytes", jmp_reg, sizeof(jmp_reg));
    refused("syscall", syscall_first, sizeof(syscall_first));
    uint8_t jump[X86_PATCH_MAX_COVER];
    CHECK(x86_patch_jump(jump, 5, 0x10000000000ull, 0x1000) < 0, "a jump beyond 2 GiB was made");
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
    printf("the agent's trampolines are x86_64 only\n");
    return 77;
}
#endif
