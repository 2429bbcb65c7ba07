/* A program's own pool functions, for --alloc-fn: pool_get (malloc-like),
 * pool_zero (calloc-like, through pool_get), pool_aligned (aligned_alloc-
 * like), pool_grow (realloc-like) and pool_put (free-like).  Each keeps a note of its own in a malloc'ed block
 * it frees before it returns: calls inside a named function are its own,
 * not the program's (memtrace counts the outermost call).  With
 * "mismatch", a pool block is given to free() and a malloc'ed block to
 * pool_put (the same memory for the C library: the program stays correct). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 300

static unsigned long notes;

static void note(void)
{
    unsigned long *n = malloc(sizeof(*n));
    if (n) {
        *n = ++notes;
        free(n);
    }
}

__attribute__((noinline)) void *pool_get(size_t n)
{
    note();
    return malloc(n);
}

__attribute__((noinline)) void *pool_zero(size_t k, size_t n)
{
    note();
    void *p = pool_get(k * n);
    if (p)
        memset(p, 0, k * n);
    return p;
}

__attribute__((noinline)) void pool_put(void *p)
{
    note();
    free(p);
}

__attribute__((noinline)) void *pool_aligned(size_t align, size_t n)
{
    note();
    return aligned_alloc(align, n);
}

__attribute__((noinline)) void *pool_grow(void *p, size_t n)
{
    note();
    return realloc(p, n);
}

static void *kept[N];

int main(int argc, char **argv)
{
    for (int i = 0; i < N; i++)
        kept[i] = i % 3 ? i % 7 ? pool_get(24 + (size_t)i) : pool_aligned(64, 128)
                        : pool_zero(4, 8);
    for (int i = 0; i < N; i += 5)
        kept[i] = pool_grow(kept[i], 200);
    for (int i = 0; i < N; i++)
        if (i % 4)
            pool_put(kept[i]);
    char *plain = malloc(100);
    free(plain);
    if (argc > 1 && strcmp(argv[1], "mismatch") == 0) {
        pool_put(malloc(64));
        free(kept[0]);
        kept[0] = NULL;
    }
    printf("notes: %lu\n", notes);
    return 0;
}
