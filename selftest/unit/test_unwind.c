/* unwind_stack on hand-built CFI and a fake stack: ordinary frames, a
 * signal frame (exact pc, context restored by DW_CFA_expression rules),
 * every termination condition, and the warm-cache cost per frame.
 * Register numbers come from arch/arch.h, so this runs on any CPU.  The
 * real-world oracle is selftest/tests/unwind_gdb.sh. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "target/unwind/unwind.h"

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; \
    printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); printf(__VA_ARGS__); printf("\n"); } \
} while (0)

#define P ARCH_PTR_SIZE

struct buf {
    uint8_t b[4096];
    size_t n;
};
static void put(struct buf *b, uint64_t v, unsigned size)
{
    for (unsigned i = 0; i < size; i++)
        b->b[b->n++] = (uint8_t)(v >> (8 * i));   /* the host's (little-endian) order */
}
static void u8(struct buf *b, unsigned v) { put(b, v, 1); }
static void uleb(struct buf *b, uint64_t v)
{
    do {
        uint8_t byte = v & 0x7f;
        v >>= 7;
        u8(b, byte | (v ? 0x80 : 0));
    } while (v);
}
static void sleb(struct buf *b, int64_t v)
{
    for (;;) {
        uint8_t byte = v & 0x7f;
        v >>= 7;
        bool done = (v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40));
        u8(b, byte | (done ? 0 : 0x80));
        if (done)
            return;
    }
}
static void patch_len(struct buf *b, size_t at)
{
    uint32_t len = (uint32_t)(b->n - at - 4);
    memcpy(b->b + at, &len, 4);
}

/* .debug_frame (absolute addresses): one CIE, then FDEs. */
static size_t cie(struct buf *b, bool signal)
{
    size_t at = b->n;
    put(b, 0, 4);
    put(b, 0xffffffff, 4);
    u8(b, 4);                       /* version 4: address size follows */
    if (signal) {
        /* "S" is an .eh_frame augmentation, but readers accept it with 'z'. */
        const char aug[] = "zS";
        memcpy(b->b + b->n, aug, sizeof(aug));
        b->n += sizeof(aug);
    } else {
        u8(b, 0);
    }
    u8(b, P);
    u8(b, 0);
    uleb(b, 1);
    sleb(b, 1);                     /* data alignment 1: offsets are bytes */
    uleb(b, ARCH_DWARF_RA);
    if (signal)
        uleb(b, 0);                 /* empty augmentation data */
    u8(b, 0x0c); uleb(b, ARCH_DWARF_SP); uleb(b, 0);   /* def_cfa sp+0 */
    patch_len(b, at);
    return at;
}

static size_t fde_begin(struct buf *b, size_t cie_at, uint64_t start, uint64_t len, bool z)
{
    size_t at = b->n;
    put(b, 0, 4);
    put(b, cie_at, 4);
    put(b, start, P);
    put(b, len, P);
    if (z)
        uleb(b, 0);
    return at;
}

/* An FDE with CFA = sp + frame and the return address at CFA - P. */
static void plain_fde(struct buf *b, size_t c, uint64_t start, int64_t frame)
{
    size_t at = fde_begin(b, c, start, 0x100, false);
    u8(b, 0x12); uleb(b, ARCH_DWARF_SP); sleb(b, frame);         /* def_cfa_sf */
    u8(b, 0x11); uleb(b, ARCH_DWARF_RA); sleb(b, -P);            /* offset_extended_sf */
    u8(b, 0x11); uleb(b, ARCH_DWARF_FP); sleb(b, -2 * P);
    patch_len(b, at);
}

#define STACK_BASE 0x8000u
static uint8_t stack[0x2000];   /* fake target memory [0x8000, 0xa000) */
static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
    (void)ctx;
    if (addr < STACK_BASE || addr - STACK_BASE > sizeof(stack) ||
        len > sizeof(stack) - (addr - STACK_BASE))
        return -1;
    memcpy(buf, stack + (addr - STACK_BASE), len);
    return 0;
}
static void poke(uint64_t addr, uint64_t v) { memcpy(stack + (addr - STACK_BASE), &v, P); }

static struct cfi_table *the_table;
static struct cfi_table *find(void *ctx, uint64_t pc, uint64_t *bias)
{
    (void)ctx;
    *bias = 0x100000;
    return pc >= 0x100000 && pc < 0x200000 ? the_table : NULL;
}

