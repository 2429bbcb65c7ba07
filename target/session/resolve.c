#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/session/resolve.h"

#include "arch/arch.h"
#include "shared/xalloc.h"
#include "target/heap/stacks.h"
#include "target/symbols/debug_object.h"
#include "target/symbols/demangle.h"
#include "target/symbols/symbolize.h"
#include "target/symbols/symtab.h"
#include "target/symbols/tailcall.h"
#include "target/unwind/unwind.h"

/* The frames of the last pc resolved: sub 0 computes them, the next subs
 * of the same pc read them (the report asks in that order).  First the
 * physical frame's inlined-call chain, then frames restored from tail
 * calls between it and its caller, each with the chain at its jump. */
#define RESOLVE_FRAMES_MAX (SYM_CHAIN_MAX + 2 * TAIL_CHAIN_MAX)
static struct {
    unsigned n;
    struct sym_info chain[RESOLVE_FRAMES_MAX];
    struct object_place *mod[RESOLVE_FRAMES_MAX];
    uint64_t pc[RESOLVE_FRAMES_MAX];       /* runtime; the stored pc for the physical frame */
    bool tail[RESOLVE_FRAMES_MAX];
} last;

/* What a tail-call search needs to know about the callee. */
struct callee {
    const struct object_space *space;
    struct object_place *m;
    /* Modules whose DWARF may define a function of the chain: the
     * caller's, and those a jump of this search was found in (a static
     * function is called from its own module only). */
    struct object_place *near[TAIL_CHAIN_MAX + 1];
    unsigned nnear;
    uint64_t entry;             /* runtime address of its function; 0 if unknown */
    const char *symbol, *dwarf; /* its names (may be NULL) */
};

/* Exported addresses looked up lately (each lookup reads the dynamic
 * symbol table): a report asks about the same few names for every stack. */
#define EXPORT_CACHE 64
static struct {
    const struct object *m;
    uint64_t start, bias, addr;
    char *name;
} export_cache[EXPORT_CACHE];

