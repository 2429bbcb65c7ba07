/* Threads created and cancelled while memtrace attaches (issue 29): the
 * main thread makes a thread, which allocates and frees a block and then
 * waits at a cancellation point; main cancels it, joins it and frees the
 * block it kept, over and over, until SIGUSR1 (sent once memtrace's
 * console answers, so the attach happens during that churn).  Then K more
 * threads, made and cancelled the same way, each keep one 200-byte block
 * from after_leaf() for good, and the program prints what it did.  So the
 * blocks in use that memtrace can see are exactly those K, with one stack:
 * agent_attach_cancel.sh compares it with the breakpoint engine's.  The
 * first cancellation loads libgcc_s (glibc unwinds a cancelled thread with
 * it) before any tracer is there. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile sig_atomic_t go;
static sem_t ready;
static void *kept;

static void on_usr1(int sig)
{
    (void)sig;
    go = 1;
}

NOINLINE void *during_leaf(void)
{
    void *p = malloc(100);
    __asm__ volatile("" ::: "memory");
    return p;
}

NOINLINE void *after_leaf(void)
{
    void *p = malloc(200);
    __asm__ volatile("" ::: "memory");
    return p;
}

static void *worker(void *arg)
{
    int after = (int)(intptr_t)arg;
    free(malloc(48)); /* a pair of the thread's own */
    kept = after ? after_leaf() : during_leaf();
    sem_post(&ready);
    for (;;)
        pause(); /* a cancellation point */
    return NULL;
}

/* One thread made, allocating, cancelled and joined; its block stays
 * (after) or main frees it. */
static int cycle(int after)
{
    pthread_t th;
    if (pthread_create(&th, NULL, worker, (void *)(intptr_t)after) != 0)
        return -1;
    while (sem_wait(&ready) != 0)
        ;
    void *p = kept;
    if (pthread_cancel(th) != 0 || pthread_join(th, NULL) != 0)
        return -1;
    if (!after)
        free(p);
    return 0;
}

int main(int argc, char **argv)
{
    int k = argc > 1 ? atoi(argv[1]) : 50;
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    if (sem_init(&ready, 0, 0) != 0 || sigaction(SIGUSR1, &sa, NULL) != 0)
        return 1;
    /* the first cancellation before anything else (libgcc_s loaded) */
    if (cycle(0) != 0)
        return 1;
    printf("ready\n");
    fflush(stdout);
    unsigned long during = 0;
    while (!go) {
        if (cycle(0) != 0)
            return 1;
        during++;
    }
    for (int i = 0; i < k; i++)
        if (cycle(1) != 0)
            return 1;
    printf("attach_cancel: %d threads cancelled after the attach, %d blocks of 200 bytes kept\n", k, k);
    fprintf(stderr, "attach_cancel: %lu threads made and cancelled before SIGUSR1\n", during);
    return 0;
}
