/* A pool whose functions keep their arguments in their own order, for
 * --alloc-fn NAME=KIND:POSITIONS:
 *   pool_alloc(size, pool)               malloc:1   (a trailing argument)
 *   pool_calloc(pool, n, flags, size)    calloc:2,4 (a gap)
 *   pool_realloc(p, pool, size)          realloc:1,3
 *   pool_aligned(pool, size, align)      aligned:3,2 (out of order)
 *   pool_free(pool, p)                   free:2
 * Blocks are carved from a static arena (no malloc behind them), so that
 * the pool's own figures are all there is; blocks hold no pointers, and
 * the pool keeps offsets, not addresses: reachability is the program's
 * kept[] alone.  Some blocks are kept, some forgotten (leaked).
 *
 * With "annotate" first, every pool function also tells valgrind what it
 * did (VALGRIND_MALLOCLIKE_BLOCK / FREELIKE_BLOCK): memcheck's figures of
 * that run are the oracle of memtrace's --alloc-fn figures of the plain
 * run.  With "mismatch", a big block (over POOL_BIG: from malloc, as pools
 * send big requests there) is given to free(): the C library is content,
 * memcheck calls it a mismatched free. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/valgrind.h>

#define ARENA (1u << 20)
#define POOL_BIG 4096
#define OBJECTS 400

struct pool {
    size_t used;     /* offset of the next free byte of arena */
    unsigned long calls;
};

static _Alignas(64) char arena[ARENA];
static int annotate;

static void tell_alloc(void *p, size_t n)
{
    if (annotate && p)
        VALGRIND_MALLOCLIKE_BLOCK(p, n, 0, 0);
}

static void tell_free(void *p)
{
    if (annotate && p)
        VALGRIND_FREELIKE_BLOCK(p, 0);
}

static void *carve(struct pool *pool, size_t n, size_t align)
{
    if (n > POOL_BIG)
        return malloc(n);
    size_t at = (pool->used + align - 1) & ~(align - 1);
    if (at < 16)
        at = 16; /* no block at the arena's start */
    if (at + n > ARENA)
        return NULL;
    pool->used = at + (n ? n : 1);
    return arena + at;
}

static int in_arena(const void *p) { return (const char *)p >= arena && (const char *)p < arena + ARENA; }

__attribute__((noinline)) void *pool_alloc(size_t size, struct pool *pool)
{
    pool->calls++;
    void *p = carve(pool, size, 16);
    tell_alloc(p, size);
    return p;
}

__attribute__((noinline)) void *pool_calloc(struct pool *pool, size_t n, int flags, size_t size)
{
    (void)flags;
    pool->calls++;
    void *p = carve(pool, n * size, 16);
    if (p)
        memset(p, 0, n * size);
    tell_alloc(p, n * size);
    return p;
}

__attribute__((noinline)) void *pool_aligned(struct pool *pool, size_t size, size_t align)
{
    pool->calls++;
    void *p = carve(pool, size, align);
    tell_alloc(p, size);
    return p;
}

__attribute__((noinline)) void pool_free(struct pool *pool, void *p)
{
    pool->calls++;
    tell_free(p);
    if (p && !in_arena(p))
        free(p); /* a big block */
}

/* Grows into a new block; the old one stays carved (a bump pool). */
__attribute__((noinline)) void *pool_realloc(void *p, struct pool *pool, size_t size)
{
    pool->calls++;
    void *q = carve(pool, size, 16);
    if (q && p)
        memcpy(q, p, size); /* the old block is always smaller here */
    tell_alloc(q, size);
    if (q)
        tell_free(p);
    return q;
}

static struct pool pool;
static void *kept[OBJECTS];

int main(int argc, char **argv)
{
    int a = 1;
    if (a < argc && strcmp(argv[a], "annotate") == 0) {
        annotate = 1;
        a++;
    }
    for (int i = 0; i < OBJECTS; i++) {
        if (i % 5 == 0)
            kept[i] = pool_calloc(&pool, 3, 0, 8 + (size_t)i % 7);
        else if (i % 7 == 0)
            kept[i] = pool_aligned(&pool, 48, 256);
        else
            kept[i] = pool_alloc(16 + (size_t)i % 40, &pool);
        if (kept[i])
            memset(kept[i], 0x5a, 8);
    }
    for (int i = 0; i < OBJECTS; i += 6)
        kept[i] = pool_realloc(kept[i], &pool, 100);
    kept[1] = pool_realloc(NULL, &pool, 20); /* kept[1]'s block is forgotten */
    for (int i = 2; i < OBJECTS; i++)
        if (i % 3 == 0)
            pool_free(&pool, kept[i]);
        else if (i % 11 == 0)
            kept[i] = NULL; /* forgotten: definitely lost */
    if (a < argc && strcmp(argv[a], "mismatch") == 0) {
        void *big = pool_alloc(POOL_BIG * 2, &pool);
        free(big);
    }
    printf("pool calls: %lu, running on valgrind: %d\n", pool.calls, (int)RUNNING_ON_VALGRIND);
    return 0;
}
