#include "target/symbols/symbolize.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "shared/xalloc.h"
#include "target/dwarf/line_object.h"
#include "target/symbols/own_text.h"

/* Name the innermost inlined function, as addr2line -f does.  Costs the
 * size of .debug_info in memory once per object while its index is built
 * (turn off to index DWARF 5 objects from .debug_line alone). */
#define SYMBOLIZE_INLINE_NAMES true

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
        if (f) {
            own_text_release();
            s->lines = line_object_open(f, SYMBOLIZE_INLINE_NAMES);
        }
    }
    return s->lines;
}

/* Symbol name from the symtab, file:line from the line table (may be
 * NULL), and the functions inlined at the address: out[0] is the innermost
 * (what addr2line -f prints), each next one the function it was inlined
 * into, at the place of the call.  Returns the number of frames (at least
 * one) and the SYM_FOUND_* bits of out[0] in *found0. */
static unsigned chain_with(struct debug_object *obj, struct line_object *lines, uint64_t link_vaddr,
                           struct sym_info *out, unsigned max, int *found0)
{
    int found = 0;
    memset(out, 0, sizeof(*out));
    out->function = symtab_lookup(debug_object_symtab(obj), link_vaddr, &out->function_offset);
    if (out->function)
        found |= SYM_FOUND_FUNCTION;
    else
        out->function_offset = 0;
    struct line_location loc;
    if (lines && line_object_lookup(lines, link_vaddr, &loc)) {
        snprintf(out->file, sizeof(out->file), "%s", loc.file);
        out->line = loc.line;
        out->discriminator = loc.discriminator;
        found |= SYM_FOUND_LINE;
    }
    *found0 = found;
    if (!lines)
        return 1;
    /* addr2line -f names functions from DWARF: the innermost inlined one,
     * else the subprogram; the symbol table is the fallback.  When there is
     * a symbol, only ranges starting inside it count. */
    const char *symbol = out->function;
    uint64_t symbol_offset = out->function_offset;
    struct inline_frame fr[SYM_CHAIN_MAX];
    size_t n = line_object_inline_chain(lines, link_vaddr, symbol ? link_vaddr - symbol_offset : 0, fr,
                                        max < SYM_CHAIN_MAX ? max : SYM_CHAIN_MAX);
    if (n == 0)
        return 1;
    out->function = fr[0].name;
    out->function_offset = 0;
    *found0 |= SYM_FOUND_FUNCTION;
    for (size_t k = 1; k < n; k++) {
        struct sym_info *o = &out[k];
        memset(o, 0, sizeof(*o));
        out[k - 1].inlined = true;
        o->function = fr[k].name;
        if (symbol && !fr[k].inlined && strcmp(symbol, fr[k].name) == 0)
            o->function_offset = symbol_offset;
        o->line = fr[k - 1].call_line;
        if (fr[k - 1].line_offset != UINT32_MAX)
            line_object_file_name(lines, fr[k - 1].line_offset, fr[k - 1].call_file, o->file, sizeof(o->file));
    }
    if (n == 1 && symbol && strcmp(symbol, fr[0].name) == 0)
        out->function_offset = symbol_offset;
    return (unsigned)n;
}

static int symbolize_with(struct debug_object *obj, struct line_object *lines, uint64_t link_vaddr,
                          struct sym_info *out)
{
    int found;
    chain_with(obj, lines, link_vaddr, out, 1, &found);
    return found;
}

unsigned symbolizer_lookup_chain(struct symbolizer *s, uint64_t link_vaddr, struct sym_info *out, unsigned max,
                                 int *found)
{
    int f = 0;
    unsigned n = max ? chain_with(s->obj, lines_of(s), link_vaddr, out, max, &f) : 0;
    if (found)
        *found = f;
    return n;
}

int symbolizer_lookup(struct symbolizer *s, uint64_t link_vaddr, struct sym_info *out)
{
    return symbolize_with(s->obj, lines_of(s), link_vaddr, out);
}

const char *symbolizer_call_target(struct symbolizer *s, uint64_t return_pc)
{
    struct line_object *lines = lines_of(s);
    return lines ? line_object_call_target(lines, return_pc, NULL) : NULL;
}

size_t symbolizer_tail_calls(struct symbolizer *s, const char *function, struct inline_tail_call *out, size_t max)
{
    struct line_object *lines = lines_of(s);
    return lines ? line_object_tail_calls(lines, function, out, max) : 0;
}

struct debug_object *symbolizer_object(const struct symbolizer *s) { return s->obj; }

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

static void line_object_free(void *lines) { line_object_close(lines); }

/* The line table hangs on the object itself (its attachment slot), so it
 * lives exactly as long as the object and needs no cache of its own. */
static struct line_object *attached_lines(struct debug_object *obj)
{
    struct line_object *lines = debug_object_attachment(obj);
    if (!lines) {
        struct elf_file *f = debug_object_dwarf_elf(obj);
        if (f)
            own_text_release();
        lines = f ? line_object_open(f, SYMBOLIZE_INLINE_NAMES) : NULL;
        if (lines)
            debug_object_set_attachment(obj, lines, line_object_free);
    }
    return lines;
}

int debug_object_symbolize(struct debug_object *obj, uint64_t link_vaddr, struct sym_info *out)
{
    return symbolize_with(obj, attached_lines(obj), link_vaddr, out) ? 0 : -ENOENT;
}

void debug_object_symbolize_forget(struct debug_object *obj)
{
    if (debug_object_attachment(obj))
        debug_object_set_attachment(obj, NULL, NULL);
}
