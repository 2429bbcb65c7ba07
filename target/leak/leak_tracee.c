#include "target/leak/leak_tracee.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "shared/log.h"
#include "shared/xalloc.h"
#include "target/heap/heap.h"
#include "target/leak/leak_alloc.h"
#include "target/leak/leak_custom.h"
#include "target/tracer/modules.h"
#include "target/tracer/maps.h"
#include "target/tracer/target_mem.h"

#define PAGE_MASK_OF(p) (~(uint64_t)((p) - 1))

void leak_dead_stacks_add(struct leak_dead_stacks *d, uint64_t sp)
{
    if (d->n == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 16;
        d->sp = xreallocarray(d->sp, d->cap, sizeof(*d->sp));
    }
    d->sp[d->n++] = sp;
}

void leak_dead_stacks_free(struct leak_dead_stacks *d)
{
    free(d->sp);
    memset(d, 0, sizeof(*d));
}

/* --- reading ------------------------------------------------------------- */

/* The rest of one range, page by page: a hole in the middle leaves zeros
 * and the pages after it are still read. */
static void read_pagewise(struct target_mem *m, uint64_t addr, uint64_t len, uint8_t *dst)
{
    uint64_t page = heap_page_size();
    while (len) {
        uint64_t piece = page - (addr & (page - 1));
        if (piece > len)
            piece = len;
        target_mem_read_partial(m, addr, dst, piece);
        addr += piece;
        dst += piece;
        len -= piece;
    }
}

void leak_read_process(void *ctx, const struct leak_range *ranges, size_t n, uint8_t *dst)
{
    struct target_mem *m = ctx;
    struct iovec remote[LEAK_BATCH_RANGES];
    size_t i = 0;
    uint64_t skip = 0;   /* bytes of ranges[i] already done */
    while (i < n) {
        size_t k = 0;
        uint64_t want = 0;
        for (size_t j = i; j < n && k < LEAK_BATCH_RANGES; j++, k++) {
            uint64_t off = j == i ? skip : 0;
            remote[k].iov_base = (void *)(uintptr_t)(ranges[j].addr + off);
            remote[k].iov_len = (size_t)(ranges[j].len - off);
            want += ranges[j].len - off;
        }
        struct iovec local = {dst, (size_t)want};
        ssize_t got = process_vm_readv(m->pid, &local, 1, remote, (unsigned long)k, 0);
        if (got < 0 && errno == EINTR)
            continue;
        uint64_t done = got > 0 ? (uint64_t)got : 0;
        /* Step over what was read. */
        dst += done;
        while (i < n && done >= ranges[i].len - skip) {
            done -= ranges[i].len - skip;
            skip = 0;
            i++;
        }
        skip += done;
        if ((uint64_t)(got > 0 ? got : 0) == want)
            continue;
        /* A hole in ranges[i] (or no process_vm_readv): the rest of it
         * the slow way, then on with the next range. */
        if (i < n) {
            uint64_t rest = ranges[i].len - skip;
            read_pagewise(m, ranges[i].addr + skip, rest, dst);
            dst += rest;
            skip = 0;
            i++;
        }
    }
}

/* --- root set -------------------------------------------------------------- */

/* Files whose mapping is device memory: reading it may have effects
 * (memcheck skips character and block devices too). */
static bool is_device(const char *path)
{
    return path && strncmp(path, "/dev/", 5) == 0 && strncmp(path, "/dev/zero", 9) != 0 &&
           strncmp(path, "/dev/shm/", 9) != 0;
}

/* [lo, hi) minus the skip ranges. */
static void add_minus_skip(struct leak_ranges *l, uint64_t lo, uint64_t hi,
                           const struct leak_range *skip, size_t nskip)
{
    for (size_t k = 0; k < nskip && lo < hi; k++) {
        uint64_t s = skip[k].addr, e = skip[k].addr + skip[k].len;
        if (e <= lo || s >= hi)
            continue;
        if (s > lo) {
            add_minus_skip(l, lo, s, skip + k + 1, nskip - k - 1);
        }
        lo = e;
    }
    leak_ranges_push(l, lo, hi);
}

