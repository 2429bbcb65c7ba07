#include "target/report/report_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shared/text_escape.h"
#include "shared/xalloc.h"

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
            if (len == 2 && c == 0xc2 && s[1] < 0xa0) {
                /* a C1 control (U+0080..U+009F): as \u, like C0 ones,
                 * so that JSON on a terminal cannot drive it */
                fprintf(out, "\\u%04x", s[1]);
                s += len;
            } else if (len) {
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
            if (c < 0x20 || c == 0x7f)
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
    fprintf(out, ", \"line\": %u, \"inlined\": %s, \"tail_call\": %s}", f->line, f->inlined ? "true" : "false",
            f->tail_call ? "true" : "false");
}

/* Per stack id: unsuppressed lost bytes and blocks, and its most severe
 * kind (kind index + 1; 0: no block of it was scanned). */
struct stack_leak {
    uint64_t bytes, blocks;
    unsigned worst;
    bool suppressed;
};

static struct stack_leak *index_leaks(const struct report_source *src)
{
    uint32_t limit = heap_stack_id_limit(src->books);
    const struct report_leaks *l = src->leaks;
    for (size_t g = 0; g < l->ngroups; g++)
        if (l->groups[g].stack_id >= limit)
            limit = l->groups[g].stack_id + 1;
    struct stack_leak *idx = xcalloc(limit ? limit : 1, sizeof(*idx));
    for (size_t g = 0; g < l->ngroups; g++) {
        const struct report_leak_group *grp = &l->groups[g];
        struct stack_leak *sl = &idx[grp->stack_id];
        if (!sl->worst || grp->kind + 1 < sl->worst) {
            sl->worst = grp->kind + 1;
            sl->suppressed = grp->suppressed;
        }
        if (grp->kind < REPORT_LEAK_KINDS - 1 && !grp->suppressed) {
            sl->bytes += grp->bytes;
            sl->blocks += grp->blocks;
        }
    }
    return idx;
}

static void put_leaks(FILE *out, const struct report_leaks *l)
{
    fprintf(out,
            " \"leaks\": {\"definitely_lost_bytes\": %" PRIu64 ", \"definitely_lost_blocks\": %" PRIu64
            ", \"indirectly_lost_bytes\": %" PRIu64 ", \"indirectly_lost_blocks\": %" PRIu64
            ", \"possibly_lost_bytes\": %" PRIu64 ", \"possibly_lost_blocks\": %" PRIu64
            ", \"reachable_bytes\": %" PRIu64 ", \"reachable_blocks\": %" PRIu64
            ", \"suppressed_bytes\": %" PRIu64 ", \"suppressed_blocks\": %" PRIu64
            ", \"bytes_scanned\": %" PRIu64 ", \"blocks_checked\": %" PRIu64
            ", \"threads\": %u, \"seconds\": %.6f},\n",
            l->bytes[REPORT_LEAK_DEFINITE], l->blocks[REPORT_LEAK_DEFINITE],
            l->bytes[REPORT_LEAK_INDIRECT], l->blocks[REPORT_LEAK_INDIRECT],
            l->bytes[REPORT_LEAK_POSSIBLE], l->blocks[REPORT_LEAK_POSSIBLE],
            l->bytes[REPORT_LEAK_REACHABLE], l->blocks[REPORT_LEAK_REACHABLE], l->suppressed_bytes, l->suppressed_blocks, l->bytes_scanned,
            l->blocks_checked, l->threads, l->seconds);
}

void report_json_frames(FILE *out, const struct report_source *src, uint32_t stack_id,
                        const char *indent)
{
    struct report_frames it;
    struct report_frame f;
    report_frames_begin(&it, src, stack_id);
    for (unsigned i = 0; report_frames_next(&it, &f); i++) {
        if (i)
            fputc(',', out);
        fputs(indent, out);
        report_json_frame(out, &f);
    }
}

void report_write_json(FILE *out, const struct report_source *src,
                       const struct report_stack *st, size_t n)
{
    static const char *const kind_names[REPORT_LEAK_KINDS] = {"definite", "indirect", "possible",
                                                              "reachable"};
    struct stack_leak *leak_idx = src->leaks ? index_leaks(src) : NULL;
    struct heap_totals t;
    heap_get_totals(src->books, &t);
    fprintf(out, "{\"memtrace\": 1, \"pid\": %d, \"program\": ", src->pid);
    report_json_string(out, src->program ? src->program : "");
    if (src->family && src->family->ppid > 0)
        fprintf(out, ", \"ppid\": %d", src->family->ppid);
    if (src->engine) {
        fputs(", \"engine\": ", out);
        report_json_string(out, src->engine);
    }
    /* --sample's mean (0: exact): the figures of each stack are then estimates */
    fprintf(out, ", \"sample_bytes\": %" PRIu64, heap_sample_bytes(src->books));
    if (src->allocators) {
        /* the modules whose functions were intercepted, most calls first */
        size_t *order = NULL;
        size_t na = allocators_ordered(src->allocators, &order);
        fputs(",\n \"allocators\": [", out);
        for (size_t k = 0; k < na; k++) {
            if (k)
                fputs(", ", out);
            report_json_string(out, src->allocators->v[order[k]].path);
        }
        fputc(']', out);
        free(order);
    }
    fprintf(out,
            ",\n \"heap\": {\"in_use_bytes\": %" PRIu64 ", \"in_use_blocks\": %" PRIu64
            ", \"allocs\": %" PRIu64 ", \"frees\": %" PRIu64 ", \"bytes_allocated\": %" PRIu64
            ", \"temporary\": %" PRIu64 "},\n"
            " \"mapped\": {\"bytes\": %" PRIu64 ", \"regions\": %" PRIu64 "},\n",
            t.in_use_bytes, t.in_use_blocks, t.allocs, t.frees, t.bytes_allocated, t.temporary,
            t.mapped_bytes, t.mapped_regions);
    report_write_memory_json(out, src);
    if (src->leaks)
        put_leaks(out, src->leaks);
    report_write_peak_json(out, src);
    fputs(" \"stacks\": [", out);
    for (size_t k = 0; k < n; k++) {
        fprintf(out, "%s\n  {\"bytes\": %" PRIu64 ", \"blocks\": %" PRIu64 ", \"allocs\": %" PRIu64,
                k ? "," : "", st[k].t.bytes_in_use, st[k].t.blocks_in_use, st[k].t.allocs);
        fprintf(out, ", \"temporary\": %" PRIu64, st[k].t.temporary);
        if (leak_idx) {
            const struct stack_leak *sl = &leak_idx[st[k].id];
            fprintf(out, ", \"leaked_bytes\": %" PRIu64 ", \"leaked_blocks\": %" PRIu64 ", \"leak_kind\": ",
                    sl->bytes, sl->blocks);
            report_json_string(out, !sl->worst ? NULL : sl->suppressed ? "suppressed"
                                                                         : kind_names[sl->worst - 1]);
        }
        fputs(", \"frames\": [", out);
        report_json_frames(out, src, st[k].id, "\n    ");
        fputs("]}", out);
    }
    fputs(n ? "\n ],\n" : "],\n", out);
    free(leak_idx);
    report_write_misuse_json(out, src);
    if (src->family && src->family->write_children)
        src->family->write_children(out, src->family->ctx);
    fputs("}\n", out);
}
