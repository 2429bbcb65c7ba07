#include "target/dwarf/info_form.h"

#include "target/dwarf/info_constants.h"

static bool read_block(struct cursor *c, uint64_t len, struct form_value *out)
{
    out->kind = FORM_KIND_BLOCK;
    out->u = len;
    out->block = cursor_ptr(c);
    return cursor_skip(c, len);
}

static bool read_unsigned(struct cursor *c, unsigned size, enum form_kind kind, struct form_value *out)
{
    out->kind = kind;
    out->u = cursor_uint(c, size);
    return cursor_ok(c);
}

bool form_read(struct cursor *c, uint64_t form, int64_t implicit_const,
               const struct form_unit *unit, struct form_value *out)
{
    out->kind = FORM_KIND_NONE;
    out->u = 0;
    out->str = NULL;
    out->block = NULL;

    /* DW_FORM_indirect names the real form in the data; a chain of them is
     * legal but pointless, so a few levels are enough and garbage cannot
     * spin here. */
    for (int depth = 0; form == DW_FORM_indirect; depth++) {
        if (depth >= 4) {
            c->error = true;
            return false;
        }
        form = cursor_uleb128(c);
        if (!cursor_ok(c))
            return false;
    }

    switch (form) {
    case DW_FORM_addr:
        return read_unsigned(c, unit->address_size, FORM_KIND_ADDRESS, out);
    case DW_FORM_data1:
        return read_unsigned(c, 1, FORM_KIND_UNSIGNED, out);
    case DW_FORM_data2:
        return read_unsigned(c, 2, FORM_KIND_UNSIGNED, out);
    case DW_FORM_data4:
        return read_unsigned(c, 4, FORM_KIND_UNSIGNED, out);
    case DW_FORM_data8:
        return read_unsigned(c, 8, FORM_KIND_UNSIGNED, out);
    case DW_FORM_data16:
        return read_block(c, 16, out);
    case DW_FORM_udata:
        out->kind = FORM_KIND_UNSIGNED;
        out->u = cursor_uleb128(c);
        return cursor_ok(c);
    case DW_FORM_sdata:
        out->kind = FORM_KIND_SIGNED;
        out->u = (uint64_t)cursor_sleb128(c);
        return cursor_ok(c);
    case DW_FORM_implicit_const:
        out->kind = FORM_KIND_SIGNED;
        out->u = (uint64_t)implicit_const;
        return true;
    case DW_FORM_flag:
    case DW_FORM_ref1:
        return read_unsigned(c, 1, FORM_KIND_NONE, out);
    case DW_FORM_ref2:
        return read_unsigned(c, 2, FORM_KIND_NONE, out);
    case DW_FORM_ref4:
    case DW_FORM_ref_sup4:
        return read_unsigned(c, 4, FORM_KIND_NONE, out);
    case DW_FORM_ref8:
    case DW_FORM_ref_sig8:
    case DW_FORM_ref_sup8:
        return read_unsigned(c, 8, FORM_KIND_NONE, out);
    case DW_FORM_ref_udata:
    case DW_FORM_loclistx:
    case DW_FORM_rnglistx:
        out->u = cursor_uleb128(c);
        return cursor_ok(c);
    case DW_FORM_flag_present:
        out->u = 1;
        return true;
    case DW_FORM_ref_addr:
        /* DWARF 2 sized it like an address, later versions like an offset. */
        return read_unsigned(c, unit->version <= 2 ? unit->address_size : unit->offset_size,
                             FORM_KIND_NONE, out);
    case DW_FORM_sec_offset:
        return read_unsigned(c, unit->offset_size, FORM_KIND_UNSIGNED, out);
    case DW_FORM_strp:
        return read_unsigned(c, unit->offset_size, FORM_KIND_STRP, out);
    case DW_FORM_line_strp:
        return read_unsigned(c, unit->offset_size, FORM_KIND_LINE_STRP, out);
    case DW_FORM_strp_sup:
    case DW_FORM_GNU_strp_alt:
    case DW_FORM_GNU_ref_alt:
        /* Strings in a supplementary (dwz) file we do not open. */
        return read_unsigned(c, unit->offset_size, FORM_KIND_NONE, out);
    case DW_FORM_string:
        out->kind = FORM_KIND_STRING;
        out->str = cursor_cstr(c);
        return out->str != NULL;
    case DW_FORM_strx:
    case DW_FORM_GNU_str_index:
        out->kind = FORM_KIND_STRX;
        out->u = cursor_uleb128(c);
        return cursor_ok(c);
    case DW_FORM_strx1:
        return read_unsigned(c, 1, FORM_KIND_STRX, out);
    case DW_FORM_strx2:
        return read_unsigned(c, 2, FORM_KIND_STRX, out);
    case DW_FORM_strx3:
        out->kind = FORM_KIND_STRX;
        out->u = cursor_u24(c);
        return cursor_ok(c);
    case DW_FORM_strx4:
        return read_unsigned(c, 4, FORM_KIND_STRX, out);
    case DW_FORM_addrx:
    case DW_FORM_GNU_addr_index:
        out->kind = FORM_KIND_ADDRX;
        out->u = cursor_uleb128(c);
        return cursor_ok(c);
    case DW_FORM_addrx1:
        return read_unsigned(c, 1, FORM_KIND_ADDRX, out);
    case DW_FORM_addrx2:
        return read_unsigned(c, 2, FORM_KIND_ADDRX, out);
    case DW_FORM_addrx3:
        out->kind = FORM_KIND_ADDRX;
        out->u = cursor_u24(c);
        return cursor_ok(c);
    case DW_FORM_addrx4:
        return read_unsigned(c, 4, FORM_KIND_ADDRX, out);
    case DW_FORM_block1:
        return read_block(c, cursor_u8(c), out);
    case DW_FORM_block2:
        return read_block(c, cursor_u16(c), out);
    case DW_FORM_block4:
        return read_block(c, cursor_u32(c), out);
    case DW_FORM_block:
    case DW_FORM_exprloc:
        return read_block(c, cursor_uleb128(c), out);
    default:
        c->error = true;
        return false;
    }
}

const char *form_string(const struct form_value *v, const struct dwarf_sections *secs,
                        const struct form_unit *unit, uint64_t str_offsets_base)
{
    switch (v->kind) {
    case FORM_KIND_STRING:
        return v->str;
    case FORM_KIND_STRP:
        return dwarf_span_string(&secs->str, v->u);
    case FORM_KIND_LINE_STRP:
        return dwarf_span_string(&secs->line_str, v->u);
    case FORM_KIND_STRX: {
        uint64_t off;
        if (!dwarf_span_entry(&secs->str_offsets, secs->big_endian, str_offsets_base, v->u,
                              unit->offset_size, &off))
            return NULL;
        return dwarf_span_string(&secs->str, off);
    }
    default:
        return NULL;
    }
}
