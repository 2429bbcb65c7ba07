/* The CFA interpreter, CIE/FDE parsing, pointer encodings and FDE lookup on
 * hand-built byte sequences: every DW_CFA_* opcode, every DW_EH_PE_*
 * encoding, .debug_frame versions 1/3/4 and 64-bit DWARF, good and broken
 * .eh_frame_hdr tables, big-endian 4-byte targets.  Expected values follow
 * the DWARF 5 specification (6.4) and the LSB (.eh_frame); the real-world
 * oracles are test_cfi_readelf and selftest/tests/unwind_gdb.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/dwarf/cfi.h"
#include "target/dwarf/cfi_internal.h"
#include "selftest/unit/test.h"

struct buf {
    uint8_t b[4096];
    size_t n;
    bool be;
};

static void put(struct buf *b, uint64_t v, unsigned size)
{
    for (unsigned i = 0; i < size; i++) {
        unsigned shift = b->be ? (size - 1 - i) * 8 : i * 8;
        b->b[b->n++] = (uint8_t)(v >> shift);
    }
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
static void bytes(struct buf *b, const void *p, size_t n)
{
    memcpy(b->b + b->n, p, n);
    b->n += n;
}
/* Starts a length-prefixed entry; end_entry patches the length. */
static size_t begin_entry(struct buf *b)
{
    size_t at = b->n;
    put(b, 0, 4);
    return at;
}
static void end_entry(struct buf *b, size_t at)
{
    size_t len = b->n - at - 4;
    size_t save = b->n;
    b->n = at;
    put(b, len, 4);
    b->n = save;
}

#define EH_VADDR 0x10000
#define TEXT 0x400000

/* An .eh_frame with one "zR" CIE (pcrel|sdata4) and FDEs appended by add_fde. */
static size_t eh_cie(struct buf *b, const char *aug, uint64_t caf, int64_t daf, unsigned ra,
                     const uint8_t *init, size_t init_len)
{
    size_t cie = begin_entry(b);
    put(b, 0, 4);                       /* CIE id */
    u8(b, 1);                           /* version */
    bytes(b, aug, strlen(aug) + 1);
    uleb(b, caf);
    sleb(b, daf);
    u8(b, ra);
    if (aug[0] == 'z') {
        struct buf aug_data = { .n = 0, .be = b->be };
        for (const char *p = aug + 1; *p; p++) {
            if (*p == 'R')
                u8(&aug_data, DW_EH_PE_pcrel | DW_EH_PE_sdata4);
            if (*p == 'L')
                u8(&aug_data, DW_EH_PE_pcrel | DW_EH_PE_sdata4);
            if (*p == 'P') {
                u8(&aug_data, 0x9b);    /* indirect pcrel sdata4 */
                put(&aug_data, 0x1234, 4);
            }
        }
        uleb(b, aug_data.n);
        bytes(b, aug_data.b, aug_data.n);
    }
    bytes(b, init, init_len);
    end_entry(b, cie);
    return cie;
}

static void eh_fde(struct buf *b, size_t cie, uint64_t start, uint64_t len, bool lsda,
                   const uint8_t *insns, size_t n)
{
    size_t fde = begin_entry(b);
    put(b, b->n - cie, 4);              /* CIE pointer: back from this field */
    put(b, start - (EH_VADDR + b->n), 4);
    put(b, len, 4);
    if (lsda) {
        uleb(b, 4);
        put(b, 0, 4);
    } else {
        uleb(b, 0);
    }
    bytes(b, insns, n);
    end_entry(b, fde);
}

static struct cfi_table *eh_table(const struct buf *b, unsigned addr_size)
{
    struct cfi_sources s;
    memset(&s, 0, sizeof(s));
    s.big_endian = b->be;
    s.addr_size = addr_size;
    s.eh_frame = b->b;
    s.eh_frame_size = b->n;
    s.eh_frame_vaddr = EH_VADDR;
    s.text_vaddr = TEXT;
    return cfi_table_new(&s);
}

