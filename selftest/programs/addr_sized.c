/* Allocations whose size depends on an address, as CPython's: the int
 * object of the thread's identifier (_thread.get_ident(): pthread_self(),
 * the address of the thread's control block) is 24 bytes and one 4-byte
 * digit per 30 bits of its value.  python3 -c takes 124 of them, freed at
 * once (its import locks).  Under valgrind the control block lies below
 * 2^30 (one digit: 28 bytes), natively above (two: 32), so the same run
 * asks for 4 bytes more per int outside valgrind.
 *
 *     addr_sized [N]   N ints (default 124), each malloc'd and freed
 *
 * Prints the identifier and the bytes it asked for, with no allocation of
 * its own (no stdio buffer): its bytes allocated are the bytes asked. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* CPython 3.11's sizeof of an int of value v (offsetof(PyLongObject,
 * ob_digit) + its 30-bit digits; 0 has none). */
static size_t int_object_size(uint64_t v)
{
    size_t digits = 0;
    for (; v; v >>= 30)
        digits++;
    return 24 + 4 * digits;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 124;
    uint64_t ident = (uint64_t)(uintptr_t)pthread_self();
    unsigned long long asked = 0;
    for (int i = 0; i < n; i++) {
        size_t size = int_object_size(ident);
        void *p = malloc(size);
        if (!p)
            return 1;
        *(volatile char *)p = 0;
        asked += size;
        free(p);
    }
    char line[80];
    int len = snprintf(line, sizeof(line), "ident %#llx asked %llu\n", (unsigned long long)ident,
                       asked);
    return write(1, line, (size_t)len) == len ? 0 : 1;
}
