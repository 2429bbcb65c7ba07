/* The functions memtrace intercepts and what each call means for the books. */
#ifndef MT_TRACER_INTERCEPT_H
#define MT_TRACER_INTERCEPT_H

#include <stdbool.h>
#include <stddef.h>

enum intercept_op {
    OP_MALLOC,          /* (size) -> ptr */
    OP_CALLOC,          /* (n, size) -> ptr */
    OP_REALLOC,         /* (ptr, size) -> ptr */
    OP_REALLOCARRAY,    /* (ptr, n, size) -> ptr */
    OP_FREE,            /* (ptr) */
    OP_POSIX_MEMALIGN,  /* (&ptr, align, size) -> 0 */
    OP_ALIGNED_ALLOC,   /* (align, size) -> ptr (aligned_alloc, memalign) */
    OP_VALLOC,          /* (size) -> ptr */
    OP_PVALLOC,         /* (size) -> ptr, size rounded up to pages */
    OP_NEW,             /* (size, ...) -> ptr */
    OP_DELETE,          /* (ptr, ...) */
    OP_MMAP,            /* (addr, len, prot, flags, fd, off) -> addr */
    OP_MUNMAP,          /* (addr, len) -> 0 */
    OP_MREMAP,          /* (old, old_len, new_len, flags, new_addr) -> addr */
    OP_EXIT,            /* (status): no effect on the books; the leak scan's
                           moment (tracee.h exit_call_hook) */
};

/* How memory was allocated, so that a mismatched release can be named. */
enum intercept_family {
    FAMILY_MALLOC,
    FAMILY_NEW,
    FAMILY_NEW_ARRAY,
    FAMILY_MAP,
};

struct intercept_fn {
    const char *name;        /* symbol name (mangled for C++) */
    enum intercept_op op;
    enum intercept_family family;
    bool releases;           /* free-like: recorded at entry, no return catch */
};

/* All intercepted functions, ended by an entry with a NULL name. */
const struct intercept_fn *intercept_table(void);
const struct intercept_fn *intercept_find(const char *name);
bool intercept_is_map_op(enum intercept_op op);

#endif
