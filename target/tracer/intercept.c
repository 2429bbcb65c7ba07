#include "target/tracer/intercept.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "target/tracer/alloc_fn_spec.h"

/* C++ operators are mangled with the target's size_t: 'm' (unsigned long) on
 * LP64, 'j' (unsigned int) on ILP32. */
#if ARCH_PTR_SIZE == 8
#define SZ "m"
#else
#define SZ "j"
#endif

#define M FAMILY_MALLOC
#define N FAMILY_NEW
#define NA FAMILY_NEW_ARRAY

/* The standard names first: an address carrying several names is named
 * by the first of them here (free, not tc_delete). */
static const struct intercept_fn table[] = {
    {"malloc", OP_MALLOC, M, false, 0},
    {"calloc", OP_CALLOC, M, false, 0},
    {"realloc", OP_REALLOC, M, false, 0},
    {"reallocarray", OP_REALLOCARRAY, M, false, 0},
    {"free", OP_FREE, M, true, 0},
    {"cfree", OP_FREE, M, true, 0},
    {"posix_memalign", OP_POSIX_MEMALIGN, M, false, 0},
    {"aligned_alloc", OP_ALIGNED_ALLOC, M, false, 0},
    {"memalign", OP_ALIGNED_ALLOC, M, false, 0},
    {"valloc", OP_VALLOC, M, false, 0},
    {"pvalloc", OP_PVALLOC, M, false, 0},

    {"_Znw" SZ, OP_NEW, N, false, 0},
    {"_Zna" SZ, OP_NEW, NA, false, 0},
    {"_Znw" SZ "RKSt9nothrow_t", OP_NEW, N, false, 0},
    {"_Zna" SZ "RKSt9nothrow_t", OP_NEW, NA, false, 0},
    {"_Znw" SZ "St11align_val_t", OP_NEW, N, false, 0},
    {"_Zna" SZ "St11align_val_t", OP_NEW, NA, false, 0},
    {"_Znw" SZ "St11align_val_tRKSt9nothrow_t", OP_NEW, N, false, 0},
    {"_Zna" SZ "St11align_val_tRKSt9nothrow_t", OP_NEW, NA, false, 0},

    {"_ZdlPv", OP_DELETE, N, true, 0},
    {"_ZdaPv", OP_DELETE, NA, true, 0},
    {"_ZdlPv" SZ, OP_DELETE, N, true, 0},
    {"_ZdaPv" SZ, OP_DELETE, NA, true, 0},
    {"_ZdlPvRKSt9nothrow_t", OP_DELETE, N, true, 0},
    {"_ZdaPvRKSt9nothrow_t", OP_DELETE, NA, true, 0},
    {"_ZdlPvSt11align_val_t", OP_DELETE, N, true, 0},
    {"_ZdaPvSt11align_val_t", OP_DELETE, NA, true, 0},
    {"_ZdlPv" SZ "St11align_val_t", OP_DELETE, N, true, 0},
    {"_ZdaPv" SZ "St11align_val_t", OP_DELETE, NA, true, 0},
    {"_ZdlPvSt11align_val_tRKSt9nothrow_t", OP_DELETE, N, true, 0},
    {"_ZdaPvSt11align_val_tRKSt9nothrow_t", OP_DELETE, NA, true, 0},

    {"mmap", OP_MMAP, FAMILY_MAP, false, 0},
    {"mmap64", OP_MMAP, FAMILY_MAP, false, 0},
    {"munmap", OP_MUNMAP, FAMILY_MAP, false, 0},
    {"mremap", OP_MREMAP, FAMILY_MAP, false, 0},

    {"exit", OP_EXIT, M, false, 0},

    /* glibc's own names of its functions (and the allocators' copies of
     * them): aliases, called directly by wrappers and by static code */
    {"__libc_malloc", OP_MALLOC, M, false, 0},
    {"__libc_calloc", OP_CALLOC, M, false, 0},
    {"__libc_realloc", OP_REALLOC, M, false, 0},
    {"__libc_free", OP_FREE, M, true, 0},
    {"__libc_cfree", OP_FREE, M, true, 0},
    {"__libc_memalign", OP_ALIGNED_ALLOC, M, false, 0},
    {"__libc_valloc", OP_VALLOC, M, false, 0},
    {"__libc_pvalloc", OP_PVALLOC, M, false, 0},
    {"__posix_memalign", OP_POSIX_MEMALIGN, M, false, 0},
    {"reallocf", OP_REALLOCF, M, false, 0},

    /* jemalloc's non-standard API, plain and je_-prefixed.  nallocx and
     * sallocx, malloc_usable_size are queries, not allocations. */
    {"mallocx", OP_MALLOC, M, false, 0},
    {"rallocx", OP_REALLOC, M, false, 0},
    {"xallocx", OP_XALLOCX, M, false, 0},
    {"sdallocx", OP_FREE, M, true, 0},
    {"dallocx", OP_FREE, M, true, 0},
    {"je_malloc", OP_MALLOC, M, false, 0},
    {"je_calloc", OP_CALLOC, M, false, 0},
    {"je_realloc", OP_REALLOC, M, false, 0},
    {"je_free", OP_FREE, M, true, 0},
    {"je_posix_memalign", OP_POSIX_MEMALIGN, M, false, 0},
    {"je_aligned_alloc", OP_ALIGNED_ALLOC, M, false, 0},
    {"je_memalign", OP_ALIGNED_ALLOC, M, false, 0},
    {"je_valloc", OP_VALLOC, M, false, 0},
    {"je_mallocx", OP_MALLOC, M, false, 0},
    {"je_rallocx", OP_REALLOC, M, false, 0},
    {"je_xallocx", OP_XALLOCX, M, false, 0},
    {"je_sdallocx", OP_FREE, M, true, 0},
    {"je_dallocx", OP_FREE, M, true, 0},

    /* tcmalloc (gperftools): tc_ names, aliases of the standard ones in
     * libtcmalloc.so but separate functions in a static link */
    {"tc_malloc", OP_MALLOC, M, false, 0},
    {"tc_malloc_skip_new_handler", OP_MALLOC, M, false, 0},
    {"tc_calloc", OP_CALLOC, M, false, 0},
    {"tc_realloc", OP_REALLOC, M, false, 0},
    {"tc_free", OP_FREE, M, true, 0},
    {"tc_free_sized", OP_FREE, M, true, 0},
    {"tc_cfree", OP_FREE, M, true, 0},
    {"tc_memalign", OP_ALIGNED_ALLOC, M, false, 0},
    {"tc_posix_memalign", OP_POSIX_MEMALIGN, M, false, 0},
    {"tc_valloc", OP_VALLOC, M, false, 0},
    {"tc_pvalloc", OP_PVALLOC, M, false, 0},
    {"tc_new", OP_NEW, N, false, 0},
    {"tc_newarray", OP_NEW, NA, false, 0},
    {"tc_new_nothrow", OP_NEW, N, false, 0},
    {"tc_newarray_nothrow", OP_NEW, NA, false, 0},
    {"tc_new_aligned", OP_NEW, N, false, 0},
    {"tc_newarray_aligned", OP_NEW, NA, false, 0},
    {"tc_new_aligned_nothrow", OP_NEW, N, false, 0},
    {"tc_newarray_aligned_nothrow", OP_NEW, NA, false, 0},
    {"tc_delete", OP_DELETE, N, true, 0},
    {"tc_deletearray", OP_DELETE, NA, true, 0},
    {"tc_delete_nothrow", OP_DELETE, N, true, 0},
    {"tc_deletearray_nothrow", OP_DELETE, NA, true, 0},
    {"tc_delete_sized", OP_DELETE, N, true, 0},
    {"tc_deletearray_sized", OP_DELETE, NA, true, 0},
    {"tc_delete_aligned", OP_DELETE, N, true, 0},
    {"tc_deletearray_aligned", OP_DELETE, NA, true, 0},
    {"tc_delete_sized_aligned", OP_DELETE, N, true, 0},
    {"tc_deletearray_sized_aligned", OP_DELETE, NA, true, 0},
    {"tc_delete_aligned_nothrow", OP_DELETE, N, true, 0},
    {"tc_deletearray_aligned_nothrow", OP_DELETE, NA, true, 0},

    /* mimalloc (the set Debian's libmimalloc exports; mi_heap_* take the
     * heap first).  mi_usable_size, mi_good_size are queries. */
    {"mi_malloc", OP_MALLOC, M, false, 0},
    {"mi_malloc_small", OP_MALLOC, M, false, 0},
    {"mi_zalloc", OP_MALLOC, M, false, 0},
    {"mi_zalloc_small", OP_MALLOC, M, false, 0},
    {"mi_calloc", OP_CALLOC, M, false, 0},
    {"mi_mallocn", OP_CALLOC, M, false, 0},
    {"mi_realloc", OP_REALLOC, M, false, 0},
    {"mi_reallocn", OP_REALLOCARRAY, M, false, 0},
    {"mi_reallocarray", OP_REALLOCARRAY, M, false, 0},
    {"mi_reallocf", OP_REALLOCF, M, false, 0},
    {"mi_rezalloc", OP_REALLOC, M, false, 0},
    {"mi_recalloc", OP_REALLOCARRAY, M, false, 0},
    {"mi_expand", OP_EXPAND, M, false, 0},
    {"mi__expand", OP_EXPAND, M, false, 0},
    {"mi_strdup", OP_STRDUP, M, false, 0},
    {"mi_strndup", OP_STRDUP, M, false, 0},
    {"mi_free", OP_FREE, M, true, 0},
    {"mi_cfree", OP_FREE, M, true, 0},
    {"mi_free_size", OP_FREE, M, true, 0},
    {"mi_free_aligned", OP_FREE, M, true, 0},
    {"mi_free_size_aligned", OP_FREE, M, true, 0},
    {"vfree", OP_FREE, M, true, 0},
    {"mi_malloc_aligned", OP_MALLOC, M, false, 0},
    {"mi_malloc_aligned_at", OP_MALLOC, M, false, 0},
    {"mi_zalloc_aligned", OP_MALLOC, M, false, 0},
    {"mi_zalloc_aligned_at", OP_MALLOC, M, false, 0},
    {"mi_calloc_aligned", OP_CALLOC, M, false, 0},
    {"mi_calloc_aligned_at", OP_CALLOC, M, false, 0},
    {"mi_realloc_aligned", OP_REALLOC, M, false, 0},
    {"mi_realloc_aligned_at", OP_REALLOC, M, false, 0},
    {"mi_rezalloc_aligned", OP_REALLOC, M, false, 0},
    {"mi_rezalloc_aligned_at", OP_REALLOC, M, false, 0},
    {"mi_recalloc_aligned", OP_REALLOCARRAY, M, false, 0},
    {"mi_recalloc_aligned_at", OP_REALLOCARRAY, M, false, 0},
    {"mi_aligned_recalloc", OP_REALLOCARRAY, M, false, 0},
    {"mi_posix_memalign", OP_POSIX_MEMALIGN, M, false, 0},
    {"mi_memalign", OP_ALIGNED_ALLOC, M, false, 0},
    {"mi_aligned_alloc", OP_ALIGNED_ALLOC, M, false, 0},
    {"mi_valloc", OP_VALLOC, M, false, 0},
    {"mi_pvalloc", OP_PVALLOC, M, false, 0},
    {"_aligned_malloc", OP_MALLOC, M, false, 0},
    {"mi_new", OP_NEW, N, false, 0},
    {"mi_new_nothrow", OP_NEW, N, false, 0},
    {"mi_new_aligned", OP_NEW, N, false, 0},
    {"mi_new_aligned_nothrow", OP_NEW, N, false, 0},
    {"mi_heap_malloc", OP_MALLOC, M, false, 1},
    {"mi_heap_malloc_small", OP_MALLOC, M, false, 1},
    {"mi_heap_zalloc", OP_MALLOC, M, false, 1},
    {"mi_heap_calloc", OP_CALLOC, M, false, 1},
    {"mi_heap_mallocn", OP_CALLOC, M, false, 1},
    {"mi_heap_realloc", OP_REALLOC, M, false, 1},
    {"mi_heap_reallocn", OP_REALLOCARRAY, M, false, 1},
    {"mi_heap_reallocf", OP_REALLOCF, M, false, 1},
    {"mi_heap_rezalloc", OP_REALLOC, M, false, 1},
    {"mi_heap_recalloc", OP_REALLOCARRAY, M, false, 1},
    {"mi_heap_strdup", OP_STRDUP, M, false, 1},
    {"mi_heap_strndup", OP_STRDUP, M, false, 1},
    {"mi_heap_malloc_aligned", OP_MALLOC, M, false, 1},
    {"mi_heap_malloc_aligned_at", OP_MALLOC, M, false, 1},
    {"mi_heap_zalloc_aligned", OP_MALLOC, M, false, 1},
    {"mi_heap_zalloc_aligned_at", OP_MALLOC, M, false, 1},
    {"mi_heap_calloc_aligned", OP_CALLOC, M, false, 1},
    {"mi_heap_calloc_aligned_at", OP_CALLOC, M, false, 1},
    {"mi_heap_realloc_aligned", OP_REALLOC, M, false, 1},
    {"mi_heap_realloc_aligned_at", OP_REALLOC, M, false, 1},
    {"mi_heap_rezalloc_aligned", OP_REALLOC, M, false, 1},
    {"mi_heap_rezalloc_aligned_at", OP_REALLOC, M, false, 1},
    {"mi_heap_recalloc_aligned", OP_REALLOCARRAY, M, false, 1},
    {"mi_heap_recalloc_aligned_at", OP_REALLOCARRAY, M, false, 1},

    /* libstdc++: the memory of a thrown object. */
    {"__cxa_allocate_exception", OP_EXCEPTION_ALLOC, M, false, 0},
    {"__cxa_allocate_dependent_exception", OP_EXCEPTION_ALLOC, M, false, 0},
    {"__cxa_free_exception", OP_EXCEPTION_ALLOC, M, false, 0},
    {"__cxa_free_dependent_exception", OP_EXCEPTION_ALLOC, M, false, 0},
    {"__cxa_begin_catch", OP_CATCH, M, false, 0},

    /* libgcc_s: an exception or a forced unwind (pthread_exit) begins. */
    {"_Unwind_RaiseException", OP_UNWIND, M, false, 0},
    {"_Unwind_Resume_or_Rethrow", OP_UNWIND, M, false, 0},
    {"_Unwind_ForcedUnwind", OP_UNWIND, M, false, 0},
    {NULL, OP_MALLOC, M, false, 0},
};