struct leak_range *leak_roots_from_maps(const char *maps_text, size_t len,
                                        const struct heap_block *blocks, size_t nblocks,
                                        const uint64_t *sps, size_t nsps,
                                        const struct leak_range *skip, size_t nskip,
                                        bool blocks_are_roots, size_t *count)
{
    struct proc_maps maps;
    struct leak_ranges out = {0};
    *count = 0;
    if (proc_maps_parse(maps_text, len, &maps) < 0)
        return NULL;
    uint64_t page = heap_page_size();
    for (size_t m = 0; m < maps.count; m++) {
        const struct map_entry *e = &maps.entries[m];
        if (!e->readable || !e->writable || is_device(e->path))
            continue;
        uint64_t lo = e->start, hi = e->end;
        /* A stack: only from its pointer (minus the red zone) up. */
        for (size_t k = 0; k < nsps; k++) {
            if (sps[k] >= e->start && sps[k] < e->end) {
                uint64_t s = sps[k] - ARCH_STACK_REDZONE;
                lo = s > e->start && s <= sps[k] ? s : e->start;
                break;
            }
        }
        size_t b = leak_first_block_from(blocks, nblocks, e->start);
        bool has_blocks = b < nblocks && blocks[b].addr < e->end;
        if (!has_blocks || blocks_are_roots) {
            if (e->path && strcmp(e->path, "[heap]") == 0 && !blocks_are_roots)
                continue;
            /* Blocks are scanned only when reached. */
            uint64_t at = lo;
            for (; b < nblocks && blocks[b].addr < hi; b++) {
                if (blocks[b].addr > at)
                    add_minus_skip(&out, at, blocks[b].addr, skip, nskip);
                if (blocks[b].addr + blocks[b].size > at)
                    at = blocks[b].addr + blocks[b].size;
            }
            if (at < hi)
                add_minus_skip(&out, at, hi, skip, nskip);
            continue;
        }
        /* Memory of the allocator: the blocks, its headers and free chunks
         * (stale pointers of freed blocks) go; a mapping the kernel merged
         * with it keeps its own part. */
        if (e->path && strcmp(e->path, "[heap]") == 0)
            continue;
        uint64_t span_lo = blocks[b].addr & PAGE_MASK_OF(page), span_hi = 0;
        for (; b < nblocks && blocks[b].addr < e->end; b++)
            if (blocks[b].addr + blocks[b].size > span_hi)
                span_hi = blocks[b].addr + blocks[b].size;
        span_hi = (span_hi + page - 1) & PAGE_MASK_OF(page);
        add_minus_skip(&out, lo, span_lo < lo ? lo : span_lo, skip, nskip);
        add_minus_skip(&out, span_hi > lo ? span_hi : lo, hi, skip, nskip);
    }
    proc_maps_free(&maps);
    *count = out.n;
    return out.r;
}

/* The readable runs of maps_text: adjacent readable mappings merged. */
static struct leak_range *readable_runs(const char *maps_text, size_t len, size_t *count)
{
    struct proc_maps maps;
    struct leak_ranges out = {0};
    *count = 0;
    if (proc_maps_parse(maps_text, len, &maps) < 0)
        return NULL;
    for (size_t m = 0; m < maps.count; m++) {
        const struct map_entry *e = &maps.entries[m];
        if (e->readable)
            leak_ranges_push(&out, e->start, e->end);   /* merges adjacent ones */
    }
    proc_maps_free(&maps);
    *count = out.n;
    return out.r;
}

/* --- the scan -------------------------------------------------------------- */

/* Attached to a running process, the heap outside the known blocks holds
 * the blocks made before memtrace came, so it is a root; glibc's main heap
 * is walked instead (leak_glibc_heap_roots), so that only chunks in use
 * stay roots, not the stale pointers of free ones.  Heaps over this size
 * keep the old rule (the walk reads the heap at once). */
