// Exceptions thrown out of an intercepted function (issue 29): libstdc++'s
// operator new[] throws std::bad_alloc for a size it cannot get, caught in
// main, in a frame above the caller, and by a second thread doing the same
// at once.  Untraced it prints its lines and exits 0; a tracer whose frames
// the C++ unwinder cannot pass makes it end in std::terminate.
#include <cstdio>
#include <new>
#include <pthread.h>

// More than malloc grants: 64 TiB on a 64-bit CPU; on a 32-bit one 2 GiB,
// above PTRDIFF_MAX, which glibc's malloc refuses (1UL << 46 is 0 there).
// Volatile: there a constant above the largest object is a compile error.
static volatile size_t huge = (size_t)1 << (sizeof(size_t) == 8 ? 46 : 31);
static char *volatile sink;

__attribute__((noinline)) static char *grab(unsigned long n) { return new char[n]; }
__attribute__((noinline)) static char *deeper(unsigned long n) { return grab(n) + 1; }

static int round_trip(void)
{
    int caught = 0;
    for (int i = 0; i < 100; i++) {
        int *keep = new int(i);
        try {
            sink = deeper(huge);
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

int main()
{
    try {
        sink = new char[huge];
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
    char *kept = new char[24]; // one block in use at the end
    kept[0] = 0;
    return 0;
}
