/* A mostly idle multi-threaded program, like a server between requests:
 * each thread wakes every NAP_MS (2) ms, allocates and frees a little, and sleeps
 * again.  Prints a checksum of its work, the same traced or not.
 *
 *   rely_ticker [THREADS] [TICKS] [NAP_MS] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct job {
    int id;
    long ticks;
    long nap_ms;
    unsigned long sum;
};

static void *tick(void *arg)
{
    struct job *j = arg;
    unsigned seed = (unsigned)j->id * 40503u + 7;
    struct timespec nap = { j->nap_ms / 1000, (j->nap_ms % 1000) * 1000000 };
    for (long t = 0; t < j->ticks; t++) {
        char *keep[4];
        for (int i = 0; i < 4; i++) {
            seed = seed * 1103515245u + 12345u;
            size_t n = 8 + (seed >> 16) % 500;
            keep[i] = malloc(n);
            memset(keep[i], (int)(seed & 0xff), n);
            j->sum += (unsigned char)keep[i][n / 2] + n;
        }
        for (int i = 0; i < 4; i++)
            free(keep[i]);
        nanosleep(&nap, NULL);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4;
    long ticks = argc > 2 ? atol(argv[2]) : 1000;
    long nap_ms = argc > 3 ? atol(argv[3]) : 2;
    if (n < 1 || n > 64 || nap_ms < 0)
        return 2;
    struct job jobs[64];
    pthread_t tid[64];
    for (int i = 0; i < n; i++) {
        jobs[i] = (struct job){ .id = i, .ticks = ticks, .nap_ms = nap_ms };
        pthread_create(&tid[i], NULL, tick, &jobs[i]);
    }
    unsigned long sum = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(tid[i], NULL);
        sum += jobs[i].sum;
    }
    printf("rely_ticker: %d threads, checksum %lu\n", n, sum);
    return 0;
}
