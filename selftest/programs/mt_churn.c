/* Threads that allocate, reallocate and free at random, printing a checksum
 * of their work: the output must be the same traced or not, and after an
 * attach and a detach at any moment. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLOTS 128

struct job {
    int id;
    long rounds;
    unsigned long sum;
};

static void *work(void *arg)
{
    struct job *j = arg;
    unsigned seed = (unsigned)j->id * 7919u + 1;
    char *slot[SLOTS] = {0};
    for (long r = 0; r < j->rounds; r++) {
        seed = seed * 1103515245u + 12345u;
        int i = (int)((seed >> 8) % SLOTS);
        size_t n = 1 + (seed >> 16) % 2000;
        if (slot[i] && (seed & 1)) {
            slot[i] = realloc(slot[i], n);
        } else {
            free(slot[i]);
            slot[i] = malloc(n);
        }
        memset(slot[i], (int)(r & 0xff), n);
        j->sum += (unsigned char)slot[i][n / 2] + n;
        if (r % 2000 == 0)
            usleep(2000); /* keeps a run long enough to attach to */
    }
    for (int i = 0; i < SLOTS; i++)
        free(slot[i]);
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 4;
    long rounds = argc > 2 ? atol(argv[2]) : 200000;
    if (threads < 1 || threads > 64)
        return 2;
    pthread_t tid[64];
    struct job jobs[64];
    for (int i = 0; i < threads; i++) {
        jobs[i] = (struct job){.id = i, .rounds = rounds};
        pthread_create(&tid[i], NULL, work, &jobs[i]);
    }
    unsigned long total = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(tid[i], NULL);
        total += jobs[i].sum;
    }
    printf("mt_churn: %d threads, checksum %lu\n", threads, total);
    return 0;
}
