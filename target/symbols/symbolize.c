#include "target/symbols/symbolize.h"

#include <stdio.h>
#include <stdlib.h>

#include "shared/xalloc.h"
#include "target/dwarf/line_object.h"

struct symbolizer {
    struct debug_object *obj;
    struct line_object *lines;
    bool lines_tried;
};

struct symbolizer *symbolizer_new(struct debug_object *obj)
{
    struct symbolizer *s = xcalloc(1, sizeof(*s));
    s->obj = obj;
    return s;
}

void symbolizer_free(struct symbolizer *s)
{
    if (!s)
        return;
    line_object_close(s->lines);
    free(s);
}

static struct line_object *lines_of(struct symbolizer *s)
{
    if (!s->lines_tried) {
        s->lines_tried = true;
        struct elf_file *f = debug_object_dwarf_elf(s->obj);
        if (f)
            s->lines = line_object_open(f);
    }
    return s->lines;
}

int symbolizer_lookup(struct symbolizer *s, uint64_t link_vaddr, struct sym_info *out)
{
    int found = 0;
    out->function = symtab_lookup(debug_object_symtab(s->obj), link_vaddr, &out->function_offset);
    if (out->function)
        found |= SYM_FOUND_FUNCTION;
    else
        out->function_offset = 0;

    out->file[0] = 0;
    out->line = 0;
    out->discriminator = 0;
    struct line_object *lines = lines_of(s);
    struct line_location loc;
    if (lines && line_object_lookup(lines, link_vaddr, &loc)) {
        snprintf(out->file, sizeof(out->file), "%s", loc.file);
        out->line = loc.line;
        out->discriminator = loc.discriminator;
        found |= SYM_FOUND_LINE;
    }
    return found;
}

size_t symbolizer_memory(const struct symbolizer *s)
{
    return s->lines ? line_object_memory(s->lines) : 0;
}

void sym_info_format_location(const struct sym_info *info, char *buf, size_t len)
{
    const char *file = info->file[0] ? info->file : "??";
    if (!info->file[0] && info->line == 0)
        snprintf(buf, len, "??:0");
    else if (info->line == 0)
        snprintf(buf, len, "%s:?", file);
    else if (info->discriminator)
        snprintf(buf, len, "%s:%u (discriminator %u)", file, info->line, info->discriminator);
    else
        snprintf(buf, len, "%s:%u", file, info->line);
}
