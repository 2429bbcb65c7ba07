/* Displaced execution of x86_64 instructions, checked by running them.
 *
 * Each snippet below is copied to an executable page A and run twice: as
 * is, and with one instruction (at label *_d) displaced by x86_displace into
 * a page B about 1 GiB away.  The displaced run executes the snippet's
 * instructions before *_d from a copy in B, then the plan (slot bytes or an
 * emulated jump), which must land back in A.  Both runs must return the same
 * value (the snippets fold what the instruction did into rax).
 *
 * Then: the plans for real allocator entry points of the installed libc,
 * libstdc++, musl and i386 libc (read from the files with libelf) must be
 * EMULATE or OUT_OF_LINE, and instructions that cannot be displaced must be
 * refused. */
#if defined(__x86_64__) || defined(__i386__)
#include <dlfcn.h>
#include <fcntl.h>
#ifndef MT_NO_LIBELF   /* the i386 script build has no 32-bit libelf */
#include <gelf.h>
#include <libelf.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arch/x86_insn.h"
#include "selftest/unit/test.h"

struct snippet {
    const char *name;
    const uint8_t *start, *displaced, *end;
    enum displace_kind want;
    uint32_t args[3];
    unsigned n_args;
    bool needs_avx;
    bool arg_is_page_a;   /* the snippet receives A's address */
};

