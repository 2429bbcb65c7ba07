/* Stacks that look alike to the agent's unwind memo (target/agent/payload):
 * the same function entered with the same pc, rsp and rbp from different
 * callers, deeper and shallower paths to the same outer frames, and a
 * return address that changes under a frame that stays.  Every block is
 * kept (or freed where said), so that the report lists every path with
 * its counts: agent_engines.sh compares it with the breakpoint engine's.
 * Built with frame pointers (rbp then equal at the same depth) and without. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define KEEP 4096

static void *keep[KEEP];
static unsigned nkeep;

static NOINLINE void store(void *p)
{
    keep[nkeep++ % KEEP] = p;
    __asm__ volatile("" ::: "memory");
}

/* One allocating leaf; its callers have frames of the same size. */
NOINLINE void *leaf(size_t n)
{
    void *p = malloc(n);
    __asm__ volatile("" ::: "memory");
    return p;
}

NOINLINE void twin_a(int i) { store(leaf(16 + (size_t)(i & 3))); __asm__ volatile("" ::: "memory"); }
NOINLINE void twin_b(int i) { store(leaf(48 + (size_t)(i & 3))); __asm__ volatile("" ::: "memory"); }

/* The same middle frame under two different outer twins. */
NOINLINE void middle(int i) { twin_a(i); __asm__ volatile("" ::: "memory"); }
NOINLINE void outer_a(int i) { middle(i); __asm__ volatile("" ::: "memory"); }
NOINLINE void outer_b(int i) { middle(i + 1); __asm__ volatile("" ::: "memory"); }

/* Deeper and shallower paths that meet again further out. */
NOINLINE void deep3(int i) { twin_b(i); __asm__ volatile("" ::: "memory"); }
NOINLINE void deep2(int i) { deep3(i); __asm__ volatile("" ::: "memory"); }
NOINLINE void deep1(int i) { deep2(i); __asm__ volatile("" ::: "memory"); }

/* Recursion of varying depth: the same frames at shifted positions. */
NOINLINE int recurse(int depth, int i)
{
    if (depth == 0) {
        twin_a(i);
        return 0;
    }
    int r = recurse(depth - 1, i) + 1;
    __asm__ volatile("" ::: "memory");
    return r;
}

int main(void)
{
    for (int i = 0; i < 3000; i++) {
        switch (i % 7) {
        case 0: twin_a(i); break;
        case 1: twin_b(i); break;
        case 2: outer_a(i); break;
        case 3: outer_b(i); break;
        case 4: deep1(i); break;
        case 5: recurse(i % 5, i); break;
        default:
            /* a free from the same leaf depth, then a realloc */
            free(keep[(nkeep - 1) % KEEP]);
            keep[(nkeep - 1) % KEEP] = NULL;
            store(realloc(leaf(8), 64));
            break;
        }
    }
    return 0;
}
