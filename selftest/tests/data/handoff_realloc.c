/* Blocks allocated by one thread and reallocated and freed by another
 * (issue 29): handed over through a pipe, so that each realloc comes
 * after its malloc in another thread's ring (agent_handoff.sh).
 * Usage: handoff_realloc N */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static int fds[2];
static int n;

static NOINLINE void *make_block(int i) { return malloc(32 + (size_t)(i & 7)); }

static void *producer(void *arg)
{
    (void)arg;
    for (int i = 0; i < n; i++) {
        void *p = make_block(i);
        if (write(fds[1], &p, sizeof(p)) != (ssize_t)sizeof(p))
            exit(2);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    n = argc > 1 ? atoi(argv[1]) : 40;
    pthread_t th;
    if (pipe(fds) != 0 || pthread_create(&th, NULL, producer, NULL) != 0)
        return 2;
    void *keep = NULL;
    for (int i = 0; i < n; i++) {
        void *p;
        if (read(fds[0], &p, sizeof(p)) != (ssize_t)sizeof(p))
            return 2;
        void *q = realloc(p, 200);
        if (i == n - 1)
            keep = q; /* one block left in use: a stack to compare */
        else
            free(q);
    }
    pthread_join(th, NULL);
    printf("handoff_realloc: %d blocks handed over, %s\n", n, keep ? "one kept" : "none kept");
    return 0;
}
