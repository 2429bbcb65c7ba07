/* Every intercepted call family with the edge cases its counting rules name:
 * realloc(NULL, n), realloc(p, 0), free(NULL), failed calls, calloc,
 * reallocarray, and allocations made inside libc (strdup, fopen). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *keep[16];

int main(void)
{
    keep[0] = malloc(10);
    keep[1] = calloc(3, 7);
    keep[2] = realloc(NULL, 33);             /* one alloc */
    char *p = malloc(50);
    p = realloc(p, 5000);                    /* one free, one alloc */
    p = realloc(p, 10);
    keep[3] = p;
    char *q = malloc(20);
    q = realloc(q, 0);                       /* one free */
    free(NULL);                              /* nothing */
    /* Beyond PTRDIFF_MAX: glibc refuses it on every CPU (SIZE_MAX / 2
     * itself succeeds on i386, where 2 GiB may well be free). */
    volatile size_t huge = SIZE_MAX / 2 + 1;
    void *big = malloc(huge);                /* fails: nothing */
    void *bigc = calloc(SIZE_MAX / 4, 16);   /* overflows: nothing */
    keep[4] = reallocarray(NULL, 12, 12);
    keep[5] = strdup("allocated inside libc");
    FILE *f = fopen("/proc/self/stat", "r"); /* FILE and its buffer */
    if (f) {
        char line[64];
        if (!fgets(line, sizeof(line), f))
            line[0] = '\0';
        fclose(f);
    }
    for (int i = 6; i < 16; i++)
        keep[i] = malloc((size_t)i * 100);
    for (int i = 6; i < 16; i += 2)
        free(keep[i]);
    printf("alloc_mix: %p %p %p\n", big, bigc, (void *)q);
    return 0;
}