static const uint8_t x86_init[] = { 0x0c, 7, 8, 0x90, 1 };   /* def_cfa rsp+8; offset ra c-8 */

static struct cfi_row row_at(struct cfi_table *t, uint64_t pc, int *rc)
{
    struct cfi_row r;
    memset(&r, 0, sizeof(r));
    *rc = cfi_find_row(t, pc, &r);
    return r;
}

static void test_locations(void)
{
    /* advance_loc (6-bit), advance_loc1/2/4, set_loc, with code_align 4. */
    struct buf b = { .n = 0 };
    size_t cie = eh_cie(&b, "zR", 4, -8, 16, x86_init, sizeof(x86_init));
    uint8_t prog[64];
    size_t n = 0;
    prog[n++] = 0x40 | 1;  prog[n++] = 0x0e; prog[n++] = 16;          /* +4: cfa off 16 */
    prog[n++] = 0x02; prog[n++] = 2;  prog[n++] = 0x0e; prog[n++] = 24;   /* +8 -> 12 */
    prog[n++] = 0x03; prog[n++] = 1; prog[n++] = 0; prog[n++] = 0x0e; prog[n++] = 32;   /* +4 -> 16 */
    prog[n++] = 0x04; prog[n++] = 1; prog[n++] = 0; prog[n++] = 0; prog[n++] = 0;
    prog[n++] = 0x0e; prog[n++] = 40;                                 /* +4 -> 20 */
    prog[n++] = 0x01;                                                 /* set_loc TEXT+0x40 */
    /* pcrel sdata4 relative to the operand's own address: patched below. */
    size_t setloc_at = n;
    n += 4;
    prog[n++] = 0x0e; prog[n++] = 48;
    eh_fde(&b, cie, TEXT, 0x100, false, prog, n);
    /* Patch the set_loc operand now that its position in .eh_frame is known. */
    size_t fde_insns = b.n - n;
    uint64_t field_vaddr = EH_VADDR + fde_insns + setloc_at;
    int32_t rel = (int32_t)(TEXT + 0x40 - field_vaddr);
    memcpy(&b.b[fde_insns + setloc_at], &rel, 4);

    struct cfi_table *t = eh_table(&b, 8);
    int rc;
    struct cfi_row r = row_at(t, TEXT, &rc);
    CHECK(rc == 0 && r.cfa_reg == 7 && r.cfa_offset == 8, "rc %d off %ld", rc, (long)r.cfa_offset);
#if CFI_NREGS > 16 /* the x86_64 return-address column; the i386 build tracks 9 */
    CHECK(r.regs[16].kind == CFI_RULE_OFFSET && r.regs[16].u.offset == -8, "ra rule");
#endif
    r = row_at(t, TEXT + 3, &rc);
    CHECK(r.cfa_offset == 8, "before advance_loc: %ld", (long)r.cfa_offset);
    r = row_at(t, TEXT + 4, &rc);
    CHECK(r.cfa_offset == 16, "advance_loc: %ld", (long)r.cfa_offset);
    r = row_at(t, TEXT + 11, &rc);
    CHECK(r.cfa_offset == 16, "advance_loc1 edge: %ld", (long)r.cfa_offset);
    r = row_at(t, TEXT + 12, &rc);
    CHECK(r.cfa_offset == 24, "advance_loc1: %ld", (long)r.cfa_offset);
    r = row_at(t, TEXT + 16, &rc);
    CHECK(r.cfa_offset == 32, "advance_loc2: %ld", (long)r.cfa_offset);
    r = row_at(t, TEXT + 20, &rc);
    CHECK(r.cfa_offset == 40, "advance_loc4: %ld", (long)r.cfa_offset);
    r = row_at(t, TEXT + 0x3f, &rc);
    CHECK(r.cfa_offset == 40, "before set_loc: %ld", (long)r.cfa_offset);
    r = row_at(t, TEXT + 0x40, &rc);
    CHECK(r.cfa_offset == 48, "set_loc: %ld", (long)r.cfa_offset);
    r = row_at(t, TEXT + 0xff, &rc);
    CHECK(rc == 0 && r.fde_start == TEXT && r.fde_end == TEXT + 0x100, "fde range");
    row_at(t, TEXT + 0x100, &rc);
    CHECK(rc != 0, "past the FDE");
    row_at(t, TEXT - 1, &rc);
    CHECK(rc != 0, "before the FDE");
    cfi_table_free(t);
}

