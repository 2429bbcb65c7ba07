#include "target/tracer/client_requests.h"

#include <stdlib.h>
#include <string.h>

#include "shared/elf/elf_file.h"
#include "shared/log.h"
#include "shared/xalloc.h"
#include "target/heap/heap.h"
#include "target/objects/object.h"
#include "target/tracer/calls.h"
#include "target/tracer/client_request_decode.h"
#include "target/tracer/maps.h"
#include "target/tracer/misuse.h"
#include "target/tracer/modules.h"

/* --- finding the sites ----------------------------------------------------- */

#define SCAN_CHUNK (1u << 20)

static void place_site(struct tracee *t, struct module *m, uint64_t addr,
                       const struct arch_client_request *cr)
{
    if (bp_find(t, addr))
        return;
    struct breakpoint *bp = bp_add(t, addr);
    bp->fn = NULL;
    bp->client_request = true;
    /* the request instruction does nothing on a CPU: stepping over it is
     * moving the PC (a vfork child's skip, calls.c) */
    bp->plan.kind = DISPLACE_EMULATE;
    bp->plan.new_pc = addr + cr->insn_len; /* in the same state (arm: bit 0) */
    bp->module_start = m->start;
    if (bp_insert(t, bp) < 0)
        mt_warn("%s: cannot place a breakpoint on the client request at %#llx", m->path,
                (unsigned long long)addr);
}

/* got bytes of [at, at + want) into buf: from the module's file, which
 * holds the same code (object_mapped_elf checks the build), else from the
 * target.  The file first: reading the target's text brings every page of
 * it into the target's resident set (a 100 MB libLLVM wholly resident
 * under memtrace, issue 28), and the file shows no breakpoint of ours. */
static size_t read_code(struct tracee *t, struct module *m, uint64_t at, uint8_t *buf, size_t want)
{
    struct elf_file *f = m->obj ? object_mapped_elf(m->obj) : NULL;
    if (f && at >= m->bias && elf_file_read_vaddr(f, at - m->bias, buf, want) == 0)
        return want;
    return target_mem_read_partial(&t->mem, at, buf, want);
}

/* The sites of [lo, hi) for every sequence of the CPU, read in chunks
 * that overlap by the longest sequence's length less one, so that none is
 * cut in two. */
static unsigned scan_range(struct tracee *t, struct module *m, uint64_t lo, uint64_t hi,
                           uint8_t *buf)
{
    const struct arch_client_request *cr;
    size_t longest = 0;
    for (unsigned k = 0; (cr = arch_client_request(k)); k++)
        longest = cr->len > longest ? cr->len : longest;
    unsigned found = 0;
    for (uint64_t at = lo; at < hi;) {
        size_t want = hi - at < SCAN_CHUNK ? (size_t)(hi - at) : SCAN_CHUNK;
        size_t got = read_code(t, m, at, buf, want);
        if (got < longest)
            break;
        for (unsigned k = 0; (cr = arch_client_request(k)); k++) {
            for (const uint8_t *p = buf, *end = buf + got;
                 (p = memmem(p, (size_t)(end - p), cr->code, cr->len)); p++) {
                uint64_t start = at + (uint64_t)(p - buf);
                if (start % cr->align)
                    continue;
                place_site(t, m, (start + cr->insn_off) | cr->code_bit, cr);
                found++;
            }
        }
        if (got < want || at + got >= hi)
            break;
        at += got - (longest - 1);
    }
    return found;
}

void client_requests_place(struct tracee *t, struct module *m)
{
    if (m->requests_scanned || !arch_client_request(0))
        return;
    m->requests_scanned = true;
    struct proc_maps maps;
    if (proc_maps_read(t->pid, &maps) < 0)
        return;
    uint8_t *buf = xmalloc(SCAN_CHUNK);
    unsigned found = 0;
    for (size_t i = 0; i < maps.count; i++) {
        const struct map_entry *e = &maps.entries[i];
        if (e->executable && e->start >= m->start && e->end <= m->end)
            found += scan_range(t, m, e->start, e->end, buf);
    }
    free(buf);
    proc_maps_free(&maps);
    if (found)
        mt_info("%s: %u valgrind client request sites", m->path, found);
}

/* --- honouring a request ---------------------------------------------------- */

/* The names misuse errors give the requests. */
static const struct intercept_fn freelike_fn = {
    "VALGRIND_FREELIKE_BLOCK", OP_FREE, FAMILY_MALLOC, true, 0,
};
static const struct intercept_fn resize_fn = {
    "VALGRIND_RESIZEINPLACE_BLOCK", OP_FREE, FAMILY_MALLOC, true, 0,
};
static const struct intercept_fn pool_free_fn = {
    "VALGRIND_MEMPOOL_FREE", OP_FREE, FAMILY_MALLOC, true, 0,
};

static void release_custom(struct tracee *t, struct thread *th, const struct arch_regs *regs,
                           uint64_t addr)
{
    struct heap_block blk;
    enum heap_free_result r = heap_record_free(t->books, addr, ALLOC_CUSTOM, &blk);
    if (r == HEAP_FREE_OK)
        misuse_released(t, regs, &blk);
    else
        misuse_bad_release(t, th, regs, &freelike_fn, 0, addr, r, &blk);
}

/* An AUTO_FREE pool's piece [lo, hi) given back: the custom blocks inside
 * it go with it, counted as no free (memcheck's free_mallocs_in_mempool_block). */
