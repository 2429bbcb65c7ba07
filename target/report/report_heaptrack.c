/* heaptrack's trace format, as heaptrack_interpret leaves it and
 * heaptrack_print / heaptrack_gui read it (file format 3, heaptrack 1.4):
 *
 *   v VERSION FILEVERSION        X COMMAND         I PAGESIZE PHYSPAGES
 *   s LEN STRING                 strings, indexed 1, 2, ... in order
 *   i IP MODULE [FN FILE LINE]...  an address, the innermost inlined
 *                                  function first; indexed 1, 2, ...
 *   t IP PARENT                  a call-tree node (0: the root); 1, 2, ...
 *   a SIZE TRACE                 an allocation kind; indexed 0, 1, ...
 *   + A / - A                    an allocation / a free of kind A
 *   c MS                         the time since the start
 *
 * every number in hex.  heaptrack_print counts a free as temporary when its
 * kind is the kind of the line just before, if that was a '+'.
 *
 * memtrace keeps figures, not events, so the events written here are made
 * up from the books such that heaptrack's sums come out as memtrace's: per
 * stack its allocations and bytes allocated, its temporary allocations,
 * its bytes and blocks at the peak, and its live blocks (with their real
 * sizes) as "leaked".  The order is: the stacks' allocations that live
 * neither at the peak nor at the end (each freed at once; the temporary
 * ones immediately, the others after a separator), then at the peak's time
 * the blocks in use at the peak, the frees of those that do not live to
 * the end, and the blocks allocated after the peak that do.  The sizes of
 * blocks gone before the end are not kept: their bytes are shared out
 * evenly.  heaptrack's rule is one stream for all threads: of the temporary
 * allocations in use at the peak (one per thread at most), only one can be
 * written as temporary; with several threads heaptrack_print may count a
 * few fewer than memtrace.  Kind 0 (size 0) is never allocated: "- 0" after a '+' is the
 * separator that makes the next free not temporary. */
#include "target/report/report_internal.h"
#include "target/report/report_export_stack.h"
#include "target/report/report_gzip.h"

#include "shared/intern.h"
#include "shared/log.h"
#include "shared/text_escape.h"
#include "shared/xalloc.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HEAPTRACK_VERSION 0x010400
#define HEAPTRACK_FILE_VERSION 3
/* The events written are about as many as the allocations the books count:
 * a trace of more than this many (some 10 GiB of lines before gzip, minutes
 * to write and more to read) is refused rather than begun.  Books loaded
 * from a recording (--replay) hold whatever counts the file claims. */
#define HEAPTRACK_MAX_EVENTS (1ull << 30)

struct ht {
    FILE *out;
    struct interner strings, ips, traces, kinds;
    uint32_t nstrings, nips, ntraces, nkinds;
};

/* The string's index, written as an 's' line when new; 0 for NULL.  It
 * is escaped (text_escape.h): a line break would end the line early, and
 * heaptrack_print shows the names on a terminal.  The length is the
 * escaped one, which the line holds. */
static uint32_t ht_string(struct ht *h, const char *s)
{
    if (!s || !*s)
        return 0;
    bool added;
    uint32_t idx = interner_add_string(&h->strings, s, &added) + 1;
    if (added) {
        h->nstrings++;
        char *e = text_escape_dup(s);
        fprintf(h->out, "s %zx %s\n", strlen(e), e);
        free(e);
    }
    return idx;
}

static uint32_t ht_ip(struct ht *h, const struct export_stack *st, const struct export_pc *pc)
{
    bool added;
    uint32_t idx = interner_add_pair(&h->ips, pc->pc, 0, &added) + 1;
    if (!added)
        return idx;
    h->nips++;
    uint32_t module = ht_string(h, pc->module);
    uint32_t fn[64], file[64];
    size_t n = pc->count < 64 ? pc->count : 64;
    for (size_t k = 0; k < n; k++) {
        fn[k] = ht_string(h, st->frames[pc->first + k].function);
        file[k] = ht_string(h, st->frames[pc->first + k].file);
    }
    fprintf(h->out, "i %" PRIx64 " %x", pc->pc, module);
    /* A frame without a function name ends the list (the reader stops at
     * the first index it cannot read; 0 reads as "unknown"). */
    for (size_t k = 0; k < n && fn[k]; k++)
        fprintf(h->out, " %x %x %x", fn[k], file[k], st->frames[pc->first + k].line);
    fputc('\n', h->out);
    return idx;
}