#define TABLE_LEN (sizeof(table) / sizeof(table[0]) - 1)

/* The same entries, family-less (intercept_familyless). */
static struct intercept_fn folded[TABLE_LEN];
/* Table indexes sorted by name, for intercept_find. */
static unsigned short by_name[TABLE_LEN];
static bool ready;

static int cmp_by_name(const void *a, const void *b)
{
    return strcmp(table[*(const unsigned short *)a].name, table[*(const unsigned short *)b].name);
}

/* Built once, before the first lookup (the tracer is single-threaded). */
static void prepare(void)
{
    if (ready)
        return;
    for (unsigned i = 0; i < TABLE_LEN; i++) {
        folded[i] = table[i];
        folded[i].family = FAMILY_ANY;
        by_name[i] = (unsigned short)i;
    }
    qsort(by_name, TABLE_LEN, sizeof(by_name[0]), cmp_by_name);
    ready = true;
}

/* --alloc-fn's functions: set while the options are read, before any
 * lookup, then only read (like the table). */
static struct intercept_fn named[INTERCEPT_NAMED_MAX];
static unsigned nnamed;

const struct intercept_fn *intercept_table(void) { return table; }
size_t intercept_count(void) { return TABLE_LEN + nnamed; }

/* Where --alloc-fn put each named function's arguments (named[i]'s at
 * named_pos[i]; 0: the C function's own place). */
