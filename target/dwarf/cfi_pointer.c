/* DW_EH_PE pointer encodings of .eh_frame and .eh_frame_hdr. */
#include "target/dwarf/cfi_internal.h"

unsigned cfi_pointer_size(uint8_t enc, unsigned addr_size)
{
    switch (enc & 0x0f) {
    case DW_EH_PE_absptr: return addr_size;
    case DW_EH_PE_udata2: case DW_EH_PE_sdata2: return 2;
    case DW_EH_PE_udata4: case DW_EH_PE_sdata4: return 4;
    case DW_EH_PE_udata8: case DW_EH_PE_sdata8: return 8;
    default: return 0;
    }
}

bool cfi_read_pointer(struct cursor *c, uint8_t enc, const struct cfi_ptr_base *base,
                      uint64_t *out)
{
    if (enc == DW_EH_PE_omit)
        return false;
    unsigned asz = base->addr_size;
    if (asz != 4 && asz != 8)
        return false;
    uint64_t field_vaddr = base->section_vaddr + c->pos;
    uint64_t v;

    if ((enc & 0x70) == DW_EH_PE_aligned) {
        /* The value is an absolute pointer at the next address-size boundary. */
        uint64_t misalign = field_vaddr % asz;
        if (misalign && !cursor_skip(c, asz - misalign))
            return false;
        v = cursor_uint(c, asz);
        if (!cursor_ok(c))
            return false;
        *out = asz == 4 ? (uint32_t)v : v;
        return true;
    }

    switch (enc & 0x0f) {
    case DW_EH_PE_absptr: v = cursor_uint(c, asz); break;
    case DW_EH_PE_uleb128: v = cursor_uleb128(c); break;
    case DW_EH_PE_udata2: v = cursor_u16(c); break;
    case DW_EH_PE_udata4: v = cursor_u32(c); break;
    case DW_EH_PE_udata8: v = cursor_u64(c); break;
    case DW_EH_PE_sleb128: v = (uint64_t)cursor_sleb128(c); break;
    case DW_EH_PE_sdata2: v = (uint64_t)cursor_sint(c, 2); break;
    case DW_EH_PE_sdata4: v = (uint64_t)cursor_sint(c, 4); break;
    case DW_EH_PE_sdata8: v = (uint64_t)cursor_sint(c, 8); break;
    default: return false;
    }
    if (!cursor_ok(c))
        return false;

    switch (enc & 0x70) {
    case 0: break;
    case DW_EH_PE_pcrel: v += field_vaddr; break;
    case DW_EH_PE_textrel: v += base->text; break;
    case DW_EH_PE_datarel: v += base->data; break;
    case DW_EH_PE_funcrel: v += base->func; break;
    default: return false;
    }
    *out = asz == 4 ? (uint32_t)v : v;
    return true;
}
