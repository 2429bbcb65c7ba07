/* The "upgrade" put in place of replaced_lib_v1.c's build while the
 * program runs: other functions at the same offsets. */
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) char *other_padding(const char *s)
{
    char *p = strdup(s);
    if (p)
        p[0] ^= 1;
    return p;
}

__attribute__((noinline)) void *new_version_alloc(int n)
{
    void *p = calloc((size_t)n, 2);
    __asm__ volatile("" ::: "memory");
    return p;
}

__attribute__((noinline)) void *lib_alloc(int n)
{
    return new_version_alloc(n);
}
