/* DW_OP_* stack machine for CFI expressions. */
#include "target/dwarf/expr.h"
#include "shared/files/cursor.h"

#include <string.h>

int expr_read_addr(const struct expr_context *ctx, uint64_t addr, unsigned size, uint64_t *out)
{
    uint8_t b[8];
    if (size == 0 || size > 8 || !ctx->read || ctx->read(ctx->read_ctx, addr, b, size) != 0)
        return -1;
    uint64_t v = 0;
    if (ctx->big_endian) {
        for (unsigned i = 0; i < size; i++)
            v = (v << 8) | b[i];
    } else {
        for (unsigned i = size; i > 0; i--)
            v = (v << 8) | b[i - 1];
    }
    *out = v;
    return 0;
}

struct machine {
    uint64_t st[EXPR_STACK_MAX];
    unsigned n;
    uint64_t mask;       /* address-size mask */
    unsigned bits;
};

static inline int64_t as_signed(const struct machine *m, uint64_t v)
{
    if (m->bits == 64)
        return (int64_t)v;
    uint64_t sign = 1ull << (m->bits - 1);
    return (int64_t)(((v & m->mask) ^ sign) - sign);
}

static bool reg_value(const struct expr_context *ctx, uint64_t reg, uint64_t *out)
{
    if (!ctx->regs || reg >= ARCH_DWARF_NREGS || !(ctx->regs->valid & (1ull << reg)))
        return false;
    *out = ctx->regs->r[reg];
    return true;
}

#define NEED(k) do { if (m.n < (k)) return EXPR_ERR_STACK; } while (0)
#define PUSH(v) do { if (m.n >= EXPR_STACK_MAX) return EXPR_ERR_STACK; \
                     uint64_t pushed_ = (uint64_t)(v) & m.mask; \
                     m.st[m.n] = pushed_; m.n++; } while (0)
#define TOP m.st[m.n - 1]
#define SECOND m.st[m.n - 2]

