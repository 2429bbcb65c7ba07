/* allocbench: memtrace's own allocation workload, for make bench and the tests.
 *
 *   allocbench [ROUNDS] [DEPTH] [THREADS]      (defaults 100000, 8, 1)
 *
 * Every thread makes ROUNDS rounds.  A round walks DEPTH frames down a chain
 * of two alternating functions (so that stacks are deep and unwinding costs
 * what it costs in a real program), then makes exactly four allocation calls
 * on a private table of live blocks: malloc, calloc, realloc and one
 * short-lived malloc, with the frees that keep the table bounded.  The sizes
 * come from a per-thread linear congruential generator with a fixed seed, so
 * two runs make the same calls in the same order on each thread.  Every block
 * is freed before the thread ends.
 *
 * The last line is "allocbench: N calls": the allocation calls made (frees
 * not counted), which make bench divides the traced time by.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TABLE_SLOTS = 64, MAX_THREADS = 64, CALLS_PER_ROUND = 4 };

struct bench_thread {
    long rounds;
    int depth;
    uint32_t rng;
    long calls;
    void *table[TABLE_SLOTS];
};

static uint32_t draw(struct bench_thread *t)
{
    t->rng = t->rng * 1664525u + 1013904223u;
    return t->rng >> 7;
}

/* Sizes spread over tcache, small bins and large requests, odd ones included. */
static size_t draw_size(struct bench_thread *t)
{
    return 1 + draw(t) % 4111;
}

static void __attribute__((noinline)) one_round(struct bench_thread *t)
{
    uint32_t pick = draw(t);
    unsigned slot = pick % TABLE_SLOTS;
    size_t size = draw_size(t);

    free(t->table[slot]);
    t->table[slot] = malloc(size);
    if (t->table[slot])
        memset(t->table[slot], 0x5a, size < 32 ? size : 32);

    slot = (slot + 11) % TABLE_SLOTS;
    free(t->table[slot]);
    t->table[slot] = calloc(2, size / 2 + 1);

    slot = (slot + 29) % TABLE_SLOTS;
    void *grown = realloc(t->table[slot], size + size / 2);
    if (grown)
        t->table[slot] = grown;

    /* A temporary buffer; the empty asm keeps the pair from being elided. */
    char *scratch = malloc(size / 3 + 1);
    __asm__ volatile("" : : "r"(scratch) : "memory");
    free(scratch);

    t->calls += CALLS_PER_ROUND;
}

static void walk_down(struct bench_thread *t, int depth);

static void __attribute__((noinline)) walk_even(struct bench_thread *t, int depth)
{
    walk_down(t, depth - 1);
    __asm__ volatile("" ::: "memory"); /* no tail call: a real frame */
}

static void __attribute__((noinline)) walk_odd(struct bench_thread *t, int depth)
{
    walk_down(t, depth - 1);
    __asm__ volatile("" ::: "memory");
}

static void __attribute__((noinline)) walk_down(struct bench_thread *t, int depth)
{
    if (depth <= 0)
        one_round(t);
    else if (depth % 2)
        walk_odd(t, depth);
    else
        walk_even(t, depth);
}

static void *thread_main(void *arg)
{
    struct bench_thread *t = arg;
    for (long r = 0; r < t->rounds; r++)
        walk_down(t, t->depth);
    for (int i = 0; i < TABLE_SLOTS; i++)
        free(t->table[i]);
    return NULL;
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 100000;
    int depth = argc > 2 ? atoi(argv[2]) : 8;
    int threads = argc > 3 ? atoi(argv[3]) : 1;

    if (rounds < 0 || depth < 0 || threads < 1 || threads > MAX_THREADS) {
        fprintf(stderr, "usage: allocbench [ROUNDS >= 0] [DEPTH >= 0] [THREADS 1..%d]\n", MAX_THREADS);
        return 2;
    }
    struct bench_thread *all = calloc((size_t)threads, sizeof(*all));
    if (!all) {
        perror("allocbench");
        return 1;
    }
    pthread_t ids[MAX_THREADS];
    for (int i = 0; i < threads; i++) {
        all[i].rounds = rounds;
        all[i].depth = depth;
        all[i].rng = 2654435761u ^ (uint32_t)i;
        if (pthread_create(&ids[i], NULL, thread_main, &all[i]) != 0) {
            fprintf(stderr, "allocbench: cannot start thread %d\n", i);
            return 1;
        }
    }
    long calls = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(ids[i], NULL);
        calls += all[i].calls;
    }
    free(all);
    printf("allocbench: %ld calls\n", calls);
    return 0;
}