static void test_register_rules(void)
{
    struct buf b = { .n = 0 };
    uint8_t init[] = { 0x0c, 7, 8, 0x90, 1, 0x83, 2 /* rbx c-16 */ };
    size_t cie = eh_cie(&b, "zR", 1, -8, 16, init, sizeof(init));
    uint8_t p[] = {
        0x05, 3, 3,              /* offset_extended rbx, 3*-8 */
        0x11, 6, 0x7e,           /* offset_extended_sf rbp, -2*-8 = +16 */
        0x2f, 12, 2,             /* GNU_negative_offset_extended r12, -(2*-8) = +16 */
        0x14, 13, 4,             /* val_offset r13, 4*-8 */
        0x15, 14, 0x7f,          /* val_offset_sf r14, -1*-8 = 8 */
        0x07, 15,                /* undefined r15 */
        0x08, 0,                 /* same_value rax */
        0x09, 1, 2,              /* register rdx in rcx */
        0x10, 5, 2, 0x77, 0x10,  /* expression rdi: breg7 16 */
        0x16, 4, 1, 0x31,        /* val_expression rsi: lit1 */
        0x2e, 5,                 /* GNU_args_size */
        0x00,                    /* nop */
        0x07, 40,                /* a register the unwinder does not track */
        0x41,                    /* advance 1 */
        0xc3,                    /* restore rbx -> CIE's c-16 */
        0x06, 6,                 /* restore_extended rbp -> none in CIE */
        0x09, 2, 99,             /* register from an untracked one: undefined */
    };
    eh_fde(&b, cie, TEXT, 0x10, false, p, sizeof(p));
    struct cfi_table *t = eh_table(&b, 8);
    int rc;
    struct cfi_row r = row_at(t, TEXT, &rc);
    CHECK(rc == 0, "rc %d", rc);
    CHECK(r.regs[3].kind == CFI_RULE_OFFSET && r.regs[3].u.offset == -24, "offset_extended");
    CHECK(r.regs[6].kind == CFI_RULE_OFFSET && r.regs[6].u.offset == 16, "offset_extended_sf %ld",
          (long)r.regs[6].u.offset);
#if CFI_NREGS > 15 /* r12..r15 of x86_64: not tracked by the i386 build */
    CHECK(r.regs[12].kind == CFI_RULE_OFFSET && r.regs[12].u.offset == 16, "negative_offset %ld",
          (long)r.regs[12].u.offset);
    CHECK(r.regs[13].kind == CFI_RULE_VAL_OFFSET && r.regs[13].u.offset == -32, "val_offset");
    CHECK(r.regs[14].kind == CFI_RULE_VAL_OFFSET && r.regs[14].u.offset == 8, "val_offset_sf");
    CHECK(r.regs[15].kind == CFI_RULE_UNDEFINED, "undefined");
#endif
    CHECK(r.regs[0].kind == CFI_RULE_SAME_VALUE, "same_value");
    CHECK(r.regs[1].kind == CFI_RULE_REGISTER && r.regs[1].u.reg == 2, "register");
    CHECK(r.regs[5].kind == CFI_RULE_EXPRESSION && r.regs[5].expr_len == 2 &&
          r.regs[5].u.expr[0] == 0x77, "expression");
    CHECK(r.regs[4].kind == CFI_RULE_VAL_EXPRESSION && r.regs[4].expr_len == 1, "val_expression");
    r = row_at(t, TEXT + 1, &rc);
    CHECK(rc == 0 && r.regs[3].kind == CFI_RULE_OFFSET && r.regs[3].u.offset == -16, "restore");
    CHECK(r.regs[6].kind == CFI_RULE_UNSPECIFIED, "restore_extended");
    CHECK(r.regs[2].kind == CFI_RULE_UNDEFINED, "register from untracked");
#if CFI_NREGS > 15
    CHECK(r.regs[13].kind == CFI_RULE_VAL_OFFSET, "rules persist across rows");
#endif
    cfi_table_free(t);
}

