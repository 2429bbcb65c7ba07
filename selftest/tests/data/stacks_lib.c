#include <stdlib.h>

__attribute__((noinline)) void *lib_alloc(size_t n)
{
    void *p = malloc(n);
    __asm__ volatile("" ::: "memory");
    return p;
}

__attribute__((noinline)) void *lib_alloc_via(void *(*fn)(size_t), size_t n)
{
    void *p = fn(n);
    __asm__ volatile("" ::: "memory");
    return p;
}
