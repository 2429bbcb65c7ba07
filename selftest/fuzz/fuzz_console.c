/* libFuzzer harness for the console's line reader, tokenizer and commands.
 * Build from the repo root with clang -fsanitize=fuzzer,address,undefined
 * -std=gnu11 -I. -D_GNU_SOURCE, this file, every .c of target/console,
 * target/report and target/heap, and shared/xalloc.c; run it on
 * selftest/fuzz/seeds/console.
 * The first byte chooses how the rest is split into console_feed calls (the
 * event loop delivers whatever read() returned); "report > FILE" writes go
 * to /dev/null through the open_output hook, so no file is ever created. */
#include "target/console/console.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_ctx {
    struct heap_books *books;
    struct stack_table *stacks;
};

static struct heap_books *f_books(void *ctx) { return ((struct fuzz_ctx *)ctx)->books; }
static const struct stack_table *f_stacks(void *ctx) { return ((struct fuzz_ctx *)ctx)->stacks; }
static unsigned f_threads(void *ctx) { (void)ctx; return 1; }
static void f_monitor(void *ctx, double secs) { (void)ctx; (void)secs; }
static void f_quit(void *ctx) { (void)ctx; }
static FILE *f_open(void *ctx, const char *path)
{
    (void)ctx;
    (void)path;
    return fopen("/dev/null", "w");
}
static void f_resolve(void *ctx, uint64_t pc, unsigned i, struct report_frame *out)
{
    (void)ctx;
    static const char *const names[] = { NULL, "main", "x;y z\n", "\xff\xfe" };
    out->function = names[(pc + i) % 4];
    out->module = i % 2 ? "/bin/prog" : NULL;
    out->offset = pc & 0xffff;
    out->file = i % 3 ? "/src/p.c" : NULL;
    out->line = i;
}

static const struct console_ops ops = {
    .books = f_books, .stacks = f_stacks, .resolve = f_resolve, .thread_count = f_threads,
    .quit = f_quit, .set_monitor = f_monitor, .open_output = f_open,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink)
        sink = fopen("/dev/null", "w");
    if (size == 0)
        return 0;
    struct fuzz_ctx fx = { heap_books_new(), stack_table_new() };
    uint64_t pcs[3] = { 0x401000, 0x402000, 0x403000 };
    for (unsigned k = 0; k < 3; k++) {
        uint32_t id = stack_table_intern(fx.stacks, pcs, k + 1);
        for (uint64_t i = 0; i < 4; i++)
            heap_record_alloc(fx.books, 0x10000 * (k + 1) + i * 32, 10 + k * i, id, ALLOC_MALLOC);
    }
    struct console *c = console_new(&ops, &fx, sink);
    console_set_interactive(c, data[0] & 0x80);
    size_t chunk = (data[0] & 0x7f) + 1;
    data++;
    size--;
    for (size_t i = 0; i < size; i += chunk) {
        console_feed(c, (const char *)data + i, size - i < chunk ? size - i : chunk);
        if (chunk % 5 == 0)
            console_monitor_tick(c);
    }
    console_eof(c);
    console_free(c);
    heap_books_free(fx.books);
    stack_table_free(fx.stacks);
    return 0;
}
