/* The heap's peak and the temporary allocations in reports: what heaptrack
 * prints as "peak heap memory consumption" and "temporary memory
 * allocations", with the stacks behind them. */
#include "target/report/report_internal.h"

#include "shared/xalloc.h"

#include <inttypes.h>
#include <stdlib.h>

/* Lists in the text report hold this many stacks unless --top says. */
#define TEXT_LIST_DEFAULT 10

static int cmp_peak(const void *pa, const void *pb)
{
    const struct report_stack *a = pa, *b = pb;
    if (a->t.bytes_in_use != b->t.bytes_in_use)
        return a->t.bytes_in_use > b->t.bytes_in_use ? -1 : 1;
    if (a->t.blocks_in_use != b->t.blocks_in_use)
        return a->t.blocks_in_use > b->t.blocks_in_use ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

static int cmp_temporary(const void *pa, const void *pb)
{
    const struct report_stack *a = pa, *b = pb;
    if (a->t.temporary != b->t.temporary)
        return a->t.temporary > b->t.temporary ? -1 : 1;
    if (a->t.allocs != b->t.allocs)
        return a->t.allocs > b->t.allocs ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* Stacks with blocks at the peak (t: their figures at the peak, plus the
 * stack's temporary count) or, temporary set, stacks with temporary
 * allocations (t: their current figures); sorted, at most top (0: all). */
static struct report_stack *collect(const struct report_source *src, bool temporary, size_t top,
                                    size_t *count)
{
    uint32_t limit = heap_stack_id_limit(src->books);
    size_t n = 0, cap = 0;
    struct report_stack *st = NULL;
    for (uint32_t id = 0; id < limit; id++) {
        struct stack_totals now, t;
        heap_get_stack_totals(src->books, id, &now);
        if (temporary) {
            t = now;
            if (!t.temporary)
                continue;
        } else {
            heap_get_stack_peak(src->books, id, &t);
            if (!t.blocks_in_use)
                continue;
            t.temporary = now.temporary;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            st = xreallocarray(st, cap, sizeof(*st));
        }
        st[n++] = (struct report_stack){ id, t };
    }
    if (n > 1)
        qsort(st, n, sizeof(*st), temporary ? cmp_temporary : cmp_peak);
    if (top && n > top)
        n = top;
    *count = n;
    return st;
}

struct report_stack *report_collect_peak(const struct report_source *src, size_t top, size_t *count)
{
    return collect(src, false, top, count);
}

void report_write_peak_text(FILE *out, const struct report_source *src, size_t top)
{
    struct heap_peak p;
    struct heap_totals t;
    heap_get_peak(src->books, &p);
    heap_get_totals(src->books, &t);
    size_t limit = top ? top : TEXT_LIST_DEFAULT, n;

    fprintf(out, "\nPEAK\n    peak heap: %" PRIu64 " bytes in %" PRIu64 " blocks at %.3f s\n",
            p.bytes, p.blocks, p.seconds);
    struct report_stack *st = collect(src, false, limit, &n);
    for (size_t k = 0; k < n; k++) {
        fprintf(out, "\n%" PRIu64 " bytes in %" PRIu64 " blocks at the peak\n", st[k].t.bytes_in_use,
                st[k].t.blocks_in_use);
        report_write_frames_text(out, src, st[k].id);
    }
    free(st);

    fprintf(out, "\nTEMPORARY ALLOCATIONS\n    %" PRIu64 " of %" PRIu64
                 " allocations were freed with no other allocation or free on their thread in between\n",
            t.temporary, t.allocs);
    st = collect(src, true, limit, &n);
    for (size_t k = 0; k < n; k++) {
        fprintf(out, "\n%" PRIu64 " temporary of %" PRIu64 " allocations\n", st[k].t.temporary,
                st[k].t.allocs);
        report_write_frames_text(out, src, st[k].id);
    }
    free(st);
}

static void put_json_stacks(FILE *out, const struct report_source *src,
                            const struct report_stack *st, size_t n)
{
    fputs("[", out);
    for (size_t k = 0; k < n; k++) {
        fprintf(out,
                "%s\n   {\"bytes\": %" PRIu64 ", \"blocks\": %" PRIu64 ", \"allocs\": %" PRIu64
                ", \"temporary\": %" PRIu64 ", \"frames\": [",
                k ? "," : "", st[k].t.bytes_in_use, st[k].t.blocks_in_use, st[k].t.allocs,
                st[k].t.temporary);
        report_json_frames(out, src, st[k].id, "\n    ");
        fputs("]}", out);
    }
    fputs(n ? "\n  ]" : "]", out);
}

void report_write_peak_json(FILE *out, const struct report_source *src)
{
    struct heap_peak p;
    struct heap_totals t;
    heap_get_peak(src->books, &p);
    heap_get_totals(src->books, &t);
    size_t n;

    fprintf(out, " \"peak\": {\"bytes\": %" PRIu64 ", \"blocks\": %" PRIu64 ", \"seconds\": %.6f",
            p.bytes, p.blocks, p.seconds);
    /* "allocs" of a peak stack: its allocations so far, not at the peak. */
    struct report_stack *st = collect(src, false, 0, &n);
    for (size_t k = 0; k < n; k++) {
        struct stack_totals now;
        heap_get_stack_totals(src->books, st[k].id, &now);
        st[k].t.allocs = now.allocs;
    }
    fputs(", \"stacks\": ", out);
    put_json_stacks(out, src, st, n);
    free(st);

    /* "bytes" and "blocks" of a temporary stack: in use now. */
    fprintf(out, "},\n \"temporary_allocations\": {\"count\": %" PRIu64 ", \"stacks\": ", t.temporary);
    st = collect(src, true, 0, &n);
    put_json_stacks(out, src, st, n);
    free(st);
    fputs("},\n", out);
}
