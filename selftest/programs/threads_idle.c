/* Many threads that allocate now and then (issue 28: a daemon's worker
 * pool), or a few that allocate as fast as they can.
 *
 *   threads_idle NTHREADS ROUNDS SLEEP_MS [BURST]
 *
 * Every thread runs ROUNDS rounds of 3 mallocs and 3 frees (of 16 to 200
 * bytes), sleeping SLEEP_MS between rounds (0: no sleep, the ring fills as
 * fast as the thread can write), and keeps one 40-byte block (leaked).
 * BURST (default 0): every thread also makes that many malloc/free pairs
 * in its first round, at once.  When every thread is done and still alive
 * the program reads its own /proc/self/status and prints VmRSS and
 * RssShmem, then the threads end and are joined.  Its own count of the
 * calls is printed last. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rounds, sleep_ms, burst;
static pthread_barrier_t done, go;

static void *worker(void *arg)
{
    unsigned seed = (unsigned)(size_t)arg;
    void *volatile keep = malloc(40);
    for (int b = 0; b < burst; b++) {
        void *volatile p = malloc(16 + (size_t)(b % 64));
        free(p);
    }
    for (int r = 0; r < rounds; r++) {
        void *p[3];
        for (int i = 0; i < 3; i++)
            p[i] = malloc(16 + (rand_r(&seed) % 185));
        for (int i = 0; i < 3; i++)
            free(p[i]);
        if (sleep_ms) {
            struct timespec ts = {sleep_ms / 1000, (long)(sleep_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    (void)keep;
    pthread_barrier_wait(&done);
    pthread_barrier_wait(&go);
    return NULL;
}

static void print_status(void)
{
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return;
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, "VmRSS:", 6) || !strncmp(line, "RssShmem:", 9))
            fputs(line, stdout);
    fclose(f);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s NTHREADS ROUNDS SLEEP_MS [BURST]\n", argv[0]);
        return 2;
    }
    int n = atoi(argv[1]);
    rounds = atoi(argv[2]);
    sleep_ms = atoi(argv[3]);
    burst = argc > 4 ? atoi(argv[4]) : 0;
    if (n < 1 || n > 4096 || rounds < 0 || sleep_ms < 0 || burst < 0)
        return 2;
    pthread_t *th = calloc((size_t)n, sizeof(*th));
    pthread_barrier_init(&done, NULL, (unsigned)n + 1);
    pthread_barrier_init(&go, NULL, (unsigned)n + 1);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    for (int i = 0; i < n; i++)
        if (pthread_create(&th[i], &attr, worker, (void *)(size_t)(i + 1)) != 0) {
            fprintf(stderr, "pthread_create %d failed\n", i);
            return 1;
        }
    pthread_barrier_wait(&done);
    print_status();
    fflush(stdout);
    pthread_barrier_wait(&go);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    free(th);
    printf("threads %d: %ld mallocs, %ld frees by the workers\n", n,
           (long)n * (1 + burst + 3L * rounds), (long)n * (burst + 3L * rounds));
    return 0;
}
