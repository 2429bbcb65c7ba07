/* many_libs: a process with many threads and many shared libraries, for
 * timing an attach.
 *
 *   many_libs DIR NLIBS NTHREADS
 *
 * dlopens DIR/libml0.so .. DIR/libml<NLIBS-1>.so (built by run-bench.sh),
 * calls each one's ml_N function, starts NTHREADS threads that allocate and
 * free a little every 10 ms, prints "many_libs: ready PID" and runs until
 * killed.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void *worker(void *arg)
{
    (void)arg;
    struct timespec pause = {0, 10 * 1000 * 1000};
    for (;;) {
        void *p = malloc(64);
        __asm__ volatile("" : : "r"(p) : "memory");
        free(p);
        nanosleep(&pause, NULL);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: many_libs DIR NLIBS NTHREADS\n");
        return 2;
    }
    int nlibs = atoi(argv[2]), nthreads = atoi(argv[3]);
    long sum = 0;
    for (int i = 0; i < nlibs; i++) {
        char path[4096], sym[32];
        snprintf(path, sizeof(path), "%s/libml%d.so", argv[1], i);
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "many_libs: %s\n", dlerror());
            return 1;
        }
        snprintf(sym, sizeof(sym), "ml_%d", i);
        int (*fn)(int) = (int (*)(int))dlsym(h, sym);
        if (!fn) {
            fprintf(stderr, "many_libs: %s: no %s\n", path, sym);
            return 1;
        }
        sum += fn(i);
    }
    for (int i = 0; i < nthreads; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker, NULL) != 0) {
            fprintf(stderr, "many_libs: pthread_create failed\n");
            return 1;
        }
    }
    printf("many_libs: ready %d (%ld)\n", (int)getpid(), sum);
    fflush(stdout);
    for (;;)
        pause();
}