/* Link-time addresses of the test functions; runtime = +0x100000. */
enum { FN_A = 0x1000, FN_B = 0x2000, FN_START = 0x3000, FN_SIGTRAMP = 0x4000,
       FN_INTERRUPTED = 0x5000, FN_SHRINK = 0x6000, FN_LOOP = 0x7000 };
#define RT(x) (0x100000u + (x))

static struct unwind_regs regs_at(uint64_t pc, uint64_t sp)
{
    struct unwind_regs r;
    memset(&r, 0, sizeof(r));
    r.r[UNWIND_DWARF_PC] = pc;
    r.r[ARCH_DWARF_SP] = sp;
    r.r[ARCH_DWARF_FP] = 0x1234;
    r.valid = 1ull << UNWIND_DWARF_PC | 1ull << ARCH_DWARF_SP | 1ull << ARCH_DWARF_FP;
    return r;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(void)
{
    struct buf b = { .n = 0 };
    size_t c = cie(&b, false);
    size_t cs = cie(&b, true);
    plain_fde(&b, c, FN_A, 2 * P);
    plain_fde(&b, c, FN_B, 4 * P);
    plain_fde(&b, c, FN_INTERRUPTED, 2 * P);
    plain_fde(&b, c, FN_SHRINK, -4 * P);   /* CFA below sp: corrupt */
    plain_fde(&b, c, FN_LOOP, 2 * P);
    {   /* outermost: the return address is undefined */
        size_t at = fde_begin(&b, c, FN_START, 0x100, false);
        u8(&b, 0x07); uleb(&b, ARCH_DWARF_RA);
        patch_len(&b, at);
    }
    {   /* signal trampoline: the interrupted registers are in a context at
         * sp + 0x100 (pc) and sp + 0x100 + P (sp) */
        size_t at = fde_begin(&b, cs, FN_SIGTRAMP - 1, 0x100, true);
        u8(&b, 0x10); uleb(&b, ARCH_DWARF_RA); uleb(&b, 3);
        u8(&b, 0x70 + ARCH_DWARF_SP); u8(&b, 0x80); u8(&b, 0x02);   /* breg sp +0x100 */
        u8(&b, 0x10); uleb(&b, ARCH_DWARF_SP); uleb(&b, 3);
        u8(&b, 0x70 + ARCH_DWARF_SP); sleb(&b, 0x100 + P);
        patch_len(&b, at);
    }
    struct cfi_sources src;
    memset(&src, 0, sizeof(src));
    src.addr_size = P;
    src.debug_frame = b.b;
    src.debug_frame_size = b.n;
    the_table = cfi_table_new(&src);
    struct unwind_memory mem = { mem_read, NULL };
    struct unwind_lookup lookup = { find, NULL, NULL, NULL };
    uint64_t pcs[64];

    /* A -> B -> _start */
    uint64_t sp = 0x8100;
    poke(sp + 2 * P - P, RT(FN_B + 0x20));
    poke(sp + 2 * P + 4 * P - P, RT(FN_START + 0x30));
    poke(sp + 2 * P + 4 * P - 2 * P, 0xf00d);
    struct unwind_regs r = regs_at(RT(FN_A + 0x10), sp);
    int n = unwind_stack(&r, &mem, &lookup, pcs, 64);
    CHECK(n == 3 && pcs[0] == RT(FN_A + 0x10) && pcs[1] == RT(FN_B + 0x20) &&
          pcs[2] == RT(FN_START + 0x30), "plain chain: %d frames", n);
    {
        /* The callee-saved register comes back from the stack. */
        struct unwind_regs step = r;
        uint64_t cfa;
        bool sig;
        CHECK(unwind_step(&step, true, &mem, &lookup, &cfa, &sig) == 0, "step A");
        CHECK(unwind_step(&step, false, &mem, &lookup, &cfa, &sig) == 0 &&
              step.r[ARCH_DWARF_FP] == 0xf00d && step.r[ARCH_DWARF_SP] == cfa,
              "restored fp 0x%llx", (unsigned long long)step.r[ARCH_DWARF_FP]);
        CHECK(unwind_step(&step, false, &mem, &lookup, &cfa, &sig) == 1, "outermost");
    }

    /* A -> signal trampoline -> interrupted (exact pc at its FDE's first
     * byte: a pc-1 lookup would miss) on another stack -> _start */
    memset(stack, 0, sizeof(stack));
    sp = 0x9000;
    uint64_t tramp_sp = sp + 2 * P;
    uint64_t other_sp = 0x8400;   /* lower than the handler's: sigaltstack-like */
    poke(sp + 2 * P - P, RT(FN_SIGTRAMP));
    poke(tramp_sp + 0x100, RT(FN_INTERRUPTED));
    poke(tramp_sp + 0x100 + P, other_sp);
    poke(other_sp + 2 * P - P, RT(FN_START + 4));
    r = regs_at(RT(FN_A), sp);
    n = unwind_stack(&r, &mem, &lookup, pcs, 64);
    CHECK(n == 4 && pcs[1] == RT(FN_SIGTRAMP) &&
          pcs[2] == (RT(FN_INTERRUPTED) | UNWIND_PC_EXACT) && pcs[3] == RT(FN_START + 4),
          "signal: %d frames, pcs[2] 0x%llx", n, (unsigned long long)(n > 2 ? pcs[2] : 0));

    /* Termination: return address 0 */
    memset(stack, 0, sizeof(stack));
    r = regs_at(RT(FN_A), 0x8100);
    n = unwind_stack(&r, &mem, &lookup, pcs, 64);
    CHECK(n == 1, "pc 0: %d frames", n);
    /* a return address without CFI is reported, and the walk ends there */
    poke(0x8100 + P, 0x999999);
    n = unwind_stack(&r, &mem, &lookup, pcs, 64);
    CHECK(n == 2 && pcs[1] == 0x999999, "no CFI: %d frames", n);
    /* no CFI for frame 0 itself */
    r = regs_at(0x999999, 0x8100);
    n = unwind_stack(&r, &mem, &lookup, pcs, 64);
    CHECK(n == 1, "no CFI at frame 0: %d", n);
    /* CFA below the stack pointer */
    r = regs_at(RT(FN_SHRINK), 0x8800);
    poke(0x8800 - 4 * P - P, RT(FN_A));
    n = unwind_stack(&r, &mem, &lookup, pcs, 64);
    CHECK(n == 1, "shrinking CFA: %d frames", n);
    /* unreadable memory */
    r = regs_at(RT(FN_A), 0x100);
    n = unwind_stack(&r, &mem, &lookup, pcs, 64);
    CHECK(n == 1, "unreadable stack: %d frames", n);
    /* a stack pointer that is not known */
    r = regs_at(RT(FN_A), 0x8100);
    r.valid &= ~(1ull << ARCH_DWARF_SP);
    n = unwind_stack(&r, &mem, &lookup, pcs, 64);
    CHECK(n == 1, "unknown sp: %d frames", n);
    /* max frames, and deep recursion: FN_LOOP calls itself 200 times */
    memset(stack, 0, sizeof(stack));
    for (int i = 0; i < 200; i++)
        poke(0x8000 + (uint64_t)i * 2 * P + P, RT(FN_LOOP + 8));
    poke(0x8000 + 200u * 2 * P + P, RT(FN_START + 8));
    r = regs_at(RT(FN_LOOP + 4), 0x8000);
    n = unwind_stack(&r, &mem, &lookup, pcs, 10);
    CHECK(n == 10, "max frames: %d", n);
    n = unwind_stack(&r, &mem, &lookup, pcs, 0);
    CHECK(n == 0, "max 0: %d", n);

    /* Warm cache: the same 64 frames again and again. */
    const int reps = 200000;
    int total = 0;
    double t0 = now_ns();
    for (int i = 0; i < reps; i++)
        total += unwind_stack(&r, &mem, &lookup, pcs, 64);
    double ns = (now_ns() - t0) / total;
    CHECK(total == reps * 64, "perf unwind: %d frames", total);
    printf("warm cache: %.1f ns/frame (%d frames)\n", ns, total);
    /* "Well under a microsecond" with room for slow boards and sanitizers. */
    CHECK(ns < 1000, "%.1f ns/frame", ns);

    cfi_table_free(the_table);
    if (failures) {
        printf("%d checks failed\n", failures);
        return 1;
    }
    printf("all unwind checks passed\n");
    return 0;
}