#define HEAP_WALK_MAX (256ull << 20)

static int cmp_range(const void *a, const void *b)
{
    uint64_t x = ((const struct leak_range *)a)->addr, y = ((const struct leak_range *)b)->addr;
    return x < y ? -1 : x > y;
}

static void walk_glibc_heap(struct tracee *t, const char *maps, size_t len,
                            const struct leak_run *run, struct leak_range **roots, size_t *nroots,
                            struct leak_range **alloc_roots, size_t *nalloc_roots)
{
    struct proc_maps pm;
    if (proc_maps_parse(maps, len, &pm) < 0)
        return;
    struct leak_range heap = {0, 0};
    for (size_t m = 0; m < pm.count; m++)
        if (pm.entries[m].path && strcmp(pm.entries[m].path, "[heap]") == 0)
            heap = (struct leak_range){pm.entries[m].start, pm.entries[m].end - pm.entries[m].start};
    proc_maps_free(&pm);
    if (!heap.len || heap.len > HEAP_WALK_MAX)
        return;
    uint8_t *mem = xcalloc((size_t)heap.len, 1);
    leak_read_process(&t->mem, &heap, 1, mem);
    size_t nkeep = 0;
    struct leak_range *keep = leak_glibc_heap_roots(mem, heap.addr, heap.addr + heap.len,
                                                    ARCH_PTR_SIZE, run->blocks, run->nblocks,
                                                    &nkeep);
    free(mem);
    if (!keep)
        return;
    size_t n1 = 0, n2 = 0;
    free(leak_split_roots(roots, nroots, &heap, 1, &n1));
    free(leak_split_roots(alloc_roots, nalloc_roots, &heap, 1, &n2));
    *roots = xreallocarray(*roots, *nroots + nkeep + 1, sizeof(**roots));
    memcpy(*roots + *nroots, keep, nkeep * sizeof(*keep));
    *nroots += nkeep;
    qsort(*roots, *nroots, sizeof(**roots), cmp_range);
    free(keep);
}

static char *read_maps_text(pid_t pid, size_t *len)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    size_t cap = 65536, n = 0;
    char *buf = xreallocarray(NULL, cap, 1);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            buf = xreallocarray(buf, cap, 1);
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

