#include "target/dwarf/info_cu.h"

#include <string.h>

#include "target/dwarf/info_abbrev.h"
#include "target/dwarf/info_constants.h"

/* Skips the attribute specifications of one abbreviation. */
static bool skip_attr_specs(struct cursor *c)
{
    for (unsigned n = 0; cursor_ok(c) && n <= 1024; n++) {
        uint64_t attr = cursor_uleb128(c);
        uint64_t form = cursor_uleb128(c);
        if (attr == 0 && form == 0)
            return cursor_ok(c);
        if (form == DW_FORM_implicit_const)
            cursor_sleb128(c);
    }
    return false;
}

bool info_abbrev_find(const struct dwarf_sections *secs, uint64_t abbrev_offset, uint64_t code,
                      struct cursor *c, uint64_t *tag, bool *has_children)
{
    if (!secs->abbrev.data || abbrev_offset >= secs->abbrev.size || !abbrev_ensure_table(secs, abbrev_offset))
        return false;
    cursor_init(c, secs->abbrev.data, secs->abbrev.size, secs->big_endian);
    cursor_seek(c, (size_t)abbrev_offset);
    /* Each pass consumes at least three bytes, so the loop ends at the
     * section end even for garbage. */
    while (cursor_ok(c) && !cursor_at_end(c)) {
        uint64_t this_code = cursor_uleb128(c);
        if (this_code == 0)
            return false;
        *tag = cursor_uleb128(c);
        *has_children = cursor_u8(c) != 0;
        if (!cursor_ok(c))
            return false;
        if (this_code == code)
            return true;
        if (!skip_attr_specs(c))
            return false;
    }
    return false;
}

/* Reads the unit header; leaves c at the unit DIE. */
static bool read_unit_header(struct cursor *c, struct info_cu *cu)
{
    bool is64;
    uint64_t length = cursor_initial_length(c, &is64);
    if (!cursor_ok(c))
        return false;
    if (length > cursor_left(c)) {
        return false;
    }
    cu->next_offset = c->pos + length;
    size_t saved_end;
    cursor_limit(c, length, &saved_end);
    cu->unit.offset_size = is64 ? 8 : 4;
    cu->unit.version = cursor_u16(c);
    if (cu->unit.version < 2 || cu->unit.version > 5)
        return false;
    cu->unit_type = DW_UT_compile;
    if (cu->unit.version >= 5) {
        cu->unit_type = cursor_u8(c);
        cu->unit.address_size = cursor_u8(c);
        cu->abbrev_offset = cursor_uint(c, cu->unit.offset_size);
        switch (cu->unit_type) {
        case DW_UT_compile:
        case DW_UT_partial:
            break;
        case DW_UT_skeleton:
        case DW_UT_split_compile:
            cursor_skip(c, 8); /* dwo_id */
            break;
        case DW_UT_type:
        case DW_UT_split_type:
            cursor_skip(c, 8 + cu->unit.offset_size); /* signature, type_offset */
            break;
        default:
            return false;
        }
    } else {
        cu->abbrev_offset = cursor_uint(c, cu->unit.offset_size);
        cu->unit.address_size = cursor_u8(c);
    }
    unsigned as = cu->unit.address_size;
    if (as != 1 && as != 2 && as != 4 && as != 8)
        return false;
    return cursor_ok(c);
}

bool info_cu_read(const struct dwarf_sections *secs, uint64_t offset, struct info_cu *cu)
{
    memset(cu, 0, sizeof(*cu));
    cu->offset = offset;
    cu->next_offset = offset;
    if (!secs->info.data || offset >= secs->info.size)
        return false;

    struct cursor c;
    cursor_init(&c, secs->info.data, secs->info.size, secs->big_endian);
    cursor_seek(&c, (size_t)offset);
    if (!read_unit_header(&c, cu))
        return false;

    cu->die_offset = c.pos;
    uint64_t code = cursor_uleb128(&c);
    if (!cursor_ok(&c))
        return false;
    if (code == 0)
        return true; /* a unit with no DIE: nothing to report, but not broken */

    struct cursor spec;
    bool has_children;
    if (!info_abbrev_find(secs, cu->abbrev_offset, code, &spec, &cu->tag, &has_children))
        return false;

    /* str_offsets_base may follow the strx-coded names, so resolve names
     * after all attributes are read. */
    struct form_value comp_dir = { .kind = FORM_KIND_NONE };
    struct form_value name = { .kind = FORM_KIND_NONE };
    uint64_t str_offsets_base = cu->unit.offset_size == 8 ? 16 : 8;
    for (;;) {
        uint64_t attr = cursor_uleb128(&spec);
        uint64_t form = cursor_uleb128(&spec);
        int64_t implicit_const = 0;
        if (form == DW_FORM_implicit_const)
            implicit_const = cursor_sleb128(&spec);
        if (!cursor_ok(&spec))
            return false;
        if (attr == 0 && form == 0)
            break;
        struct form_value v;
        if (!form_read(&c, form, implicit_const, &cu->unit, &v))
            return false;
        switch (attr) {
        case DW_AT_stmt_list:
            if (v.kind == FORM_KIND_UNSIGNED) {
                cu->has_stmt_list = true;
                cu->stmt_list = v.u;
            }
            break;
        case DW_AT_comp_dir:
            comp_dir = v;
            break;
        case DW_AT_name:
            name = v;
            break;
        case DW_AT_str_offsets_base:
            if (v.kind == FORM_KIND_UNSIGNED)
                str_offsets_base = v.u;
            break;
        default:
            break;
        }
    }
    cu->comp_dir = form_string(&comp_dir, secs, &cu->unit, str_offsets_base);
    cu->name = form_string(&name, secs, &cu->unit, str_offsets_base);
    return true;
}
