#include "target/dwarf/info_ranges.h"

#include "target/dwarf/info_constants.h"

static bool read_addrx(const struct dwarf_sections *secs, const struct range_unit *ru, uint64_t index,
                       uint64_t *out)
{
    return dwarf_span_entry(&secs->addr, secs->big_endian, ru->addr_base, index,
                            ru->unit.address_size, out);
}

bool range_address(const struct dwarf_sections *secs, const struct range_unit *ru,
                   const struct form_value *v, uint64_t *out)
{
    if (v->kind == FORM_KIND_ADDRESS) {
        *out = v->u;
        return true;
    }
    if (v->kind == FORM_KIND_ADDRX)
        return read_addrx(secs, ru, v->u, out);
    return false;
}

static uint64_t max_address(const struct range_unit *ru)
{
    unsigned bits = ru->unit.address_size * 8;
    return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
}

static bool walk_v4(const struct dwarf_sections *secs, const struct range_unit *ru, uint64_t offset,
                    unsigned max_entries, range_fn fn, void *ctx)
{
    if (!secs->ranges.data || offset >= secs->ranges.size)
        return false;
    struct cursor c;
    cursor_init(&c, secs->ranges.data, secs->ranges.size, secs->big_endian);
    cursor_seek(&c, (size_t)offset);
    unsigned as = ru->unit.address_size;
    uint64_t base = ru->base, all_ones = max_address(ru);
    for (unsigned n = 0; n < max_entries; n++) {
        dwarf_span_ensure(&secs->ranges, c.pos, 2u * as);
        uint64_t lo = cursor_uint(&c, as), hi = cursor_uint(&c, as);
        if (!cursor_ok(&c))
            return false;
        if (lo == 0 && hi == 0)
            return true;
        if (lo == all_ones) {
            base = hi;
            continue;
        }
        if (hi > lo)
            fn(ctx, base + lo, base + hi);
    }
    return false;
}

static bool walk_v5(const struct dwarf_sections *secs, const struct range_unit *ru, uint64_t offset,
                    unsigned max_entries, range_fn fn, void *ctx)
{
    if (!secs->rnglists.data || offset >= secs->rnglists.size)
        return false;
    struct cursor c;
    cursor_init(&c, secs->rnglists.data, secs->rnglists.size, secs->big_endian);
    cursor_seek(&c, (size_t)offset);
    unsigned as = ru->unit.address_size;
    uint64_t base = ru->base;
    for (unsigned n = 0; n < max_entries; n++) {
        /* The longest entry: a kind byte and two operands of at most
         * 10 bytes (ULEB128 of 64 bits) or an address each. */
        dwarf_span_ensure(&secs->rnglists, c.pos, 21);
        uint8_t kind = cursor_u8(&c);
        uint64_t lo = 0, hi = 0;
        bool emit = true;
        switch (kind) {
        case DW_RLE_end_of_list:
            return cursor_ok(&c);
        case DW_RLE_base_addressx:
            if (!read_addrx(secs, ru, cursor_uleb128(&c), &base))
                return false;
            emit = false;
            break;
        case DW_RLE_startx_endx:
            if (!read_addrx(secs, ru, cursor_uleb128(&c), &lo) || !read_addrx(secs, ru, cursor_uleb128(&c), &hi))
                return false;
            break;
        case DW_RLE_startx_length:
            if (!read_addrx(secs, ru, cursor_uleb128(&c), &lo))
                return false;
            hi = lo + cursor_uleb128(&c);
            break;
        case DW_RLE_offset_pair:
            lo = base + cursor_uleb128(&c);
            hi = base + cursor_uleb128(&c);
            break;
        case DW_RLE_base_address:
            base = cursor_uint(&c, as);
            emit = false;
            break;
        case DW_RLE_start_end:
            lo = cursor_uint(&c, as);
            hi = cursor_uint(&c, as);
            break;
        case DW_RLE_start_length:
            lo = cursor_uint(&c, as);
            hi = lo + cursor_uleb128(&c);
            break;
        default:
            return false;
        }
        if (!cursor_ok(&c))
            return false;
        if (emit && hi > lo)
            fn(ctx, lo, hi);
    }
    return false;
}

/* A DW_FORM_rnglistx index goes through the offset table at
 * rnglists_base; the offsets there are relative to it. */
static bool rnglistx_offset(const struct dwarf_sections *secs, const struct range_unit *ru, uint64_t index,
                            uint64_t *out)
{
    uint64_t rel;
    if (!dwarf_span_entry(&secs->rnglists, secs->big_endian, ru->rnglists_base, index,
                          ru->unit.offset_size, &rel) ||
        rel > UINT64_MAX - ru->rnglists_base)
        return false;
    *out = ru->rnglists_base + rel;
    return true;
}

bool range_list_walk(const struct dwarf_sections *secs, const struct range_unit *ru, uint64_t form,
                     const struct form_value *ranges, unsigned max_entries, range_fn fn, void *ctx)
{
    uint64_t offset;
    if (form == DW_FORM_rnglistx) {
        if (!rnglistx_offset(secs, ru, ranges->u, &offset))
            return false;
    } else if (ranges->kind == FORM_KIND_UNSIGNED) {
        offset = ranges->u;
    } else {
        return false;
    }
    if (ru->unit.version < 5)
        return walk_v4(secs, ru, offset, max_entries, fn, ctx);
    return walk_v5(secs, ru, offset, max_entries, fn, ctx);
}