static void test_cfa_rules_and_state(void)
{
    struct buf b = { .n = 0 };
    size_t cie = eh_cie(&b, "zR", 1, -8, 16, x86_init, sizeof(x86_init));
    uint8_t p[] = {
        0x41, 0x0e, 16, 0x86, 2,     /* 1: cfa +16, rbp c-16 */
        0x41, 0x0d, 6,               /* 2: def_cfa_register rbp */
        0x41, 0x0a,                  /* 3: remember */
        0x0c, 7, 8, 0xc6,            /*    def_cfa rsp 8; restore rbp */
        0x41, 0x0b,                  /* 4: restore_state: rbp+16, rbp c-16 */
        0x41, 0x12, 7, 0x7e,         /* 5: def_cfa_sf rsp, -2*-8 = 16 */
        0x41, 0x13, 0x7d,            /* 6: def_cfa_offset_sf -3*-8 = 24 */
        0x41, 0x0f, 3, 0x77, 8, 0x06,/* 7: def_cfa_expression breg7 8; deref */
        0x41, 0x0e, 32,              /* 8: def_cfa_offset keeps the expression kind? no: */
        0x0d, 7,                     /*    def_cfa_register makes it reg+offset again */
        0x41, 0x2d,                  /* 9: GNU_window_save / negate_ra_state */
    };
    eh_fde(&b, cie, TEXT, 0x20, false, p, sizeof(p));
    struct cfi_table *t = eh_table(&b, 8);
    int rc;
    struct cfi_row r = row_at(t, TEXT + 1, &rc);
    CHECK(rc == 0 && r.cfa_reg == 7 && r.cfa_offset == 16, "def_cfa_offset");
    r = row_at(t, TEXT + 2, &rc);
    CHECK(r.cfa_reg == 6 && r.cfa_offset == 16, "def_cfa_register");
    r = row_at(t, TEXT + 3, &rc);
    CHECK(r.cfa_reg == 7 && r.cfa_offset == 8 && r.regs[6].kind == CFI_RULE_UNSPECIFIED,
          "def_cfa after remember");
    r = row_at(t, TEXT + 4, &rc);
    CHECK(r.cfa_reg == 6 && r.cfa_offset == 16 && r.regs[6].kind == CFI_RULE_OFFSET,
          "restore_state brings back CFA and rules: r%u%+ld", r.cfa_reg, (long)r.cfa_offset);
    r = row_at(t, TEXT + 5, &rc);
    CHECK(r.cfa_reg == 7 && r.cfa_offset == 16, "def_cfa_sf %ld", (long)r.cfa_offset);
    r = row_at(t, TEXT + 6, &rc);
    CHECK(r.cfa_offset == 24, "def_cfa_offset_sf %ld", (long)r.cfa_offset);
    r = row_at(t, TEXT + 7, &rc);
    CHECK(r.cfa_kind == CFI_CFA_EXPRESSION && r.cfa_expr_len == 3, "def_cfa_expression");
    r = row_at(t, TEXT + 8, &rc);
    CHECK(r.cfa_kind == CFI_CFA_REG_OFFSET && r.cfa_reg == 7 && r.cfa_offset == 32, "back to reg");
    CHECK(!r.ra_mangled, "not mangled yet");
    r = row_at(t, TEXT + 9, &rc);
    CHECK(r.ra_mangled, "negate_ra_state");
    cfi_table_free(t);
}

