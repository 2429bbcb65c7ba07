/* Pieces shared by the cfi_*.c files; not for use outside target/dwarf. */
#ifndef MT_DWARF_CFI_INTERNAL_H
#define MT_DWARF_CFI_INTERNAL_H

#include "target/dwarf/cfi.h"
#include "shared/files/cursor.h"

/* DW_EH_PE_* pointer encodings (LSB, .eh_frame). */
#define DW_EH_PE_absptr   0x00
#define DW_EH_PE_uleb128  0x01
#define DW_EH_PE_udata2   0x02
#define DW_EH_PE_udata4   0x03
#define DW_EH_PE_udata8   0x04
#define DW_EH_PE_sleb128  0x09
#define DW_EH_PE_sdata2   0x0a
#define DW_EH_PE_sdata4   0x0b
#define DW_EH_PE_sdata8   0x0c
#define DW_EH_PE_pcrel    0x10
#define DW_EH_PE_textrel  0x20
#define DW_EH_PE_datarel  0x30
#define DW_EH_PE_funcrel  0x40
#define DW_EH_PE_aligned  0x50
#define DW_EH_PE_indirect 0x80
#define DW_EH_PE_omit     0xff

/* Where relative pointer encodings are measured from. */
struct cfi_ptr_base {
    uint64_t section_vaddr;   /* vaddr of the cursor's byte 0 (pcrel, aligned) */
    uint64_t text, data, func;
    unsigned addr_size;
};

/* Reads one encoded pointer.  DW_EH_PE_indirect is not followed (that needs
 * target memory): the value is the address of the pointer, and the caller
 * decides.  False on a bad encoding or truncated input. */
bool cfi_read_pointer(struct cursor *c, uint8_t enc, const struct cfi_ptr_base *base,
                      uint64_t *out);
/* Bytes of a fixed-size encoding, 0 for variable-size or invalid ones. */
unsigned cfi_pointer_size(uint8_t enc, unsigned addr_size);

/* One frame section as the parsers see it. */
struct cfi_section {
    const uint8_t *data;
    size_t size;
    uint64_t vaddr;
    bool is_eh;               /* .eh_frame rules (CIE id 0, relative CIE pointer) */
};

struct cfi_cie {
    uint64_t code_align;
    int64_t data_align;
    uint32_t ra_column;
    uint8_t fde_enc;          /* DW_EH_PE_* for FDE addresses */
    uint8_t lsda_enc;
    bool has_z;               /* FDEs carry an augmentation length */
    bool signal_frame;
    uint8_t addr_size;
    uint8_t segment_size;
    const uint8_t *insns;
    size_t insns_len;
};

struct cfi_fde {
    uint64_t pc_begin, pc_end;
    const uint8_t *insns;
    size_t insns_len;
};

/* Per-table constants the parsers need. */
struct cfi_env {
    bool big_endian;
    unsigned addr_size;
    uint64_t text_vaddr, data_vaddr;
};

enum cfi_entry_kind { CFI_ENTRY_BAD = -1, CFI_ENTRY_END = 0, CFI_ENTRY_CIE, CFI_ENTRY_FDE };

/* The entry at off: its kind and the offset of the next one.  For an FDE,
 * *cie_off is the offset of its CIE within the same section. */
enum cfi_entry_kind cfi_entry_at(const struct cfi_env *env, const struct cfi_section *s,
                                 size_t off, size_t *next, size_t *cie_off);
int cfi_parse_cie(const struct cfi_env *env, const struct cfi_section *s, size_t off,
                  struct cfi_cie *cie);
/* Parses the FDE at off and its CIE (into *cie). */
int cfi_parse_fde(const struct cfi_env *env, const struct cfi_section *s, size_t off,
                  struct cfi_cie *cie, struct cfi_fde *fde);

/* Runs the CIE's initial instructions and the FDE's instructions up to pc,
 * filling *row.  0 on success, -1 on malformed instructions. */
int cfi_run_program(const struct cfi_env *env, const struct cfi_section *s,
                    const struct cfi_cie *cie, const struct cfi_fde *fde, uint64_t pc,
                    struct cfi_row *row);

/* FDE lookup structures (cfi_index.c). */
struct cfi_fde_ref {
    uint64_t start, end;      /* link-time pc range */
    size_t off;               /* entry offset in its section */
    uint8_t section;          /* CFI_SECTION_* */
};
enum { CFI_SECTION_EH = 0, CFI_SECTION_DEBUG = 1 };

struct cfi_index {
    struct cfi_fde_ref *refs;
    size_t count, cap;
};

/* The binary-search table of .eh_frame_hdr, validated once. */
struct cfi_hdr {
    bool usable;
    uint8_t table_enc;
    unsigned field_size;
    const uint8_t *data;      /* the whole .eh_frame_hdr */
    size_t size;
    size_t table_off;
    size_t count;
    uint64_t vaddr;
};

/* Checks the header, the encodings, the table's size and that it is sorted. */
void cfi_hdr_init(struct cfi_hdr *h, const struct cfi_env *env, const struct cfi_sources *src);
/* The eh_frame offset of the FDE whose start is the last one <= pc. */
bool cfi_hdr_find(const struct cfi_hdr *h, const struct cfi_env *env, uint64_t pc,
                  uint64_t *fde_vaddr);

/* Appends every FDE of s to ix (unsorted); cfi_index_sort sorts once. */
int cfi_index_add(struct cfi_index *ix, const struct cfi_env *env, const struct cfi_section *s,
                  uint8_t section);
void cfi_index_sort(struct cfi_index *ix);
const struct cfi_fde_ref *cfi_index_find(const struct cfi_index *ix, uint64_t pc);
void cfi_index_free(struct cfi_index *ix);

#endif
