/* many_stacks: N live blocks spread over up to 4096 distinct call stacks
 * (three levels of 16 functions each), kept until exit, so a tracer's final
 * report has many stacks to symbolize.
 *
 *   many_stacks N
 *
 * The last line printed is "many_stacks: N blocks at T" where T is
 * CLOCK_REALTIME in microseconds just before exit, so a caller can time
 * what the tracer does after the program is done (report writing).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void step_fn(long i, void **out);

#define SIXTEEN(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) \
                   X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)

#define LEAF(n)                                                                     \
    static void __attribute__((noinline)) leaf##n(long i, void **out)                \
    {                                                                                \
        *out = malloc(16 + (size_t)(i & 7) + n);                                    \
        __asm__ volatile("" ::: "memory");                                           \
    }
SIXTEEN(LEAF)
#define LEAF_ENTRY(n) leaf##n,
static step_fn *const leaves[16] = { SIXTEEN(LEAF_ENTRY) };

#define MID(n)                                                                      \
    static void __attribute__((noinline)) mid##n(long i, void **out)                 \
    {                                                                                \
        leaves[i & 15](i, out);                                                      \
        __asm__ volatile("" ::: "memory");                                           \
    }
SIXTEEN(MID)
#define MID_ENTRY(n) mid##n,
static step_fn *const mids[16] = { SIXTEEN(MID_ENTRY) };

#define TOP(n)                                                                      \
    static void __attribute__((noinline)) top##n(long i, void **out)                 \
    {                                                                                \
        mids[(i >> 4) & 15](i, out);                                                 \
        __asm__ volatile("" ::: "memory");                                           \
    }
SIXTEEN(TOP)
#define TOP_ENTRY(n) top##n,
static step_fn *const tops[16] = { SIXTEEN(TOP_ENTRY) };

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 4096;
    if (n < 1) {
        fprintf(stderr, "many_stacks: N must be positive\n");
        return 2;
    }
    void **keep = malloc((size_t)n * sizeof(*keep));
    if (!keep)
        return 1;
    for (long i = 0; i < n; i++)
        tops[(i >> 8) & 15](i, &keep[i]);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    printf("many_stacks: %ld blocks at %lld\n", n, (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
    fflush(stdout);
    return 0;
}
