/* The books against a naive model kept by this test: random alloc/free/clear
 * scripts over a small address pool (reuse, double frees, unknown pointers,
 * wrong-family frees), checked after every step for totals and per-stack
 * figures; the mmap ledger against a page map; then 1M live blocks for the
 * memory and speed budget (bytes per block must stay <= 64). */
#include "target/heap/heap.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "selftest/unit/test.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* ---- model of the books ---- */

#define POOL 300
#define NSTACK 12

struct model_block { bool live, forgotten; uint64_t size; uint32_t stack; enum alloc_kind kind; };
static struct model_block model[POOL];
static uint64_t m_allocs, m_frees, m_bytes_allocated;
static uint64_t m_stack_allocs[NSTACK], m_stack_bytes[NSTACK];

static uint64_t pool_addr(unsigned i) { return 0x5555a0000000ull + (uint64_t)i * 48; }

static void check_against_model(struct heap_books *b, int step)
{
    struct heap_totals t;
    heap_get_totals(b, &t);
    uint64_t bytes = 0, blocks = 0, sb[NSTACK] = { 0 }, sn[NSTACK] = { 0 };
    for (unsigned i = 0; i < POOL; i++)
        if (model[i].live && !model[i].forgotten) {
            bytes += model[i].size;
            blocks++;
            sb[model[i].stack] += model[i].size;
            sn[model[i].stack]++;
        }
    CHECK(t.in_use_bytes == bytes && t.in_use_blocks == blocks,
          "step %d: in use %" PRIu64 "/%" PRIu64 ", model %" PRIu64 "/%" PRIu64,
          step, t.in_use_bytes, t.in_use_blocks, bytes, blocks);
    CHECK(t.allocs == m_allocs && t.frees == m_frees && t.bytes_allocated == m_bytes_allocated,
          "step %d: allocs/frees/bytes %" PRIu64 "/%" PRIu64 "/%" PRIu64 ", model %" PRIu64
          "/%" PRIu64 "/%" PRIu64, step, t.allocs, t.frees, t.bytes_allocated,
          m_allocs, m_frees, m_bytes_allocated);
    for (uint32_t s = 0; s < NSTACK; s++) {
        struct stack_totals st;
        heap_get_stack_totals(b, s, &st);
        CHECK(st.bytes_in_use == sb[s] && st.blocks_in_use == sn[s] &&
              st.allocs == m_stack_allocs[s] && st.bytes_allocated == m_stack_bytes[s],
              "step %d: stack %u differs", step, s);
    }
    /* Export: sorted, exactly the model's current blocks. */
    size_t n;
    struct heap_block *all = heap_export_blocks(b, &n);
    CHECK(n == blocks, "step %d: export has %zu blocks, model %" PRIu64, step, n, blocks);
    for (size_t k = 0; k < n; k++) {
        CHECK(k == 0 || all[k - 1].addr < all[k].addr, "export not sorted");
        unsigned i = (unsigned)((all[k].addr - pool_addr(0)) / 48);
        CHECK(i < POOL && model[i].live && !model[i].forgotten && model[i].size == all[k].size &&
              model[i].stack == all[k].stack_id && model[i].kind == all[k].kind,
              "step %d: exported block %#" PRIx64 " not in the model", step, all[k].addr);
    }
    free(all);
}