static void auto_free(struct tracee *t, uint64_t lo, uint64_t hi)
{
    size_t n = 0;
    struct heap_block *blocks = heap_export_blocks(t->books, &n);
    for (size_t i = 0; i < n; i++)
        if (blocks[i].kind == ALLOC_CUSTOM && blocks[i].addr >= lo &&
            blocks[i].addr + blocks[i].size <= hi)
            heap_record_drop(t->books, blocks[i].addr, ALLOC_CUSTOM, NULL);
    free(blocks);
}

/* The pool a request names.  Attached to a running process, a pool made
 * before memtrace came is taken as made now (plain flags): its later
 * pieces count, as the later blocks of a heap do. */
static struct custom_pool *pool_named(struct tracee *t, uint64_t handle)
{
    struct custom_pool *p = custom_pool_find(&t->pools, handle);
    if (!p && t->attached_mode)
        p = custom_pool_create(&t->pools, handle, 0);
    return p;
}

static void pool_request(struct tracee *t, struct thread *th, const struct arch_regs *regs,
                         const struct client_request *rq)
{
    struct custom_pools *ps = &t->pools;
    const uint64_t *a = rq->arg;
    struct custom_pool *p;
    struct pool_piece piece;
    switch (rq->code) {
    case CR_CREATE_MEMPOOL:
        custom_pool_create(ps, a[0], (unsigned)a[3]);
        break;
    case CR_DESTROY_MEMPOOL:
        custom_pool_destroy(ps, a[0]);
        break;
    case CR_MEMPOOL_ALLOC:
        if ((p = pool_named(t, a[0]))) {
            uint32_t stack = capture_stack(t, regs);
            custom_pool_add(ps, p, a[1], a[2], stack);
            heap_count_pool_alloc(t->books, a[2], stack);
        }
        break;
    case CR_MEMPOOL_FREE:
        if (!(p = pool_named(t, a[0])))
            break;
        if (!custom_pool_remove(p, a[1], &piece)) {
            if (t->attached_mode)
                break; /* a piece from before the attach */
            misuse_bad_release(t, th, regs, &pool_free_fn, 0, a[1], HEAP_FREE_UNKNOWN, NULL);
            break;
        }
        if (p->flags & CUSTOM_POOL_AUTO_FREE)
            auto_free(t, piece.addr, piece.addr + piece.size);
        break;
    case CR_MEMPOOL_TRIM:
        if ((p = custom_pool_find(ps, a[0])))
            custom_pool_trim(p, a[1], a[2]);
        break;
    case CR_MOVE_MEMPOOL:
        custom_pool_move(ps, a[0], a[1]);
        break;
    case CR_MEMPOOL_CHANGE:
        if ((p = custom_pool_find(ps, a[0])))
            custom_pool_change(p, a[1], a[2], a[3]);
        break;
    default: /* MEMPOOL_EXISTS: the default result, as untraced */
        break;
    }
}

/* Which requests a program makes, each said once when it first comes
 * (what a library's requests do natively is not always plain:
 * docs/custom-heaps.md). */
static void note_first(struct tracee *t, const struct breakpoint *bp, uint64_t code)
{
    static uint64_t seen[32];
    static unsigned nseen;
    for (unsigned i = 0; i < nseen; i++)
        if (seen[i] == code)
            return;
    if (nseen == sizeof(seen) / sizeof(seen[0]))
        return;
    seen[nseen++] = code;
    const struct module *m = module_find(t->modules, bp->addr);
    const char *label = client_request_label(code);
    mt_info("valgrind client request %s (%#llx) first at %s+%#llx%s", label ? label : "unknown",
            (unsigned long long)code, m ? m->path : "?",
            (unsigned long long)(bp->addr - (m ? m->start : 0)),
            client_request_name(code) ? "" : ": not honoured, the default result");
}

void client_request_trap(struct tracee *t, struct thread *th, const struct breakpoint *bp,
                         struct arch_regs *regs)
{
    const struct arch_client_request *cr = arch_client_request(0);
    struct client_request rq;
    bool read = cr && client_request_read(&t->mem, arch_client_request_block(regs), cr->word,
                                          &rq) == 0;
    if (read)
        note_first(t, bp, rq.code);
    if (read && client_request_name(rq.code)) {
        /* agent engine: the calls recorded before this stop are booked
         * first (the malloc of an arena before its first object) */
        engine_drain(t, false);
        heap_set_thread(t->books, (uint32_t)th->tid);
        heap_set_heap(t->books, 0);
        const uint64_t *a = rq.arg;
        switch (rq.code) {
        case CR_MALLOCLIKE_BLOCK:
            if (a[0]) /* valgrind.h: ignored if addr == 0 */
                heap_record_alloc(t->books, a[0], a[1], capture_stack(t, regs), ALLOC_CUSTOM);
            break;
        case CR_FREELIKE_BLOCK:
            if (a[0])
                release_custom(t, th, regs, a[0]);
            break;
        case CR_RESIZEINPLACE_BLOCK:
            if (a[0] && !heap_record_resize(t->books, a[0], a[1], a[2]))
                misuse_bad_release(t, th, regs, &resize_fn, 0, a[0], HEAP_FREE_UNKNOWN, NULL);
            break;
        default:
            pool_request(t, th, regs, &rq);
            break;
        }
    }
    /* past the request instruction; the result register keeps the
     * default the program loaded into it */
    arch_set_pc(regs, bp->plan.new_pc);
}
