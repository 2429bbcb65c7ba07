/* Hundreds of short threads, created and ending at a high rate while the
 * main thread allocates too: joinable threads in waves, plus detached ones
 * that end on their own.  Each thread allocates, frees and leaks a known
 * amount; the output is a checksum independent of scheduling.
 *
 *   proc_threads [THREADS [WAVE [joinable]]]   (default 400 threads, 16 per wave)
 *
 * "joinable": no detached threads.  Then every thread stack goes back to
 * glibc's cache at a join, in the main thread's order, so even the C
 * library's own allocations for new stacks are the same in every run (with
 * detached threads they depend on scheduling).  Each thread allocates
 * 8 + id % 5 bytes it never frees, from short_life(). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;
static int detached_left;
static unsigned long total;

static void *short_life(void *arg)
{
    long id = (long)arg;
    unsigned long sum = 0;
    void *keep = malloc(8 + (size_t)(id % 5)); /* leaked on purpose */
    for (int i = 0; i < 5; i++) {
        size_t n = 16 + (size_t)((id * 13 + i * 7) % 200);
        char *p = malloc(n);
        memset(p, (int)id, n);
        sum += (unsigned char)p[n - 1] + n;
        free(p);
    }
    (void)keep;
    pthread_mutex_lock(&lock);
    total += sum;
    pthread_mutex_unlock(&lock);
    return NULL;
}

static void *detached_life(void *arg)
{
    short_life(arg);
    pthread_mutex_lock(&lock);
    if (--detached_left == 0)
        pthread_cond_signal(&done_cond);
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 400;
    int wave = argc > 2 ? atoi(argv[2]) : 16;
    int with_detached = !(argc > 3 && strcmp(argv[3], "joinable") == 0);
    if (threads < 1 || wave < 1 || wave > 256)
        return 2;
    pthread_t tid[256];
    pthread_attr_t detached;
    pthread_attr_init(&detached);
    pthread_attr_setdetachstate(&detached, PTHREAD_CREATE_DETACHED);
    long id = 0;
    while (id < threads) {
        int n = 0; /* joinable threads of this wave */
        for (int k = 0; k < wave && id < threads; k++, id++) {
            if (with_detached && id % 4 == 3) {
                pthread_mutex_lock(&lock);
                detached_left++;
                pthread_mutex_unlock(&lock);
                pthread_t d;
                if (pthread_create(&d, &detached, detached_life, (void *)id) != 0)
                    return 1;
            } else if (pthread_create(&tid[n++], NULL, short_life, (void *)id) != 0) {
                return 1;
            }
        }
        free(malloc(100)); /* the main thread allocates meanwhile */
        for (int k = 0; k < n; k++)
            pthread_join(tid[k], NULL);
    }
    pthread_mutex_lock(&lock);
    while (detached_left > 0)
        pthread_cond_wait(&done_cond, &lock);
    pthread_mutex_unlock(&lock);
    pthread_attr_destroy(&detached);
    printf("proc_threads: %d threads, checksum %lu\n", threads, total);
    return 0;
}