/* A snippet with its arguments: S(name, expected plan kind, arg, ...) */
#define S(name, kind, ...)                                                        \
    {#name, s_##name, s_##name##_d, s_##name##_e, kind, {__VA_ARGS__},           \
     sizeof((uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t), false, false}

#if defined(__x86_64__)

/* The snippets: assembled into .rodata (never executed there), copied to
 * page A.  RIP-relative references stay inside a snippet, so the assembler
 * resolves them and the copy keeps them valid.  s_NAME is the start, s_NAME_d
 * the displaced instruction, s_NAME_e the end. */
#define SNIPPET(name, body) \
    ".globl s_" #name "\n.globl s_" #name "_d\n.globl s_" #name "_e\ns_" #name ":\n" body "\ns_" #name "_e:\n"
__asm__(".pushsection .rodata.x86_snippets,\"a\"\n"
        /* lea rip-relative: the result is an address inside A */
        SNIPPET(lea, "s_lea_d: lea 0x100(%rip),%rax\n ret")
        /* glibc malloc's first instruction: cmpb $0,disp(%rip) */
        SNIPPET(cmpb0, "s_cmpb0_d: cmpb $0x0,1f(%rip)\n setz %al\n movzbl %al,%eax\n ret\n1: .byte 0")
        SNIPPET(cmpb1, "s_cmpb1_d: cmpb $0x0,1f(%rip)\n setz %al\n movzbl %al,%eax\n ret\n1: .byte 1")
        SNIPPET(cmpl, "s_cmpl_d: cmpl $0x12345678,1f(%rip)\n pushfq\n pop %rax\n and $0x8d5,%eax\n ret\n"
                      ".p2align 2\n1: .long 0x12345670")
        SNIPPET(movq, "s_movq_d: mov 1f(%rip),%rax\n ret\n.p2align 3\n1: .quad 0x1122334455667788")
        /* a store through a rewritten displacement, read back from A */
        SNIPPET(store, "s_store_d: movl $0x12345678,1f(%rip)\n mov 1f(%rip),%eax\n ret\n1: .long 0")
        SNIPPET(push, "s_push_d: push %rdi\n pop %rax\n ret")
        SNIPPET(push_r12, "push %r12\n mov %rdi,%r12\ns_push_r12_d: push %r12\n pop %rax\n pop %r12\n ret")
        SNIPPET(movimm, "s_movimm_d: mov $0xb,%eax\n ret")
        SNIPPET(movabs, "s_movabs_d: movabs $0x123456789abcdef0,%rax\n ret")
        SNIPPET(endbr, "s_endbr_d: endbr64\n mov %rdi,%rax\n ret")
        SNIPPET(nopw, "s_nopw_d: nopw %cs:0x0(%rax,%rax,1)\n mov %rdi,%rax\n ret")
        SNIPPET(subrsp, "mov %rsp,%rcx\ns_subrsp_d: sub $0x58,%rsp\n sub %rsp,%rcx\n mov %rcx,%rax\n"
                        " add $0x58,%rsp\n ret")
        SNIPPET(cmpflags, "mov %rdi,%rcx\ns_cmpflags_d: cmp $5,%rcx\n pushfq\n pop %rax\n"
                          " and $0x8d5,%eax\n ret")
        SNIPPET(jz8, "test %rdi,%rdi\ns_jz8_d: jz 1f\n mov $1,%eax\n ret\n1: mov $2,%eax\n ret")
        SNIPPET(jz32, "test %rdi,%rdi\ns_jz32_d: {disp32} jz 1f\n mov $1,%eax\n ret\n1: mov $2,%eax\n ret")
        SNIPPET(jmp8, "s_jmp8_d: jmp 1f\n mov $1,%eax\n ret\n1: mov $2,%eax\n ret")
        SNIPPET(jmp32, "s_jmp32_d: {disp32} jmp 1f\n mov $1,%eax\n ret\n1: mov $2,%eax\n ret")
        SNIPPET(loop, "mov %rdi,%rcx\ns_loop_d: loop 1f\n mov %rcx,%rax\n ret\n1: lea 100(%rcx),%rax\n ret")
        SNIPPET(jrcxz, "mov %rdi,%rcx\ns_jrcxz_d: jrcxz 1f\n mov $1,%eax\n ret\n1: mov $2,%eax\n ret")
        /* call rel32: the callee returns its return address plus the arg */
        SNIPPET(call, "s_call_d: call 1f\n add $1,%rax\n ret\n1: mov (%rsp),%rax\n add %rdi,%rax\n ret")
        SNIPPET(ret, "mov %rdi,%rax\ns_ret_d: ret")
        /* jmp *%rcx to a label in A: the argument is A's address */
        SNIPPET(jmpreg, "lea 1f-s_jmpreg(%rdi),%rcx\ns_jmpreg_d: jmp *%rcx\n ud2\n1: lea 7(%rcx),%rax\n ret")
        /* call *%rcx and call *mem(%rip): the callee returns its return
         * address; the argument is A's address */
        SNIPPET(callreg, "lea 1f-s_callreg(%rdi),%rcx\ns_callreg_d: call *%rcx\n add $1,%rax\n ret\n"
                         "1: mov (%rsp),%rax\n ret")
        SNIPPET(callmem, "lea 1f-s_callmem(%rdi),%rax\n mov %rax,2f-s_callmem(%rdi)\n"
                         "s_callmem_d: call *2f(%rip)\n add $1,%rax\n ret\n"
                         "1: mov (%rsp),%rax\n ret\n.p2align 3\n2: .quad 0")
        SNIPPET(fs, "s_fs_d: mov %fs:0x28,%rax\n ret")
        SNIPPET(vex, "s_vex_d: vmovdqu 1f(%rip),%xmm0\n vmovq %xmm0,%rax\n ret\n.p2align 4\n"
                     "1: .quad 0x0102030405060708, 0")
        ".popsection\n");

#define DECLARE_SNIPPET(name) \
    extern const uint8_t s_##name[], s_##name##_d[], s_##name##_e[]

DECLARE_SNIPPET(lea); DECLARE_SNIPPET(cmpb0); DECLARE_SNIPPET(cmpb1); DECLARE_SNIPPET(cmpl);
DECLARE_SNIPPET(movq); DECLARE_SNIPPET(store); DECLARE_SNIPPET(push); DECLARE_SNIPPET(push_r12);
DECLARE_SNIPPET(movimm); DECLARE_SNIPPET(movabs); DECLARE_SNIPPET(endbr); DECLARE_SNIPPET(nopw);
DECLARE_SNIPPET(subrsp); DECLARE_SNIPPET(cmpflags); DECLARE_SNIPPET(jz8); DECLARE_SNIPPET(jz32);
DECLARE_SNIPPET(jmp8); DECLARE_SNIPPET(jmp32); DECLARE_SNIPPET(loop); DECLARE_SNIPPET(jrcxz);
DECLARE_SNIPPET(call); DECLARE_SNIPPET(ret); DECLARE_SNIPPET(jmpreg); DECLARE_SNIPPET(fs);
DECLARE_SNIPPET(callreg); DECLARE_SNIPPET(callmem);
DECLARE_SNIPPET(vex);

static const struct snippet snippets[] = {
    S(lea, DISPLACE_OUT_OF_LINE, 0),
    S(cmpb0, DISPLACE_OUT_OF_LINE, 0),
    S(cmpb1, DISPLACE_OUT_OF_LINE, 0),
    S(cmpl, DISPLACE_OUT_OF_LINE, 0),
    S(movq, DISPLACE_OUT_OF_LINE, 0),
    S(store, DISPLACE_OUT_OF_LINE, 0),
    S(push, DISPLACE_OUT_OF_LINE, 42),
    S(push_r12, DISPLACE_OUT_OF_LINE, 43),
    S(movimm, DISPLACE_OUT_OF_LINE, 0),
    S(movabs, DISPLACE_OUT_OF_LINE, 0),
    S(endbr, DISPLACE_EMULATE, 5),
    S(nopw, DISPLACE_EMULATE, 6),
    S(subrsp, DISPLACE_OUT_OF_LINE, 0),
    S(cmpflags, DISPLACE_OUT_OF_LINE, 3, 5, 7),
    S(jz8, DISPLACE_OUT_OF_LINE, 0, 1),
    S(jz32, DISPLACE_OUT_OF_LINE, 0, 1),
    S(jmp8, DISPLACE_EMULATE, 0),
    S(jmp32, DISPLACE_EMULATE, 0),
    S(loop, DISPLACE_OUT_OF_LINE, 1, 2, 3),
    S(jrcxz, DISPLACE_OUT_OF_LINE, 0, 1),
    S(call, DISPLACE_OUT_OF_LINE, 0, 9),
    S(ret, DISPLACE_OUT_OF_LINE, 77),
    {"jmpreg", s_jmpreg, s_jmpreg_d, s_jmpreg_e, DISPLACE_OUT_OF_LINE, {0}, 1, false, true},
    {"callreg", s_callreg, s_callreg_d, s_callreg_e, DISPLACE_OUT_OF_LINE, {0}, 1, false, true},
    {"callmem", s_callmem, s_callmem_d, s_callmem_e, DISPLACE_OUT_OF_LINE, {0}, 1, false, true},
    S(fs, DISPLACE_OUT_OF_LINE, 0),
    {"vex", s_vex, s_vex_d, s_vex_e, DISPLACE_OUT_OF_LINE, {0}, 1, true, false},
};

#define MODE64 true

#elif defined(__i386__)

/* i386 snippets (cdecl: the argument is at 4(%esp)); no RIP-relative
 * addressing, but PC-dependent calls (the get_pc_thunk idiom) and 16-bit
 * addressing. */
#define SNIPPET(name, body) \
    ".globl s_" #name "\n.globl s_" #name "_d\n.globl s_" #name "_e\ns_" #name ":\n" body "\ns_" #name "_e:\n"
__asm__(".pushsection .rodata.x86_snippets,\"a\"\n"
        SNIPPET(push_ebp, "s_push_ebp_d: push %ebp\n mov %esp,%ebp\n mov 8(%ebp),%eax\n pop %ebp\n ret")
        SNIPPET(mov_esp, "push %ebp\ns_mov_esp_d: mov %esp,%ebp\n mov 8(%ebp),%eax\n pop %ebp\n ret")
        /* call to the next instruction, pop: the PC-relative base of i386 PIC */
        SNIPPET(getpc, "s_getpc_d: call 1f\n1: pop %eax\n ret")
        SNIPPET(call, "s_call_d: call 1f\n add $1,%eax\n ret\n1: mov (%esp),%eax\n add 8(%esp),%eax\n ret")
        SNIPPET(subesp, "mov %esp,%ecx\ns_subesp_d: sub $0x1c,%esp\n sub %esp,%ecx\n mov %ecx,%eax\n"
                        " add $0x1c,%esp\n ret")
        SNIPPET(cmpflags, "mov 4(%esp),%ecx\ns_cmpflags_d: cmp $5,%ecx\n pushf\n pop %eax\n"
                          " and $0x8d5,%eax\n ret")
        SNIPPET(jz8, "mov 4(%esp),%ecx\n test %ecx,%ecx\ns_jz8_d: jz 1f\n mov $1,%eax\n ret\n"
                     "1: mov $2,%eax\n ret")
        SNIPPET(jz32, "mov 4(%esp),%ecx\n test %ecx,%ecx\ns_jz32_d: {disp32} jz 1f\n mov $1,%eax\n ret\n"
                      "1: mov $2,%eax\n ret")
        SNIPPET(jmp8, "s_jmp8_d: jmp 1f\n mov $1,%eax\n ret\n1: mov $2,%eax\n ret")
        SNIPPET(jmp32, "s_jmp32_d: {disp32} jmp 1f\n mov $1,%eax\n ret\n1: mov $2,%eax\n ret")
        SNIPPET(loop, "mov 4(%esp),%ecx\ns_loop_d: loop 1f\n mov %ecx,%eax\n ret\n1: lea 100(%ecx),%eax\n ret")
        SNIPPET(jecxz, "mov 4(%esp),%ecx\ns_jecxz_d: jecxz 1f\n mov $1,%eax\n ret\n1: mov $2,%eax\n ret")
        SNIPPET(endbr, "s_endbr_d: endbr32\n mov 4(%esp),%eax\n ret")
        SNIPPET(gs, "s_gs_d: mov %gs:0x14,%eax\n ret")
        SNIPPET(ret, "mov 4(%esp),%eax\ns_ret_d: ret")
        SNIPPET(jmpreg, "mov 4(%esp),%ecx\n lea 1f-s_jmpreg(%ecx),%ecx\ns_jmpreg_d: jmp *%ecx\n ud2\n"
                        "1: lea 7(%ecx),%eax\n ret")
        SNIPPET(callreg, "mov 4(%esp),%ecx\n lea 1f-s_callreg(%ecx),%ecx\ns_callreg_d: call *%ecx\n"
                         " add $1,%eax\n ret\n1: mov (%esp),%eax\n ret")
        SNIPPET(callmem, "mov 4(%esp),%ecx\n lea 1f-s_callmem(%ecx),%eax\n mov %eax,2f-s_callmem(%ecx)\n"
                         "s_callmem_d: call *2f-s_callmem(%ecx)\n add $1,%eax\n ret\n"
                         "1: mov (%esp),%eax\n ret\n.p2align 2\n2: .long 0")
        /* addr16 lea 0x1234,%eax: a 16-bit displacement */
        SNIPPET(addr16, "s_addr16_d: .byte 0x67, 0x8d, 0x06, 0x34, 0x12\n ret")
        ".popsection\n");

#define DECLARE_SNIPPET(name) \
    extern const uint8_t s_##name[], s_##name##_d[], s_##name##_e[]

DECLARE_SNIPPET(push_ebp); DECLARE_SNIPPET(mov_esp); DECLARE_SNIPPET(getpc); DECLARE_SNIPPET(call);
DECLARE_SNIPPET(subesp); DECLARE_SNIPPET(cmpflags); DECLARE_SNIPPET(jz8); DECLARE_SNIPPET(jz32);
DECLARE_SNIPPET(jmp8); DECLARE_SNIPPET(jmp32); DECLARE_SNIPPET(loop); DECLARE_SNIPPET(jecxz);
DECLARE_SNIPPET(endbr); DECLARE_SNIPPET(gs); DECLARE_SNIPPET(ret); DECLARE_SNIPPET(jmpreg);
DECLARE_SNIPPET(addr16); DECLARE_SNIPPET(callreg); DECLARE_SNIPPET(callmem);

static const struct snippet snippets[] = {
    S(push_ebp, DISPLACE_OUT_OF_LINE, 42),
    S(mov_esp, DISPLACE_OUT_OF_LINE, 43),
    S(getpc, DISPLACE_OUT_OF_LINE, 0),
    S(call, DISPLACE_OUT_OF_LINE, 0, 9),
    S(subesp, DISPLACE_OUT_OF_LINE, 0),
    S(cmpflags, DISPLACE_OUT_OF_LINE, 3, 5, 7),
    S(jz8, DISPLACE_OUT_OF_LINE, 0, 1),
    S(jz32, DISPLACE_OUT_OF_LINE, 0, 1),
    S(jmp8, DISPLACE_EMULATE, 0),
    S(jmp32, DISPLACE_EMULATE, 0),
    S(loop, DISPLACE_OUT_OF_LINE, 1, 2, 3),
    S(jecxz, DISPLACE_OUT_OF_LINE, 0, 1),
    S(endbr, DISPLACE_EMULATE, 5),
    S(gs, DISPLACE_OUT_OF_LINE, 0),
    S(ret, DISPLACE_OUT_OF_LINE, 77),
    {"jmpreg", s_jmpreg, s_jmpreg_d, s_jmpreg_e, DISPLACE_OUT_OF_LINE, {0}, 1, false, true},
    S(addr16, DISPLACE_OUT_OF_LINE, 0),
    {"callreg", s_callreg, s_callreg_d, s_callreg_e, DISPLACE_OUT_OF_LINE, {0}, 1, false, true},
    {"callmem", s_callmem, s_callmem_d, s_callmem_e, DISPLACE_OUT_OF_LINE, {0}, 1, false, true},
};

#define MODE64 false

#endif

typedef uintptr_t (*snippet_fn)(uintptr_t);

/* An absolute jump, how the test enters an emulated plan's new_pc:
 * `jmp *0(%rip); .quad dest` or `jmp rel32`. */
static size_t put_abs_jump(uint8_t *p, uint64_t dest)
{
#if defined(__x86_64__)
    static const uint8_t jmp[6] = {0xff, 0x25, 0, 0, 0, 0};
    memcpy(p, jmp, sizeof(jmp));
    memcpy(p + 6, &dest, 8);
    return 14;
#else
    uint32_t rel = (uint32_t)dest - (uint32_t)(uintptr_t)(p + 5);
    p[0] = 0xe9;
    memcpy(p + 1, &rel, 4);
    return 5;
#endif
}

static uintptr_t run_original(const struct snippet *s, uint8_t *a, uintptr_t arg)
{
    size_t len = (size_t)(s->end - s->start);
    memcpy(a, s->start, len);
    __builtin___clear_cache((char *)a, (char *)a + len);
    return ((snippet_fn)(uintptr_t)a)(arg);
}

static bool run_displaced(const struct snippet *s, uint8_t *a, uint8_t *b, uintptr_t arg,
                          uintptr_t *result)
{
    size_t len = (size_t)(s->end - s->start), k = (size_t)(s->displaced - s->start);
    memcpy(a, s->start, len);
    memcpy(b, s->start, k);   /* the instructions before the displaced one */
    struct displace_plan plan = x86_displace(a + k, len - k, (uintptr_t)(a + k), (uintptr_t)(b + k),
                                             MODE64);
    CHECK(plan.kind == s->want, "%s: plan kind %d, want %d", s->name, plan.kind, s->want);
    if (plan.kind == DISPLACE_EMULATE) {
        put_abs_jump(b + k, plan.new_pc);
    } else if (plan.kind == DISPLACE_OUT_OF_LINE) {
        CHECK(plan.slot_len <= ARCH_DISPLACE_SLOT_MAX, "%s: slot too long", s->name);
        memcpy(b + k, plan.slot_bytes, plan.slot_len);
    } else {
        return false;
    }
    __builtin___clear_cache((char *)a, (char *)a + len);
    __builtin___clear_cache((char *)b, (char *)b + k + ARCH_DISPLACE_SLOT_MAX);
    *result = ((snippet_fn)(uintptr_t)b)(arg);
    return true;
}

/* Page B about 1 GiB after A: far enough that an unrewritten RIP-relative
 * displacement would miss, near enough for a rewritten one. */
static uint8_t *map_near(uint8_t *a)
{
    for (uintptr_t dist = (uintptr_t)1 << 30; dist >= ((uintptr_t)1 << 16); dist >>= 2) {
        /* Integer arithmetic: on i386 the sum may wrap, which pointer
         * arithmetic must not (UBSan says so). */
        if ((uintptr_t)a + dist < (uintptr_t)a)
            continue;
        void *want = (void *)((uintptr_t)a + dist);
        void *b = mmap(want, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (b == want)
            return b;
        if (b != MAP_FAILED)
            munmap(b, 4096);
    }
    return NULL;
}

static void test_execution(void)
{
    uint8_t *a = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED) {
        printf("SKIP execution oracle: no writable executable mapping\n");
        return;
    }
    uint8_t *b = map_near(a);
    CHECK(b != NULL, "no page within reach of %p", (void *)a);
    if (!b)
        return;
    printf("page A %p, page B %p (distance %#llx)\n", (void *)a, (void *)b,
           (unsigned long long)((uintptr_t)b - (uintptr_t)a));
    __builtin_cpu_init();
    unsigned runs = 0;
    for (size_t n = 0; n < sizeof(snippets) / sizeof(snippets[0]); n++) {
        const struct snippet *s = &snippets[n];
        if (s->needs_avx && !__builtin_cpu_supports("avx"))
            continue;
        for (unsigned j = 0; j < s->n_args; j++) {
            uintptr_t arg = s->arg_is_page_a ? (uintptr_t)a : s->args[j];
            uintptr_t want = run_original(s, a, arg), got = 0;
            if (!run_displaced(s, a, b, arg, &got))
                continue;
            runs++;
            CHECK(got == want, "%s(%#llx): displaced %#llx, original %#llx", s->name,
                  (unsigned long long)arg, (unsigned long long)got,
                  (unsigned long long)want);
        }
    }
    printf("%u displaced runs compared with the original\n", runs);
    munmap(a, 4096);
    munmap(b, 4096);
}

#if defined(__x86_64__)

/* ---- the real allocator entry points, run displaced in this process ---- */

/* A page within reach of RIP-relative operands of code at near (below it,
 * where the kernel's top-down mmap leaves room). */
static uint8_t *map_slot_page_near(const void *near)
{
    uintptr_t base = (uintptr_t)near & ~(uintptr_t)0xfff;
    for (uintptr_t dist = 1u << 28; dist >= (1u << 20); dist >>= 1) {
        for (int sign = -1; sign <= 1; sign += 2) {
            void *want = (void *)(base + (uintptr_t)((intptr_t)sign * (intptr_t)dist));
            void *p = mmap(want, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
            if (p == want)
                return p;
            if (p != MAP_FAILED)
                munmap(p, 4096);
        }
    }
    return NULL;
}

/* The entry of fn, displaced into its own slot: calling the returned address
 * behaves like calling fn if the plan is right.  Slots are 64 bytes apart in
 * page. */
static void *displaced_entry(const char *name, void *fn, uint8_t *page, unsigned index)
{
    uint8_t *slot = page + 64 * index;
    struct displace_plan p = x86_displace(fn, ARCH_INSN_MAX, (uintptr_t)fn, (uintptr_t)slot, true);
    CHECK(p.kind != DISPLACE_UNSUPPORTED, "%s: no plan", name);
    if (p.kind == DISPLACE_EMULATE)
        put_abs_jump(slot, p.new_pc);
    else if (p.kind == DISPLACE_OUT_OF_LINE)
        memcpy(slot, p.slot_bytes, p.slot_len);
    else
        return NULL;
    __builtin___clear_cache((char *)slot, (char *)slot + 64);
    return slot;
}

static void *lookup(void *handle, const char *name)
{
    void *fn = handle ? dlsym(handle, name) : NULL;
    CHECK(fn != NULL, "dlsym %s", name);
    return fn;
}

/* malloc, calloc, realloc, free, posix_memalign, aligned_alloc, mmap,
 * mremap, munmap, operator new/delete of the real libc and libstdc++ (not
 * an interposer's), each entered through its displaced first instruction. */
static void test_real_entries(void)
{
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    void *cxx = dlopen("libstdc++.so.6", RTLD_NOW);
    void *m = libc ? lookup(libc, "malloc") : NULL;
    uint8_t *page = m ? map_slot_page_near(m) : NULL;
    CHECK(page != NULL, "no slot page near libc");
    if (!page)
        return;
    unsigned n = 0;
#define DISPLACED(handle, type, name) \
    ((type)displaced_entry(name, lookup(handle, name), page, n++))
    void *(*d_malloc)(size_t) = DISPLACED(libc, void *(*)(size_t), "malloc");
    void *(*d_calloc)(size_t, size_t) = DISPLACED(libc, void *(*)(size_t, size_t), "calloc");
    void *(*d_realloc)(void *, size_t) = DISPLACED(libc, void *(*)(void *, size_t), "realloc");
    void (*d_free)(void *) = DISPLACED(libc, void (*)(void *), "free");
    int (*d_posix_memalign)(void **, size_t, size_t) =
        DISPLACED(libc, int (*)(void **, size_t, size_t), "posix_memalign");
    void *(*d_aligned_alloc)(size_t, size_t) =
        DISPLACED(libc, void *(*)(size_t, size_t), "aligned_alloc");
    void *(*d_mmap)(void *, size_t, int, int, int, off_t) =
        DISPLACED(libc, void *(*)(void *, size_t, int, int, int, off_t), "mmap");
    void *(*d_mremap)(void *, size_t, size_t, int, ...) =
        DISPLACED(libc, void *(*)(void *, size_t, size_t, int, ...), "mremap");
    int (*d_munmap)(void *, size_t) = DISPLACED(libc, int (*)(void *, size_t), "munmap");
    if (failures)
        return;

    char *a = d_malloc(100);
    CHECK(a != NULL, "displaced malloc");
    memset(a, 'x', 100);
    unsigned char *z = d_calloc(10, 10);
    CHECK(z != NULL && z[0] == 0 && z[99] == 0, "displaced calloc");
    a = d_realloc(a, 5000);
    CHECK(a != NULL && a[99] == 'x', "displaced realloc");
    void *al = NULL;
    CHECK(d_posix_memalign(&al, 256, 32) == 0 && al && ((uintptr_t)al & 255) == 0,
          "displaced posix_memalign");
    void *al2 = d_aligned_alloc(64, 128);
    CHECK(al2 && ((uintptr_t)al2 & 63) == 0, "displaced aligned_alloc");
    d_free(a);
    d_free(z);
    d_free(al);
    d_free(al2);
    char *map = d_mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(map != MAP_FAILED, "displaced mmap");
    if (map != MAP_FAILED) {
        map[0] = 1;
        map = d_mremap(map, 8192, 65536, MREMAP_MAYMOVE);
        CHECK(map != MAP_FAILED && map[0] == 1, "displaced mremap");
        if (map != MAP_FAILED)
            CHECK(d_munmap(map, 65536) == 0, "displaced munmap");
    }
    if (cxx) {
        void *(*d_new)(size_t) = DISPLACED(cxx, void *(*)(size_t), "_Znwm");
        void (*d_delete)(void *) = DISPLACED(cxx, void (*)(void *), "_ZdlPv");
        if (d_new && d_delete) {
            long *obj = d_new(sizeof(long) * 4);
            CHECK(obj != NULL, "displaced operator new");
            obj[3] = 7;
            d_delete(obj);
        }
    } else {
        printf("libstdc++.so.6 not loadable: operator new not run\n");
    }
#undef DISPLACED
    printf("%u real entry points run displaced (slot page %p)\n", n, (void *)page);
    munmap(page, 4096);
}

#endif /* __x86_64__ */

/* Instructions that must not be displaced, and a RIP-relative operand whose
 * slot is out of reach. */
static void test_refusals(void)
{
    static const struct {
        const char *what;
        uint8_t bytes[16];
        unsigned len;
        bool mode64;
    } refused[] = {
        {"syscall", {0x0f, 0x05}, 2, true},
        {"int3", {0xcc}, 1, true},
        {"int $0x80", {0xcd, 0x80}, 2, false},
        {"call *%rsp", {0xff, 0xd4}, 2, true},
        {"call *8(%rsp)", {0xff, 0x54, 0x24, 0x08}, 4, true},
        {"call *(%esp)", {0xff, 0x14, 0x24}, 3, false},
        {"callw *%ax", {0x66, 0xff, 0xd0}, 3, false},
        {"lret", {0xcb}, 1, true},
        {"ud2", {0x0f, 0x0b}, 2, true},
        {"jmpw rel16", {0x66, 0xe9, 0x10, 0x00}, 4, false},
        {"xbegin", {0xc7, 0xf8, 0, 0, 0, 0}, 6, true},
        {"sysenter", {0x0f, 0x34}, 2, false},
        {"truncated", {0x48, 0x8b}, 2, true},
        {"rex before vex", {0x48, 0xc5, 0xf8, 0x77}, 4, true},
    };
    for (size_t n = 0; n < sizeof(refused) / sizeof(refused[0]); n++) {
        struct displace_plan plan = x86_displace(refused[n].bytes, refused[n].len, 0x400000,
                                                 0x500000, refused[n].mode64);
        CHECK(plan.kind == DISPLACE_UNSUPPORTED, "%s: kind %d, want UNSUPPORTED", refused[n].what,
              plan.kind);
    }
    /* mov 0x10(%rip),%rax with the slot 3 GiB away */
    static const uint8_t mov_rip[7] = {0x48, 0x8b, 0x05, 0x10, 0, 0, 0};
    struct displace_plan far = x86_displace(mov_rip, sizeof(mov_rip), 0x7f0000000000ull,
                                            0x7f0000000000ull + (3ull << 30), true);
    CHECK(far.kind == DISPLACE_UNSUPPORTED, "RIP-relative out of reach: kind %d", far.kind);
    struct displace_plan near = x86_displace(mov_rip, sizeof(mov_rip), 0x7f0000000000ull,
                                             0x7f0000000000ull + (1ull << 30), true);
    CHECK(near.kind == DISPLACE_OUT_OF_LINE, "RIP-relative in reach: kind %d", near.kind);
}

/* i386 plans (the test runs them nowhere, so their bytes are checked):
 * call rel32 becomes push imm32 + jmp rel32, jcc a jcc over a jmp. */
static void test_i386_plans(void)
{
    /* call +0x10 at 0x8048000 */
    static const uint8_t call[5] = {0xe8, 0x10, 0, 0, 0};
    struct displace_plan p = x86_displace(call, sizeof(call), 0x8048000, 0x9000000, false);
    static const uint8_t want_call[10] = {0x68, 0x05, 0x80, 0x04, 0x08,   /* push $0x8048005 */
                                          0xe9, 0x0b, 0x80, 0x04, 0xff};  /* jmp 0x8048015 */
    CHECK(p.kind == DISPLACE_OUT_OF_LINE && p.slot_len == sizeof(want_call) &&
              memcmp(p.slot_bytes, want_call, sizeof(want_call)) == 0,
          "i386 call rel32 plan");
    /* push %ebp at 0x8048000: copy + jmp back to 0x8048001 */
    static const uint8_t push[1] = {0x55};
    p = x86_displace(push, sizeof(push), 0x8048000, 0x9000000, false);
    static const uint8_t want_push[6] = {0x55, 0xe9, 0xfb, 0x7f, 0x04, 0xff};
    CHECK(p.kind == DISPLACE_OUT_OF_LINE && p.slot_len == sizeof(want_push) &&
              memcmp(p.slot_bytes, want_push, sizeof(want_push)) == 0,
          "i386 push plan");
    /* endbr32 */
    static const uint8_t endbr32[4] = {0xf3, 0x0f, 0x1e, 0xfb};
    p = x86_displace(endbr32, sizeof(endbr32), 0x8048000, 0x9000000, false);
    CHECK(p.kind == DISPLACE_EMULATE && p.new_pc == 0x8048004, "endbr32 plan");
}

#ifndef MT_NO_LIBELF

/* ---- real entry points ---- */

struct entry_file {
    const char *path;
    bool mode64;
    bool required;
    const char *const *symbols;
};

static const char *const libc_symbols[] = {
    "malloc", "free", "calloc", "realloc", "reallocarray", "posix_memalign", "aligned_alloc",
    "valloc", "pvalloc", "memalign", "mmap", "mmap64", "munmap", "mremap", "malloc_usable_size",
    "strdup", "strndup", NULL};
static const char *const cxx_symbols[] = {
    "_Znwm", "_Znam", "_ZdlPv", "_ZdaPv", "_ZdlPvm", "_ZdaPvm", "_ZnwmRKSt9nothrow_t",
    "_ZnwmSt11align_val_t", "_ZdlPvSt11align_val_t", "_ZdlPvmSt11align_val_t", NULL};
static const char *const cxx32_symbols[] = {"_Znwj", "_Znaj", "_ZdlPv", "_ZdaPv", NULL};

static const struct entry_file entry_files[] = {
    {"/lib/x86_64-linux-gnu/libc.so.6", true, true, libc_symbols},
    {"/usr/lib/x86_64-linux-gnu/libstdc++.so.6", true, true, cxx_symbols},
    {"/lib/x86_64-linux-musl/libc.so", true, false, libc_symbols},   /* Debian's musl */
    {"/usr/lib/musl/lib/libc.so", true, false, libc_symbols},
    {"/usr/lib32/libc.so.6", false, false, libc_symbols},
    {"/usr/lib32/libstdc++.so.6", false, false, cxx32_symbols},
};

/* File offset of a virtual address, through the PT_LOAD headers. */
static bool vaddr_to_offset(Elf *elf, uint64_t vaddr, uint64_t *offset)
{
    size_t n;
    if (elf_getphdrnum(elf, &n) != 0)
        return false;
    for (size_t k = 0; k < n; k++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, (int)k, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
            vaddr < ph.p_vaddr + ph.p_filesz) {
            *offset = ph.p_offset + (vaddr - ph.p_vaddr);
            return true;
        }
    }
    return false;
}

static bool find_dynsym(Elf *elf, const char *name, uint64_t *value)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || sh.sh_entsize == 0)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        for (size_t k = 0; data && k < sh.sh_size / sh.sh_entsize; k++) {
            GElf_Sym sym;
            if (!gelf_getsym(data, (int)k, &sym) || sym.st_shndx == SHN_UNDEF ||
                GELF_ST_TYPE(sym.st_info) != STT_FUNC)
                continue;
            const char *s = elf_strptr(elf, sh.sh_link, sym.st_name);
            if (s && strcmp(s, name) == 0) {
                *value = sym.st_value;
                return true;
            }
        }
    }
    return false;
}

