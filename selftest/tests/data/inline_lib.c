/* Shared library half of stacks_inline_gdb.sh: always_inline helpers and
 * a tail-calling wrapper around libc's allocator. */
#include <stdlib.h>
#include <string.h>

static inline __attribute__((always_inline)) char *lib_copy(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = 0;
    }
    return p;
}

static inline __attribute__((always_inline)) char *lib_label(int i)
{
    char b[8] = "lib-x";
    b[4] = (char)('a' + i % 26);
    return lib_copy(b, 5);
}

__attribute__((noinline)) char *lib_make(int i)
{
    char *p = lib_label(i);
    __asm__ volatile("" ::: "memory");
    return p;
}

/* return realloc(...) compiled as a jump: a tail call. */
__attribute__((noinline)) void *lib_grow(void *p, size_t n)
{
    return realloc(p, n);
}