static void test_malformed_programs(void)
{
    static const uint8_t bad[][4] = {
        { 0x0b },               /* restore_state with nothing remembered */
        { 0x3f },               /* unknown opcode */
        { 0x0c, 0x80 },         /* truncated uleb */
        { 0x10, 1, 9, 0 },      /* expression longer than the program */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct buf b = { .n = 0 };
        size_t cie = eh_cie(&b, "zR", 1, -8, 16, x86_init, sizeof(x86_init));
        size_t len = i == 0 || i == 1 ? 1 : i == 2 ? 2 : 4;
        eh_fde(&b, cie, TEXT, 0x10, false, bad[i], len);
        struct cfi_table *t = eh_table(&b, 8);
        int rc;
        row_at(t, TEXT + 1, &rc);
        CHECK(rc != 0, "malformed program %zu accepted", i);
        cfi_table_free(t);
    }
    /* remember_state beyond the bounded stack */
    uint8_t deep[40];
    memset(deep, 0x0a, sizeof(deep));
    struct buf b = { .n = 0 };
    size_t cie = eh_cie(&b, "zR", 1, -8, 16, x86_init, sizeof(x86_init));
    eh_fde(&b, cie, TEXT, 0x10, false, deep, sizeof(deep));
    struct cfi_table *t = eh_table(&b, 8);
    int rc;
    row_at(t, TEXT, &rc);
    CHECK(rc != 0, "unbounded remember_state");
    cfi_table_free(t);
}

static void test_augmentations(void)
{
    /* 'S' signal frame, 'L' (FDE carries an LSDA pointer), 'P' personality
     * with an indirect encoding (skipped, never followed). */
    struct buf b = { .n = 0 };
    size_t cie = eh_cie(&b, "zPLRS", 1, -8, 16, x86_init, sizeof(x86_init));
    uint8_t p[] = { 0x41, 0x0e, 16 };
    eh_fde(&b, cie, TEXT, 0x10, true, p, sizeof(p));
    struct cfi_table *t = eh_table(&b, 8);
    int rc;
    struct cfi_row r = row_at(t, TEXT + 1, &rc);
    CHECK(rc == 0 && r.signal_frame && r.cfa_offset == 16, "zPLRS: rc %d sig %d", rc,
          r.signal_frame);
    cfi_table_free(t);

    /* An unknown augmentation without 'z' cannot be skipped. */
    b.n = 0;
    cie = eh_cie(&b, "xyz", 1, -8, 16, x86_init, sizeof(x86_init));
    eh_fde(&b, cie, TEXT, 0x10, false, p, sizeof(p));
    t = eh_table(&b, 8);
    row_at(t, TEXT, &rc);
    CHECK(rc != 0, "unknown augmentation accepted");
    cfi_table_free(t);
}

