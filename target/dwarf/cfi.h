/* DWARF call frame information (.eh_frame, .eh_frame_hdr, .debug_frame):
 * "at this pc, where are the CFA and the caller's registers?"
 *
 * A table is built over section bytes that the caller keeps alive for the
 * table's lifetime (rows point into them for DWARF expressions).  Addresses
 * are link-time addresses: the runtime pc minus the module's load bias.
 * Byte order and address size come from the module, not the host, so one
 * table type serves x86_64, i386, arm and aarch64 objects. */
#ifndef MT_DWARF_CFI_H
#define MT_DWARF_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"

struct cfi_sources {
    bool big_endian;
    unsigned addr_size;                  /* 4 or 8 */
    const uint8_t *eh_frame_hdr;
    size_t eh_frame_hdr_size;
    uint64_t eh_frame_hdr_vaddr;
    const uint8_t *eh_frame;
    size_t eh_frame_size;
    uint64_t eh_frame_vaddr;
    const uint8_t *debug_frame;
    size_t debug_frame_size;
    uint64_t text_vaddr;                 /* DW_EH_PE_textrel base */
    uint64_t data_vaddr;                 /* DW_EH_PE_datarel base, e.g. GOT on i386 */
};

/* Registers tracked per row: the arch's DWARF registers.  Rules for higher
 * numbers (vector registers) are ignored: the unwinder never needs them. */
#define CFI_NREGS ARCH_DWARF_NREGS

enum cfi_rule_kind {
    CFI_RULE_UNSPECIFIED = 0,   /* not mentioned: unwinders treat it as same value */
    CFI_RULE_UNDEFINED,         /* DW_CFA_undefined: no value (on the RA: outermost frame) */
    CFI_RULE_SAME_VALUE,
    CFI_RULE_OFFSET,            /* saved at CFA + offset */
    CFI_RULE_VAL_OFFSET,        /* value is CFA + offset */
    CFI_RULE_REGISTER,          /* saved in register reg */
    CFI_RULE_EXPRESSION,        /* saved at the address the expression yields (CFA pushed) */
    CFI_RULE_VAL_EXPRESSION,    /* value is what the expression yields (CFA pushed) */
};

struct cfi_rule {
    uint8_t kind;               /* enum cfi_rule_kind */
    uint32_t expr_len;
    union {
        int64_t offset;
        uint32_t reg;
        const uint8_t *expr;
    } u;
};

enum cfi_cfa_kind { CFI_CFA_REG_OFFSET = 0, CFI_CFA_EXPRESSION };

struct cfi_row {
    uint8_t cfa_kind;           /* enum cfi_cfa_kind */
    uint32_t cfa_reg;
    int64_t cfa_offset;
    const uint8_t *cfa_expr;
    size_t cfa_expr_len;
    uint32_t ra_column;         /* from the CIE */
    bool signal_frame;          /* CIE augmentation 'S': pc is exact, not a return address */
    bool ra_mangled;            /* DW_CFA_AARCH64_negate_ra_state toggled (pointer auth) */
    uint8_t addr_size;
    bool big_endian;
    uint64_t fde_start, fde_end;   /* link-time range of the FDE */
    struct cfi_rule regs[CFI_NREGS];
};

struct cfi_table;

/* NULL only when out of memory.  Malformed sections give a table that finds
 * fewer rows, never one that reads outside the given bytes. */
struct cfi_table *cfi_table_new(const struct cfi_sources *src);
void cfi_table_free(struct cfi_table *t);

/* The row in effect at link_pc.  0 on success, -1 when no FDE covers link_pc
 * or its CFI is malformed.  Rows are cached per pc: a repeated lookup is one
 * hash probe and a copy. */
int cfi_find_row(struct cfi_table *t, uint64_t link_pc, struct cfi_row *out);

/* The same without the copy: a row owned by the table, valid until the next
 * lookup in t; NULL when there is none.  The unwinder's hot path. */
const struct cfi_row *cfi_lookup(struct cfi_table *t, uint64_t link_pc);

/* Lookup counters, for tests and benchmarks. */
struct cfi_stats {
    uint64_t lookups, cache_hits, fdes_indexed;
    bool used_eh_frame_hdr;
};
void cfi_table_stats(const struct cfi_table *t, struct cfi_stats *out);

#endif
