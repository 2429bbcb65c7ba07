#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/session/session.h"
#include "target/symbols/demangle.h"
#include "target/symbols/symbolize.h"
#include "target/tracer/modules.h"
#include "target/unwind/unwind.h"

static void resolve_in(struct module_map *mm, char (*buf)[4096], uint64_t pc, unsigned frame_index,
                       struct report_frame *out);

void session_resolve(void *ctx, uint64_t pc, unsigned frame_index, struct report_frame *out)
{
    struct session *s = ctx;
    resolve_in(s->tracee->modules, s->resolve_buf, pc, frame_index, out);
}

void process_resolve(void *ctx, uint64_t pc, unsigned frame_index, struct report_frame *out)
{
    struct process_resolver *r = ctx;
    resolve_in(r->tracee->modules, r->buf, pc, frame_index, out);
}

/* The frames of the last pc resolved: sub 0 computes them, the next subs
 * of the same pc read them (the report asks in that order). */
static struct {
    struct module *m;
    unsigned n;
    struct sym_info chain[SYM_CHAIN_MAX];
} last;

static void resolve_in(struct module_map *mm, char (*buf)[4096], uint64_t pc, unsigned frame_index,
                       struct report_frame *out)
{
    uint64_t raw = pc & ~UNWIND_PC_EXACT;
    /* A return address points after the call: the call itself is one byte
     * earlier, where gdb and addr2line look too. */
    bool exact = frame_index == 0 || (pc & UNWIND_PC_EXACT);
    uint64_t at = exact ? raw : raw - 1;
    if (out->sub == 0) {
        last.m = module_find_any(mm, at); /* unloaded libraries too */
        last.n = 0;
        struct symbolizer *sym = last.m ? module_symbolizer(mm, last.m) : NULL;
        if (sym) {
            int found;
            last.n = symbolizer_lookup_chain(sym, at - last.m->bias, last.chain, SYM_CHAIN_MAX, &found);
            /* A handler returns into the signal trampoline's first byte
             * (__restore_rt): pc-1 lies before the function there. */
            if (!(found & SYM_FOUND_FUNCTION) && at != raw)
                last.n = symbolizer_lookup_chain(sym, raw - last.m->bias, last.chain, SYM_CHAIN_MAX, &found);
            if (!(found & SYM_FOUND_FUNCTION))
                last.chain[0].function = NULL;
            if (!(found & SYM_FOUND_LINE))
                last.chain[0].file[0] = 0;
        }
    }
    struct module *m = last.m;
    if (!m)
        return;
    out->module = m->path;
    out->offset = raw - m->bias;
    if (out->sub >= last.n)
        return;
    const struct sym_info *info = &last.chain[out->sub];
    out->inlined = info->inlined;
    out->more = out->sub + 1 < last.n;
    if (info->function) {
        /* Reports name C++ functions as people write them; a name the
         * demangler does not know stays mangled. */
        char *plain = demangle_cxx(info->function);
        snprintf(buf[0], sizeof(buf[0]), "%s", plain ? plain : info->function);
        free(plain);
        out->function = buf[0];
    }
    if (info->file[0]) {
        snprintf(buf[1], sizeof(buf[1]), "%s", info->file);
        out->file = buf[1];
        out->line = info->line;
    }
}