static void print_bytes(const uint8_t *p, unsigned n)
{
    for (unsigned k = 0; k < n; k++)
        printf(" %02x", p[k]);
}

static void test_entry_points(void)
{
    elf_version(EV_CURRENT);
    unsigned planned = 0;
    for (size_t f = 0; f < sizeof(entry_files) / sizeof(entry_files[0]); f++) {
        const struct entry_file *ef = &entry_files[f];
        int fd = open(ef->path, O_RDONLY);
        if (fd < 0) {
            CHECK(!ef->required, "%s missing", ef->path);
            printf("%s: not present, skipped\n", ef->path);
            continue;
        }
        Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
        CHECK(elf != NULL, "%s: not ELF", ef->path);
        for (unsigned s = 0; elf && ef->symbols[s]; s++) {
            uint64_t addr, off;
            if (!find_dynsym(elf, ef->symbols[s], &addr))
                continue;
            uint8_t code[ARCH_INSN_MAX];
            ssize_t got = -1;
            if (vaddr_to_offset(elf, addr, &off))
                got = pread(fd, code, sizeof(code), (off_t)off);
            CHECK(got > 0, "%s: cannot read %s", ef->path, ef->symbols[s]);
            if (got <= 0)
                continue;
            /* The engine maps the slot page near the library: 1 MiB below. */
            uint64_t slot = (addr & ~0xfffull) - 0x100000 + 0x40;
            if (!ef->mode64)
                slot &= 0xffffffffu;
            struct displace_plan p = x86_displace(code, (size_t)got, addr, slot, ef->mode64);
            static const char *const kinds[] = {"UNSUPPORTED", "EMULATE", "OUT_OF_LINE"};
            printf("%-42s %-24s %-11s", ef->path, ef->symbols[s], kinds[p.kind]);
            print_bytes(code, p.insn_len ? p.insn_len : 1);
            printf("\n");
            CHECK(p.kind != DISPLACE_UNSUPPORTED, "%s %s cannot be displaced", ef->path,
                  ef->symbols[s]);
            CHECK(p.slot_len <= ARCH_DISPLACE_SLOT_MAX, "%s %s slot too long", ef->path,
                  ef->symbols[s]);
            planned++;
        }
        if (elf)
            elf_end(elf);
        close(fd);
    }
    CHECK(planned >= 20, "only %u entry points planned", planned);
    printf("%u entry points planned\n", planned);
}

#endif /* MT_NO_LIBELF */

int main(void)
{
    test_execution();
#if defined(__x86_64__)
    test_real_entries();
#endif
    test_refusals();
    test_i386_plans();
#ifndef MT_NO_LIBELF
    test_entry_points();
#endif
    return test_end("test_x86_insn");
}

#else /* not x86 */
#include <stdio.h>

int main(void)
{
    printf("x86 decoder is not built for this CPU\n");
    return 77;
}
#endif