/* The call-tree node of a stack (its innermost pc's node). */
static uint32_t ht_trace(struct ht *h, const struct export_stack *st)
{
    uint32_t parent = 0;
    for (size_t k = st->npcs; k-- > 0;) {
        uint32_t ip = ht_ip(h, st, &st->pcs[k]);
        bool added;
        uint32_t idx = interner_add_pair(&h->traces, ip, parent, &added) + 1;
        if (added) {
            h->ntraces++;
            fprintf(h->out, "t %x %x\n", ip, parent);
        }
        parent = idx;
    }
    return parent;
}

static uint32_t ht_kind(struct ht *h, uint64_t size, uint32_t trace)
{
    bool added;
    uint32_t idx = interner_add_pair(&h->kinds, size, trace, &added);
    if (added) {
        h->nkinds++;
        fprintf(h->out, "a %" PRIx64 " %x\n", size, trace);
    }
    return idx;
}

/* One stack's share of the made-up events. */
struct ht_stack {
    uint32_t id, trace;
    uint64_t churn_temp, churn_other, churn_bytes;   /* freed before the end, not in use at the peak */
    uint64_t peak_only, peak_only_bytes;             /* in use at the peak, freed before the end */
    uint64_t temporary;                              /* of all its allocations */
    size_t live_first, survivors, late;               /* its live blocks in the sorted array */
    bool made_up;       /* loaded books (--replay) keep no blocks: the live ones */
    uint64_t live_bytes; /* are made up, live_bytes shared out evenly */
};

/* Block k of n sharing bytes evenly. */
static uint64_t share(uint64_t bytes, uint64_t n, uint64_t k)
{
    return bytes / n + (k < bytes % n);
}

/* The process's peak resident set (VmHWM) in pages, while it is still
 * there (at its exit stop too); 0 when unknown. */
static long peak_rss_pages(int pid, long page)
{
    if (pid <= 0)
        return 0;
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    long kb = 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb > 0 ? kb * 1024 / page : 0;
}

/* The size of live block j of stack s (survivors first, then late). */
static uint64_t live_size(const struct ht_stack *s, const struct heap_block *blocks, size_t j)
{
    if (s->made_up)
        return share(s->live_bytes, s->survivors + s->late, j);
    return blocks[s->live_first + j].size;
}

