/* The freed-block history (--check), the misuse log, and the copies a
 * forked child's books start from.  Oracles: the construction itself (a
 * plain list of what was pushed, searched the obvious way) for the history;
 * for the copies, every figure and block of the original. */
#include "target/heap/freed.h"
#include "target/heap/heap.h"
#include "target/heap/misuse.h"
#include "target/heap/stacks.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "selftest/unit/test.h"

static uint64_t rng = 0x1234567887654321ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The newest pushed block containing addr, by brute force over the last
 * `cap` pushes. */
static const struct freed_block *naive_find(const struct freed_block *all, size_t n, size_t cap,
                                            uint64_t addr)
{
    for (size_t k = n; k > 0 && n - k < cap; k--) {
        const struct heap_block *b = &all[k - 1].block;
        if (addr >= b->addr && (b->size ? addr - b->addr < b->size : addr == b->addr))
            return &all[k - 1];
    }
    return NULL;
}

static void test_history(void)
{
    enum { CAP = 100, PUSHES = 1000 };
    struct freed_history *h = freed_history_new(CAP);
    struct freed_block *all = calloc(PUSHES, sizeof(*all));
    for (size_t i = 0; i < PUSHES; i++) {
        struct heap_block b = {.addr = 0x10000 + (rnd() % 4096) * 16, .size = rnd() % 64,
                               .stack_id = (uint32_t)i + 1, .kind = ALLOC_MALLOC};
        all[i] = (struct freed_block){b, (uint32_t)(i + 5000)};
        freed_history_push(h, &b, (uint32_t)(i + 5000));
        if (i % 50 == 49) {
            for (int q = 0; q < 200; q++) {
                uint64_t addr = 0x10000 + rnd() % (4096 * 16 + 64);
                struct freed_block got;
                bool found = freed_history_find(h, addr, &got);
                const struct freed_block *want = naive_find(all, i + 1, CAP, addr);
                CHECK(found == (want != NULL), "push %zu addr %" PRIx64 ": found %d", i, addr, found);
                if (found && want)
                    CHECK(got.free_stack == want->free_stack && got.block.stack_id == want->block.stack_id,
                          "push %zu addr %" PRIx64 ": got the release of stack %u, want %u", i, addr,
                          got.free_stack, want->free_stack);
            }
        }
    }
    CHECK(freed_history_count(h) == CAP, "count %zu", freed_history_count(h));
    struct freed_history *c = freed_history_clone(h);
    for (int q = 0; q < 500; q++) {
        uint64_t addr = 0x10000 + rnd() % (4096 * 16);
        struct freed_block a, b;
        bool fa = freed_history_find(h, addr, &a), fb = freed_history_find(c, addr, &b);
        CHECK(fa == fb && (!fa || a.free_stack == b.free_stack), "clone differs at %" PRIx64, addr);
    }
    freed_history_free(c);
    freed_history_free(h);
    free(all);
}

static void test_misuse_log(void)
{
    struct misuse_log log = {0};
    for (unsigned i = 0; i < MISUSE_LOG_MAX + 10; i++) {
        struct misuse_error e = {.kind = MISUSE_MISMATCHED, .addr = i};
        const struct misuse_error *kept = misuse_log_add(&log, &e);
        CHECK((kept != NULL) == (i < MISUSE_LOG_MAX), "error %u kept: %d", i, kept != NULL);
        if (kept)
            CHECK(kept->addr == i, "error %u stored wrong", i);
    }
    CHECK(log.count == MISUSE_LOG_MAX && log.total == MISUSE_LOG_MAX + 10, "count %zu total %" PRIu64,
          log.count, log.total);
    struct misuse_log copy;
    misuse_log_copy(&copy, &log);
    CHECK(copy.count == log.count && copy.total == log.total &&
          memcmp(copy.errors, log.errors, log.count * sizeof(*log.errors)) == 0, "copy differs");
    misuse_log_reset(&copy);
    misuse_log_reset(&log);
    CHECK(strcmp(misuse_title(MISUSE_INVALID_FREE), "Invalid free() / delete / delete[] / realloc()") == 0,
          "title");
    CHECK(strcmp(misuse_title(MISUSE_MISMATCHED), "Mismatched free() / delete / delete []") == 0, "title");
}

static void test_clones(void)
{
    struct heap_books *b = heap_books_new();
    struct stack_table *st = stack_table_new();
    uint64_t addrs[3000];
    for (int i = 0; i < 3000; i++) {
        uint64_t pcs[4] = {0x400000 + (uint64_t)(i % 37), 0x500000 + (uint64_t)(i % 11), 7, (uint64_t)i % 3};
        uint32_t id = stack_table_intern(st, pcs, 1 + (unsigned)(i % 4));
        addrs[i] = 0x7000000 + (uint64_t)i * 64;
        heap_record_alloc(b, addrs[i], 1 + (uint64_t)(i % 100), id, (enum alloc_kind)(i % 3));
    }
    for (int i = 0; i < 3000; i += 3)
        heap_record_free(b, addrs[i], (enum alloc_kind)(i % 3), NULL);
    heap_record_map(b, 0x10000000, 8192, 1);
    struct heap_books *c = heap_books_clone(b);
    struct stack_table *sc = stack_table_clone(st);
    struct heap_totals tb, tc;
    heap_get_totals(b, &tb);
    heap_get_totals(c, &tc);
    CHECK(memcmp(&tb, &tc, sizeof(tb)) == 0, "clone totals differ");
    CHECK(stack_table_count(st) == stack_table_count(sc), "stack count %zu vs %zu", stack_table_count(st),
          stack_table_count(sc));
    for (uint32_t id = 1; id <= stack_table_count(st); id++) {
        unsigned n1, n2;
        const uint64_t *p1 = stack_table_pcs(st, id, &n1), *p2 = stack_table_pcs(sc, id, &n2);
        CHECK(n1 == n2 && memcmp(p1, p2, n1 * sizeof(*p1)) == 0, "stack %u differs", id);
    }
    for (int i = 0; i < 3000; i++) {
        struct heap_block x, y;
        bool fx = heap_lookup(b, addrs[i], &x), fy = heap_lookup(c, addrs[i], &y);
        CHECK(fx == fy && (!fx || memcmp(&x, &y, sizeof(x)) == 0), "block %d differs", i);
    }
    /* Independent afterwards: a free in the copy leaves the original alone. */
    CHECK(heap_record_free(c, addrs[1], ALLOC_NEW, NULL) == HEAP_FREE_OK, "free in the copy");
    CHECK(heap_lookup(b, addrs[1], NULL) && !heap_lookup(c, addrs[1], NULL), "copy not independent");
    CHECK(heap_knows(b, addrs[1]) && !heap_knows(b, addrs[0]), "heap_knows");
    heap_clear(b);
    CHECK(!heap_lookup(b, addrs[2], NULL) && heap_knows(b, addrs[2]), "heap_knows after clear");
    heap_books_free(b);
    heap_books_free(c);
    stack_table_free(st);
    stack_table_free(sc);
}

int main(void)
{
    test_history();
    test_misuse_log();
    test_clones();
    return test_end("test_freed");
}
