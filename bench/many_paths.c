/* many_paths: 2^D live blocks, each allocated from its own call path (a
 * binary recursion D deep whose two calls sit at different return
 * addresses), kept until exit: the report has 2^D distinct stacks.
 *
 *   many_paths [D]        (D = 17 by default: 131,072 blocks and stacks)
 *
 * Block i (counting leaves left to right) has 16 + (i & 15) bytes, so the
 * total is fixed by D: 2^D * 16 + 2^(D-4) * 120 bytes for D >= 4.
 */
#include <stdio.h>
#include <stdlib.h>

static void **keep;
static long next;

static void __attribute__((noinline)) branch(int depth)
{
    if (depth == 0) {
        keep[next] = malloc(16 + (size_t)(next & 15));
        next++;
        return;
    }
    branch(depth - 1);
    __asm__ volatile("" ::: "memory");  /* two calls, two return addresses */
    branch(depth - 1);
    __asm__ volatile("" ::: "memory");  /* and no tail call */
}

int main(int argc, char **argv)
{
    int d = argc > 1 ? atoi(argv[1]) : 17;
    if (d < 0 || d > 24) {
        fprintf(stderr, "many_paths: depth must be 0..24\n");
        return 2;
    }
    keep = malloc(((size_t)1 << d) * sizeof(*keep));
    if (!keep)
        return 1;
    branch(d);
    printf("many_paths: %ld blocks\n", next);
    return 0;
}
