/* A deterministic heap for the exports' tests (export_heaptrack.sh,
 * export_pprof.sh): every kind of block the heaptrack writer makes events
 * for, each from its own function.
 *
 *   early_block   10 x 3000 bytes, in use at the peak and at exit (leaked)
 *   temp_block    300 x (malloc 48, free it at once): 300 temporary
 *   pair_block    100 x (a = malloc 200, b = malloc 200, free a, free b):
 *                 not temporary
 *   peak_block    50 x 20000 bytes, then all freed: the peak is
 *                 30000 + 1000000 = 1030000 bytes in 60 blocks
 *   grow          realloc(NULL, 100), then to 5000, then freed
 *   late_block    5 x 7000 bytes after the peak, through an inlined
 *                 helper (inl_alloc), leaked
 *
 * No stdio: its buffer would be one more allocation to explain. */
#include <stdlib.h>

static void *volatile sink;

static void *__attribute__((noinline)) early_block(void) { return malloc(3000); }
static void *__attribute__((noinline)) temp_block(void) { return malloc(48); }
static void *__attribute__((noinline)) pair_block(void) { return malloc(200); }
static void *__attribute__((noinline)) peak_block(void) { return malloc(20000); }

static inline __attribute__((always_inline)) void *inl_alloc(size_t n)
{
    void *p = malloc(n);
    sink = p;
    return p;
}

static void *__attribute__((noinline)) late_block(void) { return inl_alloc(7000); }

static void __attribute__((noinline)) grow(void)
{
    char *p = realloc(NULL, 100);
    sink = p;
    p = realloc(p, 5000);
    sink = p;
    free(p);
}

int main(void)
{
    void *keep[10], *big[50];
    for (int i = 0; i < 10; i++)
        keep[i] = early_block();
    sink = keep[9];

    for (int i = 0; i < 300; i++) {
        void *p = temp_block();
        sink = p;
        free(p);
    }
    for (int i = 0; i < 100; i++) {
        void *a = pair_block(), *b = pair_block();
        sink = a;
        sink = b;
        free(a);
        free(b);
    }

    for (int i = 0; i < 50; i++)
        big[i] = peak_block();
    sink = big[49];
    for (int i = 0; i < 50; i++)
        free(big[i]);

    grow();
    for (int i = 0; i < 5; i++)
        sink = late_block();
    return 0;
}