static int cmp_blocks(const void *pa, const void *pb)
{
    const struct heap_block *a = pa, *b = pb;
    if (a->stack_id != b->stack_id)
        return a->stack_id < b->stack_id ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static uint64_t sub_clamped(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

static uint64_t add_saturated(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

/* share(bytes, n, j) summed over j < k (k <= n), without the loop. */
static uint64_t share_sum(uint64_t bytes, uint64_t n, uint64_t k)
{
    uint64_t r = bytes % n;
    return k * (bytes / n) + (k < r ? k : r);
}

/* -1 (and nothing past the strings and call trees) when the books ask for
 * more than max_events events. */
/* What write_trace holds, given back (refused or written). */
static void trace_free(struct ht *h, struct ht_stack *stacks, struct heap_block *blocks)
{
    free(stacks);
    free(blocks);
    interner_free(&h->strings);
    interner_free(&h->ips);
    interner_free(&h->traces);
    interner_free(&h->kinds);
}

static int write_trace(FILE *out, const struct report_source *src, uint64_t max_events)
{
    struct ht h = { .out = out };
    struct heap_peak peak;
    heap_get_peak(src->books, &peak);
    double end = heap_seconds(src->books);
    size_t nblocks;
    struct heap_block *blocks = heap_export_blocks(src->books, &nblocks);
    if (nblocks > 1)
        qsort(blocks, nblocks, sizeof(*blocks), cmp_blocks);

    fprintf(out, "v %x %x\n", HEAPTRACK_VERSION, HEAPTRACK_FILE_VERSION);
    /* --sample: the command line heaptrack_print and heaptrack_gui show
     * says the figures are estimates, and a comment line the rate. */
    uint64_t sample = heap_sample_bytes(src->books);
    fputs("X ", out);
    text_escape_put(out, src->program ? src->program : "");
    if (sample)
        fprintf(out, " [memtrace --sample %" PRIu64 ": estimated from sampled stacks]", sample);
    fputc('\n', out);
    long page = sysconf(_SC_PAGESIZE), pages = sysconf(_SC_PHYS_PAGES);
    fprintf(out, "I %lx %lx\n", page > 0 ? page : 4096, pages > 0 ? pages : 0);
    if (sample)
        fprintf(out, "# memtrace --sample %" PRIu64 ": allocations sampled by bytes, every figure "
                     "an estimate\n", sample);

    uint32_t limit = heap_stack_id_limit(src->books);
    struct ht_stack *stacks = NULL;
    size_t n = 0, cap = 0, b = 0;
    uint64_t events = 0;
    struct export_stack es = {0};
    for (uint32_t id = 0; id < limit; id++) {
        struct stack_totals t, p;
        heap_get_stack_totals(src->books, id, &t);
        if (!t.allocs && !t.blocks_in_use)
            continue;
        heap_get_stack_peak(src->books, id, &p);
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            stacks = xreallocarray(stacks, cap, sizeof(*stacks));
        }
        struct ht_stack *s = &stacks[n++];
        memset(s, 0, sizeof(*s));
        s->id = id;
        export_stack_load(&es, src, id);
        s->trace = ht_trace(&h, &es);
        if (!h.nkinds)
            ht_kind(&h, 0, s->trace);   /* kind 0: the separator */

        while (b < nblocks && blocks[b].stack_id < id)
            b++;
        s->live_first = b;
        uint64_t survivor_bytes = 0, late_bytes = 0;
        /* Survivors (in use at the peak, and now) are moved to the front of
         * the stack's blocks; the rest came after the peak.  Exact while
         * fewer than 2^32 allocations followed the peak (the counts below
         * are clamped, never negative, in any case). */
        for (; b < nblocks && blocks[b].stack_id == id; b++) {
            if (heap_block_in_use_at_peak(src->books, &blocks[b])) {
                struct heap_block tmp = blocks[s->live_first + s->survivors];
                blocks[s->live_first + s->survivors] = blocks[b];
                blocks[b] = tmp;
                s->survivors++;
                survivor_bytes += blocks[s->live_first + s->survivors - 1].size;
            } else {
                s->late++;
                late_bytes += blocks[b].size;
            }
        }
        if (sample) /* the figures are estimates: the blocks are not theirs */
            s->survivors = s->late = 0;
        if (!s->survivors && !s->late && t.blocks_in_use) {
            /* Figures without blocks: those at the peak are taken to be
             * the ones that live on, which keeps every sum above. */
            s->made_up = true;
            s->live_bytes = t.bytes_in_use;
            s->survivors = t.blocks_in_use < p.blocks_in_use ? t.blocks_in_use : p.blocks_in_use;
            s->late = t.blocks_in_use - s->survivors;
            survivor_bytes = share_sum(s->live_bytes, t.blocks_in_use, s->survivors);
            late_bytes = s->live_bytes - survivor_bytes;
        }
        s->peak_only = sub_clamped(p.blocks_in_use, s->survivors);
        s->peak_only_bytes = s->peak_only ? sub_clamped(p.bytes_in_use, survivor_bytes) : 0;
        uint64_t churn = sub_clamped(t.allocs, add_saturated(p.blocks_in_use, s->late));
        s->churn_bytes = churn ? sub_clamped(t.bytes_allocated, add_saturated(p.bytes_in_use, late_bytes)) : 0;
        s->temporary = t.temporary;
        s->churn_temp = t.temporary < churn ? t.temporary : churn;
        s->churn_other = churn - s->churn_temp;
        events = add_saturated(events, add_saturated(churn, s->peak_only));
        events = add_saturated(events, add_saturated(s->survivors, s->late));
    }
    export_stack_free(&es);
    if (events > max_events) {
        mt_error("--format heaptrack: the books hold %" PRIu64 " allocations to write, more than "
                 "the %" PRIu64 " an export writes", events, max_events);
        trace_free(&h, stacks, blocks);
        return -1;
    }

    /* The allocations gone before the peak's state and the end's. */
    fputs("c 0\n", out);
    for (size_t k = 0; k < n; k++) {
        const struct ht_stack *s = &stacks[k];
        uint64_t churn = s->churn_temp + s->churn_other;
        for (uint64_t j = 0; j < churn; j++) {
            uint32_t kind = ht_kind(&h, share(s->churn_bytes, churn, j), s->trace);
            if (j < s->churn_temp)
                fprintf(out, "+ %x\n- %x\n", kind, kind);
            else
                fprintf(out, "+ %x\n- 0\n- %x\n", kind, kind);
        }
    }
    /* The peak: every stack's blocks in use then.  A temporary allocation
     * can be in use at the peak (its allocation reached it, its free came
     * next): one left over from the churn goes last and is freed first. */
    size_t temp_at_peak = n;
    for (size_t k = 0; k < n && temp_at_peak == n; k++)
        if (stacks[k].temporary > stacks[k].churn_temp && stacks[k].peak_only)
            temp_at_peak = k;
    fprintf(out, "c %" PRIx64 "\n", (uint64_t)(peak.seconds * 1000));
    bool any_peak_only = false;
    for (size_t k = 0; k < n; k++) {
        const struct ht_stack *s = &stacks[k];
        uint64_t now = s->peak_only - (k == temp_at_peak);
        for (uint64_t j = 0; j < now; j++)
            fprintf(out, "+ %x\n", ht_kind(&h, share(s->peak_only_bytes, s->peak_only, j), s->trace));
        any_peak_only |= now != 0;
    }
    for (size_t k = 0; k < n; k++) {
        const struct ht_stack *s = &stacks[k];
        for (size_t j = 0; j < s->survivors; j++)
            fprintf(out, "+ %x\n", ht_kind(&h, live_size(s, blocks, j), s->trace));
    }
    if (temp_at_peak < n) {
        const struct ht_stack *s = &stacks[temp_at_peak];
        uint32_t kind = ht_kind(&h, share(s->peak_only_bytes, s->peak_only, s->peak_only - 1), s->trace);
        fprintf(out, "+ %x\n- %x\n", kind, kind);
    } else if (any_peak_only) {
        fputs("- 0\n", out);
    }
    for (size_t k = 0; k < n; k++) {
        const struct ht_stack *s = &stacks[k];
        uint64_t left = s->peak_only - (k == temp_at_peak);
        for (uint64_t j = 0; j < left; j++)
            fprintf(out, "- %x\n", ht_kind(&h, share(s->peak_only_bytes, s->peak_only, j), s->trace));
    }
    /* The blocks allocated after the peak that live at the end. */
    for (size_t k = 0; k < n; k++) {
        const struct ht_stack *s = &stacks[k];
        for (size_t j = 0; j < s->late; j++)
            fprintf(out, "+ %x\n", ht_kind(&h, live_size(s, blocks, s->survivors + j), s->trace));
    }
    fprintf(out, "c %" PRIx64 "\n", (uint64_t)(end * 1000));
    /* a recording's pid is another machine's, or another process now */
    long rss = heap_books_loaded(src->books) ? 0 : peak_rss_pages(src->pid, page > 0 ? page : 4096);
    if (rss > 0)
        fprintf(out, "R %lx\n", rss);
    fprintf(out, "# strings: %x\n# ips: %x\n", h.nstrings, h.nips);

    trace_free(&h, stacks, blocks);
    return 0;
}

int report_write_heaptrack(FILE *out, const struct report_source *src, uint64_t max_events)
{
    FILE *z = report_gzip_open(out);
    if (!z)
        return -1;
    if (write_trace(z, src, max_events ? max_events : HEAPTRACK_MAX_EVENTS) < 0) {
        report_gzip_close(z);
        return -1;
    }
    int rc = ferror(z) ? -1 : 0;
    return report_gzip_close(z) | rc;
}
