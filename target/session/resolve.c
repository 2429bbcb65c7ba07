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

static void resolve_in(struct module_map *mm, char (*buf)[4096], uint64_t pc, unsigned frame_index,
                       struct report_frame *out)
{
    uint64_t raw = pc & ~UNWIND_PC_EXACT;
    /* A return address points after the call: the call itself is one byte
     * earlier, where gdb and addr2line look too. */
    bool exact = frame_index == 0 || (pc & UNWIND_PC_EXACT);
    /* arm: a return into Thumb code has bit 0 set; one byte before the
     * code address lies inside the call (raw - 1 would be the return
     * address itself). */
    uint64_t at = exact ? raw : ARCH_CODE_ADDR(raw) - 1;
    struct module *m = module_find_any(mm, at); /* unloaded libraries too */
    if (!m)
        return;
    out->module = m->path;
    out->offset = raw - m->bias;
    struct symbolizer *sym = module_symbolizer(mm, m);
    if (!sym)
        return;
    struct sym_info info;
    int found = symbolizer_lookup(sym, at - m->bias, &info);
    /* A handler returns into the signal trampoline's first byte
     * (__restore_rt): pc-1 lies before the function there. */
    if (!(found & SYM_FOUND_FUNCTION) && at != raw) {
        /* Only when raw names a function: code with no symbol at all
         * (glibc's arm clone.S after its call) keeps the call's line, as
         * gdb and addr2line give it, not the return address's. */
        struct sym_info at_raw;
        int found_raw = symbolizer_lookup(sym, raw - m->bias, &at_raw);
        if ((found_raw & SYM_FOUND_FUNCTION) && at_raw.function) {
            found = found_raw;
            info = at_raw;
        }
    }
    if ((found & SYM_FOUND_FUNCTION) && info.function) {
        /* Reports name C++ functions as people write them; a name the
         * demangler does not know stays mangled. */
        char *plain = demangle_cxx(info.function);
        snprintf(buf[0], sizeof(buf[0]), "%s", plain ? plain : info.function);
        free(plain);
        out->function = buf[0];
    }
    if ((found & SYM_FOUND_LINE) && info.file[0]) {
        snprintf(buf[1], sizeof(buf[1]), "%s", info.file);
        out->file = buf[1];
        out->line = info.line;
    }
}
