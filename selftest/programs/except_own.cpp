// Exceptions thrown out of an intercepted function (issue 29): the
// program's own operator new (replaced in the executable, intercepted
// there) throws std::bad_alloc past its limit; caught in main, in a frame
// above the caller, and by a second thread at once.  valgrind keeps the
// executable's operator new (it replaces only the libraries'), so its
// counts are an oracle for this one.
// With an argument N: N phases, each a refused operator new in main that
// says so and waits half a second inside before it throws (the test kills
// the tracer then: the exception leaves a call that began traced).
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <new>
#include <pthread.h>

static int slow_refusal;

void *operator new(std::size_t n)
{
    if (n > 4096) {
        if (slow_refusal) {
            puts("inside operator new");
            fflush(stdout);
            struct timespec pause = {0, 500 * 1000 * 1000};
            nanosleep(&pause, nullptr);
        }
        throw std::bad_alloc();
    }
    void *p = malloc(n ? n : 1);
    if (!p)
        throw std::bad_alloc();
    return p;
}
void operator delete(void *p) noexcept { free(p); }
void operator delete(void *p, std::size_t) noexcept { free(p); }

static char *volatile sink;

__attribute__((noinline)) static char *grab(unsigned long n) { return static_cast<char *>(operator new(n)); }
__attribute__((noinline)) static char *deeper(unsigned long n) { return grab(n) + 1; }

static int round_trip(void)
{
    int caught = 0;
    for (int i = 0; i < 100; i++) {
        int *keep = new int(i);
        try {
            sink = deeper(8192);
        } catch (const std::bad_alloc &) {
            caught++;
        }
        delete keep;
    }
    return caught;
}

static void *worker(void *arg)
{
    *(int *)arg = round_trip();
    return nullptr;
}

static int phases(int n)
{
    slow_refusal = 1;
    for (int p = 1; p <= n; p++) {
        int *keep = new int(p);
        try {
            sink = deeper(8192);
            puts("no exception");
        } catch (const std::bad_alloc &) {
            printf("phase %d: caught\n", *keep);
        }
        fflush(stdout);
        delete keep;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        return phases(atoi(argv[1]));
    try {
        sink = static_cast<char *>(operator new(100000));
        puts("no exception");
    } catch (const std::bad_alloc &) {
        puts("caught in main");
    }
    int other = 0;
    pthread_t th;
    if (pthread_create(&th, nullptr, worker, &other) != 0)
        return 2;
    int mine = round_trip();
    pthread_join(th, nullptr);
    printf("caught %d and %d from a deeper frame\n", mine, other);
    char *kept = static_cast<char *>(operator new(24)); // one block in use at the end
    kept[0] = 0;
    return 0;
}
