/* The exports as built for another CPU (arm, aarch64), run under qemu-user
 * by selftest/tests/arch_cross_export.sh: books filled by a fixed script
 * (the shapes the heaptrack writer makes events for: blocks in use at the
 * peak and at the end, blocks allocated after the peak, temporary ones, a
 * temporary block that reaches the peak, a clear, a missed free), names
 * from a resolver of its own, then the JSON report, heaptrack's trace and
 * the pprof profile written into DIR for the viewers' readers to check.
 *
 *   export_write DIR
 *
 * Exit 0 when all three were written. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/heap/heap.h"
#include "target/heap/stacks.h"
#include "target/report/report.h"
#include "target/report/report_file.h"

/* pc 0x1000 + 0x100 * k in "/opt/prog" (build-id 0102...), function fnK,
 * prog.c line 10 + k; pc 0x9000 is the allocator; pc 0x1500 has fn5
 * inlined into fn6. */
static void resolve(void *ctx, uint64_t pc, unsigned frame_index, struct report_frame *out)
{
    static char fn[32];
    (void)ctx;
    (void)frame_index;
    out->module = "/opt/prog";
    out->offset = pc - 0x1000;
    if (out->want_mapping) {
        out->map_start = 0x1000;
        out->map_end = 0xa000;
        out->build_id = "0102030405060708090a0b0c0d0e0f1011121314";
    }
    unsigned k = pc == 0x9000 ? 99 : (unsigned)((pc - 0x1000) / 0x100);
    if (pc == 0x1500 && out->sub == 0) {
        out->inlined = true;
        out->more = true;
    } else if (pc == 0x1500) {
        k = 6;
    }
    snprintf(fn, sizeof(fn), k == 99 ? "malloc" : "fn%u", k);
    out->function = fn;
    out->file = "prog.c";
    out->line = 10 + k;
}

static uint32_t stack(struct stack_table *st, uint64_t leaf)
{
    uint64_t pcs[] = { 0x9000, leaf, 0x1100, 0x1000 };   /* allocator, leaf, fn1, fn0 */
    return stack_table_intern(st, pcs, 4);
}

static int write_one(const char *dir, const char *name, const struct report_source *src,
                     enum report_format f)
{
    char path[4096], err[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *out = report_file_open(path, err, sizeof(err));
    if (!out) {
        fprintf(stderr, "export_write: %s\n", err);
        return 1;
    }
    struct report_options opt = { .format = f, .sort = REPORT_SORT_BYTES, .top = 0 };
    int rc = report_write(out, src, &opt);
    rc |= fclose(out);
    if (rc)
        fprintf(stderr, "export_write: writing %s failed\n", path);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fputs("usage: export_write DIR\n", stderr);
        return 2;
    }
    struct heap_books *b = heap_books_new();
    struct stack_table *st = stack_table_new();
    uint32_t s_early = stack(st, 0x1200), s_temp = stack(st, 0x1300), s_peak = stack(st, 0x1400),
             s_late = stack(st, 0x1500), s_pair = stack(st, 0x1600), s_old = stack(st, 0x1700);
    uint64_t a = 0x100000;
    heap_set_thread(b, 1);
    /* Forgotten by the clear: not in any figure. */
    heap_record_alloc(b, 0x900000, 12345, s_old, ALLOC_MALLOC);
    heap_record_alloc(b, 0x900100, 77, s_old, ALLOC_MALLOC);
    heap_record_free(b, 0x900100, ALLOC_MALLOC, NULL);
    heap_clear(b);
    for (int i = 0; i < 7; i++)
        heap_record_alloc(b, a += 0x1000, 1000 + (uint64_t)i, s_early, ALLOC_MALLOC);
    for (int i = 0; i < 40; i++) {
        heap_record_alloc(b, 0x800000, 48, s_temp, ALLOC_MALLOC);
        heap_record_free(b, 0x800000, ALLOC_MALLOC, NULL);
    }
    for (int i = 0; i < 10; i++) {
        heap_record_alloc(b, 0x810000, 200, s_pair, ALLOC_NEW);
        heap_record_alloc(b, 0x820000, 300, s_pair, ALLOC_NEW);
        heap_record_free(b, 0x810000, ALLOC_NEW, NULL);
        heap_record_free(b, 0x820000, ALLOC_NEW, NULL);
    }
    uint64_t big[20];
    for (int i = 0; i < 20; i++)
        heap_record_alloc(b, big[i] = 0x400000 + 0x10000 * (uint64_t)i, 20000 + 3 * (uint64_t)i, s_peak,
                          ALLOC_MALLOC);
    /* The peak is reached by a temporary allocation on another thread. */
    heap_set_thread(b, 2);
    heap_record_alloc(b, 0x700000, 50000, s_temp, ALLOC_MALLOC);
    heap_record_free(b, 0x700000, ALLOC_MALLOC, NULL);
    heap_set_thread(b, 1);
    for (int i = 0; i < 20; i++)
        heap_record_free(b, big[i], ALLOC_MALLOC, NULL);
    /* A missed free: an allocation on a live block replaces it. */
    heap_record_alloc(b, a, 999, s_early, ALLOC_MALLOC);
    for (int i = 0; i < 5; i++)
        heap_record_alloc(b, a += 0x1000, 7000, s_late, ALLOC_MALLOC);
    heap_record_free(b, 0x900000, ALLOC_MALLOC, NULL);   /* forgotten: quietly accepted */

    struct report_source src = {
        .books = b, .stacks = st, .resolve = resolve, .pid = 1234, .program = "/opt/prog",
    };
    int rc = write_one(argv[1], "out.json", &src, REPORT_JSON) |
             write_one(argv[1], "out.heaptrack.gz", &src, REPORT_HEAPTRACK);
#ifndef MT_NO_PPROF
    rc |= write_one(argv[1], "out.pb.gz", &src, REPORT_PPROF);
#endif
    stack_table_free(st);
    heap_books_free(b);
    return rc;
}
