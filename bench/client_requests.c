/* make bench, client requests (issue 31): the same rounds of allocation
 * made two ways, so that memtrace's cost per redirected valgrind client
 * request stands beside its cost per intercepted malloc.
 *
 *   client_requests ROUNDS request   each round carves a 64-byte block
 *                                    from a static arena, announces it with
 *                                    VALGRIND_MALLOCLIKE_BLOCK and gives it
 *                                    back with VALGRIND_FREELIKE_BLOCK
 *   client_requests ROUNDS malloc    each round is malloc(64) and free
 *
 * Either way a round is two calls.  The last line says how many were made
 * ("client_requests: N calls"), as allocbench does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/valgrind.h>

#define BLOCK 64
#define SLOTS 1024

static char arena[SLOTS * BLOCK] __attribute__((aligned(16)));

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[2], "request") && strcmp(argv[2], "malloc"))) {
        fprintf(stderr, "usage: client_requests ROUNDS request|malloc\n");
        return 2;
    }
    long rounds = atol(argv[1]);
    int requests = strcmp(argv[2], "request") == 0;
    unsigned long sum = 0;
    for (long i = 0; i < rounds; i++) {
        char *p;
        if (requests) {
            p = arena + (i % SLOTS) * BLOCK;
            VALGRIND_MALLOCLIKE_BLOCK(p, BLOCK, 0, 0);
        } else {
            p = malloc(BLOCK);
            if (!p)
                return 1;
        }
        p[0] = (char)i;     /* the block is used, as a program would */
        sum += (unsigned char)p[0];
        if (requests)
            VALGRIND_FREELIKE_BLOCK(p, 0);
        else
            free(p);
    }
    printf("client_requests: %ld calls (%lu)\n", rounds * 2, sum);
    return 0;
}
