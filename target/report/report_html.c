/* The HTML report (--format html, the console's `report -f html > FILE`):
 * one self-contained page that any browser shows, with no viewer installed
 * and no network: the memory-over-time chart, a flame graph with a switch
 * of measure (bytes in use, allocations, bytes allocated, at the peak...),
 * the peak, the top stacks and, when a scan ran, the leaks.
 *
 * The figures and the stacks are written as HTML here, so that the page
 * reads even with scripts off; the chart and the flame graph are drawn by
 * the page's own script from its JSON data (report_html_data.c).  Style
 * and script are target/report/report_html.{css,js}, built in as strings
 * (the Makefile writes report_html_assets.h).  A Content-Security-Policy
 * forbids every load (the page can fetch nothing) and lets run only the
 * page's own style and script, named by their SHA-256: no markup a name
 * might smuggle in past the escaping could run a script.
 *
 * Every name from the target (functions, files, modules, the program) is
 * HTML-escaped: C++ names are full of '<', '>' and '&'. */
#include "target/report/report_html.h"

#include "shared/text_escape.h"
#include "shared/version.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The build writes report_html_assets.h (REPORT_HTML_CSS, REPORT_HTML_JS)
 * from report_html.css and report_html.js, and the base64 SHA-256 of each
 * as the page holds it (a newline, then the file) for the CSP:
 * REPORT_HTML_CSS_SHA256, REPORT_HTML_JS_SHA256.  Tools that read the sources
 * alone (cppcheck, clang-tidy) get empty ones. */
#if __has_include("report_html_assets.h")
#include "report_html_assets.h"
#else
#define REPORT_HTML_CSS ""
#define REPORT_HTML_JS ""
#define REPORT_HTML_CSS_SHA256 ""
#define REPORT_HTML_JS_SHA256 ""
#endif

/* Rows of the stack tables when --top does not say. */
#define HTML_TOP_DEFAULT 20

void report_html_text(FILE *out, const char *str)
{
    /* First the one escape of text for people (control characters and
     * ill-formed UTF-8 as \xHH), then HTML's. */
    char *owned = text_escape_clean(str) ? NULL : text_escape_dup(str);
    for (const char *s = owned ? owned : str; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default: fputc(*s, out);
        }
    }
    free(owned);
}

/* "996.1 KiB": bytes for people (the exact figure is always beside it). */
static const char *human(char *buf, size_t len, uint64_t n)
{
    static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    if (n < 1024) {
        snprintf(buf, len, "%" PRIu64 " B", n);
        return buf;
    }
    double v = (double)n / 1024;
    unsigned u = 0;
    while (v >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, "%.1f %s", v, unit[u]);
    return buf;
}

static void card(FILE *out, const char *id, const char *title, uint64_t value, bool bytes,
                 const char *detail_fmt, ...) __attribute__((format(printf, 6, 7)));

static void card(FILE *out, const char *id, const char *title, uint64_t value, bool bytes,
                 const char *detail_fmt, ...)
{
    char h[32];
    fprintf(out, "<div class=\"card\" id=\"%s\"><div class=\"k\">%s</div><div class=\"v\" data-value=\"%" PRIu64 "\">",
            id, title, value);
    if (bytes)
        fprintf(out, "%s</div><div class=\"d\">%" PRIu64 " bytes", human(h, sizeof(h), value), value);
    else
        fprintf(out, "%" PRIu64 "</div><div class=\"d\">", value);
    if (detail_fmt) {
        va_list ap;
        va_start(ap, detail_fmt);
        fputs(bytes ? " · " : "", out);
        /* va_start above: the analyzer's valist check misses it here */
        vfprintf(out, detail_fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized)
        va_end(ap);
    }
    fputs("</div></div>\n", out);
}

static void put_head(FILE *out, const struct report_source *src)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "style-src 'sha256-" REPORT_HTML_CSS_SHA256 "'; "
          "script-src 'sha256-" REPORT_HTML_JS_SHA256 "'; img-src data:\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"generator\" content=\"memtrace ",
          out);
    report_html_text(out, version_release());
    fputs("\">\n<title>memtrace: ", out);
    report_html_text(out, src->program && *src->program ? src->program : "?");
    fprintf(out, " (pid %d)</title>\n<style>\n%s</style>\n</head>\n<body>\n", src->pid,
            REPORT_HTML_CSS);
}

