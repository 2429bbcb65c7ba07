/* The data the HTML page's script draws (report_html.c): the heap's totals
 * over time and every stack with its figures, as one JSON object inside a
 * <script type="application/json"> element.
 *
 * {"pid", "now", "heap": {...}, "peak": {"bytes", "blocks", "seconds"},
 *  "interval", "timeline": [[seconds, bytes, blocks], ...],
 *  "rss": [[seconds, RSS, live heap, allocator holds, program mmaps,
 *           thread stacks, modules, shared memory, rest], ...] (recorded),
 *  "names": [frame name, ...],
 *  "stacks": [[bytes in use, blocks in use, allocs, bytes allocated,
 *              bytes at the peak, temporary, [name index, outermost first]], ...]}
 *
 * Frame names are interned (a stack shares most of its frames with
 * others).  Nothing the target supplies can end the script element: every
 * '<', '>' and '&' of the JSON text becomes a \u escape (outside strings
 * JSON has none of them), and so does DEL, a control character to HTML. */
#include "target/report/report_html.h"

#include "shared/intern.h"
#include "shared/text_escape.h"
#include "shared/xalloc.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void report_html_frame_label(char *buf, size_t len, const struct report_frame *f)
{
    if (f->function && *f->function) {
        text_escape_buf(buf, len, f->function);
    } else if (f->module) {
        const char *slash = strrchr(f->module, '/');
        char off[24];
        snprintf(off, sizeof(off), "+0x%" PRIx64, f->offset);
        text_escape_buf(buf, len > sizeof(off) ? len - sizeof(off) : 1,
                        slash && slash[1] ? slash + 1 : f->module);
        size_t n = strlen(buf);
        snprintf(buf + n, len - n, "%s", off);
    } else {
        snprintf(buf, len, "0x%" PRIx64, f->pc);
    }
}

/* One stack: its figures and its frames' name indexes, outermost first. */
static void put_stack(FILE *out, const struct report_source *src, struct interner *names,
                      uint32_t id, const struct stack_totals *now, const struct stack_totals *peak,
                      uint32_t **idx, size_t *cap, bool first)
{
    struct report_frames it;
    struct report_frame f;
    char label[REPORT_HTML_LABEL_MAX];
    size_t n = 0;
    report_frames_begin(&it, src, id);
    while (report_frames_next(&it, &f)) {
        if (n == *cap) {
            *cap = *cap ? *cap * 2 : 64;
            *idx = xreallocarray(*idx, *cap, sizeof(**idx));
        }
        report_html_frame_label(label, sizeof(label), &f);
        bool added;
        (*idx)[n++] = interner_add_string(names, label, &added);
    }
    fprintf(out, "%s\n[%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",[",
            first ? "" : ",", now->bytes_in_use, now->blocks_in_use, now->allocs,
            now->bytes_allocated, peak->bytes_in_use, now->temporary);
    for (size_t i = n; i-- > 0;)
        fprintf(out, "%" PRIu32 "%s", (*idx)[i], i ? "," : "");
    fputs("]]", out);
}

static void put_data(FILE *out, const struct report_source *src, double now)
{
    struct heap_totals t;
    struct heap_peak p;
    heap_get_totals(src->books, &t);
    heap_get_peak(src->books, &p);
    fprintf(out,
            "{\"pid\":%d,\"now\":%.6f,\n\"heap\":{\"in_use_bytes\":%" PRIu64
            ",\"in_use_blocks\":%" PRIu64 ",\"allocs\":%" PRIu64 ",\"frees\":%" PRIu64
            ",\"bytes_allocated\":%" PRIu64 ",\"temporary\":%" PRIu64 "},\n"
            "\"peak\":{\"bytes\":%" PRIu64 ",\"blocks\":%" PRIu64 ",\"seconds\":%.6f},\n",
            src->pid, now, t.in_use_bytes, t.in_use_blocks, t.allocs,
            t.frees, t.bytes_allocated, t.temporary, p.bytes, p.blocks, p.seconds);

    size_t ns = 0;
    const struct timeline_sample *s = src->timeline ? timeline_samples(src->timeline, &ns) : NULL;
    fprintf(out, "\"interval\":%.6f,\"timeline\":[", src->timeline ? timeline_interval(src->timeline) : 0.0);
    for (size_t i = 0; i < ns; i++)
        fprintf(out, "%s[%.6f,%" PRIu64 ",%" PRIu64 "]", i ? "," : "", s[i].seconds, s[i].bytes,
                s[i].blocks);
    /* where the RSS went over time: [seconds, rss, the seven parts] */
    fputs("],\n\"rss\":[", out);
    for (size_t i = 0; i < src->nrss_points; i++) {
        const struct report_rss_point *r = &src->rss_points[i];
        fprintf(out, "%s[%.6f,%" PRIu64, i ? "," : "", r->seconds, r->rss);
        for (int k = 0; k < RSS_PARTS; k++)
            fprintf(out, ",%" PRIu64, r->part[k]);
        fputc(']', out);
    }
    fputs("],\n\"stacks\":[", out);

    /* Every stack that allocated since the last clear, or held blocks at
     * the peak: the flame graph's measures include freed memory. */
    struct interner names = {0};
    uint32_t *idx = NULL;
    size_t cap = 0;
    bool first = true;
    uint32_t limit = heap_stack_id_limit(src->books);
    for (uint32_t id = 0; id < limit; id++) {
        struct stack_totals cur, peak;
        heap_get_stack_totals(src->books, id, &cur);
        heap_get_stack_peak(src->books, id, &peak);
        if (!cur.allocs && !cur.blocks_in_use && !peak.blocks_in_use)
            continue;
        put_stack(out, src, &names, id, &cur, &peak, &idx, &cap, first);
        first = false;
    }
    free(idx);
    fputs("],\n\"names\":[", out);
    for (uint32_t i = 0; i < interner_count(&names); i++) {
        fputs(i ? (i % 8 ? "," : ",\n") : "", out);
        report_json_string(out, interner_key(&names, i, NULL));
    }
    fputs("]}", out);
    interner_free(&names);
}

void report_html_write_data(FILE *out, const struct report_source *src, double now)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) {
        fputs("{}", out);
        return;
    }
    put_data(mem, src, now);
    if (fclose(mem) != 0) {
        free(buf);
        fputs("{}", out);
        return;
    }
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        if (c == '<')
            fputs("\\u003c", out);
        else if (c == '>')
            fputs("\\u003e", out);
        else if (c == '&')
            fputs("\\u0026", out);
        else if (c == 0x7f)
            fputs("\\u007f", out); /* a control character of HTML */
        else
            fputc(c, out);
    }
    free(buf);
}
