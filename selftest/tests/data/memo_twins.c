/* Stacks that look alike to the agent's unwind memo (target/agent/payload):
 * the same function entered with the same pc, rsp and rbp from different
 * callers, deeper and shallower paths to the same outer frames, and a
 * return address that changes under a frame that stays.  Every block is
 * kept (or freed where said), so that the report lists every path with
 * its counts: agent_engines.sh compares it with the breakpoint engine's.
 * Built with frame pointers (rbp then equal at the same depth) and without.
 *
 * "memo_twins migrate" (agent_ring_order.sh): the thread moves to another
 * CPU before the free, the malloc and the realloc of every reused block
 * (free(p), then malloc(8) returns p again from the tcache, then
 * realloc(p)), so that one thread's three records come from three CPU
 * moves in a row, whatever clock each CPU keeps (issue 29, case 4a). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
#define KEEP 4096

static void *keep[KEEP];
static unsigned nkeep;

static cpu_set_t allowed; /* the CPUs the program may run on (migrate) */
static int migrate, last_cpu = -1;

/* migrate: on to the next allowed CPU (a no-op on one CPU or without it) */
static NOINLINE void move_on(void)
{
    if (!migrate)
        return;
    for (int k = 1; k <= CPU_SETSIZE; k++) {
        int c = (last_cpu + k) % CPU_SETSIZE;
        if (CPU_ISSET(c, &allowed)) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(c, &one);
            if (sched_setaffinity(0, sizeof(one), &one) == 0)
                last_cpu = c;
            return;
        }
    }
}

static NOINLINE void *moved(void *p)
{
    move_on();
    return p;
}

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

int main(int argc, char **argv)
{
    migrate = argc > 1 && strcmp(argv[1], "migrate") == 0 &&
              sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && CPU_COUNT(&allowed) > 1;
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
            move_on();
            free(keep[(nkeep - 1) % KEEP]);
            keep[(nkeep - 1) % KEEP] = NULL;
            move_on();
            store(realloc(moved(leaf(8)), 64));
            break;
        }
    }
    if (migrate)
        sched_setaffinity(0, sizeof(allowed), &allowed);
    return 0;
}
