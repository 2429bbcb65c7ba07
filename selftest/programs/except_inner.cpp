// An exception caught inside an intercepted function (issue 29): the
// program's own operator new tries a pool that is always empty, whose
// bad_alloc it catches, and then succeeds with malloc.  The calls succeed,
// so their blocks are booked, in main and in a second thread at once.
// valgrind keeps the executable's operator new with
// --soname-synonyms=somalloc=nouserintercepts: its counts are the oracle.
#include <cstdio>
#include <cstdlib>
#include <new>
#include <pthread.h>

__attribute__((noinline)) static void *from_pool(std::size_t n)
{
    if (n > 16)
        throw std::bad_alloc();
    return nullptr;
}

void *operator new(std::size_t n)
{
    try {
        if (void *p = from_pool(n))
            return p;
    } catch (const std::bad_alloc &) {
        // the fallback below
    }
    void *p = malloc(n ? n : 1);
    if (!p)
        throw std::bad_alloc();
    return p;
}
void operator delete(void *p) noexcept { free(p); }
void operator delete(void *p, std::size_t) noexcept { free(p); }

static int churn(void)
{
    int kept = 0;
    for (int i = 0; i < 100; i++) {
        char *p = static_cast<char *>(operator new(100 + i));
        p[0] = 1;
        if (i % 10 == 0)
            kept++; // every tenth block stays
        else
            operator delete(p);
    }
    return kept;
}

static void *worker(void *arg)
{
    *(int *)arg = churn();
    return nullptr;
}

int main()
{
    int other = 0;
    pthread_t th;
    if (pthread_create(&th, nullptr, worker, &other) != 0)
        return 2;
    int mine = churn();
    pthread_join(th, nullptr);
    printf("kept %d and %d\n", mine, other);
    return 0;
}
