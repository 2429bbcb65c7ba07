#include "target/report/report_internal.h"

#include <inttypes.h>
#include <string.h>

/* Names come from the target's files: a control character must not be able
 * to break the one-frame-per-line layout. */
static void put_clean(FILE *out, const char *s)
{
    for (; *s; s++)
        fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, out);
}

static void put_frame(FILE *out, unsigned i, const struct report_frame *f)
{
    fprintf(out, "    #%u ", i);
    if (f->function) {
        put_clean(out, f->function);
        if (!strchr(f->function, '('))
            fputs("()", out);
        fputs(" in ", out);
    }
    if (f->function && f->file) {
        put_clean(out, f->file);
        if (f->line)
            fprintf(out, ":%u", f->line);
    } else if (f->module) {
        put_clean(out, f->module);
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

void report_write_text(FILE *out, const struct report_source *src,
                       const struct report_stack *st, size_t n)
{
    if (src->engine)
        fprintf(out, "memtrace engine: %s\n\n", src->engine);
    for (size_t k = 0; k < n; k++) {
        fprintf(out, "%" PRIu64 " bytes in %" PRIu64 " blocks were not free\n",
                st[k].t.bytes_in_use, st[k].t.blocks_in_use);
        report_write_frames_text(out, src, st[k].id);
        fputc('\n', out);
    }
    struct heap_totals t;
    heap_get_totals(src->books, &t);
    report_write_summary(out, &t);
    /* The leak scan at exit (-a), after the summary as in valgrind. */
    if (src->leaks) {
        fputc('\n', out);
        report_write_leaks_text(out, src, src->leaks);
    }
}
