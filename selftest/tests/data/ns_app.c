/* A service that allocates from one place every 10 ms and keeps its
 * blocks, sleeping in nanosleep in between (issue 29: attached from the
 * host while it runs in its own PID and mount namespace).  N rounds, or
 * forever without an argument. */
#include <stdlib.h>
#include <time.h>

static void *volatile last;

__attribute__((noinline)) static void *work(int i) { return malloc(100 + (size_t)(i % 7)); }

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : -1;
    struct timespec ts = {0, 10 * 1000 * 1000};
    for (int i = 0; n < 0 || i < n; i++) {
        last = work(i);
        nanosleep(&ts, NULL);
    }
    return 0;
}
