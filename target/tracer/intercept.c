#include "target/tracer/intercept.h"

#include <string.h>

#include "arch/arch.h"

/* C++ operators are mangled with the target's size_t: 'm' (unsigned long) on
 * LP64, 'j' (unsigned int) on ILP32. */
#if ARCH_PTR_SIZE == 8
#define SZ "m"
#else
#define SZ "j"
#endif

static const struct intercept_fn table[] = {
    {"malloc", OP_MALLOC, FAMILY_MALLOC, false},
    {"calloc", OP_CALLOC, FAMILY_MALLOC, false},
    {"realloc", OP_REALLOC, FAMILY_MALLOC, false},
    {"reallocarray", OP_REALLOCARRAY, FAMILY_MALLOC, false},
    {"free", OP_FREE, FAMILY_MALLOC, true},
    {"cfree", OP_FREE, FAMILY_MALLOC, true},
    {"posix_memalign", OP_POSIX_MEMALIGN, FAMILY_MALLOC, false},
    {"aligned_alloc", OP_ALIGNED_ALLOC, FAMILY_MALLOC, false},
    {"memalign", OP_ALIGNED_ALLOC, FAMILY_MALLOC, false},
    {"valloc", OP_VALLOC, FAMILY_MALLOC, false},
    {"pvalloc", OP_PVALLOC, FAMILY_MALLOC, false},

    {"_Znw" SZ, OP_NEW, FAMILY_NEW, false},
    {"_Zna" SZ, OP_NEW, FAMILY_NEW_ARRAY, false},
    {"_Znw" SZ "RKSt9nothrow_t", OP_NEW, FAMILY_NEW, false},
    {"_Zna" SZ "RKSt9nothrow_t", OP_NEW, FAMILY_NEW_ARRAY, false},
    {"_Znw" SZ "St11align_val_t", OP_NEW, FAMILY_NEW, false},
    {"_Zna" SZ "St11align_val_t", OP_NEW, FAMILY_NEW_ARRAY, false},
    {"_Znw" SZ "St11align_val_tRKSt9nothrow_t", OP_NEW, FAMILY_NEW, false},
    {"_Zna" SZ "St11align_val_tRKSt9nothrow_t", OP_NEW, FAMILY_NEW_ARRAY, false},

    {"_ZdlPv", OP_DELETE, FAMILY_NEW, true},
    {"_ZdaPv", OP_DELETE, FAMILY_NEW_ARRAY, true},
    {"_ZdlPv" SZ, OP_DELETE, FAMILY_NEW, true},
    {"_ZdaPv" SZ, OP_DELETE, FAMILY_NEW_ARRAY, true},
    {"_ZdlPvRKSt9nothrow_t", OP_DELETE, FAMILY_NEW, true},
    {"_ZdaPvRKSt9nothrow_t", OP_DELETE, FAMILY_NEW_ARRAY, true},
    {"_ZdlPvSt11align_val_t", OP_DELETE, FAMILY_NEW, true},
    {"_ZdaPvSt11align_val_t", OP_DELETE, FAMILY_NEW_ARRAY, true},
    {"_ZdlPv" SZ "St11align_val_t", OP_DELETE, FAMILY_NEW, true},
    {"_ZdaPv" SZ "St11align_val_t", OP_DELETE, FAMILY_NEW_ARRAY, true},
    {"_ZdlPvSt11align_val_tRKSt9nothrow_t", OP_DELETE, FAMILY_NEW, true},
    {"_ZdaPvSt11align_val_tRKSt9nothrow_t", OP_DELETE, FAMILY_NEW_ARRAY, true},

    {"mmap", OP_MMAP, FAMILY_MAP, false},
    {"mmap64", OP_MMAP, FAMILY_MAP, false},
    {"munmap", OP_MUNMAP, FAMILY_MAP, false},
    {"mremap", OP_MREMAP, FAMILY_MAP, false},

    {"exit", OP_EXIT, FAMILY_MALLOC, false},
    {NULL, OP_MALLOC, FAMILY_MALLOC, false},
};

const struct intercept_fn *intercept_table(void) { return table; }

const struct intercept_fn *intercept_find(const char *name)
{
    for (const struct intercept_fn *f = table; f->name; f++)
        if (strcmp(f->name, name) == 0)
            return f;
    return NULL;
}

bool intercept_is_map_op(enum intercept_op op)
{
    return op == OP_MMAP || op == OP_MUNMAP || op == OP_MREMAP;
}
