/* A bump arena annotated for valgrind: 500 objects carved from one 1 MiB
 * malloc, each made with VALGRIND_MALLOCLIKE_BLOCK and most given back
 * with VALGRIND_FREELIKE_BLOCK; one object resized in place.  Some
 * objects stay referenced (reachable), some are forgotten (leaked).
 * Prints RUNNING_ON_VALGRIND, which must stay 0 under memtrace.  With
 * "leak" as argument the arena itself is forgotten too; with "misuse",
 * FREELIKE_BLOCK is given an address no MALLOCLIKE_BLOCK made, a freed
 * object again, and a malloc'ed block (memcheck: two invalid frees and a
 * mismatched free). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/valgrind.h>

#define ARENA (1u << 20)
#define OBJECTS 500

static char *arena_base;
static size_t arena_used;

static void *arena_alloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (arena_used + n > ARENA)
        return NULL;
    void *p = arena_base + arena_used;
    arena_used += n;
    VALGRIND_MALLOCLIKE_BLOCK(p, n, 0, 0);
    return p;
}

static void arena_free(void *p)
{
    VALGRIND_FREELIKE_BLOCK(p, 0);
}

static void *kept[OBJECTS];

int main(int argc, char **argv)
{
    printf("running on valgrind: %u\n", (unsigned)RUNNING_ON_VALGRIND);
    arena_base = malloc(ARENA);
    char *other = malloc(4096);
    for (int i = 0; i < OBJECTS; i++) {
        char *p = arena_alloc(16 + (size_t)(i % 7) * 16);
        memset(p, i, 16);
        kept[i] = p;
    }
    /* Most are freed; every 8th stays reachable, every 50th is forgotten. */
    for (int i = 0; i < OBJECTS; i++) {
        if (i % 50 == 1)
            kept[i] = NULL;
        else if (i % 8 != 0) {
            arena_free(kept[i]);
            kept[i] = NULL;
        }
    }
    /* Grown in place: the block keeps its address, its size changes. */
    VALGRIND_RESIZEINPLACE_BLOCK(kept[0], 16, 48, 0);
    free(other);
    if (argc > 1 && strcmp(argv[1], "misuse") == 0) {
        VALGRIND_FREELIKE_BLOCK(arena_base + ARENA - 64, 0);
        char *p = arena_alloc(32);
        arena_free(p);
        arena_free(p);
        VALGRIND_FREELIKE_BLOCK(malloc(24), 0);
    }
    if (argc > 1 && strcmp(argv[1], "leak") == 0)
        arena_base = NULL;
    printf("arena used: %zu\n", arena_used);
    return 0;
}