static void put_summary(FILE *out, const struct report_source *src, double now)
{
    struct heap_totals t;
    struct heap_peak p;
    heap_get_totals(src->books, &t);
    heap_get_peak(src->books, &p);
    fputs("<header><h1>memtrace <span class=\"prog\">", out);
    report_html_text(out, src->program && *src->program ? src->program : "?");
    fprintf(out, "</span></h1><p>pid %d", src->pid);
    if (src->engine) {
        fputs(" · engine ", out);
        report_html_text(out, src->engine);
    }
    fprintf(out, " · %.3f s of trace · memtrace ", now);
    report_html_text(out, version_release());
    uint64_t sample = heap_sample_bytes(src->books);
    if (sample) /* the cards are exact, the stacks (flame graph, tables) estimates */
        fprintf(out, "</p><p class=\"sampled\" id=\"sampled\">sampled: the stacks of allocations "
                     "sampled by bytes, one per %" PRIu64 " bytes on average (--sample %" PRIu64
                     "); the figures per stack are estimates, the totals exact",
                sample, sample);
    fputs("</p></header>\n<section class=\"cards\">\n", out);
    card(out, "card-inuse", "In use", t.in_use_bytes, true, "%" PRIu64 " blocks", t.in_use_blocks);
    card(out, "card-peak", "Peak", p.bytes, true, "%" PRIu64 " blocks at %.3f s", p.blocks, p.seconds);
    card(out, "card-allocs", "Allocations", t.allocs, false, "%" PRIu64 " frees", t.frees);
    card(out, "card-allocated", "Allocated in all", t.bytes_allocated, true, NULL);
    card(out, "card-temporary", "Temporary", t.temporary, false, "of %" PRIu64 " allocations",
         t.allocs);
    if (t.maps_recorded || t.mapped_regions)
        card(out, "card-mapped", "Mapped", t.mapped_bytes, true, "%" PRIu64 " regions",
             t.mapped_regions);
    if (src->leaks)
        card(out, "card-leaked", "Definitely lost", src->leaks->bytes[REPORT_LEAK_DEFINITE], true,
             "%" PRIu64 " blocks", src->leaks->blocks[REPORT_LEAK_DEFINITE]);
    if (src->errors && src->errors->total)
        card(out, "card-errors", "Misuse errors", src->errors->total, false,
             "invalid or mismatched frees");
    fputs("</section>\n", out);
}

static void put_drawings(FILE *out)
{
    fputs("<section id=\"over-time\"><h2>Memory over time</h2>\n"
          "<svg id=\"mt-chart\" viewBox=\"0 0 1200 300\" role=\"img\" aria-label=\"heap in use over time\"></svg>\n"
          "<p class=\"note\" id=\"mt-chart-note\">The chart needs scripts.</p></section>\n"
          "<section id=\"flame\"><h2>Flame graph</h2>\n"
          "<div class=\"bar\"><div class=\"modes\" id=\"mt-flame-modes\"></div>"
          "<input id=\"mt-flame-find\" type=\"search\" placeholder=\"highlight frames named…\" "
          "aria-label=\"highlight frames whose name contains this text\">"
          "<span class=\"note\" id=\"mt-flame-found\"></span></div>\n"
          "<svg id=\"mt-flame\" viewBox=\"0 0 1200 40\" role=\"img\" aria-label=\"flame graph\"></svg>\n"
          "<p class=\"note\" id=\"mt-flame-status\">The flame graph needs scripts.</p></section>\n",
          out);
}

static void put_frame_li(FILE *out, const struct report_frame *f)
{
    char label[REPORT_HTML_LABEL_MAX];
    report_html_frame_label(label, sizeof(label), f);
    fputs("<li><span class=\"fn\">", out);
    report_html_text(out, label);
    fputs("</span>", out);
    if (f->file) {
        fputs(" <span class=\"src\">", out);
        report_html_text(out, f->file);
        if (f->line)
            fprintf(out, ":%u", f->line);
        fputs("</span>", out);
    }
    if (f->module && f->function) {
        fputs(" <span class=\"mod\">", out);
        const char *slash = strrchr(f->module, '/');
        report_html_text(out, slash && slash[1] ? slash + 1 : f->module);
        fprintf(out, "+0x%" PRIx64 "</span>", f->offset);
    }
    if (f->inlined)
        fputs(" <span class=\"tag\">inlined</span>", out);
    if (f->tail_call)
        fputs(" <span class=\"tag\">tail call</span>", out);
    fputs("</li>", out);
}