void leak_scan_tracee(struct tracee *t, const struct leak_dead_stacks *dead, pid_t entry_tid,
                      bool (*stop)(void *ctx), void *stop_ctx, struct leak_run *out)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    memset(out, 0, sizeof(*out));
    engine_drain(t, false); /* an engine that records apart: the books first */
    out->blocks = heap_export_all_blocks(t->books, &out->nblocks, &out->forgotten);
    /* valgrind's custom blocks: pool pieces in, their superblocks out */
    struct leak_range *hidden = NULL;
    size_t nhidden = 0;
    leak_custom_blocks(&t->pools, &out->blocks, &out->nblocks, &out->forgotten, &hidden, &nhidden);

    /* Registers and stack pointers of the stopped threads; then the stack
     * pointers threads had when they exited, newest first. */
    size_t nwords_per = sizeof(struct arch_regs) / ARCH_PTR_SIZE;
    size_t cap = t->threads_count + (dead ? dead->n : 0) + 1;
    uint64_t *sps = xcalloc(cap, sizeof(*sps));
    uint64_t *words = xcalloc((t->threads_count + 1) * nwords_per, sizeof(*words));
    size_t nsps = 0, nwords = 0;
    for (unsigned i = 0; i < t->threads_cap; i++) {
        struct thread *th = t->threads[i];
        struct arch_regs regs;
        if (!th || th->state != THREAD_STOPPED || arch_get_regs(th->tid, &regs) < 0)
            continue;
        if (th->tid == entry_tid)
            arch_clear_dead_at_entry(&regs, 1);   /* exit(status) */
        /* The register file as words: every general register is one
         * (the layouts ptrace gives are arrays of longs on every CPU). */
        for (size_t k = 0; k < nwords_per; k++) {
            if (ARCH_PTR_SIZE == 8) {
                uint64_t w;
                memcpy(&w, (const uint8_t *)&regs + k * 8, 8);
                words[nwords++] = w;
            } else {
                uint32_t w;
                memcpy(&w, (const uint8_t *)&regs + k * 4, 4);
                words[nwords++] = w;
            }
        }
        /* leak_roots_from_maps takes the red zone off every stack
         * pointer: at a function's entry there is none. */
        sps[nsps++] = arch_sp(&regs) + (th->tid == entry_tid ? ARCH_STACK_REDZONE : 0);
        out->threads++;
    }
    for (size_t k = dead ? dead->n : 0; k-- > 0;)
        sps[nsps++] = dead->sp[k];

    struct leak_range *skip = xcalloc(t->scratch_count + 3 + nhidden, sizeof(*skip));
    for (unsigned i = 0; i < t->scratch_count; i++)
        skip[i] = (struct leak_range){t->scratch[i].addr, t->scratch[i].size};
    /* the engine's own memory (the agent's rings hold copies of stacks,
     * not roots) */
    size_t nskip = t->scratch_count;
    uint64_t engine_lo[2], engine_len[2];
    for (unsigned k = 0, n = engine_own_ranges(t, engine_lo, engine_len); k < n; k++)
        skip[nskip++] = (struct leak_range){engine_lo[k], engine_len[k]};
    for (size_t k = 0; k < nhidden; k++)
        skip[nskip++] = hidden[k];
    free(hidden);

    size_t len = 0, nroots = 0;
    char *maps = read_maps_text(t->pid, &len);
    struct leak_range *roots = NULL;
    if (maps)
        roots = leak_roots_from_maps(maps, len, out->blocks, out->nblocks, sps, nsps, skip,
                                     nskip, t->attached_mode, &nroots);
    else
        mt_warn("leak scan: cannot read the memory map of process %d", (int)t->pid);
    for (size_t k = 0; k < nroots; k++)
        out->root_bytes += roots[k].len;

    /* The allocator's own memory: the modules whose malloc we intercept. */
    size_t npaths = 0, nalloc = 0, nalloc_roots = 0;
    const char **paths = xcalloc(t->modules->count + 1, sizeof(*paths));
    for (size_t k = 0; k < t->modules->count; k++)
        if (t->modules->mods[k]->intercepts_placed && t->modules->mods[k]->path)
            paths[npaths++] = t->modules->mods[k]->path;
    struct leak_range *alloc = maps ? leak_allocator_ranges(maps, len, paths, npaths, out->blocks,
                                                            out->nblocks, &nalloc)
                                    : NULL;
    struct leak_range *alloc_roots = leak_split_roots(&roots, &nroots, alloc, nalloc, &nalloc_roots);
    free(alloc);
    free(paths);
    if (t->attached_mode && maps)
        walk_glibc_heap(t, maps, len, out, &roots, &nroots, &alloc_roots, &nalloc_roots);

    size_t nreadable = 0;
    struct leak_range *readable = maps ? readable_runs(maps, len, &nreadable) : NULL;
    struct leak_scan_input in = {
        .blocks = out->blocks,
        .nblocks = out->nblocks,
        .uncounted = out->forgotten,
        .roots = roots,
        .nroots = nroots,
        .alloc_roots = alloc_roots,
        .nalloc_roots = nalloc_roots,
        .root_words = words,
        .nroot_words = nwords,
        .word_size = ARCH_PTR_SIZE,
        .readable = readable,
        .nreadable = nreadable,
        .read = leak_read_process,
        .read_ctx = &t->mem,
        .stop = stop,
        .stop_ctx = stop_ctx,
    };
    leak_scan_run(&in, &out->res);
    free(readable);
    free(maps);
    free(roots);
    free(alloc_roots);
    free(skip);
    free(sps);
    free(words);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    out->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

void leak_run_free(struct leak_run *r)
{
    free(r->blocks);
    free(r->forgotten);
    leak_scan_result_free(&r->res);
    memset(r, 0, sizeof(*r));
}
