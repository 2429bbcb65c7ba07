#include "target/report/report_internal.h"

#include <inttypes.h>
#include <string.h>

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF), or 0 if there is none; then *bad gets
 * the length of the maximal ill-formed subpart to replace by one U+FFFD, as
 * Unicode recommends (and Python's and browsers' decoders do). */
static size_t utf8_sequence(const unsigned char *s, size_t *bad)
{
    unsigned char c = s[0];
    unsigned char lo = 0x80, hi = 0xbf;
    size_t len;
    *bad = 1;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0;
        else if (c == 0xed)
            hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90;
        else if (c == 0xf4)
            hi = 0x8f;
    } else
        return 0;
    /* A NUL terminator fails every continuation test, so no overrun. */
    for (size_t i = 1; i < len; i++) {
        if (s[i] < lo || s[i] > hi) {
            *bad = i;
            return 0;
        }
        lo = 0x80;
        hi = 0xbf;
    }
    return len;
}

void report_json_string(FILE *out, const char *str)
{
    if (!str) {
        fputs("null", out);
        return;
    }
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', out);
    while (*s) {
        unsigned char c = *s;
        if (c >= 0x80) {
            size_t bad, len = utf8_sequence(s, &bad);
            if (len) {
                fwrite(s, 1, len, out);
                s += len;
            } else {
                fputs("\\ufffd", out);
                s += bad;
            }
            continue;
        }
        switch (c) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        case '\b': fputs("\\b", out); break;
        case '\f': fputs("\\f", out); break;
        default:
            if (c < 0x20)
                fprintf(out, "\\u%04x", c);
            else
                fputc(c, out);
        }
        s++;
    }
    fputc('"', out);
}

void report_json_frame(FILE *out, const struct report_frame *f)
{
    fprintf(out, "{\"pc\": \"0x%" PRIx64 "\", \"module\": ", f->pc);
    report_json_string(out, f->module);
    fprintf(out, ", \"offset\": \"0x%" PRIx64 "\", \"function\": ", f->offset);
    report_json_string(out, f->function);
    fputs(", \"file\": ", out);
    report_json_string(out, f->file);
    fprintf(out, ", \"line\": %u}", f->line);
}

void report_write_json(FILE *out, const struct report_source *src,
                       const struct report_stack *st, size_t n)
{
    struct heap_totals t;
    heap_get_totals(src->books, &t);
    fprintf(out, "{\"memtrace\": 1, \"pid\": %d, \"program\": ", src->pid);
    report_json_string(out, src->program ? src->program : "");
    if (src->family && src->family->ppid > 0)
        fprintf(out, ", \"ppid\": %d", src->family->ppid);
    fprintf(out,
            ",\n \"heap\": {\"in_use_bytes\": %" PRIu64 ", \"in_use_blocks\": %" PRIu64
            ", \"allocs\": %" PRIu64 ", \"frees\": %" PRIu64 ", \"bytes_allocated\": %" PRIu64 "},\n"
            " \"mapped\": {\"bytes\": %" PRIu64 ", \"regions\": %" PRIu64 "},\n"
            " \"stacks\": [",
            t.in_use_bytes, t.in_use_blocks, t.allocs, t.frees, t.bytes_allocated,
            t.mapped_bytes, t.mapped_regions);
    for (size_t k = 0; k < n; k++) {
        fprintf(out, "%s\n  {\"bytes\": %" PRIu64 ", \"blocks\": %" PRIu64 ", \"allocs\": %" PRIu64
                     ", \"frames\": [",
                k ? "," : "", st[k].t.bytes_in_use, st[k].t.blocks_in_use, st[k].t.allocs);
        unsigned depth;
        const uint64_t *pcs = stack_table_pcs(src->stacks, st[k].id, &depth);
        for (unsigned i = 0; i < depth; i++) {
            struct report_frame f;
            report_resolve(src, pcs[i], i, &f);
            fputs(i ? ",\n    " : "\n    ", out);
            report_json_frame(out, &f);
        }
        fputs("]}", out);
    }
    fputs(n ? "\n ],\n" : "],\n", out);
    report_write_misuse_json(out, src);
    if (src->family && src->family->write_children)
        src->family->write_children(out, src->family->ctx);
    fputs("}\n", out);
}
