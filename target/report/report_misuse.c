/* Misuse errors: one valgrind-style block per error on a text stream (as
 * found), and the "errors" array of the JSON report. */
#include "target/report/report_internal.h"

#include "shared/text_escape.h"

#include <inttypes.h>
#include <string.h>

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}


/* "   at 0xPC: function (file:line)" / "(in module)", as valgrind does. */
static void put_stack(FILE *out, const struct report_source *src, int pid, uint32_t id)
{
    struct report_frames it;
    struct report_frame f;
    report_frames_begin(&it, src, id);
    if (!it.depth)
        fprintf(out, "==%d==    (stack unknown)\n", pid);
    for (unsigned i = 0; report_frames_next(&it, &f); i++) {
        fprintf(out, "==%d==    %s 0x%" PRIX64 ": ", pid, i ? "by" : "at", f.pc);
        text_escape_put(out, f.function ? f.function : "???");
        if (f.function && f.file) {
            fputs(" (", out);
            text_escape_put(out, base_name(f.file));
            if (f.line)
                fprintf(out, ":%u", f.line);
            fputc(')', out);
        } else if (f.module) {
            fputs(" (in ", out);
            text_escape_put(out, f.module);
            fputc(')', out);
        }
        if (f.tail_call)
            fputs(" [tail call]", out);
        fputc('\n', out);
    }
}

void report_write_misuse(FILE *out, const struct report_source *src, const struct misuse_error *e)
{
    int pid = src->pid;
    fprintf(out, "==%d== %s\n", pid, misuse_title(e->kind));
    if (e->kind == MISUSE_OTHER_HEAP) {
        fprintf(out, "==%d==  A block of ", pid);
        text_escape_put(out, e->made_by);
        fputs(" released by ", out);
        text_escape_put(out, e->released_by);
        fputs(" (", out);
        text_escape_put(out, e->function ? e->function : "?");
        fputs(")\n", out);
    }
    put_stack(out, src, pid, e->call_stack);
    switch (e->state) {
    case MISUSE_BLOCK_LIVE:
        fprintf(out, "==%d==  Address 0x%" PRIx64 " is %" PRIu64 " bytes inside a block of size %" PRIu64
                     " alloc'd\n",
                pid, e->addr, e->addr - e->block_addr, e->block_size);
        put_stack(out, src, pid, e->alloc_stack);
        break;
    case MISUSE_BLOCK_FREED:
        fprintf(out, "==%d==  Address 0x%" PRIx64 " is %" PRIu64 " bytes inside a block of size %" PRIu64
                     " free'd\n",
                pid, e->addr, e->addr - e->block_addr, e->block_size);
        put_stack(out, src, pid, e->free_stack);
        fprintf(out, "==%d==  Block was alloc'd at\n", pid);
        put_stack(out, src, pid, e->alloc_stack);
        break;
    case MISUSE_BLOCK_UNKNOWN:
    default:
        fprintf(out, "==%d==  Address 0x%" PRIx64 " is not stack'd, malloc'd or (recently) free'd\n",
                pid, e->addr);
        break;
    }
    fprintf(out, "==%d==\n", pid);
}

static void put_json_stack(FILE *out, const struct report_source *src, uint32_t id)
{
    fputc('[', out);
    if (id)
        report_json_frames(out, src, id, "\n      ");
    fputc(']', out);
}

static const char *state_token(enum misuse_block_state s)
{
    return s == MISUSE_BLOCK_LIVE ? "live" : s == MISUSE_BLOCK_FREED ? "freed" : "unknown";
}

void report_write_misuse_json(FILE *out, const struct report_source *src)
{
    const struct misuse_log *log = src->errors;
    size_t n = log ? log->count : 0;
    fputs(" \"errors\": [", out);
    for (size_t k = 0; k < n; k++) {
        const struct misuse_error *e = &log->errors[k];
        fprintf(out, "%s\n  {\"kind\": \"%s\", \"what\": ", k ? "," : "", misuse_token(e->kind));
        report_json_string(out, misuse_title(e->kind));
        fputs(", \"function\": ", out);
        report_json_string(out, e->function);
        fprintf(out, ", \"address\": \"0x%" PRIx64 "\", \"tid\": %d", e->addr, e->tid);
        if (e->kind == MISUSE_OTHER_HEAP) {
            fputs(", \"made_by\": ", out);
            report_json_string(out, e->made_by);
            fputs(", \"released_by\": ", out);
            report_json_string(out, e->released_by);
        }
        fputs(",\n   \"stack\": ", out);
        put_json_stack(out, src, e->call_stack);
        fprintf(out, ",\n   \"block\": {\"state\": \"%s\"", state_token(e->state));
        if (e->state != MISUSE_BLOCK_UNKNOWN) {
            fprintf(out, ", \"address\": \"0x%" PRIx64 "\", \"size\": %" PRIu64 ", \"offset\": %" PRIu64
                         ",\n    \"alloc_stack\": ",
                    e->block_addr, e->block_size, e->addr - e->block_addr);
            put_json_stack(out, src, e->alloc_stack);
            if (e->state == MISUSE_BLOCK_FREED) {
                fputs(",\n    \"free_stack\": ", out);
                put_json_stack(out, src, e->free_stack);
            }
        }
        fputs("}}", out);
    }
    fputs(n ? "\n ]" : "]", out);
    if (log && log->total > n)
        fprintf(out, ",\n \"errors_not_listed\": %" PRIu64, log->total - n);
}