static void test_pointer_encodings(void)
{
    struct {
        uint8_t enc;
        uint8_t bytes[10];
        size_t len;
        uint64_t want;
        unsigned addr_size;
    } cases[] = {
        { DW_EH_PE_absptr, { 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11 }, 8,
          0x1122334455667788ull, 8 },
        { DW_EH_PE_absptr, { 0x44, 0x33, 0x22, 0x11 }, 4, 0x11223344, 4 },
        { DW_EH_PE_uleb128, { 0xe5, 0x8e, 0x26 }, 3, 624485, 8 },
        { DW_EH_PE_udata2, { 0xfe, 0xff }, 2, 0xfffe, 8 },
        { DW_EH_PE_udata4, { 0xfe, 0xff, 0xff, 0xff }, 4, 0xfffffffe, 8 },
        { DW_EH_PE_udata8, { 1, 0, 0, 0, 0, 0, 0, 0x80 }, 8, 0x8000000000000001ull, 8 },
        { DW_EH_PE_sleb128, { 0x7f }, 1, (uint64_t)-1, 8 },
        { DW_EH_PE_sdata2, { 0xfe, 0xff }, 2, (uint64_t)-2, 8 },
        { DW_EH_PE_sdata4, { 0xfe, 0xff, 0xff, 0xff }, 4, (uint64_t)-2, 8 },
        { DW_EH_PE_sdata8, { 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, 8, (uint64_t)-2, 8 },
        { DW_EH_PE_sdata4, { 0xfe, 0xff, 0xff, 0xff }, 4, 0xfffffffe, 4 },
        /* relative: section at 0x1000, field at offset 0 */
        { DW_EH_PE_pcrel | DW_EH_PE_sdata4, { 0x10, 0, 0, 0 }, 4, 0x1010, 8 },
        { DW_EH_PE_pcrel | DW_EH_PE_sdata4, { 0xf0, 0xff, 0xff, 0xff }, 4, 0xff0, 8 },
        { DW_EH_PE_textrel | DW_EH_PE_udata2, { 2, 0 }, 2, 0x2002, 8 },
        { DW_EH_PE_datarel | DW_EH_PE_sdata4, { 4, 0, 0, 0 }, 4, 0x3004, 8 },
        { DW_EH_PE_funcrel | DW_EH_PE_uleb128, { 8 }, 1, 0x4008, 8 },
        { DW_EH_PE_pcrel | DW_EH_PE_sdata4, { 0, 0, 0, 0x80 }, 4, 0x80001000, 4 },   /* wraps */
    };
    struct cfi_ptr_base base = { .section_vaddr = 0x1000, .text = 0x2000, .data = 0x3000,
                                 .func = 0x4000 };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cursor c;
        cursor_init(&c, cases[i].bytes, cases[i].len, false);
        base.addr_size = cases[i].addr_size;
        uint64_t v = 0;
        bool ok = cfi_read_pointer(&c, cases[i].enc, &base, &v);
        CHECK(ok && v == cases[i].want && c.pos == cases[i].len,
              "case %zu enc 0x%x: got 0x%llx want 0x%llx", i, cases[i].enc,
              (unsigned long long)v, (unsigned long long)cases[i].want);
    }
    /* aligned: skips to the next address-size boundary of the vaddr. */
    uint8_t al[16] = { 0xaa, 0, 0, 0, 0, 0, 0, 0, 0x44, 0x33, 0x22, 0x11, 0, 0, 0, 0 };
    struct cursor c;
    cursor_init(&c, al, sizeof(al), false);
    c.pos = 1;
    base.addr_size = 8;
    uint64_t v = 0;
    CHECK(cfi_read_pointer(&c, DW_EH_PE_aligned, &base, &v) && v == 0x11223344 && c.pos == 16,
          "aligned: 0x%llx pos %zu", (unsigned long long)v, c.pos);
    /* truncated and invalid */
    cursor_init(&c, al, 3, false);
    CHECK(!cfi_read_pointer(&c, DW_EH_PE_udata4, &base, &v), "truncated accepted");
    cursor_init(&c, al, sizeof(al), false);
    CHECK(!cfi_read_pointer(&c, 0x07, &base, &v), "format 7 accepted");
    CHECK(!cfi_read_pointer(&c, DW_EH_PE_omit, &base, &v), "omit accepted");
    CHECK(!cfi_read_pointer(&c, 0x70 | DW_EH_PE_udata4, &base, &v), "relation 7 accepted");
}

/* .debug_frame: CIE id 0xffffffff (or 64-bit all ones), absolute
 * addresses, versions 1, 3 and 4 (address_size and segment_size). */
