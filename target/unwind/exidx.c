/* ARM EHABI tables: lookup of a function's unwind opcodes and their
 * interpreter.  See exidx.h for the format. */
#include "target/unwind/exidx.h"

#include <stdlib.h>
#include <string.h>

#define ENTRY_SIZE 8
#define CANTUNWIND 1u

struct exidx_table {
    struct exidx_sources src;
    size_t count;
};

struct exidx_table *exidx_table_new(const struct exidx_sources *src)
{
    if (!src->exidx || src->exidx_size < ENTRY_SIZE || src->exidx_size % ENTRY_SIZE)
        return NULL;
    struct exidx_table *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->src = *src;
    t->count = src->exidx_size / ENTRY_SIZE;
    return t;
}

void exidx_table_free(struct exidx_table *t) { free(t); }

bool exidx_big_endian(const struct exidx_table *t) { return t->src.big_endian; }

static uint32_t word_at(const uint8_t *p, bool big_endian)
{
    if (big_endian)
        return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* A prel31 field: the 31-bit signed offset from the word's own address. */
static uint32_t prel31(uint32_t word, uint32_t place)
{
    uint32_t off = word & 0x7fffffffu;
    if (off & 0x40000000u)
        off |= 0x80000000u;
    return place + off;
}

static uint32_t entry_word(const struct exidx_table *t, size_t i, unsigned which)
{
    return word_at(t->src.exidx + i * ENTRY_SIZE + which * 4, t->src.big_endian);
}

static uint32_t entry_place(const struct exidx_table *t, size_t i, unsigned which)
{
    return (uint32_t)t->src.exidx_vaddr + (uint32_t)(i * ENTRY_SIZE + which * 4);
}

static uint32_t entry_fn(const struct exidx_table *t, size_t i)
{
    return prel31(entry_word(t, i, 0), entry_place(t, i, 0));
}

/* Appends the three low bytes of word, most significant first. */
static size_t take3(uint8_t *ops, size_t n, uint32_t word)
{
    ops[n++] = (uint8_t)(word >> 16);
    ops[n++] = (uint8_t)(word >> 8);
    ops[n++] = (uint8_t)word;
    return n;
}

/* The opcodes of the .ARM.extab entry at link address addr. */
static enum exidx_find_result extab_ops(const struct exidx_table *t, uint32_t addr, uint8_t *ops,
                                        size_t *n)
{
    const struct exidx_sources *s = &t->src;
    if (!s->extab || addr < s->extab_vaddr || addr - s->extab_vaddr > s->extab_size ||
        s->extab_size - (addr - s->extab_vaddr) < 4)
        return EXIDX_NONE;
    size_t off = (size_t)(addr - s->extab_vaddr);
    size_t left = s->extab_size - off;
    uint32_t w0 = word_at(s->extab + off, s->big_endian);
    size_t k = 0, words;
    if (w0 & 0x80000000u) {
        if ((w0 >> 28) != 8)
            return EXIDX_NONE;
        unsigned index = (w0 >> 24) & 15;
        if (index == 0) {
            *n = take3(ops, 0, w0);
            return EXIDX_FOUND;
        }
        if (index > 2)
            return EXIDX_NONE;
        words = (w0 >> 16) & 0xff;
        ops[k++] = (uint8_t)(w0 >> 8);
        ops[k++] = (uint8_t)w0;
        off += 4;
        left -= 4;
    } else {
        /* A generic personality routine (gcc's __gxx_personality_v0): its
         * data starts with the opcode words in the personality 1 layout. */
        if (left < 8)
            return EXIDX_NONE;
        uint32_t w1 = word_at(s->extab + off + 4, s->big_endian);
        words = w1 >> 24;
        k = take3(ops, k, w1);
        off += 8;
        left -= 8;
    }
    if (words > left / 4)
        return EXIDX_NONE;
    for (size_t i = 0; i < words; i++) {
        uint32_t w = word_at(s->extab + off + i * 4, s->big_endian);
        ops[k++] = (uint8_t)(w >> 24);
        k = take3(ops, k, w);
    }
    *n = k;
    return EXIDX_FOUND;
}

enum exidx_find_result exidx_find(const struct exidx_table *t, uint64_t link_pc, uint8_t *ops,
                                  size_t *n, uint64_t *fn_start)
{
    *n = 0;
    if (!t || link_pc > UINT32_MAX)
        return EXIDX_NONE;
    uint32_t pc = (uint32_t)link_pc;
    /* The last entry whose function starts at or before pc. */
    size_t lo = 0, hi = t->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (entry_fn(t, mid) <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return EXIDX_NONE;
    size_t i = lo - 1;
    *fn_start = entry_fn(t, i);
    uint32_t w = entry_word(t, i, 1);
    if (w == CANTUNWIND)
        return EXIDX_CANTUNWIND;
    if (w & 0x80000000u) {
        if ((w >> 24) != 0x80)
            return EXIDX_NONE;   /* inline entries are personality 0 only */
        *n = take3(ops, 0, w);
        return EXIDX_FOUND;
    }
    return extab_ops(t, prel31(w, entry_place(t, i, 1)), ops, n);
}

struct vm {
    struct exidx_regs *regs;
    uint32_t vsp;
    int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
    void *ctx;
    bool big_endian;
    bool popped_sp, popped_pc;
};

/* Pops the registers of mask (bit n: r[n]) in ascending order. */
static int pop(struct vm *m, uint32_t mask)
{
    bool sp_loaded = false;
    uint32_t new_sp = 0;
    for (unsigned r = 0; r < 16; r++) {
        if (!(mask & (1u << r)))
            continue;
        uint8_t b[4];
        if (m->read(m->ctx, m->vsp, b, 4) != 0)
            return -1;
        uint32_t v = word_at(b, m->big_endian);
        m->vsp += 4;
        m->regs->r[r] = v;
        m->regs->valid |= 1u << r;
        if (r == 13) {
            sp_loaded = true;
            new_sp = v;
        }
    }
    if (sp_loaded) {
        m->vsp = new_sp;   /* a popped sp wins over the pops' own advance */
        m->popped_sp = true;
    }
    if (mask & (1u << 15))
        m->popped_pc = true;
    return 0;
}

int exidx_execute(const uint8_t *ops, size_t n, struct exidx_regs *regs,
                  int (*read)(void *ctx, uint64_t addr, void *buf, size_t len), void *ctx,
                  bool big_endian, bool *full_context)
{
    *full_context = false;
    if (!(regs->valid & (1u << 13)))
        return -1;
    struct vm m = {.regs = regs, .vsp = regs->r[13], .read = read, .ctx = ctx,
                   .big_endian = big_endian};
    size_t i = 0;
    while (i < n) {
        uint8_t b = ops[i++];
        uint8_t next = 0;
        bool has_next = i < n;
        if ((b & 0xc0) == 0x00) {
            m.vsp += ((uint32_t)(b & 0x3f) << 2) + 4;
        } else if ((b & 0xc0) == 0x40) {
            m.vsp -= ((uint32_t)(b & 0x3f) << 2) + 4;
        } else if ((b & 0xf0) == 0x80) {          /* pop r4-r15 under a 12-bit mask */
            if (!has_next)
                return -1;
            next = ops[i++];
            uint32_t mask = ((uint32_t)(b & 0x0f) << 8 | next) << 4;
            if (!mask || pop(&m, mask) < 0)     /* 0x8000: refuse to unwind */
                return -1;
        } else if ((b & 0xf0) == 0x90) {          /* vsp = r[n] */
            unsigned r = b & 0x0f;
            if (r == 13 || r == 15 || !(regs->valid & (1u << r)))
                return -1;
            m.vsp = regs->r[r];
        } else if ((b & 0xf0) == 0xa0) {          /* pop r4-r[4+n] (and r14) */
            uint32_t mask = ((1u << ((b & 7) + 1)) - 1) << 4;
            if (b & 0x08)
                mask |= 1u << 14;
            if (pop(&m, mask) < 0)
                return -1;
        } else if (b == 0xb0) {                   /* finish */
            break;
        } else if (b == 0xb1) {                   /* pop r0-r3 under a mask */
            if (!has_next)
                return -1;
            next = ops[i++];
            if (next == 0 || (next & 0xf0) || pop(&m, next) < 0)
                return -1;
        } else if (b == 0xb2) {                   /* vsp += 0x204 + (uleb128 << 2) */
            uint32_t v = 0;
            unsigned shift = 0;
            for (;;) {
                if (i >= n || shift > 28)
                    return -1;
                uint8_t c = ops[i++];
                v |= (uint32_t)(c & 0x7f) << shift;
                shift += 7;
                if (!(c & 0x80))
                    break;
            }
            m.vsp += 0x204 + (v << 2);
        } else if (b == 0xb3 || b == 0xc8 || b == 0xc9 || b == 0xc6) {
            /* VFP D[s]-D[s+c] (fstmfdx: one more word), or iWMMXt wR */
            if (!has_next)
                return -1;
            next = ops[i++];
            m.vsp += ((uint32_t)(next & 0x0f) + 1) * 8 + (b == 0xb3 ? 4 : 0);
        } else if ((b & 0xf8) == 0xb8) {          /* VFP D[8]-D[8+n], fstmfdx */
            m.vsp += ((uint32_t)(b & 7) + 1) * 8 + 4;
        } else if (b == 0xc7) {                   /* iWMMXt wCGR under a mask */
            if (!has_next)
                return -1;
            next = ops[i++];
            if (next == 0 || (next & 0xf0))
                return -1;
            m.vsp += 4u * (uint32_t)__builtin_popcount(next);
        } else if ((b & 0xf8) == 0xc0 || (b & 0xf8) == 0xd0) {   /* wR[10]-, D[8]- (vpush) */
            m.vsp += ((uint32_t)(b & 7) + 1) * 8;
        } else {
            return -1;                            /* spare */
        }
    }
    if (!m.popped_pc) {
        if (!(regs->valid & (1u << 14)))
            return -1;
        regs->r[15] = regs->r[14];
        regs->valid |= 1u << 15;
    }
    regs->r[13] = m.vsp;
    regs->valid |= 1u << 13;
    *full_context = m.popped_sp && m.popped_pc;
    return 0;
}
