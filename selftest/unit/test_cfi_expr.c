/* The CFI expression evaluator: every DW_OP_* it supports, with expected
 * values computed by C arithmetic on the same operands, plus the guards
 * (stack bounds, step limit, bad branches, unreadable memory). */
#include <stdio.h>
#include <string.h>

#include "target/dwarf/expr.h"
#include "selftest/unit/test.h"

/* Fake target memory: 64 bytes at 0x1000 holding i*0x11 at byte i. */
static uint8_t memory[64];
static int reads;
static int read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
    (void)ctx;
    reads++;
    if (addr < 0x1000 || addr - 0x1000 > sizeof(memory) || len > sizeof(memory) - (addr - 0x1000))
        return -1;
    memcpy(buf, memory + (addr - 0x1000), len);
    return 0;
}

static struct unwind_regs regs;

static struct expr_context ctx64(void)
{
    struct expr_context c = { .addr_size = 8, .regs = &regs, .read = read_mem,
                              .has_cfa = true, .cfa = 0x7000 };
    return c;
}

struct tcase {
    const char *name;
    uint8_t ops[24];
    size_t len;
    int64_t want;
    int status;
};

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

int main(void)
{
    for (size_t i = 0; i < sizeof(memory); i++)
        memory[i] = (uint8_t)(i * 0x11);
    for (int i = 0; i < ARCH_DWARF_NREGS; i++)
        regs.r[i] = 0x100 * (uint64_t)(i + 1);
    regs.valid = (1ull << ARCH_DWARF_NREGS) - 1;
    regs.valid &= ~(1ull << 2);   /* register 2 unknown */

    int64_t a = 1000, b = -7;
    const struct tcase cases[] = {
        { "lit0", { 0x30 }, 1, 0, 0 },
        { "lit31", { 0x4f }, 1, 31, 0 },
        { "const1u", { 0x08, 0xff }, 2, 255, 0 },
        { "const1s", { 0x09, 0xff }, 2, -1, 0 },
        { "const2u", { 0x0a, 0x34, 0x12 }, 3, 0x1234, 0 },
        { "const2s", { 0x0b, 0xfe, 0xff }, 3, -2, 0 },
        { "const4u", { 0x0c, 0x78, 0x56, 0x34, 0x12 }, 5, 0x12345678, 0 },
        { "const4s", { 0x0d, 0xfd, 0xff, 0xff, 0xff }, 5, -3, 0 },
        { "const8u", { 0x0e, 1, 2, 3, 4, 5, 6, 7, 8 }, 9, 0x0807060504030201ll, 0 },
        { "const8s", { 0x0f, 0xfc, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, 9, -4, 0 },
        { "constu", { 0x10, 0xe5, 0x8e, 0x26 }, 4, 624485, 0 },
        { "consts", { 0x11, 0xc0, 0xbb, 0x78 }, 4, -123456, 0 },
        { "addr", { 0x03, 0x10, 0x20, 0, 0, 0, 0, 0, 0 }, 9, 0x2010, 0 },
        { "dup plus", { 0x35, 0x12, 0x22 }, 3, 10, 0 },
        { "drop", { 0x31, 0x32, 0x13 }, 3, 1, 0 },
        { "over", { 0x31, 0x32, 0x14 }, 3, 1, 0 },
        { "pick 2", { 0x33, 0x32, 0x31, 0x15, 2 }, 5, 3, 0 },
        { "swap minus", { 0x33, 0x3a, 0x16, 0x1c }, 4, 10 - 3, 0 },
        { "rot drop drop", { 0x31, 0x32, 0x33, 0x17, 0x13, 0x13 }, 6, 3, 0 },
        { "abs", { 0x11, 0x79, 0x19 }, 3, 7, 0 },
        { "and", { 0x08, 0xcc, 0x08, 0xaa, 0x1a }, 5, 0xcc & 0xaa, 0 },
        { "or", { 0x08, 0xcc, 0x08, 0xaa, 0x21 }, 5, 0xcc | 0xaa, 0 },
        { "xor", { 0x08, 0xcc, 0x08, 0xaa, 0x27 }, 5, 0xcc ^ 0xaa, 0 },
        { "div signed", { 0x11, 0xe8, 0x07, 0x11, 0x79, 0x1b }, 6, a / b, 0 },
        { "mod", { 0x11, 0xe8, 0x07, 0x08, 7, 0x1d }, 6, 1000 % 7, 0 },
        { "mul", { 0x11, 0xe8, 0x07, 0x11, 0x79, 0x1e }, 6, a * b, 0 },
        { "neg", { 0x35, 0x1f }, 2, -5, 0 },
        { "not", { 0x35, 0x20 }, 2, ~5ll, 0 },
        { "plus_uconst", { 0x35, 0x23, 0x80, 0x01 }, 4, 133, 0 },
        { "shl", { 0x35, 0x33, 0x24 }, 3, 5 << 3, 0 },
        { "shr", { 0x11, 0x70, 0x31, 0x25 }, 4, (int64_t)((uint64_t)-16 >> 1), 0 },
        { "shra", { 0x11, 0x70, 0x31, 0x26 }, 4, -8, 0 },
        { "eq", { 0x35, 0x35, 0x29 }, 3, 1, 0 },
        { "ge", { 0x11, 0x7f, 0x30, 0x2a }, 4, -1 >= 0, 0 },
        { "gt", { 0x35, 0x34, 0x2b }, 3, 1, 0 },
        { "le", { 0x35, 0x34, 0x2c }, 3, 0, 0 },
        { "lt signed", { 0x11, 0x7f, 0x30, 0x2d }, 4, 1, 0 },
        { "ne", { 0x35, 0x34, 0x2e }, 3, 1, 0 },
        { "skip", { 0x2f, 1, 0, 0x31, 0x32 }, 5, 2, 0 },
        { "bra taken", { 0x31, 0x28, 1, 0, 0x3a, 0x3b }, 6, 11, 0 },
        { "bra not taken", { 0x30, 0x28, 1, 0, 0x3a }, 5, 10, 0 },
        { "breg7", { 0x77, 0x10 }, 2, 0x800 + 0x10, 0 },
        { "breg0 negative", { 0x70, 0x7f }, 2, 0x100 - 1, 0 },
        { "bregx", { 0x92, 8, 8 }, 3, 0x900 + 8, 0 },   /* reg 8: tracked on every CPU */
        { "regx", { 0x90, 3 }, 2, 0x400, 0 },
        { "reg5", { 0x55 }, 1, 0x600, 0 },
        { "deref", { 0x0a, 0x08, 0x10, 0x06 }, 4, (int64_t)le64(memory + 8), 0 },
        { "deref_size 2", { 0x0a, 0x01, 0x10, 0x94, 2 }, 5, 0x11 | 0x22 << 8, 0 },
        { "nop", { 0x96, 0x33 }, 2, 3, 0 },
        { "call_frame_cfa", { 0x9c, 0x23, 8 }, 3, 0x7008, 0 },
        /* errors */
        { "empty", { 0 }, 0, 0, EXPR_ERR_STACK },
        { "underflow", { 0x22 }, 1, 0, EXPR_ERR_STACK },
        { "pick too deep", { 0x31, 0x15, 5 }, 3, 0, EXPR_ERR_STACK },
        { "div by zero", { 0x31, 0x30, 0x1b }, 3, 0, EXPR_ERR_DIV_ZERO },
        { "mod by zero", { 0x31, 0x30, 0x1d }, 3, 0, EXPR_ERR_DIV_ZERO },
        { "unknown register", { 0x72, 0 }, 2, 0, EXPR_ERR_REGISTER },
        { "unreadable", { 0x30, 0x06 }, 2, 0, EXPR_ERR_MEMORY },
        { "truncated const4u", { 0x0c, 1, 2 }, 3, 0, EXPR_ERR_MALFORMED },
        { "branch out", { 0x2f, 0x10, 0 }, 3, 0, EXPR_ERR_MALFORMED },
        { "branch before start", { 0x2f, 0xf0, 0xff }, 3, 0, EXPR_ERR_MALFORMED },
        { "loop", { 0x2f, 0xfd, 0xff }, 3, 0, EXPR_ERR_STEPS },
        { "fbreg needs a DIE", { 0x91, 0 }, 2, 0, EXPR_ERR_UNSUPPORTED },
        { "deref_size 0", { 0x30, 0x94, 0 }, 3, 0, EXPR_ERR_MALFORMED },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct expr_context c = ctx64();
        uint64_t v = 0;
        int st = expr_eval(cases[i].ops, cases[i].len, &c, NULL, 0, &v);
        CHECK(st == cases[i].status && (st != 0 || v == (uint64_t)cases[i].want),
              "%s: status %d value 0x%llx, want %d 0x%llx", cases[i].name, st,
              (unsigned long long)v, cases[i].status, (unsigned long long)cases[i].want);
    }

    /* The rot case above, spelled out: [1 2 3] rot -> [3 1 2]. */
    {
        struct expr_context c = ctx64();
        uint8_t ops[] = { 0x31, 0x32, 0x33, 0x17 };
        uint64_t top;
        expr_eval(ops, sizeof(ops), &c, NULL, 0, &top);
        uint8_t ops2[] = { 0x31, 0x32, 0x33, 0x17, 0x13 };
        uint64_t second;
        expr_eval(ops2, sizeof(ops2), &c, NULL, 0, &second);
        uint8_t ops3[] = { 0x31, 0x32, 0x33, 0x17, 0x13, 0x13 };
        uint64_t third;
        expr_eval(ops3, sizeof(ops3), &c, NULL, 0, &third);
        CHECK(top == 2 && second == 1 && third == 3, "rot: %llu %llu %llu",
              (unsigned long long)top, (unsigned long long)second, (unsigned long long)third);
    }

    /* Initial values: DW_CFA_expression pushes the CFA first. */
    {
        struct expr_context c = ctx64();
        uint64_t cfa = 0x5000, v;
        uint8_t ops[] = { 0x23, 0x10 };
        CHECK(expr_eval(ops, sizeof(ops), &c, &cfa, 1, &v) == 0 && v == 0x5010, "pushed CFA");
    }

    /* Stack overflow: more pushes than the bounded stack holds. */
    {
        uint8_t ops[EXPR_STACK_MAX + 1];
        memset(ops, 0x31, sizeof(ops));
        struct expr_context c = ctx64();
        uint64_t v;
        CHECK(expr_eval(ops, sizeof(ops), &c, NULL, 0, &v) == EXPR_ERR_STACK, "overflow");
        CHECK(expr_eval(ops, EXPR_STACK_MAX, &c, NULL, 0, &v) == 0 && v == 1, "full stack");
    }

    /* 4-byte targets wrap at 32 bits and compare as 32-bit signed values. */
    {
        struct expr_context c = ctx64();
        c.addr_size = 4;
        uint64_t v;
        uint8_t wrap[] = { 0x0c, 0xff, 0xff, 0xff, 0xff, 0x23, 2 };
        CHECK(expr_eval(wrap, sizeof(wrap), &c, NULL, 0, &v) == 0 && v == 1, "32-bit wrap %llx",
              (unsigned long long)v);
        uint8_t lt[] = { 0x0c, 0xff, 0xff, 0xff, 0xff, 0x30, 0x2d };
        CHECK(expr_eval(lt, sizeof(lt), &c, NULL, 0, &v) == 0 && v == 1, "32-bit signed lt");
        uint8_t deref[] = { 0x0a, 0x04, 0x10, 0x06 };
        uint32_t want = (uint32_t)memory[4] | (uint32_t)memory[5] << 8 |
                        (uint32_t)memory[6] << 16 | (uint32_t)memory[7] << 24;
        CHECK(expr_eval(deref, sizeof(deref), &c, NULL, 0, &v) == 0 && v == want,
              "32-bit deref");
        c.big_endian = true;
        uint8_t deref_be[] = { 0x0a, 0x10, 0x04, 0x06 };   /* const2u in BE */
        want = (uint32_t)memory[4] << 24 | (uint32_t)memory[5] << 16 |
               (uint32_t)memory[6] << 8 | memory[7];
        CHECK(expr_eval(deref_be, sizeof(deref_be), &c, NULL, 0, &v) == 0 && v == want,
              "big-endian deref 0x%llx want 0x%x", (unsigned long long)v, want);
    }

    /* No CFA in context (a DW_CFA_def_cfa_expression computes it). */
    {
        struct expr_context c = ctx64();
        c.has_cfa = false;
        uint8_t ops[] = { 0x9c };
        uint64_t v;
        CHECK(expr_eval(ops, 1, &c, NULL, 0, &v) == EXPR_ERR_UNSUPPORTED, "cfa without context");
    }

    if (failures) {
        printf("%d checks failed\n", failures);
        return 1;
    }
    printf("all expression checks passed (%d memory reads)\n", reads);
    return 0;
}
