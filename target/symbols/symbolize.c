#include "target/symbols/symbolize.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "shared/intern.h"
#include "shared/xalloc.h"
#include "target/dwarf/line_object.h"
#include "target/symbols/own_text.h"
#include "target/symbols/symtab.h"

/* Name the innermost inlined function, as addr2line -f does.  Costs the
 * size of .debug_info in memory once per object while its index is built
 * (turn off to index DWARF 5 objects from .debug_line alone). */
#define SYMBOLIZE_INLINE_NAMES true

/* Chains looked up lately, by address: a report names the same few
 * hundred return addresses over and over (131,072 stacks of one recursion
 * in bench/many_paths.c hold 4 distinct pcs; under -f every process's
 * report asks libc about the same ones), and each lookup walks a line
 * program whose pieces are given back between lookups.  Direct-mapped,
 * CHAIN_CACHE_SLOTS entries.  Their names are interned copies kept as long
 * as the symbolizer (bounded by the names the object has): a name handed
 * out stays valid when its entry is replaced, and never depends on what
 * the lookups keep resident. */
#define CHAIN_CACHE_SLOTS 1024u

struct cached_frame {
    const char *function, *file;    /* interned; function may be NULL */
    uint64_t function_offset;
    unsigned line, discriminator;
    bool inlined;
};

struct cached_chain {
    uint64_t addr;
    unsigned max, n;    /* n == 0: empty slot */
    int found;
    struct cached_frame *frames;
};

/* The .symtab starts of the functions tail-call searches asked about
 * lately, by name: a search asks the same few names for every stack, and
 * each answer is a scan of the whole table.  Direct-mapped by the name's
 * number in the interner. */
#define STARTS_CACHE_SLOTS 64u
#define STARTS_MAX 8u

struct cached_starts {
    uint32_t name;      /* interner number + 1; 0: empty slot */
    size_t n;           /* as symtab_function_starts returns it */
    uint64_t starts[STARTS_MAX];
};

struct symbolizer {
    struct debug_object *obj;
    struct line_object *lines;
    bool lines_tried;
    struct cached_chain *chains;    /* CHAIN_CACHE_SLOTS, made on first lookup */
    struct cached_starts *starts;   /* STARTS_CACHE_SLOTS, made on first search */
    struct interner names;          /* names handed out: they never move */
};

static const char *intern(struct symbolizer *s, const char *name)
{
    if (!name)
        return NULL;
    bool added;
    return interner_key(&s->names, interner_add_string(&s->names, name, &added), NULL);
}

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
    if (s->chains)
        for (unsigned i = 0; i < CHAIN_CACHE_SLOTS; i++)
            free(s->chains[i].frames);
    free(s->chains);
    free(s->starts);
    interner_free(&s->names);
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

void symbolizer_prefetch(struct symbolizer *s, const uint64_t *link_vaddrs, size_t n)
{
    line_object_prefetch(lines_of(s), link_vaddrs, n);
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
    if (!max) {
        if (found)
            *found = 0;
        return 0;
    }
    if (!s->chains)
        s->chains = xcalloc(CHAIN_CACHE_SLOTS, sizeof(*s->chains));
    struct cached_chain *c = &s->chains[(link_vaddr * 0x9e3779b97f4a7c15ull) >> 54];
    _Static_assert(CHAIN_CACHE_SLOTS == 1u << 10, "the slot is the hash's top 10 bits");
    if (c->n && c->addr == link_vaddr && c->max == max) {
        for (unsigned i = 0; i < c->n; i++) {
            const struct cached_frame *k = &c->frames[i];
            out[i] = (struct sym_info){ .function = k->function, .function_offset = k->function_offset,
                                        .line = k->line, .discriminator = k->discriminator,
                                        .inlined = k->inlined };
            snprintf(out[i].file, sizeof(out[i].file), "%s", k->file);
        }
        if (found)
            *found = c->found;
        return c->n;
    }
    unsigned n = chain_with(s->obj, lines_of(s), link_vaddr, out, max, &f);
    if (found)
        *found = f;
    free(c->frames);
    c->frames = xreallocarray(NULL, n ? n : 1, sizeof(*c->frames));
    for (unsigned i = 0; i < n; i++) {
        c->frames[i] = (struct cached_frame){ .function = intern(s, out[i].function),
                                              .file = intern(s, out[i].file),
                                              .function_offset = out[i].function_offset,
                                              .line = out[i].line, .discriminator = out[i].discriminator,
                                              .inlined = out[i].inlined };
        out[i].function = c->frames[i].function; /* the caller gets what a hit would give */
    }
    c->addr = link_vaddr;
    c->max = max;
    c->n = n;
    c->found = f;
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

size_t symbolizer_call_candidates(struct symbolizer *s, uint64_t return_pc, const char **out, size_t max)
{
    struct line_object *lines = lines_of(s);
    return lines ? line_object_call_candidates(lines, return_pc, out, max) : 0;
}

size_t symbolizer_tail_calls(struct symbolizer *s, const char *function, struct inline_tail_call *out, size_t max)
{
    struct line_object *lines = lines_of(s);
    if (!lines)
        return 0;
    /* From the units of the functions of that name when they can tell:
     * else every call site of the object is indexed (libc's: all of its
     * .debug_info inflated and walked, for one stdio frame). */
    if (!s->starts)
        s->starts = xcalloc(STARTS_CACHE_SLOTS, sizeof(*s->starts));
    bool added;
    uint32_t name = interner_add_string(&s->names, function, &added) + 1;
    struct cached_starts *c = &s->starts[name % STARTS_CACHE_SLOTS];
    if (c->name != name) {
        c->name = name;
        c->n = symtab_function_starts(debug_object_dwarf_elf(s->obj), function, c->starts, STARTS_MAX);
    }
    size_t k = c->n <= STARTS_MAX ? line_object_tail_calls_at(lines, function, c->starts, c->n, out, max) : SIZE_MAX;
    return k != SIZE_MAX ? k : line_object_tail_calls(lines, function, out, max);
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
