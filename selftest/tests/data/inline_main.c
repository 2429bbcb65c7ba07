/* Program half of stacks_inline_gdb.sh (built at -O2): always_inline
 * helpers nested two deep, a noinline function they are inlined into, a
 * tail-calling wrapper (return calloc(...), a jmp), and calls into the
 * library's inlined and tail-calling functions.  Every block stays
 * allocated, so that each stack is in memtrace's report. */
#include <stdlib.h>
#include <string.h>

char *lib_make(int i);
void *lib_grow(void *p, size_t n);

static inline __attribute__((always_inline)) char *dup_name(const char *s)
{
    size_t n = strlen(s);
    char *p = malloc(n + 1);
    if (p)
        memcpy(p, s, n + 1);
    return p;
}

static inline __attribute__((always_inline)) char *label(int i)
{
    char b[16] = "name-x";
    b[5] = (char)('a' + i % 26);
    return dup_name(b);
}

__attribute__((noinline)) void register_all(char **out, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = label(i);
}

/* A tail call: compiled as jmp calloc. */
__attribute__((noinline)) void *zeroed(size_t n)
{
    return calloc(n, 1);
}

int main(void)
{
    char *names[3];
    register_all(names, 3);
    char *z = zeroed(32);
    __asm__ volatile("" ::: "memory");
    char *l = lib_make(1);
    /* realloc(NULL, n) calls malloc inside libc: gdb stops there too, and
     * that nested call is not one memtrace counts (its frames beyond
     * libc's are the realloc stack's). */
    void *g = lib_grow(NULL, 64);
    __asm__ volatile("" ::: "memory");
    /* Nothing is freed: every allocation stays in memtrace's report. */
    return names[0] && z && l && g ? 0 : 1;
}