static void scripted_books(void)
{
    struct heap_books *b = heap_books_new();
    for (int step = 0; step < 40000; step++) {
        unsigned i = (unsigned)(rnd() % POOL);
        uint64_t r = rnd() % 100;
        if (r < 50) {
            if (model[i].live)
                continue; /* malloc never returns a live address */
            uint64_t size = rnd() % 5 ? rnd() % 200 : rnd() % 100000;
            uint32_t stack = (uint32_t)(rnd() % NSTACK);
            enum alloc_kind kind = (enum alloc_kind)(rnd() % ALLOC_KIND_COUNT);
            heap_record_alloc(b, pool_addr(i), size, stack, kind);
            model[i] = (struct model_block){ true, false, size, stack, kind };
            m_allocs++;
            m_bytes_allocated += size;
            m_stack_allocs[stack]++;
            m_stack_bytes[stack] += size;
        } else if (r < 99) {
            enum alloc_kind kind = rnd() % 4 ? model[i].kind : (enum alloc_kind)(rnd() % ALLOC_KIND_COUNT);
            struct heap_block freed = { 0 };
            enum heap_free_result res = heap_record_free(b, pool_addr(i), kind, &freed);
            m_frees++;
            if (!model[i].live) {
                CHECK(res == HEAP_FREE_UNKNOWN, "step %d: free of dead block gave %d", step, res);
            } else {
                bool same = kind == model[i].kind || kind == ALLOC_ANY || model[i].kind == ALLOC_ANY;
                enum heap_free_result want = same ? HEAP_FREE_OK : HEAP_FREE_MISMATCH;
                CHECK(res == want, "step %d: free result %d, want %d", step, res, want);
                CHECK(freed.addr == pool_addr(i) && freed.size == model[i].size &&
                      freed.stack_id == model[i].stack, "step %d: freed block wrong", step);
                model[i].live = false;
            }
        } else {
            heap_clear(b);
            for (unsigned k = 0; k < POOL; k++)
                model[k].forgotten = model[k].live;
            m_allocs = m_frees = m_bytes_allocated = 0;
            memset(m_stack_allocs, 0, sizeof(m_stack_allocs));
            memset(m_stack_bytes, 0, sizeof(m_stack_bytes));
        }
        if (step % 97 == 0 || step > 39000)
            check_against_model(b, step);
    }
    check_against_model(b, -1);
    heap_books_free(b);
}

