/* The books' peak and temporary allocations against a naive model kept by
 * this test: the model copies every stack's figures whenever a new peak is
 * reached (what the books avoid) and keeps each thread's last allocation.
 * Random scripts of allocs, frees, reallocs, thread switches and clears are
 * checked after every step; then the shapes named in the design: a peak
 * creeping up one block at a time, a peak then frees, a clear. */
#include "target/heap/heap.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; \
    fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

#define POOL 200
#define NSTACK 9
#define NTHREAD 3

struct mblock { bool live, forgotten; uint64_t size; uint32_t stack; bool at_peak; };
static struct mblock model[POOL];
static uint64_t m_bytes, m_blocks, m_peak_bytes, m_peak_blocks, m_temporary;
static uint64_t m_sbytes[NSTACK], m_sblocks[NSTACK], m_stemp[NSTACK];
static uint64_t m_peak_sbytes[NSTACK], m_peak_sblocks[NSTACK];
static uint64_t m_last[NTHREAD];   /* each thread's last allocation, 0 none */
static unsigned m_thread;

static uint64_t addr_of(unsigned i) { return 0x7f0000001000ull + (uint64_t)i * 64; }

static void m_alloc(unsigned i, uint64_t size, uint32_t stack)
{
    if (model[i].live && !model[i].forgotten) {
        m_bytes -= model[i].size;
        m_blocks--;
        m_sbytes[model[i].stack] -= model[i].size;
        m_sblocks[model[i].stack]--;
    }
    model[i] = (struct mblock){ true, false, size, stack, false };
    m_bytes += size;
    m_blocks++;
    m_sbytes[stack] += size;
    m_sblocks[stack]++;
    m_last[m_thread] = addr_of(i);
    if (m_bytes > m_peak_bytes) {
        m_peak_bytes = m_bytes;
        m_peak_blocks = m_blocks;
        memcpy(m_peak_sbytes, m_sbytes, sizeof(m_sbytes));
        memcpy(m_peak_sblocks, m_sblocks, sizeof(m_sblocks));
        for (unsigned k = 0; k < POOL; k++)
            model[k].at_peak = model[k].live && !model[k].forgotten;
    }
}

static void m_free(unsigned i)
{
    if (!model[i].live)
        return;
    if (!model[i].forgotten) {
        m_bytes -= model[i].size;
        m_blocks--;
        m_sbytes[model[i].stack] -= model[i].size;
        m_sblocks[model[i].stack]--;
        if (m_last[m_thread] == addr_of(i)) {
            m_temporary++;
            m_stemp[model[i].stack]++;
        }
    }
    m_last[m_thread] = 0;
    model[i].live = false;
}

static void m_clear(void)
{
    for (unsigned i = 0; i < POOL; i++) {
        if (model[i].live)
            model[i].forgotten = true;
        model[i].at_peak = false;
    }
    m_bytes = m_blocks = m_peak_bytes = m_peak_blocks = m_temporary = 0;
    memset(m_sbytes, 0, sizeof(m_sbytes));
    memset(m_sblocks, 0, sizeof(m_sblocks));
    memset(m_stemp, 0, sizeof(m_stemp));
    memset(m_peak_sbytes, 0, sizeof(m_peak_sbytes));
    memset(m_peak_sblocks, 0, sizeof(m_peak_sblocks));
}

static void check_model(const struct heap_books *b, int step)
{
    struct heap_peak p;
    struct heap_totals t;
    heap_get_peak(b, &p);
    heap_get_totals(b, &t);
    CHECK(p.bytes == m_peak_bytes && p.blocks == m_peak_blocks,
          "step %d: peak %" PRIu64 "/%" PRIu64 ", model %" PRIu64 "/%" PRIu64, step, p.bytes,
          p.blocks, m_peak_bytes, m_peak_blocks);
    CHECK(t.temporary == m_temporary, "step %d: temporary %" PRIu64 ", model %" PRIu64, step,
          t.temporary, m_temporary);
    for (uint32_t s = 0; s < NSTACK; s++) {
        struct stack_totals at, now;
        heap_get_stack_peak(b, s, &at);
        heap_get_stack_totals(b, s, &now);
        CHECK(at.bytes_in_use == m_peak_sbytes[s] && at.blocks_in_use == m_peak_sblocks[s],
              "step %d: stack %u at peak %" PRIu64 "/%" PRIu64 ", model %" PRIu64 "/%" PRIu64,
              step, s, at.bytes_in_use, at.blocks_in_use, m_peak_sbytes[s], m_peak_sblocks[s]);
        CHECK(now.temporary == m_stemp[s], "step %d: stack %u temporary %" PRIu64 ", model %" PRIu64,
              step, s, now.temporary, m_stemp[s]);
    }
}

/* heap_block_in_use_at_peak for every live block (the heaptrack export
 * relies on it). */
