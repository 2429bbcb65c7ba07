/* The library as the program maps it (stacks_replaced_lib.sh). */
#include <stdlib.h>

__attribute__((noinline)) void *lib_alloc(int n)
{
    void *p = malloc((size_t)n);
    __asm__ volatile("" ::: "memory");
    return p;
}