/* A realloc as the engine maps it (free + alloc), and valgrind's rules. */
static void realloc_semantics(void)
{
    struct heap_books *b = heap_books_new();
    heap_record_alloc(b, 0x1000, 100, 1, ALLOC_MALLOC);            /* malloc(100) */
    heap_record_free(b, 0x1000, ALLOC_MALLOC, NULL);                /* realloc(p, 300) */
    heap_record_alloc(b, 0x2000, 300, 2, ALLOC_MALLOC);
    heap_record_alloc(b, 0x3000, 50, 3, ALLOC_MALLOC);              /* realloc(NULL, 50) */
    heap_record_free(b, 0x3000, ALLOC_MALLOC, NULL);                /* realloc(q, 0) */
    CHECK(heap_record_free(b, 0x3000, ALLOC_MALLOC, NULL) == HEAP_FREE_UNKNOWN, "double free");
    struct heap_totals t;
    heap_get_totals(b, &t);
    CHECK(t.allocs == 3 && t.frees == 3 && t.bytes_allocated == 450, "realloc totals");
    CHECK(t.in_use_bytes == 300 && t.in_use_blocks == 1, "realloc in use");
    CHECK(t.in_use_bytes == t.bytes_allocated - 100 - 50, "in use = allocated - freed");

    /* delete of new[] memory: reported, still freed. */
    heap_record_alloc(b, 0x4000, 8, 4, ALLOC_NEW_ARRAY);
    CHECK(heap_record_free(b, 0x4000, ALLOC_NEW, NULL) == HEAP_FREE_MISMATCH, "mismatch");
    CHECK(!heap_lookup(b, 0x4000, NULL), "mismatched free must still free");
    /* An address of several families judges none, either way. */
    heap_record_alloc(b, 0x4000, 8, 4, ALLOC_ANY);
    CHECK(heap_record_free(b, 0x4000, ALLOC_NEW_ARRAY, NULL) == HEAP_FREE_OK, "made family-less");
    heap_record_alloc(b, 0x4000, 8, 4, ALLOC_NEW);
    CHECK(heap_record_free(b, 0x4000, ALLOC_ANY, NULL) == HEAP_FREE_OK, "released family-less");
    /* Two heaps: a block released by the other one is said, and freed;
     * a heap not said (0) judges nothing. */
    heap_set_heap(b, 1);
    heap_record_alloc(b, 0x4000, 8, 4, ALLOC_MALLOC);
    heap_set_heap(b, 2);
    struct heap_block other;
    CHECK(heap_record_free(b, 0x4000, ALLOC_MALLOC, &other) == HEAP_FREE_OTHER_HEAP &&
              other.heap == 1 && other.size == 8, "other heap");
    CHECK(!heap_lookup(b, 0x4000, NULL), "a free by the other heap must still free");
    heap_set_heap(b, 1);
    heap_record_alloc(b, 0x4000, 8, 4, ALLOC_MALLOC);
    heap_set_heap(b, 0);
    CHECK(heap_record_free(b, 0x4000, ALLOC_MALLOC, NULL) == HEAP_FREE_OK, "heap not said");
    /* 256 MiB and more: the big list, the heap kept beside it */
    heap_set_heap(b, 3);
    heap_record_alloc(b, 0x4000, (1ull << 28) + 5, 4, ALLOC_MALLOC);
    struct heap_block big;
    CHECK(heap_lookup(b, 0x4000, &big) && big.size == (1ull << 28) + 5 && big.heap == 3, "big block");
    CHECK(heap_record_free(b, 0x4000, ALLOC_MALLOC, NULL) == HEAP_FREE_OK, "big block freed");
    heap_set_heap(b, 0);

    /* A missed free: a second alloc on a live address replaces the block. */
    heap_record_alloc(b, 0x5000, 10, 5, ALLOC_MALLOC);
    heap_record_alloc(b, 0x5000, 20, 6, ALLOC_MALLOC);
    heap_get_totals(b, &t);
    CHECK(t.in_use_bytes == 320 && t.in_use_blocks == 2 && t.replaced_blocks == 1, "replace");

    /* Clear: forgotten blocks vanish from the figures; their frees are fine. */
    heap_clear(b);
    heap_get_totals(b, &t);
    CHECK(t.in_use_bytes == 0 && t.allocs == 0 && t.frees == 0, "clear zeroes totals");
    heap_record_alloc(b, 0x6000, 7, 7, ALLOC_MALLOC);
    struct heap_block fb;
    CHECK(heap_record_free(b, 0x2000, ALLOC_MALLOC, &fb) == HEAP_FREE_OK && fb.size == 300,
          "free of a pre-clear block must be accepted");
    CHECK(!heap_lookup(b, 0x5000, NULL), "forgotten blocks are not looked up");
    heap_get_totals(b, &t);
    CHECK(t.in_use_bytes == 7 && t.in_use_blocks == 1 && t.frees == 1 && t.allocs == 1,
          "after clear: %" PRIu64 " bytes %" PRIu64 " blocks", t.in_use_bytes, t.in_use_blocks);
    struct stack_totals st;
    heap_get_stack_totals(b, 2, &st);
    CHECK(st.bytes_in_use == 0 && st.allocs == 0, "per-stack figures cleared");
    CHECK(heap_record_free(b, 0x2000, ALLOC_MALLOC, NULL) == HEAP_FREE_UNKNOWN, "now unknown");
    heap_books_free(b);
}

/* ---- mapping ledger against a page map ---- */

