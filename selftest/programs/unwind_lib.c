/* A shared library for unwind_chain: built into a .so by
 * selftest/tests/unwind_gdb.sh (the Makefile builds it as a program too,
 * which is harmless: main below makes it one). */
#include <stdlib.h>

volatile void *unwind_lib_sink;

__attribute__((noinline)) static void lib_inner(int n)
{
    unwind_lib_sink = malloc((size_t)n * 16 + 1);
    free((void *)unwind_lib_sink);
}

__attribute__((visibility("default"))) void unwind_lib_alloc(int depth);
void unwind_lib_alloc(int depth)
{
    if (depth > 0) {
        unwind_lib_alloc(depth - 1);
        unwind_lib_sink = NULL;
        return;
    }
    lib_inner(5);
}

#ifndef UNWIND_LIB_SHARED
int main(void)
{
    unwind_lib_alloc(2);
    return 0;
}
#endif
