/* Allocations from places an unwinder must get through: a deep chain of
 * calls, a shared library (dlopen'ed from argv[2]), and a signal handler
 * that interrupts ordinary code.  gdb's backtrace at each malloc is the
 * oracle (selftest/tests/unwind_gdb.sh).
 *
 * A thread's stack ends in clone (its CFI marks the return address
 * undefined), not in _start.
 *
 * With "altstack" the handler runs on a sigaltstack, below the interrupted
 * frames' stack: the CFA jumps down across the signal frame.
 *
 *   unwind_chain deep | signal | altstack | thread | lib PATH.so | all PATH.so */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile void *sink;

__attribute__((noinline)) static void alloc_here(size_t n)
{
    sink = malloc(n);
    free((void *)sink);
}

__attribute__((noinline)) static int recurse(int depth, size_t n)
{
    if (depth == 0) {
        alloc_here(n);
        return 1;
    }
    volatile char pad[depth * 8 + 1];   /* frames of different sizes */
    pad[0] = (char)depth;
    return recurse(depth - 1, n) + pad[0];
}

__attribute__((noinline)) static void level3(void) { recurse(7, 33); }
__attribute__((noinline)) static void level2(void) { level3(); sink = NULL; }
__attribute__((noinline)) static void level1(void) { level2(); sink = NULL; }

static void on_usr1(int sig)
{
    (void)sig;
    alloc_here(77);
}

/* The signal arrives in the middle of this loop, not at a call. */
__attribute__((noinline)) static void interrupted(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    raise(SIGUSR1);
    sink = NULL;
}

static void *thread_main(void *arg)
{
    (void)arg;
    level1();
    return NULL;
}

static void in_thread(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, thread_main, NULL) != 0)
        exit(2);
    pthread_join(t, NULL);
}

static char alt_stack[64 * 1024];

__attribute__((noinline)) static void interrupted_on_altstack(void)
{
    stack_t ss = { .ss_sp = alt_stack, .ss_size = sizeof(alt_stack), .ss_flags = 0 };
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, NULL);
    raise(SIGUSR1);
    sink = NULL;
}

static void via_library(const char *path)
{
    void *h = dlopen(path, RTLD_NOW);
    if (!h) {
        fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
        exit(2);
    }
    void (*fn)(int) = (void (*)(int))dlsym(h, "unwind_lib_alloc");
    if (!fn) {
        fprintf(stderr, "dlsym: %s\n", dlerror());
        exit(2);
    }
    fn(3);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "deep";
    bool all = strcmp(mode, "all") == 0;
    if (all || strcmp(mode, "deep") == 0)
        level1();
    if (all || strcmp(mode, "signal") == 0)
        interrupted();
    if (all || strcmp(mode, "altstack") == 0)
        interrupted_on_altstack();
    if (all || strcmp(mode, "thread") == 0)
        in_thread();
    if ((all || strcmp(mode, "lib") == 0) && argc > 2)
        via_library(argv[2]);
    return 0;
}
