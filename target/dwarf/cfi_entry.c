/* CIE and FDE records of .eh_frame and .debug_frame. */
#include "target/dwarf/cfi_internal.h"

#include <string.h>

/* Reads an entry's length and id; leaves *c limited to the entry body after
 * the id field. */
static enum cfi_entry_kind entry_header(const struct cfi_env *env, const struct cfi_section *s,
                                        size_t off, struct cursor *c, size_t *next,
                                        size_t *cie_off)
{
    cursor_init(c, s->data, s->size, env->big_endian);
    if (off == s->size)
        return CFI_ENTRY_END;
    if (!cursor_seek(c, off))
        return CFI_ENTRY_BAD;
    bool is64 = false;
    uint64_t length = cursor_initial_length(c, &is64);
    if (!cursor_ok(c))
        return CFI_ENTRY_BAD;
    if (length == 0)
        return CFI_ENTRY_END;   /* the .eh_frame terminator */
    size_t saved;
    if (!cursor_limit(c, length, &saved))
        return CFI_ENTRY_BAD;
    *next = c->end;
    size_t id_pos = c->pos;
    uint64_t id = cursor_uint(c, is64 ? 8 : 4);
    if (!cursor_ok(c))
        return CFI_ENTRY_BAD;
    if (s->is_eh) {
        if (id == 0)
            return CFI_ENTRY_CIE;
        if (id > id_pos)
            return CFI_ENTRY_BAD;
        *cie_off = id_pos - (size_t)id;
    } else {
        if (id == (is64 ? UINT64_MAX : 0xffffffffull))
            return CFI_ENTRY_CIE;
        if (id >= s->size)
            return CFI_ENTRY_BAD;
        *cie_off = (size_t)id;
    }
    return CFI_ENTRY_FDE;
}

enum cfi_entry_kind cfi_entry_at(const struct cfi_env *env, const struct cfi_section *s,
                                 size_t off, size_t *next, size_t *cie_off)
{
    struct cursor c;
    size_t dummy = 0;
    return entry_header(env, s, off, &c, next, cie_off ? cie_off : &dummy);
}

/* The 'z' augmentation data: a string of letters, each with its own operands. */
static bool parse_z_augmentation(const char *aug, struct cursor *c, const struct cfi_section *s,
                                 const struct cfi_env *env, struct cfi_cie *cie)
{
    uint64_t len = cursor_uleb128(c);
    size_t saved;
    if (!cursor_ok(c) || !cursor_limit(c, len, &saved))
        return false;
    size_t data_end = c->end;
    struct cfi_ptr_base base = {
        .section_vaddr = s->vaddr, .text = env->text_vaddr, .data = env->data_vaddr,
        .addr_size = cie->addr_size,
    };
    for (const char *p = aug + 1; *p; p++) {
        switch (*p) {
        case 'L': cie->lsda_enc = cursor_u8(c); break;
        case 'R': cie->fde_enc = cursor_u8(c); break;
        case 'P': {
            /* The personality routine: only its size matters here. */
            uint8_t penc = cursor_u8(c);
            uint64_t ignored;
            if (!cfi_read_pointer(c, penc & 0x7f, &base, &ignored))
                return false;
            break;
        }
        case 'S': cie->signal_frame = true; break;
        case 'B': case 'G': break;   /* aarch64 BTI / MTE markers: no operands */
        default:
            /* Unknown letters: the length lets us skip the rest. */
            goto done;
        }
        if (!cursor_ok(c))
            return false;
    }
done:
    c->pos = data_end;
    cursor_restore_end(c, saved);
    return cursor_ok(c);
}

int cfi_parse_cie(const struct cfi_env *env, const struct cfi_section *s, size_t off,
                  struct cfi_cie *cie)
{
    struct cursor c;
    size_t next, cie_off;
    if (entry_header(env, s, off, &c, &next, &cie_off) != CFI_ENTRY_CIE)
        return -1;
    memset(cie, 0, sizeof(*cie));
    cie->addr_size = (uint8_t)env->addr_size;
    cie->fde_enc = DW_EH_PE_absptr;
    cie->lsda_enc = DW_EH_PE_omit;

    uint8_t version = cursor_u8(&c);
    if (version != 1 && version != 3 && version != 4)
        return -1;
    const char *aug = cursor_cstr(&c);
    if (!aug)
        return -1;
    if (version >= 4) {
        cie->addr_size = cursor_u8(&c);
        cie->segment_size = cursor_u8(&c);
        if ((cie->addr_size != 4 && cie->addr_size != 8) || cie->segment_size != 0)
            return -1;
    }
    if (aug[0] == 'e' && aug[1] == 'h') {
        /* Old GCC: the address of the exception table follows. */
        cursor_skip(&c, cie->addr_size);
        aug += 2;
    }
    cie->code_align = cursor_uleb128(&c);
    cie->data_align = cursor_sleb128(&c);
    uint64_t ra = version == 1 ? cursor_u8(&c) : cursor_uleb128(&c);
    if (!cursor_ok(&c) || ra > UINT32_MAX)
        return -1;
    cie->ra_column = (uint32_t)ra;

    if (aug[0] == 'z') {
        cie->has_z = true;
        if (!parse_z_augmentation(aug, &c, s, env, cie))
            return -1;
    } else if (aug[0] != '\0') {
        /* Without 'z' an unknown augmentation hides where instructions start. */
        return -1;
    }
    if (!cursor_ok(&c))
        return -1;
    cie->insns = cursor_ptr(&c);
    cie->insns_len = cursor_left(&c);
    return 0;
}

int cfi_parse_fde(const struct cfi_env *env, const struct cfi_section *s, size_t off,
                  struct cfi_cie *cie, struct cfi_fde *fde)
{
    struct cursor c;
    size_t next, cie_off = 0;
    if (entry_header(env, s, off, &c, &next, &cie_off) != CFI_ENTRY_FDE)
        return -1;
    if (cfi_parse_cie(env, s, cie_off, cie) != 0)
        return -1;
    if (cie->fde_enc & DW_EH_PE_indirect)
        return -1;
    struct cfi_ptr_base base = {
        .section_vaddr = s->vaddr, .text = env->text_vaddr, .data = env->data_vaddr,
        .addr_size = cie->addr_size,
    };
    uint64_t begin, range;
    if (!cfi_read_pointer(&c, cie->fde_enc, &base, &begin))
        return -1;
    /* The range is a length: same format, never relative. */
    if (!cfi_read_pointer(&c, cie->fde_enc & 0x0f, &base, &range))
        return -1;
    if (cie->has_z) {
        uint64_t auglen = cursor_uleb128(&c);
        if (!cursor_skip(&c, auglen))
            return -1;
    }
    if (!cursor_ok(&c))
        return -1;
    uint64_t limit = cie->addr_size == 4 ? 0xffffffffull : UINT64_MAX;
    if (begin > limit || range > limit - begin)
        return -1;
    fde->pc_begin = begin;
    fde->pc_end = begin + range;
    fde->insns = cursor_ptr(&c);
    fde->insns_len = cursor_left(&c);
    return 0;
}
