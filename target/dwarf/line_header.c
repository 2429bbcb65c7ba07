#include "target/dwarf/line_header.h"

#include <stdio.h>
#include <string.h>

#include "target/dwarf/info_constants.h"

static void cursor_at(struct cursor *c, const struct dwarf_sections *secs, uint64_t pos, uint64_t end)
{
    cursor_init(c, secs->line.data, secs->line.size, secs->big_endian);
    if (end <= secs->line.size)
        c->end = (size_t)end;
    cursor_seek(c, pos > c->end ? c->end + 1 : (size_t)pos);
}

/* Skips a DWARF 2-4 NUL-terminated list: directories (one string each) or
 * files (string, then three ULEB128s).  Returns the entry count. */
static uint64_t skip_v4_list(struct cursor *c, bool files)
{
    uint64_t count = 0;
    for (;;) {
        const char *s = cursor_cstr(c);
        if (!s)
            return count;
        if (*s == 0)
            return count;
        if (files) {
            cursor_uleb128(c);
            cursor_uleb128(c);
            cursor_uleb128(c);
        }
        if (!cursor_ok(c))
            return count;
        count++;
    }
}

static bool read_entry_format(struct cursor *c, struct line_entry_format *f)
{
    f->count = cursor_u8(c);
    if (f->count > LINE_MAX_ENTRY_FORMATS)
        return false;
    for (unsigned i = 0; i < f->count; i++) {
        f->content[i] = cursor_uleb128(c);
        f->form[i] = cursor_uleb128(c);
        /* implicit_const has no value to read in a line header. */
        if (f->form[i] == DW_FORM_implicit_const)
            return false;
    }
    return cursor_ok(c);
}

/* Fields of one DWARF 5 directory or file entry that we use. */
struct v5_entry {
    const char *path;
    uint64_t dir_index;
};

static bool read_v5_entry(struct cursor *c, const struct dwarf_sections *secs, const struct line_header *h,
                          const struct line_entry_format *f, struct v5_entry *e)
{
    e->path = NULL;
    e->dir_index = 0;
    for (unsigned i = 0; i < f->count; i++) {
        struct form_value v;
        if (!form_read(c, f->form[i], 0, &h->unit, &v))
            return false;
        if (f->content[i] == DW_LNCT_path)
            e->path = form_string(&v, secs, &h->unit, h->unit.offset_size == 8 ? 16 : 8);
        else if (f->content[i] == DW_LNCT_directory_index && v.kind == FORM_KIND_UNSIGNED)
            e->dir_index = v.u;
    }
    return true;
}

/* Skips count DWARF 5 entries.  A format of zero-width forms would let a
 * huge count spin without reading, so a count larger than the bytes left
 * is refused: real entries take at least one byte each. */
static bool skip_v5_entries(struct cursor *c, const struct dwarf_sections *secs, const struct line_header *h,
                            const struct line_entry_format *f, uint64_t count)
{
    if (count > cursor_left(c))
        return false;
    for (uint64_t i = 0; i < count; i++) {
        struct v5_entry e;
        if (!read_v5_entry(c, secs, h, f, &e))
            return false;
    }
    return cursor_ok(c);
}

bool line_header_parse(const struct dwarf_sections *secs, uint64_t offset,
                       unsigned default_address_size, struct line_header *h)
{
    memset(h, 0, sizeof(*h));
    h->offset = offset;
    h->end = offset;
    if (!secs->line.data || offset >= secs->line.size)
        return false;

    /* A mapped section: the length first, then the whole unit, which the
     * program and the file names are read from afterwards. */
    if (!dwarf_span_ensure(&secs->line, offset, 12))
        return false;
    struct cursor c;
    cursor_init(&c, secs->line.data, secs->line.size, secs->big_endian);
    cursor_seek(&c, (size_t)offset);
    bool is64;
    uint64_t length = cursor_initial_length(&c, &is64);
    if (!cursor_ok(&c) || length > cursor_left(&c))
        return false;
    h->end = c.pos + length;
    if (!dwarf_span_ensure(&secs->line, offset, h->end - offset))
        return false;
    size_t saved_end;
    cursor_limit(&c, length, &saved_end);

    h->unit.offset_size = is64 ? 8 : 4;
    h->unit.version = cursor_u16(&c);
    if (h->unit.version < 2 || h->unit.version > 5)
        return false;
    h->unit.address_size = default_address_size;
    if (h->unit.version >= 5) {
        h->unit.address_size = cursor_u8(&c);
        unsigned seg_sel_size = cursor_u8(&c);
        if (seg_sel_size != 0)
            return false; /* segmented addressing: nobody on Linux */
    }
    unsigned as = h->unit.address_size;
    if (as != 1 && as != 2 && as != 4 && as != 8)
        return false;

    uint64_t header_length = cursor_uint(&c, h->unit.offset_size);
    if (!cursor_ok(&c) || header_length > cursor_left(&c))
        return false;
    h->program_offset = c.pos + header_length;

    h->min_insn_length = cursor_u8(&c);
    h->max_ops_per_insn = 1;
    if (h->unit.version >= 4) {
        h->max_ops_per_insn = cursor_u8(&c);
        if (h->max_ops_per_insn == 0)
            h->max_ops_per_insn = 1;
    }
    h->default_is_stmt = cursor_u8(&c) != 0;
    h->line_base = (int8_t)cursor_u8(&c);
    h->line_range = cursor_u8(&c);
    h->opcode_base = cursor_u8(&c);
    if (!cursor_ok(&c) || h->line_range == 0 || h->opcode_base == 0)
        return false;
    h->std_lengths_offset = c.pos;
    if (!cursor_skip(&c, h->opcode_base - 1))
        return false;

    /* The tables must lie inside the header, before the program. */
    c.end = (size_t)h->program_offset;
    if (h->unit.version < 5) {
        h->dirs_offset = c.pos;
        h->dir_count = skip_v4_list(&c, false);
        h->files_offset = c.pos;
        h->file_count = skip_v4_list(&c, true);
        /* A table that runs off the header end is tolerated: producers
         * sometimes get header_length wrong by padding; we keep the entries
         * that were complete. */
        return true;
    }

    if (!read_entry_format(&c, &h->dir_format))
        return false;
    h->dir_count = cursor_uleb128(&c);
    h->dirs_offset = c.pos;
    if (!skip_v5_entries(&c, secs, h, &h->dir_format, h->dir_count))
        return false;
    if (!read_entry_format(&c, &h->file_format))
        return false;
    h->file_count = cursor_uleb128(&c);
    h->files_offset = c.pos;
    if (!skip_v5_entries(&c, secs, h, &h->file_format, h->file_count))
        return false;
    return cursor_ok(&c);
}

