/* Known leaks at exit, one of each kind valgrind's memcheck tells apart:
 *
 *   definitely lost: a block whose only pointer was dropped (48 B); a block
 *                    whose only "pointer" is XOR-hidden in a global (55 B);
 *                    the head of a leaked list (32 B); the block of a
 *                    leaked two-block cycle allocated first (41 B)
 *   indirectly lost: the 4 other nodes of the list (4 x 32 B); the other
 *                    block of the cycle (23 B)
 *   possibly lost:   a block only reached through an interior pointer in a
 *                    global (160 B), and the block it points to (112 B)
 *   still reachable: a block in a global (80 B), a calloc'ed array with 3
 *                    blocks behind it (24 + 3 x 16 B)
 *
 * Odd sizes (55, 41, 23): glibc's own bookkeeping (the header of the next
 * chunk) lands inside such blocks, and must not keep them alive.  Pointers
 * are dropped in helper functions; their dead frames are not wiped.
 * Argument "realloc" grows the reachable array with realloc first. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
    struct node *next;
    char pad[24];
};

static void *g_reachable;
static void **g_array;
static uintptr_t g_hidden;
static char *g_interior;

static void drop_one(void)
{
    char *p = malloc(48);
    memset(p, 1, 48);
    p = NULL;
}

static void leak_list(void)
{
    struct node *head = NULL;
    for (int i = 0; i < 5; i++) {
        struct node *n = calloc(1, sizeof(*n));
        n->next = head;
        head = n;
    }
    head = NULL;
}

static void leak_cycle(void)
{
    void **a = calloc(1, 41), **b = calloc(1, 23);
    a[0] = b;
    b[0] = a;
    a = b = NULL;
}

static void keep_some(int use_realloc)
{
    g_reachable = calloc(1, 80);
    g_array = calloc(use_realloc ? 1 : 3, sizeof(void *));
    if (use_realloc)
        g_array = realloc(g_array, 3 * sizeof(void *));
    for (int i = 0; i < 3; i++)
        g_array[i] = calloc(1, 16);
    g_hidden = (uintptr_t)calloc(1, 55) ^ (uintptr_t)0x5a5a5a5a5a5a5a5aull;
    char *outer = calloc(1, 160);
    void **inner = calloc(1, 112);
    ((void **)outer)[2] = inner;    /* a start pointer, held by a possibly lost block */
    g_interior = outer + 40;
    outer = NULL;
    inner = NULL;
}

int main(int argc, char **argv)
{
    int use_realloc = argc > 1 && strcmp(argv[1], "realloc") == 0;
    drop_one();
    leak_list();
    leak_cycle();
    keep_some(use_realloc);
    return 0;
}