static uint64_t export_addr(const struct object_place *m, const char *name)
{
    uint64_t h = 1469598103934665603ull ^ (uintptr_t)m->obj;
    for (const char *p = name; *p; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ull;
    typeof(&export_cache[0]) e = &export_cache[h % EXPORT_CACHE];
    if (e->name && e->m == m->obj && e->start == m->start && e->bias == m->bias && strcmp(e->name, name) == 0)
        return e->addr;
    free(e->name);
    e->m = m->obj;
    e->start = m->start;
    e->bias = m->bias;
    e->name = xstrdup(name);
    /* compared with the start of a function symtab_lookup found */
    uint64_t vaddr = object_export_code(m->obj, name);
    e->addr = vaddr ? vaddr + m->bias : 0;
    return e->addr;
}

static bool is_callee(void *ctx, const char *name)
{
    const struct callee *c = ctx;
    if ((c->symbol && strcmp(name, c->symbol) == 0) || (c->dwarf && strcmp(name, c->dwarf) == 0))
        return true;
    return c->entry && export_addr(c->m, name) == c->entry;
}

static size_t tail_edges(void *ctx, const char *function, struct tail_edge *out, size_t max)
{
    struct callee *c = ctx;
    size_t n = 0;
    struct object_place *m;
    for (size_t i = 0; n < max && (m = c->space->nth(c->space->map, i)); i++) {
        bool near = false;
        for (unsigned j = 0; j < c->nnear; j++)
            near |= c->near[j] == m;
        /* Other modules only for a function they export (their DWARF is
         * then read: not for every module at every search). */
        if (!near && !export_addr(m, function))
            continue;
        struct symbolizer *sym = object_symbolizer(m->obj);
        if (!sym)
            continue;
        struct inline_tail_call calls[16];
        size_t k = symbolizer_tail_calls(sym, function, calls, sizeof(calls) / sizeof(calls[0]));
        if (k && !near && c->nnear < sizeof(c->near) / sizeof(c->near[0]))
            c->near[c->nnear++] = m;
        for (size_t j = 0; j < k && n < max; j++)
            out[n++] = (struct tail_edge){ .target = calls[j].target, .site = calls[j].return_pc, .owner = m };
    }
    return n;
}

/* True when the call returning to return_pc called nothing known, or
 * the callee itself: symbolizer_call_target answers NULL or one of the
 * candidates, and either way tailcall_restore finds no frame.  Deciding
 * it from the candidates spares indexing the caller module's call sites
 * whole (libc's: most of a short trace's time) just to learn that. */
static bool calls_only_callee(struct symbolizer *symc, uint64_t return_pc, struct callee *c)
{
    const char *cand[4];
    size_t n = symbolizer_call_candidates(symc, return_pc, cand, sizeof(cand) / sizeof(cand[0]));
    if (n > sizeof(cand) / sizeof(cand[0]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!is_callee(c, cand[i]))
            return false;
    return true;
}

/* Appends the frames tail calls removed between the physical frame just
 * resolved (at, in m) and its caller (caller_pc, a return address). */
static void add_tail_frames(const struct object_space *space, struct object_place *m, uint64_t at,
                            uint64_t caller_pc)
{
    if (!caller_pc || (caller_pc & UNWIND_PC_EXACT))
        return; /* no caller, or one a signal interrupted: no call there */
    uint64_t ret = caller_pc & ~UNWIND_PC_EXACT;
    struct object_place *mc = space->find(space->map, ret - 1);
    struct symbolizer *symc = mc ? object_symbolizer(mc->obj) : NULL;
    if (!symc)
        return;
    struct callee c = { .space = space, .m = m, .dwarf = last.n ? last.chain[last.n - 1].function : NULL,
                        .near = { mc }, .nnear = 1 };
    struct symbolizer *sym = object_symbolizer(m->obj);
    uint64_t off;
    if (sym && (c.symbol = symtab_lookup(debug_object_symtab(symbolizer_object(sym)), at - m->bias, &off)))
        c.entry = at - off;
    if (calls_only_callee(symc, ret - mc->bias, &c))
        return;
    const char *called = symbolizer_call_target(symc, ret - mc->bias);
    if (!called)
        return;
    struct tail_oracle o = { .edges = tail_edges, .is_callee = is_callee, .ctx = &c };
    struct tail_edge e[TAIL_CHAIN_MAX];
    unsigned n = tailcall_restore(called, &o, e, TAIL_CHAIN_MAX);
    for (unsigned i = 0; i < n; i++) {
        struct object_place *mo = e[i].owner;
        struct symbolizer *so = object_symbolizer(mo->obj);
        if (!so || last.n >= RESOLVE_FRAMES_MAX)
            return;
        /* The jump's own place: the address before the one it would
         * have returned to, with the functions inlined there. */
        unsigned k = symbolizer_lookup_chain(so, e[i].site - 1, &last.chain[last.n], RESOLVE_FRAMES_MAX - last.n,
                                             NULL);
        if (!k)
            return;
        for (unsigned j = 0; j < k; j++) {
            last.mod[last.n + j] = mo;
            last.pc[last.n + j] = e[i].site + mo->bias;
            last.tail[last.n + j] = false;
        }
        last.n += k;
        last.tail[last.n - 1] = true;
    }
}

/* The address a frame's names are looked up at. */
static uint64_t lookup_addr(uint64_t pc, unsigned frame_index)
{
    uint64_t raw = pc & ~UNWIND_PC_EXACT;
    /* A return address points after the call: the call itself is one byte
     * earlier, where gdb and addr2line look too. */
    bool exact = frame_index == 0 || (pc & UNWIND_PC_EXACT);
    /* arm: a return into Thumb code has bit 0 set; one byte before the
     * code address lies inside the call (raw - 1 would be the return
     * address itself). */
    return exact ? raw : ARCH_CODE_ADDR(raw) - 1;
}

/* Frames looked at by one prefetch at most: past that, a report of so
 * many stacks has its units indexed as its lookups come. */
#define PREFETCH_MAX_FRAMES 16384u

struct prefetch_frame {
    struct object_place *m;
    uint64_t link_vaddr;
};

static int by_object(const void *a, const void *b)
{
    const struct prefetch_frame *x = a, *y = b;
    if (x->m != y->m)
        return (uintptr_t)x->m < (uintptr_t)y->m ? -1 : 1;
    return x->link_vaddr < y->link_vaddr ? -1 : x->link_vaddr > y->link_vaddr;
}

void resolve_prefetch(const struct object_space *space, const struct stack_table *stacks)
{
    size_t count = stacks ? stack_table_count(stacks) : 0, n = 0;
    struct prefetch_frame *fr = NULL;
    for (uint32_t id = 1; id <= count && n < PREFETCH_MAX_FRAMES; id++) {
        unsigned depth;
        const uint64_t *pcs = stack_table_pcs(stacks, id, &depth);
        for (unsigned i = 0; i < depth && n < PREFETCH_MAX_FRAMES; i++) {
            uint64_t at = lookup_addr(pcs[i], i);
            struct object_place *m = space->find(space->map, at);
            if (!m)
                continue;
            if (!fr)
                fr = xreallocarray(NULL, PREFETCH_MAX_FRAMES, sizeof(*fr));
            fr[n++] = (struct prefetch_frame){ .m = m, .link_vaddr = at - m->bias };
        }
    }
    if (n)
        qsort(fr, n, sizeof(*fr), by_object);
    uint64_t *addrs = n ? xreallocarray(NULL, n, sizeof(*addrs)) : NULL;
    for (size_t i = 0; i < n;) {
        size_t j = i, k = 0;
        for (; j < n && fr[j].m == fr[i].m; j++)
            if (k == 0 || addrs[k - 1] != fr[j].link_vaddr)
                addrs[k++] = fr[j].link_vaddr;
        struct symbolizer *sym = object_symbolizer(fr[i].m->obj);
        if (sym)
            symbolizer_prefetch(sym, addrs, k);
        i = j;
    }
    free(addrs);
    free(fr);
}

void resolve_frame(const struct object_space *space, char (*buf)[4096], uint64_t pc, unsigned frame_index,
                   struct report_frame *out)
{
    uint64_t raw = pc & ~UNWIND_PC_EXACT;
    uint64_t at = lookup_addr(pc, frame_index);
    if (out->sub == 0) {
        last.n = 0;
        struct object_place *m = space->find(space->map, at); /* unloaded libraries too */
        struct symbolizer *sym = m ? object_symbolizer(m->obj) : NULL;
        if (m) {
            last.n = 1;
            memset(&last.chain[0], 0, sizeof(last.chain[0]));
        }
        if (sym) {
            int found;
            last.n = symbolizer_lookup_chain(sym, at - m->bias, last.chain, SYM_CHAIN_MAX, &found);
            /* A handler returns into the signal trampoline's first byte
             * (__restore_rt): pc-1 lies before the function there. */
            if (!(found & SYM_FOUND_FUNCTION) && at != raw) {
                /* Only when raw names a function: code with no symbol at
                 * all (glibc's arm clone.S after its call) keeps the
                 * call's line, as gdb and addr2line give it. */
                struct sym_info at_raw;
                int found_raw = symbolizer_lookup(sym, raw - m->bias, &at_raw);
                if ((found_raw & SYM_FOUND_FUNCTION) && at_raw.function)
                    last.n = symbolizer_lookup_chain(sym, raw - m->bias, last.chain, SYM_CHAIN_MAX,
                                                     &found);
            }
            if (!(found & SYM_FOUND_FUNCTION))
                last.chain[0].function = NULL;
            if (!(found & SYM_FOUND_LINE))
                last.chain[0].file[0] = 0;
        }
        for (unsigned i = 0; i < last.n; i++) {
            last.mod[i] = m;
            last.pc[i] = raw;
            last.tail[i] = false;
        }
        if (sym)
            add_tail_frames(space, m, at, out->caller_pc);
    }
    if (out->sub >= last.n)
        return;
    struct object_place *m = last.mod[out->sub];
    if (!m)
        return;
    out->pc = last.pc[out->sub];
    out->module = object_path(m->obj);
    if (out->want_mapping) {
        out->map_start = m->start;
        out->map_end = m->end;
        out->build_id = object_build_id_hex(m->obj);
    }
    out->offset = out->pc - m->bias;
    const struct sym_info *info = &last.chain[out->sub];
    out->inlined = info->inlined;
    out->tail_call = last.tail[out->sub];
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