static unsigned char named_pos[INTERCEPT_NAMED_MAX][INTERCEPT_POS_MAX];

unsigned intercept_arg_index(const struct intercept_fn *fn, unsigned k)
{
    if (fn >= named && fn < named + nnamed && k < INTERCEPT_POS_MAX && named_pos[fn - named][k])
        return named_pos[fn - named][k] - 1u;
    return fn->shift + k;
}

unsigned intercept_args_needed(const struct intercept_fn *fn, unsigned n)
{
    unsigned most = 0;
    for (unsigned k = 0; k < n; k++) {
        unsigned i = intercept_arg_index(fn, k) + 1;
        most = i > most ? i : most;
    }
    return most;
}

/* One parsed word into named[]; where says where it came from in errors. */
static int add_spec(const struct alloc_fn_spec *sp, const char *where, char *err, size_t errlen)
{
    if (intercept_find(sp->name)) {
        snprintf(err, errlen, "%s: %s is intercepted already", where, sp->name);
        return -1;
    }
    if (nnamed == INTERCEPT_NAMED_MAX) {
        snprintf(err, errlen, "%s: at most %d functions", where, INTERCEPT_NAMED_MAX);
        return -1;
    }
    char *name = strdup(sp->name);
    if (!name) {
        snprintf(err, errlen, "--alloc-fn: out of memory");
        return -1;
    }
    named[nnamed] = (struct intercept_fn){name, sp->op, FAMILY_NAMED, false, 0};
    memcpy(named_pos[nnamed++], sp->pos, sizeof(named_pos[0]));
    /* name lives in named[] as long as the tracer */
    /* cppcheck-suppress memleak */
    return 0;
}

