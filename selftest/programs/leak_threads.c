/* Pointers that live only in a thread's stack or in a register, checked by a
 * leak scan while the program is paused at a known point:
 *
 *   thread "stack": 64 B, its only pointer a local of the thread, which then
 *                   blocks on a semaphore                        -> reachable
 *   thread "reg":   80 B, its only pointer in a callee-saved register
 *                   (a `register` variable: gcc -O0 keeps it in rbx) while
 *                   the thread spins                              -> reachable
 *   main:           48 B dropped                            -> definitely lost
 *                   a 2-node list dropped           -> 1 definite + 1 indirect
 *                   32 B behind an interior pointer in a global -> possibly lost
 *                   32 B in a global                            -> reachable
 *
 * The scan point: under valgrind a VALGRIND_DO_LEAK_CHECK client request
 * (a no-op without valgrind); with a FIFO argument the program then prints
 * "scan point" and waits for one byte from the FIFO, so that a test can
 * send memtrace's console `scan` meanwhile.  With a second argument "more"
 * it then makes a 16 B block whose only pointer is in the 32 B global block
 * and drops a 208 B block, prints "scan point 2" and waits for one more
 * byte.  Then the threads end and the program exits. */
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#endif
#endif
#ifndef VALGRIND_DO_LEAK_CHECK
#define VALGRIND_DO_LEAK_CHECK
#endif

static volatile int ready, stop;
static sem_t release;
static char *g_interior;
static void **g_holder;

static void wipe_stack(void)
{
    volatile char buf[32768];
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = 0;
}

static void *stack_holder(void *arg)
{
    (void)arg;
    void *volatile mine = calloc(1, 64);
    wipe_stack();
    __sync_fetch_and_add(&ready, 1);
    sem_wait(&release);
    free(mine);
    return NULL;
}

static void *register_holder(void *arg)
{
    (void)arg;
    register uintptr_t mine = (uintptr_t)calloc(1, 80);
    wipe_stack();
    __sync_fetch_and_add(&ready, 1);
    while (!stop) {
    }
    free((void *)mine);
    return NULL;
}

static void leak_some(void)
{
    char *p = calloc(1, 48);
    p = NULL;
    void **a = calloc(1, 32), **b = calloc(1, 32);
    a[1] = b;
    a = b = NULL;
    g_interior = (char *)calloc(1, 32) + 8;
    g_holder = calloc(4, sizeof(void *));
}

static void leak_more(void)
{
    g_holder[0] = calloc(1, 16);
    char *p = calloc(1, 208);
    p = NULL;
}

/* Prints what, then (with a FIFO) waits for a byte from it.  The print
 * comes first in every run, so that both tools see stdout's buffer. */
static int pause_at(const char *fifo, const char *what)
{
    printf("%s\n", what);
    fflush(stdout);
    wipe_stack();
    VALGRIND_DO_LEAK_CHECK;
    if (!fifo)
        return 0;
    int fd = open(fifo, O_RDONLY);
    if (fd < 0)
        return -1;
    /* Read to the writer's close: a byte left in the FIFO (echo's newline)
     * would let the next pause through at once. */
    char c;
    int got = 0;
    while (read(fd, &c, 1) == 1)
        got = 1;
    close(fd);
    return got ? 0 : -1;
}

int main(int argc, char **argv)
{
    pthread_t t1, t2;
    sem_init(&release, 0, 0);
    leak_some();
    pthread_create(&t1, NULL, stack_holder, NULL);
    pthread_create(&t2, NULL, register_holder, NULL);
    while (ready < 2)
        usleep(1000);
    if (pause_at(argc > 1 ? argv[1] : NULL, "scan point") < 0)
        return 2;
    if (argc > 2 && strcmp(argv[2], "more") == 0) {
        leak_more();
        wipe_stack();
        if (pause_at(argv[1], "scan point 2") < 0)
            return 2;
    }
    stop = 1;
    sem_post(&release);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    free(g_interior - 8);
    return 0;
}
