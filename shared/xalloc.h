/* Allocation that cannot fail silently: the tracer has no sane way to go on
 * without memory for its own books, so it says how much it asked for and
 * exits 1.  The traced process is not left with our traps: the supervisor
 * (target/tracer/guardian.h) restores it when the tracer ends. */
#ifndef MT_UTIL_XALLOC_H
#define MT_UTIL_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
void *xreallocarray(void *p, size_t n, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

#endif
