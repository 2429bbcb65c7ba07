/* massif's out-file format (valgrind --tool=massif), for ms_print and
 * massif-visualizer: one snapshot per sample of the timeline (heap_tree=
 * empty), the books' peak as the "peak" snapshot with the stacks in use
 * then, and the last snapshot "detailed" with the stacks in use now.
 *
 * A heap tree has massif's shape: the root holds every byte ("(heap
 * allocation functions)"), its children are the callers of the allocation
 * functions (frame 1 on: frame 0 is the intercepted malloc/new itself),
 * each node's children are its callers, largest first.  mem_heap_extra_B
 * and mem_stacks_B are 0: memtrace sees no allocator overhead and does not
 * profile stacks.  Times are milliseconds (massif's --time-unit=ms). */
#include "target/report/report_internal.h"

#include "shared/text_escape.h"
#include "shared/xalloc.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct mnode {
    char *label;            /* " 0x...: fn (file:line)" */
    uint64_t bytes;
    struct mnode **kids;
    size_t nkids, cap;
};

static struct mnode *kid_of(struct mnode *n, const char *label)
{
    for (size_t i = 0; i < n->nkids; i++)
        if (strcmp(n->kids[i]->label, label) == 0)
            return n->kids[i];
    if (n->nkids == n->cap) {
        n->cap = n->cap ? n->cap * 2 : 4;
        n->kids = xreallocarray(n->kids, n->cap, sizeof(*n->kids));
    }
    struct mnode *k = xcalloc(1, sizeof(*k));
    k->label = xstrdup(label);
    n->kids[n->nkids++] = k;
    return k;
}

static void free_tree(struct mnode *n)
{
    for (size_t i = 0; i < n->nkids; i++)
        free_tree(n->kids[i]);
    free(n->kids);
    free(n->label);
    free(n);
}

/* Names are escaped (text_escape.h: no control character reaches ms_print's
 * reader or terminal, no line break its line-based parser), and ms_print
 * drops everything after a '#': none in names. */
static void label_of(const struct report_frame *f, char *buf, size_t len)
{
    char *fn = text_escape_dup(f->function ? f->function : "?\?\?");
    char *where = text_escape_dup(f->file ? f->file : f->module ? f->module : "?\?\?");
    if (f->file)
        snprintf(buf, len, " 0x%" PRIX64 ": %s (%s:%u)", f->pc, fn, where, f->line);
    else
        snprintf(buf, len, " 0x%" PRIX64 ": %s (in %s)", f->pc, fn, where);
    free(fn);
    free(where);
    for (char *p = buf; *p; p++)
        if (*p == '#')
            *p = '_';
}

static void add_stack(struct mnode *root, const struct report_source *src, uint32_t id,
                      uint64_t bytes)
{
    struct report_frames it;
    struct report_frame f;
    char label[1024];
    report_frames_begin(&it, src, id);
    root->bytes += bytes;
    struct mnode *n = root;
    bool any = false;
    for (unsigned i = 0; report_frames_next(&it, &f); i++) {
        if (i == 0)
            continue;   /* the allocation function itself */
        label_of(&f, label, sizeof(label));
        n = kid_of(n, label);
        n->bytes += bytes;
        any = true;
    }
    if (!any) {
        n = kid_of(n, " 0x0: ?\?\? (in ?\?\?)");
        n->bytes += bytes;
    }
}

static int cmp_nodes(const void *pa, const void *pb)
{
    const struct mnode *a = *(struct mnode *const *)pa, *b = *(struct mnode *const *)pb;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    return strcmp(a->label, b->label);
}

static void print_tree(FILE *out, struct mnode *n, unsigned depth)
{
    if (n->nkids > 1)
        qsort(n->kids, n->nkids, sizeof(*n->kids), cmp_nodes);
    fprintf(out, "%*sn%zu: %" PRIu64 "%s\n", (int)depth, "", n->nkids, n->bytes, n->label);
    for (size_t i = 0; i < n->nkids; i++)
        print_tree(out, n->kids[i], depth + 1);
}

