/* The functions memtrace intercepts and what each call means for the books:
 * the C library's and C++'s, and the entry points of the allocators
 * programs link instead (jemalloc, tcmalloc, mimalloc), each booked as
 * valgrind books its standard equivalent.  One table (intercept.c). */
#ifndef MT_TRACER_INTERCEPT_H
#define MT_TRACER_INTERCEPT_H

#include <stdbool.h>
#include <stddef.h>

/* The arguments named below are the function's own after `shift` leading
 * ones (mimalloc's mi_heap_* take the heap first). */
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
    OP_EXCEPTION_ALLOC, /* the C++ runtime allocates or frees a thrown object:
                           the thread's next heap call is the program's, even
                           inside an open call (calls.c) */
    OP_UNWIND,          /* the C++ unwinder starts (breakpoint engine only): the
                           thread's caught returns are put back (calls.c) */
    OP_CATCH,           /* a handler begins (breakpoint engine only): the calls
                           the exception left are forgotten, the others caught
                           again (calls.c) */
    OP_FIND_EXIDX,      /* arm, agent engine only: libc's __gnu_Unwind_Find_exidx,
                           which the agent answers for its own code (an
                           exception passing its frame); never recorded */
    OP_REALLOCF,        /* (ptr, size) -> ptr: realloc that also frees ptr
                           when it fails (BSD reallocf, mi_reallocf) */
    OP_XALLOCX,         /* (ptr, size, extra, flags) -> usable size: jemalloc's
                           resize in place; booked as realloc(ptr, the new size)
                           when it reached size */
    OP_EXPAND,          /* (ptr, size) -> ptr or NULL: resize in place
                           (mi_expand); booked as realloc when it succeeds */
    OP_STRDUP,          /* (str, ...) -> ptr: a copy of a string; its size is
                           the copy's length + 1, read at the return */
};

/* How memory was allocated, so that a mismatched release can be named.
 * FAMILY_ANY: one address carries names of several families (aliases, or
 * identical code folding: free = operator delete = delete[]); a call
 * through it tells nothing about the family, and is never judged on it. */
enum intercept_family {
    FAMILY_MALLOC,
    FAMILY_NEW,
    FAMILY_NEW_ARRAY,
    FAMILY_MAP,
    FAMILY_ANY,
    FAMILY_NAMED,   /* a program's own functions (--alloc-fn): a family of
                       their own, booked as ALLOC_CUSTOM */
};

struct intercept_fn {
    const char *name;        /* symbol name (mangled for C++) */
    enum intercept_op op;
    enum intercept_family family;
    bool releases;           /* free-like: recorded at entry, no return catch */
    unsigned char shift;     /* leading arguments before the op's own (0 or 1) */
};

/* How many of an op's own arguments --alloc-fn can place (calloc's two). */
#define INTERCEPT_POS_MAX 2
/* The 0-based index among the function's own arguments (as registers and
 * stack words give them) of the op's own argument k: after fn->shift, or
 * where --alloc-fn NAME=KIND:POSITIONS put it (in any order, with gaps:
 * pool_free(pool, p) is free:2). */
unsigned intercept_arg_index(const struct intercept_fn *fn, unsigned k);
/* How many of the function's arguments hold the op's first n. */
unsigned intercept_args_needed(const struct intercept_fn *fn, unsigned n);

/* All intercepted functions, ended by an entry with a NULL name. */
const struct intercept_fn *intercept_table(void);
const struct intercept_fn *intercept_find(const char *name);
/* fn as reached through an address that also carries names of another
 * family (same name, op and arguments; FAMILY_ANY). */
const struct intercept_fn *intercept_familyless(const struct intercept_fn *fn);
bool intercept_is_map_op(enum intercept_op op);
/* Releases memory inside the call and allocates at its return (realloc
 * and the like): booked in two parts. */
bool intercept_is_realloc_op(enum intercept_op op);
/* --sample: where an allocation's size is, for its sampling by bytes.
 * INTERCEPT_SIZE_ARGS: the op's own argument *i (not counting fn->shift),
 * times argument *j when *j >= 0 (calloc); INTERCEPT_SIZE_COPY: the
 * copy's length + 1, known at the return (strdup); INTERCEPT_SIZE_NONE:
 * not an allocation sampled by size (releases, the mmap family, exit...). */
enum intercept_size { INTERCEPT_SIZE_NONE, INTERCEPT_SIZE_ARGS, INTERCEPT_SIZE_COPY };
enum intercept_size intercept_size_args(enum intercept_op op, int *i, int *j);
/* Is fn an allocation or release of the heap (not the mmap family, not
 * exit)? */
bool intercept_is_heap_fn(const struct intercept_fn *fn);

/* The intercepted functions one module exports, one per address: aliases
 * (mmap64 = mmap, cfree = free, tc_malloc = malloc) are one site named by
 * the first of them in the table, family-less when their families differ. */
struct intercept_site {
    unsigned long long addr;   /* link-time address */
    const struct intercept_fn *fn;
};
/* Adds name at addr to sites (*n of them, room for cap: the table's size
 * is always enough); names not intercepted are ignored. */
void intercept_site_add(struct intercept_site *sites, size_t *n, size_t cap, const char *name,
                        unsigned long long addr);
/* Sorts the sites in table order (the order they are placed in). */
void intercept_sites_sort(struct intercept_site *sites, size_t n);
size_t intercept_count(void);

/* --alloc-fn NAME=KIND[:POSITIONS] (KIND: malloc, calloc, realloc, free,
 * or aligned: (alignment, size) -> ptr, as aligned_alloc; POSITIONS: where
 * its arguments are, alloc_fn_spec.h), or @FILE of such words: NAME is
 * intercepted as that function, in every module that defines it, its
 * blocks of the FAMILY_NAMED family.  Before the first lookup.  0, or -1
 * with a one-line reason (bad word, FILE:LINE: for a file's, a name
 * intercepted already, too many). */
#define INTERCEPT_NAMED_MAX 32
int intercept_add_named(const char *spec, char *err, size_t errlen);

#endif