enum expr_status expr_eval(const uint8_t *ops, size_t len, const struct expr_context *ctx,
                           const uint64_t *initial, size_t npush, uint64_t *result)
{
    struct machine m;
    m.n = 0;
    m.bits = ctx->addr_size == 4 ? 32 : 64;
    m.mask = m.bits == 64 ? UINT64_MAX : 0xffffffffull;
    unsigned asz = m.bits / 8;
    for (size_t i = 0; i < npush; i++)
        PUSH(initial[i]);

    struct cursor c;
    cursor_init(&c, ops, len, ctx->big_endian);
    unsigned steps = 0;
    while (!cursor_at_end(&c)) {
        if (++steps > EXPR_STEPS_MAX)
            return EXPR_ERR_STEPS;
        uint8_t op = cursor_u8(&c);
        uint64_t a, v;
        int64_t sa, sb;

        if (op >= 0x30 && op <= 0x4f) {          /* DW_OP_lit0..31 */
            PUSH(op - 0x30);
            continue;
        }
        if (op >= 0x50 && op <= 0x6f) {          /* DW_OP_reg0..31 */
            /* A register location, not a value; CFI has no use for it
             * except as "the value of that register". */
            if (!reg_value(ctx, op - 0x50u, &v))
                return EXPR_ERR_REGISTER;
            PUSH(v);
            continue;
        }
        if (op >= 0x70 && op <= 0x8f) {          /* DW_OP_breg0..31 */
            sa = cursor_sleb128(&c);
            if (!cursor_ok(&c))
                return EXPR_ERR_MALFORMED;
            if (!reg_value(ctx, op - 0x70u, &v))
                return EXPR_ERR_REGISTER;
            PUSH(v + (uint64_t)sa);
            continue;
        }
        switch (op) {
        case 0x03: PUSH(cursor_uint(&c, asz)); break;                 /* addr */
        case 0x08: PUSH(cursor_u8(&c)); break;                        /* const1u */
        case 0x09: PUSH((uint64_t)cursor_sint(&c, 1)); break;         /* const1s */
        case 0x0a: PUSH(cursor_u16(&c)); break;                       /* const2u */
        case 0x0b: PUSH((uint64_t)cursor_sint(&c, 2)); break;         /* const2s */
        case 0x0c: PUSH(cursor_u32(&c)); break;                       /* const4u */
        case 0x0d: PUSH((uint64_t)cursor_sint(&c, 4)); break;         /* const4s */
        case 0x0e: PUSH(cursor_u64(&c)); break;                       /* const8u */
        case 0x0f: PUSH((uint64_t)cursor_sint(&c, 8)); break;         /* const8s */
        case 0x10: PUSH(cursor_uleb128(&c)); break;                   /* constu */
        case 0x11: PUSH((uint64_t)cursor_sleb128(&c)); break;         /* consts */
        case 0x12: NEED(1); PUSH(TOP); break;                         /* dup */
        case 0x13: NEED(1); m.n--; break;                             /* drop */
        case 0x14: NEED(2); PUSH(SECOND); break;                      /* over */
        case 0x15: {                                                  /* pick */
            uint8_t idx = cursor_u8(&c);
            if (!cursor_ok(&c))
                return EXPR_ERR_MALFORMED;
            NEED((unsigned)idx + 1);
            PUSH(m.st[m.n - 1 - idx]);
            break;
        }
        case 0x16: NEED(2); v = TOP; TOP = SECOND; SECOND = v; break; /* swap */
        case 0x17:                                                    /* rot */
            NEED(3);
            v = TOP;
            TOP = SECOND;
            SECOND = m.st[m.n - 3];
            m.st[m.n - 3] = v;
            break;
        case 0x06:                                                    /* deref */
        case 0x94: {                                                  /* deref_size */
            unsigned size = asz;
            if (op == 0x94) {
                size = cursor_u8(&c);
                if (!cursor_ok(&c) || size == 0 || size > asz)
                    return EXPR_ERR_MALFORMED;
            }
            NEED(1);
            if (expr_read_addr(ctx, TOP, size, &v) != 0)
                return EXPR_ERR_MEMORY;
            TOP = v & m.mask;
            break;
        }
        case 0x19: NEED(1); sa = as_signed(&m, TOP);                  /* abs */
            TOP = (sa < 0 ? 0 - (uint64_t)sa : (uint64_t)sa) & m.mask; break;
        case 0x1a: NEED(2); a = TOP; m.n--; TOP &= a; break;          /* and */
        case 0x1b:                                                    /* div (signed) */
            NEED(2);
            sb = as_signed(&m, TOP);
            sa = as_signed(&m, SECOND);
            if (sb == 0)
                return EXPR_ERR_DIV_ZERO;
            m.n--;
            if (sb == -1)
                TOP = (0 - (uint64_t)sa) & m.mask;   /* INT_MIN / -1 wraps */
            else
                TOP = (uint64_t)(sa / sb) & m.mask;
            break;
        case 0x1c: NEED(2); a = TOP; m.n--; TOP = (TOP - a) & m.mask; break;   /* minus */
        case 0x1d:                                                    /* mod (unsigned) */
            NEED(2);
            a = TOP;
            if (a == 0)
                return EXPR_ERR_DIV_ZERO;
            m.n--;
            TOP = TOP % a;
            break;
        case 0x1e: NEED(2); a = TOP; m.n--; TOP = (TOP * a) & m.mask; break;   /* mul */
        case 0x1f: NEED(1); TOP = (0 - TOP) & m.mask; break;          /* neg */
        case 0x20: NEED(1); TOP = ~TOP & m.mask; break;               /* not */
        case 0x21: NEED(2); a = TOP; m.n--; TOP |= a; break;          /* or */
        case 0x22: NEED(2); a = TOP; m.n--; TOP = (TOP + a) & m.mask; break;   /* plus */
        case 0x23:                                                    /* plus_uconst */
            a = cursor_uleb128(&c);
            NEED(1);
            TOP = (TOP + a) & m.mask;
            break;
        case 0x24: NEED(2); a = TOP; m.n--;                           /* shl */
            TOP = a >= m.bits ? 0 : (TOP << a) & m.mask; break;
        case 0x25: NEED(2); a = TOP; m.n--;                           /* shr */
            TOP = a >= m.bits ? 0 : TOP >> a; break;
        case 0x26: NEED(2); a = TOP; m.n--;                           /* shra */
            sa = as_signed(&m, TOP);
            if (a >= m.bits)
                a = m.bits - 1;
            TOP = (uint64_t)(sa < 0 ? ~(~sa >> a) : sa >> a) & m.mask;
            break;
        case 0x27: NEED(2); a = TOP; m.n--; TOP ^= a; break;          /* xor */
        case 0x29: case 0x2a: case 0x2b: case 0x2c: case 0x2d: case 0x2e: {
            NEED(2);
            sb = as_signed(&m, TOP);
            sa = as_signed(&m, SECOND);
            m.n--;
            bool r;
            switch (op) {
            case 0x29: r = sa == sb; break;   /* eq */
            case 0x2a: r = sa >= sb; break;   /* ge */
            case 0x2b: r = sa > sb; break;    /* gt */
            case 0x2c: r = sa <= sb; break;   /* le */
            case 0x2d: r = sa < sb; break;    /* lt */
            default: r = sa != sb; break;     /* ne */
            }
            TOP = r;
            break;
        }
        case 0x28:                                                    /* bra */
        case 0x2f: {                                                  /* skip */
            int64_t off = cursor_sint(&c, 2);
            if (!cursor_ok(&c))
                return EXPR_ERR_MALFORMED;
            if (op == 0x28) {
                NEED(1);
                v = TOP;
                m.n--;
                if (v == 0)
                    break;
            }
            int64_t target = (int64_t)c.pos + off;
            if (target < 0 || (uint64_t)target > len)
                return EXPR_ERR_MALFORMED;
            c.pos = (size_t)target;
            break;
        }
        case 0x90: {                                                  /* regx */
            a = cursor_uleb128(&c);
            if (!cursor_ok(&c))
                return EXPR_ERR_MALFORMED;
            if (!reg_value(ctx, a, &v))
                return EXPR_ERR_REGISTER;
            PUSH(v);
            break;
        }
        case 0x92: {                                                  /* bregx */
            a = cursor_uleb128(&c);
            sa = cursor_sleb128(&c);
            if (!cursor_ok(&c))
                return EXPR_ERR_MALFORMED;
            if (!reg_value(ctx, a, &v))
                return EXPR_ERR_REGISTER;
            PUSH(v + (uint64_t)sa);
            break;
        }
        case 0x96: break;                                             /* nop */
        case 0x9c:                                                    /* call_frame_cfa */
            if (!ctx->has_cfa)
                return EXPR_ERR_UNSUPPORTED;
            PUSH(ctx->cfa);
            break;
        default:
            return op <= 0x9f || (op >= 0xe0) ? EXPR_ERR_UNSUPPORTED : EXPR_ERR_MALFORMED;
        }
        if (!cursor_ok(&c))
            return EXPR_ERR_MALFORMED;
    }
    if (m.n == 0)
        return EXPR_ERR_STACK;
    *result = TOP;
    return EXPR_OK;
}
