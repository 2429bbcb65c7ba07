/* Load for the tracer's own memory (selftest/tests/rely_tracer_memory.sh):
 *
 *   rely_load blocks N FLAG    N live 16-byte blocks from one call site
 *   rely_load stacks N FLAG    N live blocks from N distinct call stacks
 *                              (5 levels of 10 functions: up to 100000)
 *   rely_load threads N FLAG   N threads alive at once, 8 blocks each
 *
 * After the work it prints "ready" and waits until the file FLAG exists, so
 * the caller can read the tracer's memory with everything still live. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void wait_for(const char *flag)
{
    struct timespec nap = { 0, 20 * 1000 * 1000 };
    for (int i = 0; i < 6000 && access(flag, F_OK) != 0; i++)
        nanosleep(&nap, NULL);
}

typedef void step_fn(long digits, void **out);

#define TEN(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9)

/* Each level calls the function of the next level picked by one decimal
 * digit; the asm after the call keeps it a call (not a jump), so each of
 * the 10^5 digit strings leaves its own return addresses on the stack. */
#define L5_FN(n)                                                                       \
    static void __attribute__((noinline)) l5_##n(long d, void **out)                   \
    {                                                                                  \
        (void)d;                                                                       \
        *out = malloc(16 + n);                                                         \
        __asm__ volatile("" ::: "memory");                                             \
    }
#define CALLER_FN(lvl, next, n)                                                        \
    static void __attribute__((noinline)) lvl##_##n(long d, void **out)                \
    {                                                                                  \
        next##_table[d % 10](d / 10, out);                                             \
        __asm__ volatile("" ::: "memory");                                             \
    }
#define ENTRY(lvl, n) lvl##_##n,

TEN(L5_FN)
#define L5_ENTRY(n) ENTRY(l5, n)
static step_fn *const l5_table[10] = { TEN(L5_ENTRY) };
#define L4_FN(n) CALLER_FN(l4, l5, n)
TEN(L4_FN)
#define L4_ENTRY(n) ENTRY(l4, n)
static step_fn *const l4_table[10] = { TEN(L4_ENTRY) };
#define L3_FN(n) CALLER_FN(l3, l4, n)
TEN(L3_FN)
#define L3_ENTRY(n) ENTRY(l3, n)
static step_fn *const l3_table[10] = { TEN(L3_ENTRY) };
#define L2_FN(n) CALLER_FN(l2, l3, n)
TEN(L2_FN)
#define L2_ENTRY(n) ENTRY(l2, n)
static step_fn *const l2_table[10] = { TEN(L2_ENTRY) };
#define L1_FN(n) CALLER_FN(l1, l2, n)
TEN(L1_FN)
#define L1_ENTRY(n) ENTRY(l1, n)
static step_fn *const l1_table[10] = { TEN(L1_ENTRY) };

static pthread_barrier_t all_alive, may_exit;

static void *thread_main(void *arg)
{
    void *keep[8];
    for (int i = 0; i < 8; i++)
        keep[i] = malloc(32 + (size_t)i);
    pthread_barrier_wait(&all_alive);
    pthread_barrier_wait(&may_exit);
    for (int i = 0; i < 8; i++)
        free(keep[i]);
    return arg;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: rely_load blocks|stacks|threads N FLAG\n");
        return 2;
    }
    long n = atol(argv[2]);
    const char *flag = argv[3];
    if (n < 1)
        return 2;
    if (strcmp(argv[1], "blocks") == 0) {
        void **keep = malloc((size_t)n * sizeof(*keep));
        for (long i = 0; i < n; i++)
            keep[i] = malloc(16);
        printf("ready %d\n", (int)getpid());
        fflush(stdout);
        wait_for(flag);
        return 0;
    }
    if (strcmp(argv[1], "stacks") == 0) {
        if (n > 100000)
            n = 100000;
        void **keep = malloc((size_t)n * sizeof(*keep));
        for (long i = 0; i < n; i++)
            l1_table[i % 10](i / 10, &keep[i]);
        printf("ready %d\n", (int)getpid());
        fflush(stdout);
        wait_for(flag);
        return 0;
    }
    if (strcmp(argv[1], "threads") == 0) {
        pthread_t *t = malloc((size_t)n * sizeof(*t));
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 64 * 1024);
        pthread_barrier_init(&all_alive, NULL, (unsigned)n + 1);
        pthread_barrier_init(&may_exit, NULL, (unsigned)n + 1);
        for (long i = 0; i < n; i++)
            if (pthread_create(&t[i], &attr, thread_main, NULL) != 0) {
                fprintf(stderr, "rely_load: cannot create thread %ld\n", i);
                return 1;
            }
        pthread_barrier_wait(&all_alive);
        printf("ready %d\n", (int)getpid());
        fflush(stdout);
        wait_for(flag);
        pthread_barrier_wait(&may_exit);
        for (long i = 0; i < n; i++)
            pthread_join(t[i], NULL);
        free(t);
        return 0;
    }
    return 2;
}
