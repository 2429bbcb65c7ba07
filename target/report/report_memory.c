/* The MEMORY section: where the RSS went (target/heap/rss_parts.h), in the
 * text report, status and the JSON report's "memory" object. */
#include "target/report/report_internal.h"

#include <inttypes.h>

#include "shared/text_escape.h"

#define MODULES_SHOWN 8

/* After the shared memory part, live or recorded: how much is memtrace's. */
static void put_memtrace_own(FILE *out, const struct rss_parts *m)
{
    if (m->memtrace)
        fprintf(out, ", of which %" PRIu64 " bytes memtrace's own (its agent's rings)", m->memtrace);
}

/* A replay's MEMORY: the parts as recorded, and when (record.h's 'M'). */
static void write_recorded_text(FILE *out, const struct rss_parts *m)
{
    fprintf(out, "MEMORY: RSS %" PRIu64 " bytes in %u mappings, recorded at %.3f s (/proc/PID/smaps%s)\n",
            m->rss, m->mappings, m->seconds, m->pagemap ? ", pages from pagemap" : "; pagemap unreadable");
    for (unsigned p = 0; p < RSS_PARTS; p++) {
        char label[32];
        snprintf(label, sizeof(label), "%s:", rss_part_name(p));
        fprintf(out, "    %-17s %12" PRIu64 " bytes  %s", label, m->part[p], rss_part_how(p));
        if (p == RSS_SHARED)
            put_memtrace_own(out, m);
        fputc('\n', out);
    }
}

void report_write_memory_text(FILE *out, const struct rss_parts *m)
{
    if (m->recorded) {
        write_recorded_text(out, m);
        return;
    }
    fprintf(out, "MEMORY: RSS %" PRIu64 " bytes in %u mappings (/proc/PID/smaps%s)\n", m->rss,
            m->mappings, m->pagemap ? ", pages from pagemap" : "; pagemap unreadable: every page counted resident");
    for (unsigned p = 0; p < RSS_PARTS; p++) {
        char label[32];
        snprintf(label, sizeof(label), "%s:", rss_part_name(p));
        fprintf(out, "    %-17s %12" PRIu64 " bytes  %-8s", label, m->part[p], rss_part_how(p));
        switch (p) {
        case RSS_LIVE_HEAP:
            fprintf(out, " resident, of %" PRIu64 " bytes in %" PRIu64 " live blocks", m->live_bytes,
                    m->live_blocks);
            break;
        case RSS_ALLOCATOR:
            fputs(" the allocator's mappings less live bytes: free chunks, fragmentation, overhead", out);
            break;
        case RSS_PROGRAM_MMAPS:
            fputs(" intercepted mmaps holding no live block", out);
            break;
        case RSS_THREAD_STACKS:
            fprintf(out, " [stack], and mappings of %u threads' stack pointers", m->stack_pointers);
            break;
        case RSS_MODULES:
            fprintf(out, " file-backed, %zu files", m->nmodules);
            break;
        case RSS_SHARED:
            fputs(" shared mappings", out);
            put_memtrace_own(out, m);
            break;
        case RSS_REST:
            fputs(" anonymous mappings no one intercepted", out);
            break;
        }
        fputc('\n', out);
        if (p == RSS_MODULES) {
            size_t shown = m->nmodules < MODULES_SHOWN ? m->nmodules : MODULES_SHOWN;
            uint64_t others = 0;
            for (size_t i = 0; i < m->nmodules; i++) {
                const struct rss_module *mod = &m->modules[i];
                if (i >= shown) {
                    others += mod->rss;
                    continue;
                }
                fprintf(out, "        %12" PRIu64 " bytes (clean %" PRIu64 ", dirty %" PRIu64
                        ", anonymous %" PRIu64 ") ", mod->rss, mod->clean, mod->dirty, mod->anonymous);
                text_escape_put(out, mod->path);
                fputc('\n', out);
            }
            if (m->nmodules > shown)
                fprintf(out, "        %12" PRIu64 " bytes in %zu more files\n", others,
                        m->nmodules - shown);
        }
    }
    if (m->glibc)
        fprintf(out, "    malloc_trim could give back about %" PRIu64 " bytes (computed: resident "
                "pages of the allocator's mappings no live block touches)\n", m->trimmable);
}

void report_write_memory_json(FILE *out, const struct report_source *src)
{
    const struct rss_parts *m = src->memory;
    if (!m)
        return;
    fprintf(out, " \"memory\": {\"rss\": %" PRIu64 ", \"mappings\": %u, \"pagemap\": %s, \"parts\": {",
            m->rss, m->mappings, m->pagemap ? "true" : "false");
    for (unsigned p = 0; p < RSS_PARTS; p++)
        fprintf(out, "%s\"%s\": {\"bytes\": %" PRIu64 ", \"how\": \"%s\"}", p ? ", " : "",
                rss_part_key(p), m->part[p], rss_part_how(p));
    fprintf(out, "},\n  \"live_bytes\": %" PRIu64 ", \"live_blocks\": %" PRIu64
            ", \"thread_stack_pointers\": %u, \"memtrace_bytes\": %" PRIu64
            ", \"malloc_trim_estimate\": ",
            m->live_bytes, m->live_blocks, m->stack_pointers, m->memtrace);
    if (m->recorded)
        fprintf(out, "null, \"recorded_at\": %.6f", m->seconds);
    else if (m->glibc)
        fprintf(out, "%" PRIu64, m->trimmable);
    else
        fputs("null", out);
    fputs(",\n  \"modules\": [", out);
    for (size_t i = 0; i < m->nmodules; i++) {
        const struct rss_module *mod = &m->modules[i];
        fputs(i ? ",\n   {\"path\": " : "\n   {\"path\": ", out);
        report_json_string(out, mod->path);
        fprintf(out, ", \"rss\": %" PRIu64 ", \"clean\": %" PRIu64 ", \"dirty\": %" PRIu64
                ", \"anonymous\": %" PRIu64 "}", mod->rss, mod->clean, mod->dirty, mod->anonymous);
    }
    fputs(m->nmodules ? "]},\n" : "]},\n", out);
}
