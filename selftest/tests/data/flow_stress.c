/* Real control flow in one program (issue 29): a signal handler on an
 * alternate stack that allocates and leaves with siglongjmp, one on the
 * thread's own stack that leaves with longjmp, swapcontext coroutines that
 * allocate on their own stacks, threads created and cancelled while the
 * others allocate, and the calling thread moved between CPUs.  Every block
 * is kept, and every count depends on the rounds only, so that the report
 * lists each path with the same counts whatever the scheduling:
 * flow_stress.sh compares the engines' stacks frame by frame.
 * Usage: flow_stress ROUNDS */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define BARRIER() __asm__ volatile("" ::: "memory")

static void *volatile keep[1 << 16];
static volatile unsigned nkeep;
static pthread_mutex_t keep_lock = PTHREAD_MUTEX_INITIALIZER;

static NOINLINE void store(void *p)
{
    pthread_mutex_lock(&keep_lock);
    keep[nkeep++ % (1u << 16)] = p;
    pthread_mutex_unlock(&keep_lock);
}

/* The allocating leaves, one size each: a stack per path. */
static NOINLINE void *in_alt_handler(void) { void *p = malloc(24); BARRIER(); return p; }
static NOINLINE void *in_plain_handler(void) { void *p = calloc(1, 40); BARRIER(); return p; }
static NOINLINE void *in_coroutine(int which) { void *p = malloc(56 + (size_t)which * 8); BARRIER(); return p; }
static NOINLINE void *in_thread(void) { void *p = malloc(88); BARRIER(); return p; }
static NOINLINE void *after_move(void) { void *p = malloc(104); BARRIER(); return p; }

/* --- signal handlers left by a jump -------------------------------------- */

static sigjmp_buf alt_env;
static jmp_buf plain_env;

static void on_alt(int sig)
{
    (void)sig;
    store(in_alt_handler());
    siglongjmp(alt_env, 1);
}

static void on_plain(int sig)
{
    (void)sig;
    store(in_plain_handler());
    longjmp(plain_env, 1);
}

static NOINLINE void jump_rounds(int n)
{
    for (int i = 0; i < n; i++) {
        if (sigsetjmp(alt_env, 1) == 0)
            raise(SIGUSR1);
        if (setjmp(plain_env) == 0)
            raise(SIGUSR2);
    }
}

/* --- coroutines ------------------------------------------------------------ */

static ucontext_t main_ctx, co_ctx[2];
static int co_turns;

static void coroutine(int which)
{
    for (int i = 0; i < co_turns; i++) {
        store(in_coroutine(which));
        swapcontext(&co_ctx[which], &main_ctx);
    }
}

static NOINLINE void coroutine_rounds(int n)
{
    static char stacks[2][64 * 1024] __attribute__((aligned(16)));
    co_turns = n;
    for (int w = 0; w < 2; w++) {
        getcontext(&co_ctx[w]);
        co_ctx[w].uc_stack.ss_sp = stacks[w];
        co_ctx[w].uc_stack.ss_size = sizeof(stacks[w]);
        co_ctx[w].uc_link = &main_ctx;
        makecontext(&co_ctx[w], (void (*)(void))coroutine, 1, w);
    }
    /* n turns each, then one more to let each return through uc_link */
    for (int i = 0; i <= n; i++)
        for (int w = 0; w < 2; w++)
            swapcontext(&main_ctx, &co_ctx[w]);
}

/* --- threads cancelled while the others allocate, CPU moves ----------------- */

static int ncpus;

static void move_to(int i)
{
    if (ncpus < 2)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(i % ncpus, &set);
    sched_setaffinity(0, sizeof(set), &set); /* (refused in a narrower cpuset: fine) */
}

static sem_t allocated;

static void *victim(void *arg)
{
    int n = (int)(long)arg;
    for (int i = 0; i < n; i++) {
        move_to(i);
        store(in_thread());
    }
    sem_post(&allocated);
    for (;;)
        pause(); /* a cancellation point */
    return NULL;
}

static NOINLINE void thread_rounds(int n)
{
    for (int i = 0; i < n; i++) {
        pthread_t th[2];
        for (int k = 0; k < 2; k++)
            if (pthread_create(&th[k], NULL, victim, (void *)4L) != 0)
                exit(2);
        for (int k = 0; k < 2; k++)
            sem_wait(&allocated);
        for (int k = 0; k < 2; k++) {
            pthread_cancel(th[k]);
            pthread_join(th[k], NULL);
        }
        move_to(i);
        store(after_move());
    }
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 10;
    cpu_set_t set;
    ncpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
    sem_init(&allocated, 0, 0);

    static char alt[64 * 1024];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof(alt)};
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_alt;
    sa.sa_flags = SA_ONSTACK;
    if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGUSR1, &sa, NULL) != 0)
        return 2;
    sa.sa_handler = on_plain;
    sa.sa_flags = SA_NODEFER; /* longjmp does not restore the mask */
    if (sigaction(SIGUSR2, &sa, NULL) != 0)
        return 2;

    for (int r = 0; r < rounds; r++) {
        jump_rounds(2);
        coroutine_rounds(2);
        thread_rounds(1);
    }
    printf("flow_stress: %d rounds, %u blocks kept\n", rounds, nkeep);
    return 0;
}
