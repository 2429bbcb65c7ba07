#include "target/report/report.h"
#include "target/heap/sample_draw.h"
#include "target/report/report_internal.h"

#include "shared/xalloc.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const struct { const char *name; enum report_format f; } format_names[] = {
    { "text", REPORT_TEXT }, { "json", REPORT_JSON }, { "folded", REPORT_FOLDED },
    { "html", REPORT_HTML },
    { "massif", REPORT_MASSIF },
    { "heaptrack", REPORT_HEAPTRACK },
#ifndef MT_NO_PPROF
    { "pprof", REPORT_PPROF },
#endif
};

bool report_parse_format(const char *s, enum report_format *out)
{
    for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++)
        if (strcmp(s, format_names[i].name) == 0) {
            *out = format_names[i].f;
            return true;
        }
    return false;
}

const char *report_format_name(enum report_format f)
{
    for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++)
        if (format_names[i].f == f)
            return format_names[i].name;
    return "?";
}

bool report_format_binary(enum report_format f)
{
    return f == REPORT_HEAPTRACK || f == REPORT_PPROF;
}

bool report_parse_sort(const char *s, enum report_sort *out)
{
    static const struct { const char *name; enum report_sort k; } names[] = {
        { "bytes", REPORT_SORT_BYTES }, { "blocks", REPORT_SORT_BLOCKS },
        { "allocs", REPORT_SORT_ALLOCS },
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(s, names[i].name) == 0) {
            *out = names[i].k;
            return true;
        }
    return false;
}

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
    return a > b ? -1 : a < b;
}

/* Descending by key, then bytes, then blocks; ascending id last, so equal
 * stacks always come out in the same order. */
static int cmp_stacks(const struct report_stack *a, const struct report_stack *b,
                      enum report_sort sort)
{
    int c = 0;
    if (sort == REPORT_SORT_BLOCKS)
        c = cmp_u64_desc(a->t.blocks_in_use, b->t.blocks_in_use);
    else if (sort == REPORT_SORT_ALLOCS)
        c = cmp_u64_desc(a->t.allocs, b->t.allocs);
    if (!c)
        c = cmp_u64_desc(a->t.bytes_in_use, b->t.bytes_in_use);
    if (!c)
        c = cmp_u64_desc(a->t.blocks_in_use, b->t.blocks_in_use);
    if (!c)
        c = a->id < b->id ? -1 : a->id > b->id;
    return c;
}

static int cmp_by_bytes(const void *a, const void *b) { return cmp_stacks(a, b, REPORT_SORT_BYTES); }
static int cmp_by_blocks(const void *a, const void *b) { return cmp_stacks(a, b, REPORT_SORT_BLOCKS); }
static int cmp_by_allocs(const void *a, const void *b) { return cmp_stacks(a, b, REPORT_SORT_ALLOCS); }

struct report_stack *report_collect(const struct report_source *src,
                                    const struct report_options *opt, size_t *count)
{
    uint32_t limit = heap_stack_id_limit(src->books);
    size_t n = 0, cap = 0;
    struct report_stack *st = NULL;
    for (uint32_t id = 0; id < limit; id++) {
        struct stack_totals t;
        heap_get_stack_totals(src->books, id, &t);
        if (!t.blocks_in_use)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            st = xreallocarray(st, cap, sizeof(*st));
        }
        st[n++] = (struct report_stack){ id, t };
    }
    int (*cmp)(const void *, const void *) =
        opt->sort == REPORT_SORT_BLOCKS ? cmp_by_blocks :
        opt->sort == REPORT_SORT_ALLOCS ? cmp_by_allocs : cmp_by_bytes;
    if (n > 1)
        qsort(st, n, sizeof(*st), cmp);
    if (opt->top && n > opt->top)
        n = opt->top;
    *count = n;
    return st;
}

void report_frames_begin(struct report_frames *it, const struct report_source *src, uint32_t stack_id)
{
    memset(it, 0, sizeof(*it));
    it->src = src;
    it->pcs = stack_id ? stack_table_pcs(src->stacks, stack_id, &it->depth) : NULL;
    if (!it->pcs)
        it->depth = 0;
}

/* A resolver never gives more frames for one pc than this. */
#define FRAMES_PER_PC_MAX 64

bool report_frames_next(struct report_frames *it, struct report_frame *f)
{
    const struct report_source *src = it->src;
    if (it->i >= it->depth || (src->max_frames && it->shown >= src->max_frames))
        return false;
    uint64_t pc = it->pcs[it->i];
    memset(f, 0, sizeof(*f));
    f->pc = pc & ~(1ull << 63);
    f->sub = it->sub;
    f->caller_pc = it->i + 1 < it->depth ? it->pcs[it->i + 1] : 0;
    f->want_mapping = it->want_mapping;
    if (pc == SAMPLE_UNSAMPLED_PC) /* --sample's pseudo-stack: no frame to name */
        f->function = SAMPLE_UNSAMPLED_NAME;
    else if (src->resolve)
        src->resolve(src->resolve_ctx, pc, it->i, f);
    if (f->more && it->sub + 1 < FRAMES_PER_PC_MAX) {
        it->sub++;
    } else {
        it->sub = 0;
        it->i++;
    }
    f->more = false;
    it->shown++;
    return true;
}

void report_write_summary(FILE *out, const struct heap_totals *t)
{
    fprintf(out, "HEAP SUMMARY\n"
                 "    in use: %" PRIu64 " bytes in %" PRIu64 " blocks\n"
                 "    total heap usage: %" PRIu64 " allocs, %" PRIu64 " frees, %" PRIu64
                 " bytes allocated\n",
            t->in_use_bytes, t->in_use_blocks, t->allocs, t->frees, t->bytes_allocated);
    if (t->maps_recorded || t->mapped_regions)
        fprintf(out, "    mapped: %" PRIu64 " bytes in %" PRIu64 " regions\n",
                t->mapped_bytes, t->mapped_regions);
}

int report_write(FILE *out, const struct report_source *src, const struct report_options *opt)
{
    if (opt->format == REPORT_HEAPTRACK)
        return report_write_heaptrack(out, src, opt->max_events) | (ferror(out) ? -1 : 0);
    if (opt->format == REPORT_PPROF)
        return report_write_pprof(out, src) | (ferror(out) ? -1 : 0);
    size_t n;
    struct report_stack *st = report_collect(src, opt, &n);
    switch (opt->format) {
    case REPORT_JSON:
        report_write_json(out, src, st, n);
        break;
    case REPORT_FOLDED:
        report_write_folded(out, src, st, n);
        break;
    case REPORT_HTML:
        report_write_html(out, src, st, n, opt->top);
        break;
    case REPORT_MASSIF:
        report_write_massif(out, src);
        break;
    case REPORT_TEXT:
    default:
        report_write_text(out, src, st, n, opt->top ? 0 : opt->text_limit);
        report_write_peak_text(out, src, opt->top);
        break;
    }
    free(st);
    return ferror(out) ? -1 : 0;
}