/* A stack in a table cell: the first frames in a line, all of them when
 * opened. */
static void put_stack_cell(FILE *out, const struct report_source *src, uint32_t stack_id)
{
    struct report_frames it;
    struct report_frame f;
    char label[REPORT_HTML_LABEL_MAX];
    char *list = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&list, &len);
    fputs("<td class=\"stack\"><details><summary>", out);
    report_frames_begin(&it, src, stack_id);
    unsigned i = 0;
    while (report_frames_next(&it, &f)) {
        if (i < 3) {
            report_html_frame_label(label, sizeof(label), &f);
            fputs(i ? " ← " : "", out);
            report_html_text(out, label);
        } else if (i == 3) {
            fputs(" ← …", out);
        }
        if (mem)
            put_frame_li(mem, &f);
        i++;
    }
    if (!i)
        fputs("(no frames)", out);
    if (mem)
        fclose(mem);
    fprintf(out, "</summary><ol start=\"0\">%s</ol></details></td>", list ? list : "");
    free(list);
}

static void put_top(FILE *out, const struct report_source *src, const struct report_stack *st,
                    size_t n, size_t shown)
{
    char h[32];
    fputs("<section id=\"top\"><h2>Top stacks by bytes in use</h2>\n", out);
    if (!n) {
        fputs("<p class=\"note\">No block is in use.</p></section>\n", out);
        return;
    }
    fputs("<table class=\"stacks\"><thead><tr><th>bytes in use</th><th>blocks</th><th>allocs</th>"
          "<th>temporary</th><th>stack (innermost first)</th></tr></thead><tbody>\n",
          out);
    for (size_t k = 0; k < n && k < shown; k++) {
        fprintf(out, "<tr><td class=\"num\" data-value=\"%" PRIu64 "\">%s</td><td class=\"num\">%" PRIu64
                     "</td><td class=\"num\">%" PRIu64 "</td><td class=\"num\">%" PRIu64 "</td>",
                st[k].t.bytes_in_use, human(h, sizeof(h), st[k].t.bytes_in_use),
                st[k].t.blocks_in_use, st[k].t.allocs, st[k].t.temporary);
        put_stack_cell(out, src, st[k].id);
        fputs("</tr>\n", out);
    }
    fputs("</tbody></table>\n", out);
    if (n > shown)
        fprintf(out, "<p class=\"note\">%zu more stacks are in the flame graph (the console's report -n N lists more).</p>\n",
                n - shown);
    fputs("</section>\n", out);
}

static void put_peak(FILE *out, const struct report_source *src, size_t shown)
{
    struct heap_peak p;
    char h[32];
    heap_get_peak(src->books, &p);
    fprintf(out, "<section id=\"peak\"><h2>The peak</h2>\n<p id=\"mt-peak\" data-bytes=\"%" PRIu64
                 "\">%" PRIu64 " bytes (%s) in %" PRIu64 " blocks at %.3f s</p>\n",
            p.bytes, p.bytes, human(h, sizeof(h), p.bytes), p.blocks, p.seconds);
    size_t n;
    struct report_stack *st = report_collect_peak(src, shown, &n);
    if (n) {
        fputs("<table class=\"stacks\"><thead><tr><th>bytes at the peak</th><th>blocks</th>"
              "<th>stack (innermost first)</th></tr></thead><tbody>\n",
              out);
        for (size_t k = 0; k < n; k++) {
            fprintf(out, "<tr><td class=\"num\" data-value=\"%" PRIu64 "\">%s</td><td class=\"num\">%" PRIu64 "</td>",
                    st[k].t.bytes_in_use, human(h, sizeof(h), st[k].t.bytes_in_use),
                    st[k].t.blocks_in_use);
            put_stack_cell(out, src, st[k].id);
            fputs("</tr>\n", out);
        }
        fputs("</tbody></table>\n", out);
    }
    free(st);
    fputs("</section>\n", out);
}

