#include "target/report/report_internal.h"

#include <inttypes.h>
#include <string.h>

/* One folded line is "frame;frame;...;frame count": ';' separates frames,
 * the last space the count, '\n' the lines, so none of them may appear
 * inside a frame name. */
static void put_folded_name(FILE *out, const char *s)
{
    if (!*s) {
        fputs("[unknown]", out);
        return;
    }
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == ';')
            c = ':';
        else if (c == ' ' || c == '\t')
            c = '_';
        else if (c < 0x20 || c == 0x7f)
            c = '?';
        fputc(c, out);
    }
}

static void put_frame(FILE *out, const struct report_frame *f)
{
    if (f->function) {
        put_folded_name(out, f->function);
    } else if (f->module) {
        const char *slash = strrchr(f->module, '/');
        put_folded_name(out, slash && slash[1] ? slash + 1 : f->module);
        fprintf(out, "+0x%" PRIx64, f->offset);
    } else {
        fprintf(out, "0x%" PRIx64, f->pc);
    }
}

void report_write_folded(FILE *out, const struct report_source *src,
                         const struct report_stack *st, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        unsigned depth;
        const uint64_t *pcs = stack_table_pcs(src->stacks, st[k].id, &depth);
        if (!depth)
            fputs("[unknown]", out);
        for (unsigned i = depth; i-- > 0;) {
            struct report_frame f;
            report_resolve(src, pcs[i], i, &f);
            put_frame(out, &f);
            if (i)
                fputc(';', out);
        }
        fprintf(out, " %" PRIu64 "\n", st[k].t.bytes_in_use);
    }
}