int intercept_add_named(const char *spec, char *err, size_t errlen)
{
    if (spec[0] == '@') {
        /* static: 32 entries of 260 bytes, once, while the options are read */
        static struct alloc_fn_spec specs[INTERCEPT_NAMED_MAX];
        size_t n;
        if (alloc_fn_file_load(spec + 1, specs, INTERCEPT_NAMED_MAX - nnamed, &n, err, errlen) < 0)
            return -1;
        for (size_t i = 0; i < n; i++) {
            char where[ALLOC_FN_LINE_MAX];
            snprintf(where, sizeof(where), "%s:%u", spec + 1, specs[i].line);
            if (add_spec(&specs[i], where, err, errlen) < 0)
                return -1;
        }
        return 0;
    }
    struct alloc_fn_spec sp;
    char why[128];
    if (alloc_fn_spec_parse(spec, strlen(spec), &sp, why, sizeof(why)) < 0) {
        snprintf(err, errlen, "--alloc-fn %s: %s", spec, why);
        return -1;
    }
    char where[ALLOC_FN_LINE_MAX];
    snprintf(where, sizeof(where), "--alloc-fn %.*s", 400, spec);
    return add_spec(&sp, where, err, errlen);
}

const struct intercept_fn *intercept_find(const char *name)
{
    for (unsigned i = 0; i < nnamed; i++)
        if (strcmp(name, named[i].name) == 0)
            return &named[i];
    prepare();
    size_t lo = 0, hi = TABLE_LEN;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, table[by_name[mid]].name);
        if (c == 0)
            return &table[by_name[mid]];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

