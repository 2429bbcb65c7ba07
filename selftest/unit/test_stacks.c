/* Stack table against a naive oracle: a plain list searched with memcmp gives
 * the expected id of every stack, including stacks that differ only in the
 * unwinder's bit 63.  Also times the lookup of a known 20-frame stack. */
#include "target/heap/stacks.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "selftest/unit/test.h"

#define MAX_DEPTH 24
#define NSTACKS 4000

struct ref_stack { unsigned n; uint64_t pcs[MAX_DEPTH]; };

static uint64_t rng_state = 0x1234567;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(void)
{
    struct stack_table *t = stack_table_new();
    static struct ref_stack ref[NSTACKS];
    size_t nref = 0;

    /* Stacks share prefixes and suffixes as real ones do: build each from a
     * small pool of pcs, so collisions of content are frequent. */
    static const uint64_t pool[] = { 0x401000, 0x401004, 0x7f0000001234, 0x7f0000001238,
                                     0x401000 | (1ull << 63), 0, 1, UINT64_MAX };
    for (int round = 0; round < 40000; round++) {
        struct ref_stack s;
        s.n = (unsigned)(rnd() % (MAX_DEPTH + 1));
        for (unsigned i = 0; i < s.n; i++)
            s.pcs[i] = rnd() % 3 ? pool[rnd() % 8] : rnd();
        if (round % 2 && nref) /* revisit an existing stack */
            s = ref[rnd() % nref];
        uint32_t expect = 0;
        for (size_t k = 0; k < nref; k++)
            if (ref[k].n == s.n && !memcmp(ref[k].pcs, s.pcs, s.n * sizeof(uint64_t))) {
                expect = (uint32_t)(k + 1);
                break;
            }
        if (!expect) {
            if (nref == NSTACKS)
                continue;
            ref[nref++] = s;
            expect = (uint32_t)nref;
        }
        uint32_t got = stack_table_intern(t, s.pcs, s.n);
        CHECK(got == expect, "round %d: id %u, expected %u", round, got, expect);
        if (got != expect)
            break;
    }
    CHECK(stack_table_count(t) == nref, "count %zu, expected %zu", stack_table_count(t), nref);
    for (size_t k = 0; k < nref; k++) {
        unsigned n;
        const uint64_t *pcs = stack_table_pcs(t, (uint32_t)(k + 1), &n);
        CHECK(n == ref[k].n && (n == 0 || !memcmp(pcs, ref[k].pcs, n * sizeof(uint64_t))),
              "stack %zu does not round-trip", k + 1);
    }
    unsigned n = 99;
    CHECK(stack_table_pcs(t, 0, &n) == NULL && n == 0, "id 0 must be unknown");
    CHECK(stack_table_pcs(t, (uint32_t)nref + 1, &n) == NULL && n == 0, "id past count");

    /* Bit 63 is part of the value. */
    uint64_t a[2] = { 0x401000, 0x402000 }, b[2] = { 0x401000 | (1ull << 63), 0x402000 };
    uint32_t ia = stack_table_intern(t, a, 2), ib = stack_table_intern(t, b, 2);
    CHECK(ia != ib, "exact-pc flag ignored");
    CHECK(stack_table_intern(t, a, 1) != ia, "prefix must differ from the whole stack");

    /* Lookup speed of an existing 20-frame stack. */
    uint64_t hot[20];
    for (int i = 0; i < 20; i++)
        hot[i] = 0x555555554000ull + (uint64_t)rnd() % 0x100000;
    uint32_t hid = stack_table_intern(t, hot, 20);
    const int iters = 2000000;
    double t0 = now_ns();
    uint32_t acc = 0;
    for (int i = 0; i < iters; i++) {
        hot[19] ^= (uint64_t)(i & 0); /* keep the compiler honest */
        acc += stack_table_intern(t, hot, 20);
    }
    double ns = (now_ns() - t0) / iters;
    CHECK(acc == hid * (uint32_t)iters, "hot stack changed id");
    printf("stack_table_intern: %.1f ns per lookup of a 20-frame stack; %zu stacks, %zu bytes\n",
           ns, stack_table_count(t), stack_table_memory(t));
    /* Generous bound: sanitizer builds are several times slower. */
    CHECK(ns < 2000, "intern too slow: %.1f ns", ns);

    stack_table_free(t);
    return test_end("test_stacks");
}
