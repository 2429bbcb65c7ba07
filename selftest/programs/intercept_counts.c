/* Allocation calls whose HEAP SUMMARY the program knows itself, for C
 * libraries where valgrind cannot be the oracle (musl, static binaries).
 * It counts what it does and prints the expected figures on its last line:
 *   expect: ALLOCS FREES BYTES_ALLOCATED IN_USE_BYTES IN_USE_BLOCKS MAPPED
 * Nothing here may make the C library allocate behind the program's back:
 * no stdio (glibc allocates stdout's buffer), output through write(2).
 * With the argument "stop" it first stops itself (SIGSTOP), so that what a
 * static C library allocated before main can be cleared from the books. */
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static unsigned long long allocs, frees, bytes, in_use, blocks;

static void *counted(void *p, size_t size)
{
    if (p) {
        allocs++;
        bytes += size;
        in_use += size;
        blocks++;
    }
    return p;
}

static void release(void *p, size_t size)
{
    free(p);
    frees++;
    in_use -= size;
    blocks--;
}

static void *keep[64];

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "stop") == 0)
        raise(SIGSTOP);
    for (int i = 0; i < 20; i++)
        keep[i] = counted(malloc(16 * (size_t)i + 1), 16 * (size_t)i + 1);
    for (int i = 0; i < 20; i += 2)
        release(keep[i], 16 * (size_t)i + 1);

    char *c = counted(calloc(10, 10), 100);
    char *r = realloc(c, 500); /* one free, one alloc */
    if (r) {
        frees++, in_use -= 100, blocks--;
        keep[20] = counted(r, 500);
    }
    keep[21] = counted(realloc(NULL, 64), 64);

    void *pm = NULL;
    if (posix_memalign(&pm, 64, 200) == 0)
        keep[22] = counted(pm, 200);
    keep[23] = counted(aligned_alloc(128, 256), 256);
    keep[24] = counted(memalign(32, 48), 48);
    release(keep[24], 48);
    free(NULL);
    volatile size_t huge = SIZE_MAX / 2 + 1; /* more than PTRDIFF_MAX: refused on 32-bit too */
    keep[25] = malloc(huge); /* fails: nothing */

    long pg = sysconf(_SC_PAGESIZE);
    char *m = mmap(NULL, 3 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned long long mapped = 0;
    if (m != MAP_FAILED) {
        mapped = 3 * (unsigned long long)pg;
        if (munmap(m + pg, (size_t)pg) == 0)
            mapped -= (unsigned long long)pg;
    }

    char line[160];
    int n = snprintf(line, sizeof(line), "expect: %llu %llu %llu %llu %llu %llu\n", allocs, frees,
                     bytes, in_use, blocks, mapped);
    if (n <= 0 || write(1, line, (size_t)n) != n)
        return 1;
    return 0;
}
