#include "target/report/report_internal.h"

#include "shared/text_escape.h"
#include "shared/xalloc.h"
#include "target/heap/sample_draw.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* One folded line is "frame;frame;...;frame count": ';' separates frames,
 * the last space the count, '\n' the lines, so none of them may appear
 * inside a frame name; control characters are escaped (text_escape.h) as
 * everywhere text from the target goes. */
static void put_folded_name(FILE *out, const char *s)
{
    if (!*s) {
        fputs("[unknown]", out);
        return;
    }
    char *owned = text_escape_clean(s) ? NULL : text_escape_dup(s);
    for (const char *p = owned ? owned : s; *p; p++) {
        char c = *p;
        if (c == ';')
            c = ':';
        else if (c == ' ')
            c = '_';
        fputc(c, out);
    }
    free(owned);
}

static void put_frame(FILE *out, const struct report_frame *f)
{
    if (f->pc == SAMPLE_UNSAMPLED_PC) {
        fputs("[not_sampled]", out);
    } else if (f->function) {
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
    /* Folded lines run outermost first: each frame is written to a
     * buffer as resolved (names live only until the next resolve), and the
     * frames are then put out in reverse. */
    char *buf = NULL;
    size_t len = 0;
    size_t *starts = NULL, cap = 0;
    /* --sample: a line of weight 0 (no width in any flame graph) says
     * the counts are estimates, and at what rate. */
    uint64_t sample = heap_sample_bytes(src->books);
    if (sample)
        fprintf(out, "[memtrace_--sample_%" PRIu64 ":_estimated_bytes] 0\n", sample);
    for (size_t k = 0; k < n; k++) {
        FILE *mem = open_memstream(&buf, &len);
        if (!mem)
            return;
        struct report_frames it;
        struct report_frame f;
        report_frames_begin(&it, src, st[k].id);
        size_t count = 0;
        while (report_frames_next(&it, &f)) {
            if (count == cap) {
                cap = cap ? cap * 2 : 32;
                starts = xreallocarray(starts, cap, sizeof(*starts));
            }
            fflush(mem);
            starts[count++] = len;
            put_frame(mem, &f);
            fputc(0, mem);
        }
        fclose(mem);
        if (!count)
            fputs("[unknown]", out);
        for (size_t i = count; i-- > 0;) {
            fputs(buf + starts[i], out);
            if (i)
                fputc(';', out);
        }
        fprintf(out, " %" PRIu64 "\n", st[k].t.bytes_in_use);
        free(buf);
        buf = NULL;
        len = 0;
    }
    free(starts);
}