static void put_leaks(FILE *out, const struct report_source *src, size_t shown)
{
    static const char *const kind[REPORT_LEAK_KINDS] = {"definitely lost", "indirectly lost",
                                                        "possibly lost", "still reachable"};
    const struct report_leaks *l = src->leaks;
    char h[32];
    fprintf(out, "<section id=\"leaks\"><h2>Leaks</h2>\n<p class=\"note\">Leak scan: %" PRIu64
                 " bytes scanned, %" PRIu64 " blocks checked, threads: %u, in %.3f ms.</p>\n"
                 "<table class=\"summary\" id=\"mt-leak-summary\"><tbody>\n",
            l->bytes_scanned, l->blocks_checked, l->threads, l->seconds * 1e3);
    for (unsigned k = 0; k < REPORT_LEAK_KINDS; k++)
        fprintf(out, "<tr><th>%s</th><td class=\"num\" data-bytes=\"%" PRIu64 "\">%" PRIu64
                     " bytes</td><td class=\"num\">%" PRIu64 " blocks</td></tr>\n",
                kind[k], l->bytes[k], l->bytes[k], l->blocks[k]);
    fprintf(out, "<tr><th>suppressed</th><td class=\"num\">%" PRIu64 " bytes</td><td class=\"num\">%" PRIu64
                 " blocks</td></tr>\n</tbody></table>\n",
            l->suppressed_bytes, l->suppressed_blocks);
    size_t rows = 0;
    for (size_t g = 0; g < l->ngroups && rows < shown; g++) {
        const struct report_leak_group *grp = &l->groups[g];
        if (grp->suppressed || grp->kind >= REPORT_LEAK_REACHABLE)
            continue;
        if (!rows++)
            fputs("<table class=\"stacks\"><thead><tr><th>lost</th><th>blocks</th><th>kind</th>"
                  "<th>allocated at (innermost first)</th></tr></thead><tbody>\n",
                  out);
        fprintf(out, "<tr><td class=\"num\">%s</td><td class=\"num\">%" PRIu64 "</td><td>%s</td>",
                human(h, sizeof(h), grp->bytes), grp->blocks, kind[grp->kind]);
        put_stack_cell(out, src, grp->stack_id);
        fputs("</tr>\n", out);
    }
    if (rows)
        fputs("</tbody></table>\n", out);
    fputs("</section>\n", out);
}

void report_write_html(FILE *out, const struct report_source *src, const struct report_stack *st,
                       size_t n, size_t top)
{
    /* report_collect cut the list to --top already; with no --top the
     * tables keep to the default (the flame graph has every stack). */
    size_t shown = top ? top : HTML_TOP_DEFAULT;
    /* Naming the stacks takes time: the page is of this moment, and never
     * before its last sample or the peak (a replay's books are new). */
    double now = heap_seconds(src->books);
    struct heap_peak p;
    heap_get_peak(src->books, &p);
    if (p.bytes && p.seconds > now)
        now = p.seconds;
    size_t ns = 0;
    const struct timeline_sample *s = src->timeline ? timeline_samples(src->timeline, &ns) : NULL;
    if (ns && s[ns - 1].seconds > now)
        now = s[ns - 1].seconds;
    put_head(out, src);
    put_summary(out, src, now);
    put_drawings(out);
    put_top(out, src, st, n, shown);
    put_peak(out, src, shown);
    if (src->leaks)
        put_leaks(out, src, shown);
    if (src->family && src->family->write_children)
        fputs("<p class=\"note\">The processes this one forked are not in this page: "
              "--format json or text reports them.</p>\n",
              out);
    fputs("<footer>Made by memtrace ", out);
    report_html_text(out, version_release());
    fputs(". Everything is in this file; it loads nothing.</footer>\n"
          "<script id=\"mt-data\" type=\"application/json\">",
          out);
    report_html_write_data(out, src, now);
    fprintf(out, "</script>\n<script>\n%s</script>\n</body>\n</html>\n", REPORT_HTML_JS);
}
