#include "target/report/report_internal.h"

#include "shared/text_escape.h"
#include "target/heap/sample_draw.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Names come from the target's files and from recordings: text_escape_put
 * keeps each frame on its line and the terminal's state untouched. */
static void put_frame(FILE *out, unsigned i, const struct report_frame *f)
{
    fprintf(out, "    #%u ", i);
    if (f->pc == SAMPLE_UNSAMPLED_PC) { /* --sample's pseudo-stack: its name alone */
        fputs(SAMPLE_UNSAMPLED_NAME "\n", out);
        return;
    }
    if (f->function) {
        text_escape_put(out, f->function);
        if (!strchr(f->function, '('))
            fputs("()", out);
        fputs(" in ", out);
    }
    if (f->function && f->file) {
        text_escape_put(out, f->file);
        if (f->line)
            fprintf(out, ":%u", f->line);
    } else if (f->module) {
        text_escape_put(out, f->module);
        fprintf(out, "+0x%" PRIx64, f->offset);
    } else {
        fprintf(out, "0x%" PRIx64, f->pc);
    }
    if (f->inlined)
        fputs(" [inlined]", out);
    if (f->tail_call)
        fputs(" [tail call]", out);
    fputc('\n', out);
}

void report_write_frames_text(FILE *out, const struct report_source *src, uint32_t stack_id)
{
    struct report_frames it;
    struct report_frame f;
    report_frames_begin(&it, src, stack_id);
    unsigned i = 0;
    while (report_frames_next(&it, &f))
        put_frame(out, i++, &f);
    if (!i)
        fputs("    (no frames)\n", out);
}

/* What a text report leaves out: one line, as ms_print and heaptrack_print
 * end their lists, with the figures of the stacks left out so that the
 * list and this line add up to the summary's "in use". */
static void put_rest(FILE *out, const struct report_stack *st, size_t n)
{
    uint64_t bytes = 0, blocks = 0;
    for (size_t k = 0; k < n; k++) {
        bytes += st[k].t.bytes_in_use;
        blocks += st[k].t.blocks_in_use;
    }
    fprintf(out, "... and %zu more stack%s with %" PRIu64 " bytes in %" PRIu64
                 " blocks not free, not listed (-n 0 lists all; --format json keeps all)\n\n",
            n, n == 1 ? "" : "s", bytes, blocks);
}

void report_write_text(FILE *out, const struct report_source *src,
                       const struct report_stack *st, size_t n, size_t limit)
{
    size_t listed = limit && n > limit ? limit : n;
    if (src->engine) {
        fputs("memtrace engine: ", out);
        text_escape_put(out, src->engine);
        fputc('\n', out);
    }
    if (src->allocators && src->allocators->count) {
        fputs("memtrace allocators: ", out);
        report_write_allocators(out, src->allocators);
        fputc('\n', out);
    }
    uint64_t sample = heap_sample_bytes(src->books);
    if (sample)
        fprintf(out, "memtrace sample: the stacks of allocations sampled by bytes, one per %" PRIu64
                     " bytes on average (--sample %" PRIu64 "): the figures of each stack are\n"
                     "                 estimates; the HEAP SUMMARY and the leak scan's totals are exact\n",
                sample, sample);
    if (src->engine || (src->allocators && src->allocators->count) || sample)
        fputc('\n', out);
    for (size_t k = 0; k < listed; k++) {
        fprintf(out, "%" PRIu64 " bytes in %" PRIu64 " blocks were not free\n",
                st[k].t.bytes_in_use, st[k].t.blocks_in_use);
        report_write_frames_text(out, src, st[k].id);
        fputc('\n', out);
    }
    if (listed < n)
        put_rest(out, st + listed, n - listed);
    struct heap_totals t;
    heap_get_totals(src->books, &t);
    report_write_summary(out, &t);
    /* Where the RSS went, after the heap's summary (the process alive) */
    if (src->memory) {
        fputc('\n', out);
        report_write_memory_text(out, src->memory);
    }
    /* The leak scan at exit (-a), after the summary as in valgrind. */
    if (src->leaks) {
        fputc('\n', out);
        report_write_leaks_text(out, src, src->leaks);
    }
}

void report_write_allocators(FILE *out, const struct allocators *a)
{
    size_t *order = NULL;
    size_t n = allocators_ordered(a, &order);
    for (size_t k = 0; k < n; k++) {
        const struct allocator *al = &a->v[order[k]];
        fputs(k ? ", " : "", out);
        text_escape_put(out, al->path); /* the target's own path: outside input */
        fprintf(out, " (%" PRIu64 " call%s)", al->calls, al->calls == 1 ? "" : "s");
    }
    free(order);
}