const struct intercept_fn *intercept_familyless(const struct intercept_fn *fn)
{
    prepare();
    if (fn >= table && fn < table + TABLE_LEN)
        return &folded[fn - table];
    return fn;
}

/* The entry of the table fn stands for (itself, or the one it folds). */
static const struct intercept_fn *unfolded(const struct intercept_fn *fn)
{
    if (fn >= folded && fn < folded + TABLE_LEN)
        return &table[fn - folded];
    return fn;
}

/* The place of an entry in table order, --alloc-fn's after the table's
 * (pointers into two arrays are not compared). */
static size_t rank(const struct intercept_fn *fn)
{
    fn = unfolded(fn);
    if (fn >= table && fn < table + TABLE_LEN)
        return (size_t)(fn - table);
    return TABLE_LEN + (size_t)(fn - named);
}

bool intercept_is_map_op(enum intercept_op op)
{
    return op == OP_MMAP || op == OP_MUNMAP || op == OP_MREMAP;
}

enum intercept_size intercept_size_args(enum intercept_op op, int *i, int *j)
{
    *i = *j = -1;
    switch (op) {
    case OP_MALLOC:
    case OP_NEW:
    case OP_VALLOC:
    case OP_PVALLOC:
        *i = 0;
        return INTERCEPT_SIZE_ARGS;
    case OP_CALLOC:
        *i = 0;
        *j = 1;
        return INTERCEPT_SIZE_ARGS;
    case OP_REALLOC:
    case OP_REALLOCF:
    case OP_ALIGNED_ALLOC:
    case OP_XALLOCX:
    case OP_EXPAND:
        *i = 1;
        return INTERCEPT_SIZE_ARGS;
    case OP_REALLOCARRAY:
        *i = 1;
        *j = 2;
        return INTERCEPT_SIZE_ARGS;
    case OP_POSIX_MEMALIGN:
        *i = 2;
        return INTERCEPT_SIZE_ARGS;
    case OP_STRDUP:
        return INTERCEPT_SIZE_COPY;
    default:
        return INTERCEPT_SIZE_NONE;
    }
}