static void check_alloc_seq(const struct heap_books *b, int step)
{
    size_t n;
    struct heap_block *blocks = heap_export_blocks(b, &n);
    for (size_t k = 0; k < n; k++) {
        unsigned i = (unsigned)((blocks[k].addr - addr_of(0)) / 64);
        bool at_peak = heap_block_in_use_at_peak(b, &blocks[k]);
        CHECK(i < POOL && at_peak == model[i].at_peak, "step %d: block %u in use at the peak: %d, model %d",
              step, i, at_peak, i < POOL && model[i].at_peak);
    }
    free(blocks);
}

static void scripted(void)
{
    struct heap_books *b = heap_books_new();
    heap_set_thread(b, 100);
    for (int step = 0; step < 60000; step++) {
        unsigned r = (unsigned)(rnd() % 1000);
        unsigned i = (unsigned)(rnd() % POOL);
        if (r < 20) {
            m_thread = (unsigned)(rnd() % NTHREAD);
            heap_set_thread(b, 100 + m_thread);
        } else if (r < 22) {
            m_clear();
            heap_clear(b);
        } else if (r < 500) {
            uint64_t size = 1 + rnd() % 300;
            uint32_t stack = (uint32_t)(rnd() % NSTACK);
            m_alloc(i, size, stack);
            heap_record_alloc(b, addr_of(i), size, stack, ALLOC_MALLOC);
        } else if (r < 560) {
            /* realloc(p, n) to another address: a free, then an alloc. */
            unsigned j = (unsigned)(rnd() % POOL);
            if (model[i].live && !model[j].live) {
                uint32_t stack = (uint32_t)(rnd() % NSTACK);
                m_free(i);
                heap_record_free(b, addr_of(i), ALLOC_MALLOC, NULL);
                m_alloc(j, 40, stack);
                heap_record_alloc(b, addr_of(j), 40, stack, ALLOC_MALLOC);
            }
        } else if (r < 750) {
            /* Free the last allocation of this thread, if any: temporaries. */
            uint64_t last = m_last[m_thread];
            if (last) {
                unsigned k = (unsigned)((last - addr_of(0)) / 64);
                m_free(k);
                heap_record_free(b, last, ALLOC_MALLOC, NULL);
            }
        } else {
            m_free(i);
            heap_record_free(b, addr_of(i), ALLOC_MALLOC, NULL);
        }
        check_model(b, step);
        if (step % 64 == 0)
            check_alloc_seq(b, step);
        if (failures > 20)
            break;
    }
    /* A fork's copy carries the peak and the threads' last allocations. */
    struct heap_books *c = heap_books_clone(b);
    check_model(c, -1);
    heap_books_free(c);
    heap_books_free(b);
}

/* 100000 blocks over 1000 stacks, each alloc a new peak: the per-stack
 * figures at the peak are right at every point checked, and the books hold
 * no per-peak copy (their memory is that of the blocks). */
static void creeping(void)
{
    struct heap_books *b = heap_books_new();
    const unsigned n = 100000, nstack = 1000;
    for (unsigned k = 0; k < n; k++) {
        heap_record_alloc(b, 0x10000000ull + (uint64_t)k * 32, 16, 1 + k % nstack, ALLOC_MALLOC);
        if (k % 25000 == 24999) {
            struct heap_peak p;
            heap_get_peak(b, &p);
            CHECK(p.bytes == 16ull * (k + 1) && p.blocks == k + 1, "creeping peak at %u", k);
            struct stack_totals at;
            heap_get_stack_peak(b, 1 + (k % nstack), &at);
            CHECK(at.blocks_in_use == (k + 1) / nstack, "creeping stack at %u: %" PRIu64, k,
                  at.blocks_in_use);
        }
    }
    /* Free half of stack 1's blocks: the peak and its stacks stay. */
    for (unsigned k = 0; k < n; k += 2 * nstack)
        heap_record_free(b, 0x10000000ull + (uint64_t)k * 32, ALLOC_MALLOC, NULL);
    struct stack_totals at, now;
    heap_get_stack_peak(b, 1, &at);
    heap_get_stack_totals(b, 1, &now);
    CHECK(at.blocks_in_use == n / nstack && at.bytes_in_use == 16ull * n / nstack,
          "stack 1 at peak after frees: %" PRIu64, at.blocks_in_use);
    CHECK(now.blocks_in_use == n / nstack / 2, "stack 1 now: %" PRIu64, now.blocks_in_use);
    /* Fewer than 64 bytes per live block: no snapshot copies. */
    CHECK(heap_books_memory(b) < 64ull * n, "books hold %zu bytes", heap_books_memory(b));
    heap_books_free(b);
}

/* A clear peak in the middle: 10 blocks of 1000 (stack 1) then freed, a
 * later plateau lower (stack 2); then a clear starts over. */
