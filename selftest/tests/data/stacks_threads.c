/* Allocations made on two threads besides main, kept until exit, for
 * comparing memtrace's stacks with gdb's backtraces (a thread's stack ends
 * in clone, not in _start; the frames up to the thread function are
 * compared).  Built -O2 by the board tests. */
#include <pthread.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static void *keep[16];

NOINLINE void *thread_leaf(size_t n) { void *p = malloc(n); __asm__ volatile("" ::: "memory"); return p; }
NOINLINE void thread_mid(int id) { keep[id] = thread_leaf(300 + (size_t)id); __asm__ volatile("" ::: "memory"); }

static void *thread_main(void *arg)
{
    thread_mid((int)(long)arg);
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    for (long i = 0; i < 2; i++) {
        if (pthread_create(&t[i], NULL, thread_main, (void *)(i + 1)) != 0)
            return 2;
        pthread_join(t[i], NULL);   /* one at a time: the same order traced or not */
    }
    keep[0] = thread_leaf(123);
    return 0;
}