static void test_debug_frame(void)
{
    for (int variant = 0; variant < 4; variant++) {
        bool is64 = variant == 3;
        int version = variant == 0 ? 1 : variant == 1 ? 3 : 4;
        bool be = variant == 2;
        unsigned asz = variant == 2 ? 4 : 8;
        struct buf b = { .n = 0, .be = be };
        size_t cie_at = b.n;
        if (is64) {
            put(&b, 0xffffffff, 4);
            put(&b, 0, 8);
        } else {
            put(&b, 0, 4);
        }
        size_t body = b.n;
        put(&b, is64 ? UINT64_MAX : 0xffffffff, is64 ? 8 : 4);
        u8(&b, version);
        u8(&b, 0);                   /* augmentation "" */
        if (version == 4) {
            u8(&b, asz);
            u8(&b, 0);
        }
        uleb(&b, 4);                 /* code align */
        sleb(&b, -4);
        if (version == 1)
            u8(&b, 14);
        else
            uleb(&b, 14);
        u8(&b, 0x0c); u8(&b, 13); u8(&b, 0);   /* def_cfa sp+0 */
        size_t save = b.n;
        b.n = is64 ? cie_at + 4 : cie_at;
        put(&b, save - body, is64 ? 8 : 4);
        b.n = save;

        size_t fde_at = b.n;
        if (is64) {
            put(&b, 0xffffffff, 4);
            put(&b, 0, 8);
        } else {
            put(&b, 0, 4);
        }
        size_t fbody = b.n;
        put(&b, cie_at, is64 ? 8 : 4);
        put(&b, 0x8000, asz);
        put(&b, 0x40, asz);
        u8(&b, 0x42);                /* advance 2*4 */
        u8(&b, 0x0e); u8(&b, 16);
        u8(&b, 0x8e); u8(&b, 1);     /* lr at c-4 */
        save = b.n;
        b.n = is64 ? fde_at + 4 : fde_at;
        put(&b, save - fbody, is64 ? 8 : 4);
        b.n = save;

        struct cfi_sources s;
        memset(&s, 0, sizeof(s));
        s.big_endian = be;
        s.addr_size = asz;
        s.debug_frame = b.b;
        s.debug_frame_size = b.n;
        struct cfi_table *t = cfi_table_new(&s);
        int rc;
        struct cfi_row r = row_at(t, 0x8007, &rc);
        CHECK(rc == 0 && r.cfa_reg == 13 && r.cfa_offset == 0 && r.ra_column == 14,
              "debug_frame v%d%s%s: rc %d", version, is64 ? " 64-bit" : "", be ? " BE" : "", rc);
        r = row_at(t, 0x8008, &rc);
        CHECK(rc == 0 && r.cfa_offset == 16 && r.addr_size == asz,
              "debug_frame v%d row 2: rc %d off %ld", version, rc, (long)r.cfa_offset);
#if CFI_NREGS > 14 /* arm's lr: beyond the 9 registers of the i386 build */
        CHECK(r.regs[14].kind == CFI_RULE_OFFSET && r.regs[14].u.offset == -4,
              "debug_frame v%d row 2: lr rule", version);
#endif
        row_at(t, 0x8040, &rc);
        CHECK(rc != 0, "debug_frame v%d: past end found", version);
        cfi_table_free(t);
    }
}

/* .eh_frame_hdr: used when sound, ignored (with the same answers from the
 * section index) when unsorted, truncated or pointing elsewhere. */