static uint64_t stack_bytes(const struct report_source *src, uint32_t id, bool at_peak)
{
    struct stack_totals t;
    if (at_peak)
        heap_get_stack_peak(src->books, id, &t);
    else
        heap_get_stack_totals(src->books, id, &t);
    return t.bytes_in_use;
}

/* total: the snapshot's mem_heap_B.  Under --sample the stacks' figures
 * are estimates whose sum is not the exact total: they are scaled to it
 * (each rounded down), since ms_print wants no node above its snapshot. */
static void write_tree(FILE *out, const struct report_source *src, bool at_peak, uint64_t total)
{
    struct mnode *root = xcalloc(1, sizeof(*root));
    root->label = xstrdup(" (heap allocation functions) malloc/new/new[], --alloc-fns, etc.");
    uint32_t limit = heap_stack_id_limit(src->books);
    long double scale = 1;
    if (heap_sample_bytes(src->books)) {
        uint64_t sum = 0;
        for (uint32_t id = 0; id < limit; id++)
            sum += stack_bytes(src, id, at_peak);
        scale = sum ? (long double)total / (long double)sum : 0;
    }
    for (uint32_t id = 0; id < limit; id++) {
        uint64_t bytes = stack_bytes(src, id, at_peak);
        if (scale != 1)
            bytes = (uint64_t)((long double)bytes * scale);
        if (bytes)
            add_stack(root, src, id, bytes);
    }
    print_tree(out, root, 0);
    free_tree(root);
}

static void snapshot(FILE *out, unsigned n, double seconds, uint64_t bytes, const char *tree)
{
    fprintf(out,
            "#-----------\nsnapshot=%u\n#-----------\ntime=%" PRIu64 "\nmem_heap_B=%" PRIu64
            "\nmem_heap_extra_B=0\nmem_stacks_B=0\nheap_tree=%s\n",
            n, (uint64_t)(seconds * 1000.0 + 0.5), bytes, tree);
}

void report_write_massif(FILE *out, const struct report_source *src)
{
    struct heap_peak peak;
    struct heap_totals now;
    heap_get_peak(src->books, &peak);
    heap_get_totals(src->books, &now);
    size_t ns = 0;
    const struct timeline_sample *s = timeline_samples(src->timeline, &ns);
    uint64_t sample = heap_sample_bytes(src->books);
    if (sample) /* the tree's figures are estimates; the snapshots' totals exact */
        fprintf(out, "desc: (memtrace) --sample %" PRIu64 ": stacks sampled by bytes, their figures estimated\ncmd: ",
                sample);
    else
        fputs("desc: (memtrace)\ncmd: ", out);
    char *cmd = text_escape_dup(src->program && *src->program ? src->program : "?\?\?");
    for (const char *p = cmd; *p; p++)
        fputc(*p == '#' ? '_' : *p, out);
    free(cmd);
    fputs("\ntime_unit: ms\n", out);

    unsigned k = 0;
    bool peak_done = peak.bytes == 0;
    for (size_t i = 0; i < ns; i++) {
        if (!peak_done && peak.seconds < s[i].seconds) {
            snapshot(out, k++, peak.seconds, peak.bytes, "peak");
            write_tree(out, src, true, peak.bytes);
            peak_done = true;
        }
        if (i + 1 == ns && peak_done) {
            /* the last one: what is in use now */
            snapshot(out, k++, s[i].seconds, now.in_use_bytes, "detailed");
            write_tree(out, src, false, now.in_use_bytes);
        } else {
            snapshot(out, k++, s[i].seconds, s[i].bytes, "empty");
        }
    }
    if (!peak_done) {
        snapshot(out, k++, peak.seconds, peak.bytes, "peak");
        write_tree(out, src, true, peak.bytes);
    }
    if (ns == 0) {
        snapshot(out, k, peak.seconds, now.in_use_bytes, "detailed");
        write_tree(out, src, false, now.in_use_bytes);
    }
}
