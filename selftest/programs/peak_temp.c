/* A deterministic heap with a clear peak in the middle and known temporary
 * churn, for comparing memtrace's peak and temporary allocations with
 * heaptrack's and massif's (selftest/tests/report_peak_heaptrack.sh).
 *
 *   baseline      20 x 1000 bytes, kept to the end
 *   churn         500 x (malloc 64, free it at once): 500 temporary
 *   pause         0.3 s, so that the peak comes measurably after the start
 *   peak          100 x 10000 bytes, then all freed: the peak is
 *                 20000 + 1000000 = 1020000 bytes in 120 blocks
 *   pairs         200 x (a = malloc 32, b = malloc 32, free a, free b):
 *                 neither is temporary (b came between a and its free,
 *                 the free of a between b and its free)
 *   plateau       300 x 1000 bytes (320000 in use, below the peak), freed
 *
 * No stdio: its buffer would be one more allocation to explain. */
#include <stdlib.h>
#include <time.h>

#define KEEP 20
#define PEAK_BLOCKS 100
#define PLATEAU 300

static void *volatile sink;

static void *__attribute__((noinline)) baseline_block(void) { return malloc(1000); }
static void *__attribute__((noinline)) churn_block(void) { return malloc(64); }
static void *__attribute__((noinline)) peak_block(void) { return malloc(10000); }
static void *__attribute__((noinline)) pair_block(void) { return malloc(32); }
static void *__attribute__((noinline)) plateau_block(void) { return malloc(1000); }

int main(void)
{
    void *keep[KEEP], *big[PEAK_BLOCKS], *flat[PLATEAU];
    for (int i = 0; i < KEEP; i++)
        keep[i] = baseline_block();

    for (int i = 0; i < 500; i++) {
        void *p = churn_block();
        sink = p;
        free(p);
    }

    struct timespec pause = { 0, 300 * 1000 * 1000 };
    nanosleep(&pause, NULL);

    for (int i = 0; i < PEAK_BLOCKS; i++)
        big[i] = peak_block();
    sink = big[PEAK_BLOCKS - 1];
    for (int i = 0; i < PEAK_BLOCKS; i++)
        free(big[i]);

    for (int i = 0; i < 200; i++) {
        void *a = pair_block(), *b = pair_block();
        sink = a;
        sink = b;
        free(a);
        free(b);
    }

    for (int i = 0; i < PLATEAU; i++)
        flat[i] = plateau_block();
    sink = flat[0];
    for (int i = 0; i < PLATEAU; i++)
        free(flat[i]);

    for (int i = 0; i < KEEP; i++)
        free(keep[i]);
    return 0;
}