#define PAGES 128
static void ledger(void)
{
    uint64_t ps = heap_page_size();
    uint64_t base = 0x7f0000000000ull;
    uint32_t owner[PAGES] = { 0 }; /* 0 = unmapped, else the serial of the map */
    struct heap_books *b = heap_books_new();
    for (uint32_t serial = 1; serial < 5000; serial++) {
        unsigned p = (unsigned)(rnd() % PAGES), np = 1 + (unsigned)(rnd() % 16);
        if (p + np > PAGES)
            np = PAGES - p;
        /* Lengths that are not page multiples round up. */
        uint64_t len = np * ps - (rnd() % 2 ? rnd() % ps : 0);
        uint64_t r = rnd() % 3;
        if (r == 0) {
            heap_record_map(b, base + p * ps, len, serial);
            for (unsigned k = p; k < p + np; k++)
                owner[k] = serial;
        } else if (r == 1) {
            heap_record_unmap(b, base + p * ps, len);
            for (unsigned k = p; k < p + np; k++)
                owner[k] = 0;
        } else {
            unsigned q = (unsigned)(rnd() % PAGES), nq = 1 + (unsigned)(rnd() % 16);
            if (q + nq > PAGES)
                nq = PAGES - q;
            heap_record_remap(b, base + p * ps, len, base + q * ps, nq * ps, serial);
            for (unsigned k = p; k < p + np; k++)
                owner[k] = 0;
            for (unsigned k = q; k < q + nq; k++)
                owner[k] = serial;
        }
        /* Expected regions: maximal runs of pages of the same map call. */
        size_t n;
        const struct heap_region *reg = heap_regions(b, &n);
        size_t runs = 0, pages = 0, ri = 0;
        bool ok = true;
        for (unsigned k = 0; k < PAGES; k++) {
            if (!owner[k])
                continue;
            pages++;
            if (k == 0 || owner[k - 1] != owner[k]) {
                unsigned e = k;
                while (e < PAGES && owner[e] == owner[k])
                    e++;
                runs++;
                ok = ok && ri < n && reg[ri].start == base + k * ps &&
                     reg[ri].end == base + e * ps && reg[ri].stack_id == owner[k];
                ri++;
            }
        }
        struct heap_totals t;
        heap_get_totals(b, &t);
        CHECK(ok && n == runs, "ledger step %u: regions differ from the page map", serial);
        CHECK(t.mapped_bytes == pages * ps && t.mapped_regions == runs,
              "ledger step %u: %" PRIu64 " bytes %" PRIu64 " regions, want %" PRIu64 ", %zu",
              serial, t.mapped_bytes, t.mapped_regions, (uint64_t)(pages * ps), runs);
        if (!ok)
            break;
    }
    heap_clear(b);
    struct heap_totals t;
    heap_get_totals(b, &t);
    CHECK(t.maps_recorded > 0, "clear keeps the ledger");
    heap_books_free(b);
}

/* ---- budget: 1M live blocks ---- */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static long rss_bytes(void)
{
    long pages = 0, rss = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
            rss = 0;
        fclose(f);
    }
    return rss * sysconf(_SC_PAGESIZE);
}

static void million(void)
{
    const size_t n = 1000000;
    long rss0 = rss_bytes();
    struct heap_books *b = heap_books_new();
    double t0 = now_ns();
    for (size_t i = 0; i < n; i++)
        heap_record_alloc(b, 0x555555560000ull + i * 32 + (i % 7) * 16 * n, 24 + i % 100,
                          (uint32_t)(1 + i % 5000), ALLOC_MALLOC);
    double t1 = now_ns();
    long rss1 = rss_bytes();
    struct heap_totals t;
    heap_get_totals(b, &t);
    CHECK(t.in_use_blocks == n, "1M blocks: %" PRIu64 " in use", t.in_use_blocks);
    double per_block = (double)heap_books_memory(b) / (double)n;
    double rss_per_block = (double)(rss1 - rss0) / (double)n;
    /* Steady state: a table holding 1M blocks, no growth, alloc/free churn. */
    const size_t churn = 1000000;
    double tc0 = now_ns();
    for (size_t i = 0; i < churn; i++) {
        heap_record_alloc(b, 0x7000000000ull + i * 48, 40, 7, ALLOC_MALLOC);
        heap_record_free(b, 0x7000000000ull + i * 48, ALLOC_MALLOC, NULL);
    }
    double churn_ns = (now_ns() - tc0) / churn;
    size_t freed = 0;
    double tf = now_ns();
    for (size_t i = 0; i < n; i++)
        freed += heap_record_free(b, 0x555555560000ull + i * 32 + (i % 7) * 16 * n,
                                  ALLOC_MALLOC, NULL) == HEAP_FREE_OK;
    double t2 = now_ns();
    heap_get_totals(b, &t);
    CHECK(freed == n && t.in_use_blocks == 0 && t.in_use_bytes == 0, "1M frees");
    printf("heap books, 1M blocks: %.1f ns per record_alloc (growth included), %.1f ns per "
           "record_free, %.1f ns per alloc+free pair at 1M live, %.1f bytes per block (books), "
           "%.1f bytes per block (RSS growth)\n",
           (t1 - t0) / n, (t2 - tf) / n, churn_ns, per_block, rss_per_block);
    CHECK(per_block <= 64, "%.1f bytes per block > 64", per_block);
#if !defined(__SANITIZE_ADDRESS__)
    CHECK(rss_per_block <= 64 + 4.0 * 1024 * 1024 / n, "RSS %.1f bytes per block", rss_per_block);
#endif
    heap_books_free(b);
}