static void peak_then_free_and_clear(void)
{
    struct heap_books *b = heap_books_new();
    heap_record_alloc(b, 0x1000, 100, 2, ALLOC_MALLOC);
    for (unsigned k = 0; k < 10; k++)
        heap_record_alloc(b, 0x100000 + k * 0x1000, 1000, 1, ALLOC_MALLOC);
    for (unsigned k = 0; k < 10; k++)
        heap_record_free(b, 0x100000 + k * 0x1000, ALLOC_MALLOC, NULL);
    for (unsigned k = 0; k < 50; k++)
        heap_record_alloc(b, 0x200000 + k * 0x100, 100, 2, ALLOC_MALLOC);
    struct heap_peak p;
    heap_get_peak(b, &p);
    CHECK(p.bytes == 10100 && p.blocks == 11, "peak %" PRIu64 "/%" PRIu64, p.bytes, p.blocks);
    CHECK(p.seconds >= 0 && p.seconds < 60, "peak seconds %f", p.seconds);
    struct stack_totals s1, s2;
    heap_get_stack_peak(b, 1, &s1);
    heap_get_stack_peak(b, 2, &s2);
    CHECK(s1.bytes_in_use == 10000 && s1.blocks_in_use == 10, "stack 1 at peak");
    CHECK(s2.bytes_in_use == 100 && s2.blocks_in_use == 1, "stack 2 at peak");
    /* Equal to the peak again is not a new peak (the first moment counts). */
    for (unsigned k = 0; k < 50; k++)
        heap_record_free(b, 0x200000 + k * 0x100, ALLOC_MALLOC, NULL);
    for (unsigned k = 0; k < 100; k++)
        heap_record_alloc(b, 0x300000 + k * 0x100, 100, 3, ALLOC_MALLOC);
    heap_get_peak(b, &p);
    heap_get_stack_peak(b, 3, &s2);
    CHECK(p.bytes == 10100 && s2.blocks_in_use == 0, "a tie is not a new peak");
    heap_record_alloc(b, 0x400000, 1, 3, ALLOC_MALLOC);
    heap_get_peak(b, &p);
    heap_get_stack_peak(b, 3, &s2);
    heap_get_stack_peak(b, 1, &s1);
    CHECK(p.bytes == 10101 && p.blocks == 102 && s2.blocks_in_use == 101 && s1.blocks_in_use == 0,
          "one byte more is");

    heap_clear(b);
    heap_get_peak(b, &p);
    heap_get_stack_peak(b, 3, &s2);
    CHECK(p.bytes == 0 && p.blocks == 0 && s2.blocks_in_use == 0, "clear forgets the peak");
    /* Freeing forgotten blocks changes nothing; a new small peak is. */
    heap_record_free(b, 0x400000, ALLOC_MALLOC, NULL);
    heap_record_alloc(b, 0x500000, 7, 4, ALLOC_MALLOC);
    heap_get_peak(b, &p);
    heap_get_stack_peak(b, 4, &s2);
    CHECK(p.bytes == 7 && p.blocks == 1 && s2.bytes_in_use == 7, "peak after clear");
    heap_books_free(b);
}

/* heaptrack's rule: freed with no other allocation (nor free) in between
 * on the thread. */
static void temporaries(void)
{
    struct heap_books *b = heap_books_new();
    heap_set_thread(b, 10);
    heap_record_alloc(b, 0x1000, 8, 1, ALLOC_MALLOC);
    heap_record_free(b, 0x1000, ALLOC_MALLOC, NULL);             /* temporary */
    heap_record_alloc(b, 0x1000, 8, 1, ALLOC_MALLOC);
    heap_record_alloc(b, 0x2000, 8, 2, ALLOC_MALLOC);
    heap_record_free(b, 0x1000, ALLOC_MALLOC, NULL);             /* not: 0x2000 came between */
    heap_record_free(b, 0x2000, ALLOC_MALLOC, NULL);             /* not: a free came between */
    heap_record_alloc(b, 0x2000, 8, 2, ALLOC_MALLOC);
    heap_record_free(b, 0x7000, ALLOC_MALLOC, NULL);             /* unknown: changes nothing */
    heap_set_thread(b, 11);
    heap_record_alloc(b, 0x3000, 8, 3, ALLOC_MALLOC);
    heap_set_thread(b, 10);
    heap_record_free(b, 0x2000, ALLOC_MALLOC, NULL);             /* temporary: 11's alloc is not 10's */
    heap_set_thread(b, 12);
    heap_record_free(b, 0x3000, ALLOC_MALLOC, NULL);             /* not: freed on another thread */
    struct heap_totals t;
    struct stack_totals s;
    heap_get_totals(b, &t);
    CHECK(t.temporary == 2, "temporary %" PRIu64, t.temporary);
    heap_get_stack_totals(b, 1, &s);
    CHECK(s.temporary == 1 && s.allocs == 2, "stack 1");
    heap_get_stack_totals(b, 2, &s);
    CHECK(s.temporary == 1, "stack 2");
    heap_get_stack_totals(b, 3, &s);
    CHECK(s.temporary == 0, "stack 3");
    heap_books_free(b);
}

int main(void)
{
    scripted();
    creeping();
    peak_then_free_and_clear();
    temporaries();
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    puts("test_peak: ok");
    return 0;
}