static void test_eh_frame_hdr(void)
{
    struct buf eh = { .n = 0 };
    size_t cie = eh_cie(&eh, "zR", 1, -8, 16, x86_init, sizeof(x86_init));
    size_t fde_off[3];
    uint8_t p[] = { 0x41, 0x0e, 16 };
    for (int i = 0; i < 3; i++) {
        fde_off[i] = eh.n;
        p[2] = (uint8_t)(16 + 8 * i);
        eh_fde(&eh, cie, TEXT + 0x100 * (uint64_t)i, 0x80, false, p, sizeof(p));
    }
    put(&eh, 0, 4);   /* terminator */

    for (int variant = 0; variant < 5; variant++) {
        const uint64_t hdr_vaddr = 0x9000;
        struct buf h = { .n = 0 };
        u8(&h, 1);
        u8(&h, DW_EH_PE_pcrel | DW_EH_PE_sdata4);
        u8(&h, DW_EH_PE_udata4);
        u8(&h, DW_EH_PE_datarel | DW_EH_PE_sdata4);
        uint64_t eh_ptr = variant == 3 ? EH_VADDR + 4 : EH_VADDR;
        put(&h, eh_ptr - (hdr_vaddr + h.n), 4);
        put(&h, variant == 2 ? 1000 : 3, 4);
        int order[3] = { 0, 1, 2 };
        if (variant == 1) {
            order[0] = 2;
            order[2] = 0;
        }
        for (int k = 0; k < 3; k++) {
            int i = order[k];
            put(&h, TEXT + 0x100 * (uint64_t)i - hdr_vaddr, 4);
            put(&h, EH_VADDR + fde_off[i] - hdr_vaddr, 4);
        }
        if (variant == 4)
            h.b[0] = 2;   /* unknown version */
        struct cfi_sources s;
        memset(&s, 0, sizeof(s));
        s.addr_size = 8;
        s.eh_frame = eh.b;
        s.eh_frame_size = eh.n;
        s.eh_frame_vaddr = EH_VADDR;
        s.eh_frame_hdr = h.b;
        s.eh_frame_hdr_size = h.n;
        s.eh_frame_hdr_vaddr = hdr_vaddr;
        struct cfi_table *t = cfi_table_new(&s);
        struct cfi_stats st;
        cfi_table_stats(t, &st);
        CHECK(st.used_eh_frame_hdr == (variant == 0), "variant %d: hdr used %d", variant,
              st.used_eh_frame_hdr);
        for (int i = 0; i < 3; i++) {
            int rc;
            struct cfi_row r = row_at(t, TEXT + 0x100 * (uint64_t)i + 1, &rc);
            CHECK(rc == 0 && r.cfa_offset == 16 + 8 * i, "variant %d fde %d: rc %d off %ld",
                  variant, i, rc, (long)r.cfa_offset);
            row_at(t, TEXT + 0x100 * (uint64_t)i + 0x80, &rc);
            CHECK(rc != 0, "variant %d: gap after fde %d found", variant, i);
        }
        int rc;
        row_at(t, TEXT - 1, &rc);
        CHECK(rc != 0, "variant %d: pc before all FDEs found", variant);
        cfi_table_free(t);
    }
}

static void test_cache(void)
{
    struct buf b = { .n = 0 };
    size_t cie = eh_cie(&b, "zR", 1, -8, 16, x86_init, sizeof(x86_init));
    uint8_t p[] = { 0x41, 0x0e, 16 };
    eh_fde(&b, cie, TEXT, 0x10, false, p, sizeof(p));
    struct cfi_table *t = eh_table(&b, 8);
    int rc;
    for (int i = 0; i < 10; i++) {
        struct cfi_row r = row_at(t, TEXT + 1, &rc);
        CHECK(rc == 0 && r.cfa_offset == 16, "cached row differs");
        row_at(t, TEXT + 0x20, &rc);
        CHECK(rc != 0, "cached miss differs");
    }
    struct cfi_stats st;
    cfi_table_stats(t, &st);
    CHECK(st.lookups == 20 && st.cache_hits == 18, "lookups %llu hits %llu",
          (unsigned long long)st.lookups, (unsigned long long)st.cache_hits);
    cfi_table_free(t);
}

int main(void)
{
    test_locations();
    test_register_rules();
    test_cfa_rules_and_state();
    test_malformed_programs();
    test_augmentations();
    test_pointer_encodings();
    test_debug_frame();
    test_eh_frame_hdr();
    test_cache();
    return test_end("test_cfi_program");
}