unsigned line_header_std_length(const struct dwarf_sections *secs, const struct line_header *h,
                                unsigned op)
{
    if (op == 0 || op >= h->opcode_base)
        return 0;
    uint64_t pos = h->std_lengths_offset + op - 1;
    return pos < secs->line.size ? secs->line.data[pos] : 0;
}

void line_join_path(const char *comp_dir, const char *dir, const char *name, char *out, size_t outlen)
{
    if (outlen == 0)
        return;
    out[0] = 0;
    if (!name)
        name = "";
    const char *parts[3] = { NULL, NULL, name };
    if (name[0] != '/') {
        if (dir && dir[0]) {
            parts[1] = dir;
            if (dir[0] != '/' && comp_dir && comp_dir[0])
                parts[0] = comp_dir;
        } else if (comp_dir && comp_dir[0]) {
            parts[0] = comp_dir;
        }
    }
    size_t used = 0;
    for (int i = 0; i < 3; i++) {
        if (!parts[i])
            continue;
        int n = snprintf(out + used, outlen - used, "%s%s", parts[i], i < 2 ? "/" : "");
        if (n < 0 || (size_t)n >= outlen - used) {
            out[outlen - 1] = 0;
            return;
        }
        used += (size_t)n;
    }
}

/* The name of DWARF 2-4 directory index (1-based; 0 is comp_dir). */
static const char *v4_dir(const struct dwarf_sections *secs, const struct line_header *h,
                          uint64_t index, const char *comp_dir)
{
    if (index == 0)
        return comp_dir;
    if (index > h->dir_count)
        return NULL;
    struct cursor c;
    cursor_at(&c, secs, h->dirs_offset, h->program_offset);
    const char *s = NULL;
    for (uint64_t i = 0; i < index; i++)
        s = cursor_cstr(&c);
    return s;
}

static const char *v5_dir(const struct dwarf_sections *secs, const struct line_header *h, uint64_t index)
{
    if (index >= h->dir_count || h->dir_format.count == 0)
        return NULL;
    struct cursor c;
    cursor_at(&c, secs, h->dirs_offset, h->program_offset);
    struct v5_entry e = { 0 };
    for (uint64_t i = 0; i <= index; i++)
        if (!read_v5_entry(&c, secs, h, &h->dir_format, &e))
            return NULL;
    return e.path;
}

const char *line_header_dir(const struct dwarf_sections *secs, const struct line_header *h,
                            uint64_t index, const char *comp_dir)
{
    return h->unit.version >= 5 ? v5_dir(secs, h, index) : v4_dir(secs, h, index, comp_dir);
}

bool line_header_file_path(const struct dwarf_sections *secs, const struct line_header *h,
                           uint64_t index, const char *comp_dir, char *out, size_t outlen)
{
    struct cursor c;
    if (h->unit.version < 5) {
        if (index == 0 || index > h->file_count)
            return false;
        cursor_at(&c, secs, h->files_offset, h->program_offset);
        const char *name = NULL;
        uint64_t dir = 0;
        for (uint64_t i = 0; i < index; i++) {
            name = cursor_cstr(&c);
            dir = cursor_uleb128(&c);
            cursor_uleb128(&c);
            cursor_uleb128(&c);
        }
        if (!name || !cursor_ok(&c))
            return false;
        line_join_path(comp_dir, v4_dir(secs, h, dir, comp_dir), name, out, outlen);
        return true;
    }

    if (index >= h->file_count || h->file_format.count == 0)
        return false;
    cursor_at(&c, secs, h->files_offset, h->program_offset);
    struct v5_entry e = { 0 };
    for (uint64_t i = 0; i <= index; i++)
        if (!read_v5_entry(&c, secs, h, &h->file_format, &e))
            return false;
    if (!e.path)
        return false;
    line_join_path(comp_dir, v5_dir(secs, h, e.dir_index), e.path, out, outlen);
    return true;
}

bool line_header_defined_file_path(const struct dwarf_sections *secs, const struct line_header *h,
                                   struct cursor *c, const char *comp_dir, char *out, size_t outlen)
{
    const char *name = cursor_cstr(c);
    uint64_t dir = cursor_uleb128(c);
    cursor_uleb128(c);
    cursor_uleb128(c);
    if (!name || !cursor_ok(c))
        return false;
    line_join_path(comp_dir, v4_dir(secs, h, dir, comp_dir), name, out, outlen);
    return true;
}
