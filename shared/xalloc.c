#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "shared/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *xcheck(void *p, size_t n)
{
    if (!p && n) {
        fprintf(stderr, "memtrace: error: out of memory (%zu bytes)\n", n);
        exit(1);
    }
    return p;
}

void *xmalloc(size_t n) { return xcheck(malloc(n ? n : 1), 1); }
void *xcalloc(size_t n, size_t size) { return xcheck(calloc(n ? n : 1, size ? size : 1), 1); }
void *xrealloc(void *p, size_t n) { return xcheck(realloc(p, n ? n : 1), 1); }
void *xreallocarray(void *p, size_t n, size_t size)
{
    return xcheck(reallocarray(p, n ? n : 1, size ? size : 1), 1);
}
char *xstrdup(const char *s) { return xcheck(strdup(s), 1); }
char *xstrndup(const char *s, size_t n) { return xcheck(strndup(s, n), 1); }
