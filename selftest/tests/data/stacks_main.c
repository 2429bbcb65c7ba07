/* Allocations from known call paths, kept until exit, for comparing
 * memtrace's stacks with gdb's backtraces.  Built -O0 and -O2 by the test. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

void *lib_alloc(size_t n);     /* in a shared library */
void *lib_alloc_via(void *(*fn)(size_t), size_t n);

static void *keep[64];
static int nkeep;

#define NOINLINE __attribute__((noinline))

static NOINLINE void store(void *p) { keep[nkeep++ % 64] = p; __asm__ volatile("" ::: "memory"); }

NOINLINE void *leaf_alloc(size_t n) { void *p = malloc(n); __asm__ volatile("" ::: "memory"); return p; }
NOINLINE void *leaf_calloc(size_t n) { void *p = calloc(n, 2); __asm__ volatile("" ::: "memory"); return p; }
NOINLINE void level3(int i) { store(leaf_alloc(100 + (size_t)i)); __asm__ volatile("" ::: "memory"); }
NOINLINE void level2(int i) { level3(i); __asm__ volatile("" ::: "memory"); }
NOINLINE void level1(int i) { if (i & 1) level2(i); else level3(i); __asm__ volatile("" ::: "memory"); }

NOINLINE int recurse(int depth)
{
    if (depth == 0) {
        store(leaf_calloc(7));
        return 0;
    }
    int r = recurse(depth - 1);
    __asm__ volatile("" ::: "memory");
    return r + 1;
}

static NOINLINE void on_signal(int sig)
{
    (void)sig;
    store(malloc(4242));
}

NOINLINE void raise_it(void)
{
    raise(SIGUSR1);
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    signal(SIGUSR1, on_signal);
    for (int i = 0; i < 4; i++)
        level1(i);
    recurse(6);
    store(lib_alloc(555));
    store(lib_alloc_via(leaf_alloc, 666));
    raise_it();
    char *s = strdup("kept");
    store(s);
    return 0;
}
