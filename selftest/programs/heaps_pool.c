/* Memory pools annotated for valgrind (VALGRIND_CREATE_MEMPOOL and the
 * rest of the family): pieces carved from malloc'ed superblocks.
 *   heaps_pool         a plain pool: alloc, free, trim, change, move,
 *                      exists, and a second pool destroyed with live pieces
 *   heaps_pool meta    a METAPOOL|AUTO_FREE pool whose pieces are
 *                      superblocks for VALGRIND_MALLOCLIKE_BLOCK objects;
 *                      freeing a piece frees the objects inside it
 * Some pieces stay referenced, some are forgotten (leaked). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/valgrind.h>

#define PIECES 200

static void *kept[PIECES];

static void plain_pools(void)
{
    char *super = malloc(64 * 1024);
    char *pool = super; /* the pool's handle: its superblock, as many do */
    VALGRIND_CREATE_MEMPOOL(pool, 0, 0);
    size_t used = 0;
    for (int i = 0; i < PIECES; i++) {
        size_t n = 32 + (size_t)(i % 5) * 16;
        kept[i] = super + used;
        VALGRIND_MEMPOOL_ALLOC(pool, kept[i], n);
        memset(kept[i], 0, n);
        used += n;
    }
    for (int i = 0; i < PIECES; i++)
        if (i % 4 == 1) {
            VALGRIND_MEMPOOL_FREE(pool, kept[i]);
            kept[i] = NULL;
        }
    /* One piece shrinks and moves 16 bytes up. */
    char *moved = (char *)kept[0] + 16;
    VALGRIND_MEMPOOL_CHANGE(pool, kept[0], moved, 8);
    kept[0] = moved;
    /* Pieces past the first 8 KiB of the superblock go. */
    VALGRIND_MEMPOOL_TRIM(pool, super, 8 * 1024);
    for (int i = 0; i < PIECES; i++)
        if (kept[i] && (char *)kept[i] >= super + 8 * 1024)
            kept[i] = NULL;
    /* Forget some pieces: leaked. */
    for (int i = 0; i < PIECES; i++)
        if (i % 10 == 2)
            kept[i] = NULL;
    /* The pool moves to a new handle, the old one is gone. */
    static char handle;
    VALGRIND_MOVE_MEMPOOL(pool, &handle);
    printf("exists: old %u new %u\n", VALGRIND_MEMPOOL_EXISTS(pool),
           VALGRIND_MEMPOOL_EXISTS(&handle));

    /* A second pool destroyed with live pieces; its superblock freed. */
    char *super2 = malloc(4096);
    VALGRIND_CREATE_MEMPOOL(super2, 0, 1);
    for (int i = 0; i < 10; i++)
        VALGRIND_MEMPOOL_ALLOC(super2, super2 + i * 64, 48);
    VALGRIND_MEMPOOL_FREE(super2, super2);
    VALGRIND_DESTROY_MEMPOOL(super2);
    free(super2);
}

static void *objects[64];

static void meta_pool(void)
{
    static char pool;
    VALGRIND_CREATE_MEMPOOL_EXT(&pool, 0, 0,
                                VALGRIND_MEMPOOL_METAPOOL | VALGRIND_MEMPOOL_AUTO_FREE);
    char *supers[4];
    for (int s = 0; s < 4; s++) {
        supers[s] = malloc(8192);
        VALGRIND_MEMPOOL_ALLOC(&pool, supers[s], 8192);
        for (int i = 0; i < 16; i++) {
            char *p = supers[s] + 64 + i * 96;
            VALGRIND_MALLOCLIKE_BLOCK(p, 80, 0, 0);
            objects[s * 16 + i] = p;
        }
    }
    /* Two objects given back one by one. */
    VALGRIND_FREELIKE_BLOCK(objects[3], 0);
    objects[3] = NULL;
    VALGRIND_FREELIKE_BLOCK(objects[20], 0);
    objects[20] = NULL;
    /* Superblock 1 goes back to the pool: its objects go with it. */
    VALGRIND_MEMPOOL_FREE(&pool, supers[1]);
    for (int i = 16; i < 32; i++)
        objects[i] = NULL;
    free(supers[1]);
    /* Superblock 3's objects are forgotten (leaked), superblock 3 kept. */
    for (int i = 48; i < 64; i++)
        objects[i] = NULL;
}

int main(int argc, char **argv)
{
    printf("running on valgrind: %u\n", (unsigned)RUNNING_ON_VALGRIND);
    if (argc > 1 && strcmp(argv[1], "meta") == 0)
        meta_pool();
    else
        plain_pools();
    printf("done\n");
    return 0;
}
