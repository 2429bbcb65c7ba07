/* fork while several threads allocate, fork+exec, and a child that exits
 * before its parent (agent_fork.sh):
 *
 *   root     keeps 6 blocks, starts 4 workers that replace a block of
 *            their own (malloc new, free old) 3000 times each, and forks
 *            while they run (pthread_atfork holds every worker between
 *            two rounds, so each has exactly one block at the fork),
 *            right after allocating 3 more (still in the rings then);
 *   child A  frees the 4 worker blocks it inherited, 1 of the 3, 2 of the 6,
 *            runs a thread of its own that allocates, leaks 3 blocks and
 *            exits while the root still works;
 *   child B  (fork, then exec of this program, by the path it was started
 *            with, as "leaf") new books;
 *   root     waits for A, allocates again, joins the workers, waits for B,
 *            frees 4 of its 6 blocks and the 3.
 *
 * What is in use at each process's end does not depend on timing (a
 * worker's block has the same size every round); the root's and the
 * leaf's totals do not either.  Every process prints one checksum line. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define WORKERS 4
#define ROUNDS 3000

static pthread_mutex_t locks[WORKERS] = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
                                         PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER};
static char *cur[WORKERS];
static int progress[WORKERS];

static void hold_all(void)
{
    for (int i = 0; i < WORKERS; i++)
        pthread_mutex_lock(&locks[i]);
}

static void release_all(void)
{
    for (int i = WORKERS - 1; i >= 0; i--)
        pthread_mutex_unlock(&locks[i]);
}

static void *worker(void *arg)
{
    int i = (int)(long)arg;
    size_t n = 64 + (size_t)i * 8;
    unsigned long sum = 0;
    for (int r = 0; r < ROUNDS; r++) {
        pthread_mutex_lock(&locks[i]);
        char *p = malloc(n);
        memset(p, r & 0xff, n);
        free(cur[i]);
        cur[i] = p;
        __atomic_store_n(&progress[i], r + 1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&locks[i]);
        sum += (unsigned char)p[n / 2];
        if (r % 128 == 0)
            usleep(100);
    }
    return (void *)sum;
}

static unsigned long churn(int rounds, size_t base, int leak)
{
    unsigned long sum = 0;
    for (int i = 0; i < rounds; i++) {
        size_t n = base + (size_t)(i * 13 % 40);
        char *p = malloc(n);
        memset(p, i & 0xff, n);
        sum += (unsigned char)p[n / 3] + n;
        if (i >= leak)
            free(p); /* the first `leak` are leaked on purpose */
    }
    return sum;
}

static void *child_thread(void *arg)
{
    (void)arg;
    return (void *)churn(200, 24, 0);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1 && strcmp(argv[1], "leaf") == 0) {
        printf("leaf: %lu\n", churn(50, 100, 5));
        return 0;
    }
    char *keep[6];
    for (int i = 0; i < 6; i++) {
        keep[i] = malloc(1000 + (size_t)i);
        memset(keep[i], i, 1000 + (size_t)i);
    }
    pthread_atfork(hold_all, release_all, release_all);
    pthread_t th[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&th[i], NULL, worker, (void *)(long)i);
    for (int i = 0; i < WORKERS; i++)
        while (__atomic_load_n(&progress[i], __ATOMIC_ACQUIRE) < ROUNDS / 4)
            usleep(1000);

    /* Calls just before the fork, still in the rings when it happens. */
    char *late[3];
    for (int i = 0; i < 3; i++)
        late[i] = malloc(300 + (size_t)i);
    pid_t a = fork();
    if (a == 0) {
        for (int i = 0; i < WORKERS; i++)
            free(cur[i]);
        free(late[0]);
        free(keep[0]);
        free(keep[1]);
        pthread_t t;
        void *r = NULL;
        pthread_create(&t, NULL, child_thread, NULL);
        pthread_join(t, &r);
        printf("child A: %lu\n", (unsigned long)r + churn(30, 16, 3));
        exit(0);
    }
    pid_t b = fork();
    if (b == 0) {
        char *args[] = {argv[0], (char *)"leaf", NULL};
        execv(argv[0], args); /* started by its path */
        _exit(127);
    }
    int status = 0;
    waitpid(a, &status, 0);
    unsigned long sum = churn(100, 40, 2);
    for (int i = 0; i < WORKERS; i++) {
        void *r = NULL;
        pthread_join(th[i], &r);
        sum += (unsigned long)r;
    }
    int status_b = 0;
    waitpid(b, &status_b, 0);
    for (int i = 2; i < 6; i++)
        free(keep[i]);
    for (int i = 0; i < 3; i++)
        free(late[i]);
    for (int i = 0; i < WORKERS; i++)
        free(cur[i]);
    printf("root: %lu, children %d %d\n", sum, WEXITSTATUS(status), WEXITSTATUS(status_b));
    return 0;
}
