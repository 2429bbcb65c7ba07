/* An annotated arena and pool filled before memtrace attaches, used after.
 *   heaps_attach attach READY GO   fills (100 objects, 40 pool pieces),
 *                                  creates READY, waits for GO, then goes on
 *   heaps_attach later             only what comes after the wait (the pool
 *                                  created there): valgrind's figures of it
 *                                  are what an attach after the fill sees
 * After the wait: 50 new objects, 30 of them and 20 old ones freed, 25 new
 * pool pieces and 10 old ones freed.  No stdio: no buffer allocated. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <valgrind/valgrind.h>

static char arena[64 * 1024];
static char pool_mem[64 * 1024];
static size_t used, pool_used;

static void *obj_new(void)
{
    void *p = arena + used;
    used += 48;
    VALGRIND_MALLOCLIKE_BLOCK(p, 40, 0, 0);
    return p;
}

static void *piece_new(void)
{
    void *p = pool_mem + pool_used;
    pool_used += 64;
    VALGRIND_MEMPOOL_ALLOC(pool_mem, p, 64);
    return p;
}

static void *old_objs[100], *new_objs[50], *old_pieces[40], *new_pieces[25];

int main(int argc, char **argv)
{
    int attach = argc == 4 && strcmp(argv[1], "attach") == 0;
    if (attach) {
        VALGRIND_CREATE_MEMPOOL(pool_mem, 0, 0);
        for (int i = 0; i < 100; i++)
            old_objs[i] = obj_new();
        for (int i = 0; i < 40; i++)
            old_pieces[i] = piece_new();
        close(open(argv[2], O_CREAT | O_WRONLY, 0600));
        struct timespec ms = {0, 1000000};
        while (access(argv[3], F_OK) != 0)
            nanosleep(&ms, NULL);
    } else {
        /* the same addresses as an attached run's */
        for (int i = 0; i < 100; i++)
            old_objs[i] = arena + 48 * i;
        for (int i = 0; i < 40; i++)
            old_pieces[i] = pool_mem + 64 * i;
        used = 100 * 48;
        pool_used = 40 * 64;
        VALGRIND_CREATE_MEMPOOL(pool_mem, 0, 0);
    }
    for (int i = 0; i < 50; i++)
        new_objs[i] = obj_new();
    for (int i = 0; i < 30; i++)
        VALGRIND_FREELIKE_BLOCK(new_objs[i], 0);
    for (int i = 0; i < 20; i++)
        VALGRIND_FREELIKE_BLOCK(old_objs[i], 0);
    for (int i = 0; i < 25; i++)
        new_pieces[i] = piece_new();
    for (int i = 0; i < 10; i++)
        VALGRIND_MEMPOOL_FREE(pool_mem, old_pieces[i]);
    return 0;
}