/* Sizes that do not fit the packed 32-bit size field, and stack ids at the
 * edge of the packed field: exact figures back out. */
static void big_sizes(void)
{
    struct heap_books *b = heap_books_new();
    const uint64_t huge = 5ull << 30, edge = 0xffffffffull;
    heap_record_alloc(b, 0x10000, huge, 3, ALLOC_NEW_ARRAY);
    /* The highest packed id needs a per-stack array of 2^28 entries: only
     * where the address space has room for it. */
    const uint32_t edge_id = SIZE_MAX > UINT32_MAX ? (1u << 28) - 1 : (1u << 20) - 1;
    heap_record_alloc(b, 0x20000, edge, edge_id, ALLOC_MALLOC);
    heap_record_alloc(b, 0x30000, 100, 1u << 28, ALLOC_MALLOC);
    struct heap_block blk;
    CHECK(heap_lookup(b, 0x10000, &blk) && blk.size == huge && blk.stack_id == 3 &&
              blk.kind == ALLOC_NEW_ARRAY, "5 GiB block reads back");
    CHECK(heap_lookup(b, 0x20000, &blk) && blk.size == edge && blk.stack_id == edge_id,
          "0xffffffff-byte block reads back");
    CHECK(heap_lookup(b, 0x30000, &blk) && blk.stack_id == 0, "a stack id past 28 bits is 0");
    struct heap_totals t;
    heap_get_totals(b, &t);
    CHECK(t.in_use_bytes == huge + edge + 100, "big in-use bytes");
    /* Replaced by a small block at the same address, then freed. */
    heap_record_alloc(b, 0x10000, 64, 4, ALLOC_MALLOC);
    CHECK(heap_lookup(b, 0x10000, &blk) && blk.size == 64, "small replaces big");
    CHECK(heap_record_free(b, 0x20000, ALLOC_MALLOC, &blk) == HEAP_FREE_OK && blk.size == edge,
          "big free");
    heap_get_totals(b, &t);
    CHECK(t.in_use_bytes == 164 && t.in_use_blocks == 2, "after big free: %" PRIu64, t.in_use_bytes);
    heap_books_free(b);
}

/* A fork child's books (heap_books_clone) own their list of big blocks: the
 * parent's realloc and free of its own big blocks leave the child's alone,
 * and both sets of books free cleanly (ASan: no double free, no reads of
 * freed memory). */
static void big_blocks_cloned(void)
{
    struct heap_books *parent = heap_books_new();
    const uint64_t huge = 3ull << 30;
    heap_record_alloc(parent, 0x10000, huge, 1, ALLOC_MALLOC);
    struct heap_books *child = heap_books_clone(parent);
    /* The parent grows its list (a realloc of the array) and frees its block. */
    for (uint64_t i = 1; i <= 20; i++)
        heap_record_alloc(parent, 0x10000 + i * 0x1000, huge + i, 2, ALLOC_MALLOC);
    struct heap_block blk;
    CHECK(heap_record_free(parent, 0x10000, ALLOC_MALLOC, &blk) == HEAP_FREE_OK && blk.size == huge,
          "the parent frees its big block");
    CHECK(heap_lookup(child, 0x10000, &blk) && blk.size == huge, "the child's big block stays");
    CHECK(!heap_lookup(child, 0x11000, &blk), "the parent's later big block is not the child's");
    CHECK(heap_record_free(child, 0x10000, ALLOC_MALLOC, &blk) == HEAP_FREE_OK && blk.size == huge,
          "the child frees its own copy");
    heap_books_free(child);
    heap_books_free(parent);
}

int main(void)
{
    big_sizes();
    big_blocks_cloned();
    scripted_books();
    realloc_semantics();
    ledger();
    million();
    return test_end("test_heap");
}