bool intercept_is_realloc_op(enum intercept_op op)
{
    return op == OP_REALLOC || op == OP_REALLOCARRAY || op == OP_REALLOCF;
}

bool intercept_is_heap_fn(const struct intercept_fn *fn)
{
    return !intercept_is_map_op(fn->op) && fn->op != OP_EXIT && fn->op != OP_EXCEPTION_ALLOC &&
           fn->op != OP_UNWIND && fn->op != OP_CATCH && fn->op != OP_FIND_EXIDX;
}

void intercept_site_add(struct intercept_site *sites, size_t *n, size_t cap, const char *name,
                        unsigned long long addr)
{
    const struct intercept_fn *fn = intercept_find(name);
    if (!fn || !addr)
        return;
    for (size_t i = 0; i < *n; i++) {
        if (sites[i].addr != addr)
            continue;
        const struct intercept_fn *was = unfolded(sites[i].fn);
        /* The first in the table names the site; a second family makes
         * it family-less. */
        const struct intercept_fn *first = rank(fn) < rank(was) ? fn : was;
        bool mixed = sites[i].fn->family == FAMILY_ANY || fn->family != was->family;
        sites[i].fn = mixed ? intercept_familyless(first) : first;
        return;
    }
    if (*n < cap)
        sites[(*n)++] = (struct intercept_site){addr, fn};
}

static int cmp_site(const void *a, const void *b)
{
    size_t x = rank(((const struct intercept_site *)a)->fn);
    size_t y = rank(((const struct intercept_site *)b)->fn);
    return x < y ? -1 : x > y;
}

void intercept_sites_sort(struct intercept_site *sites, size_t n)
{
    qsort(sites, n, sizeof(*sites), cmp_site);
}
