#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "shared/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void out_of_memory(size_t n, size_t size)
{
    if (size == 1)
        fprintf(stderr, "memtrace: error: out of memory (asked for %zu bytes)\n", n);
    else
        fprintf(stderr, "memtrace: error: out of memory (asked for %zu x %zu bytes)\n", n, size);
    exit(1);
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        out_of_memory(n, 1);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        out_of_memory(n, size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        out_of_memory(n, 1);
    return q;
}

void *xreallocarray(void *p, size_t n, size_t size)
{
    void *q = reallocarray(p, n ? n : 1, size ? size : 1);
    if (!q)
        out_of_memory(n, size);
    return q;
}

char *xstrdup(const char *s)
{
    char *p = strdup(s);
    if (!p)
        out_of_memory(strlen(s) + 1, 1);
    return p;
}

char *xstrndup(const char *s, size_t n)
{
    char *p = strndup(s, n);
    if (!p)
        out_of_memory(strnlen(s, n) + 1, 1);
    return p;
}
