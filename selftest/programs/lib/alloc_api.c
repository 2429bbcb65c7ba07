/* A program whose allocator is a library of its own (intercept_allocators.sh).
 *
 *   alloc_api std N     N malloc/free pairs, then one call of each standard
 *                       function (calloc, realloc, memalign family, new and
 *                       delete), three blocks left in use.  Built linked
 *                       with -ljemalloc, -ltcmalloc or -lmimalloc, shared
 *                       or static: the same figures as valgrind's with the
 *                       allocator's soname as "somalloc".
 *   alloc_api own N     the same through the allocator's own entry points
 *                       (mallocx, tc_malloc, mi_malloc...; built with
 *                       -DAPI_JE, -DAPI_TC or -DAPI_MI; not pvalloc, which
 *                       valgrind aborts on).  Built with -DEQUIV
 *                       too, each call is the standard one valgrind counts
 *                       the same way, against glibc: the oracle's program.
 *
 * Every call's size is fixed, so the two programs' figures must be equal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>

#if __SIZEOF_POINTER__ == 8
#define NEW_NAME "_Znwm"
#define NEWA_NAME "_Znam"
#define DELS_NAME "_ZdlPvm"
#else
#define NEW_NAME "_Znwj"
#define NEWA_NAME "_Znaj"
#define DELS_NAME "_ZdlPvj"
#endif
/* C++'s operators, called from C by their mangled names */
void *op_new(size_t n) __asm__(NEW_NAME);
void *op_new_array(size_t n) __asm__(NEWA_NAME);
void op_delete(void *p) __asm__("_ZdlPv");
void op_delete_array(void *p) __asm__("_ZdaPv");
void op_delete_sized(void *p, size_t n) __asm__(DELS_NAME);

static void *keep[3];

static void standard(long n)
{
    for (long i = 0; i < n; i++) {
        void *p = malloc((size_t)(i % 200) + 1);
        if (!p)
            exit(2);
        free(p);
    }
    void *p = calloc(10, 10);
    p = realloc(p, 300);
    free(p);
    void *q = NULL;
    if (posix_memalign(&q, 64, 100) != 0)
        exit(2);
    free(q);
    free(aligned_alloc(64, 128));
    free(memalign(32, 50));
    free(valloc(10));
    op_delete(op_new(24));
    op_delete_array(op_new_array(48));
    op_delete_sized(op_new(16), 16);
    free(strdup("seven!"));
    keep[0] = malloc(11);
    keep[1] = calloc(3, 7);
    keep[2] = op_new(40);
}

#if defined(API_JE) && !defined(EQUIV)
#include <jemalloc/jemalloc.h>
static void own(long n)
{
    for (long i = 0; i < n; i++) {
        void *p = mallocx((size_t)(i % 200) + 1, 0);
        if (!p)
            exit(2);
        if (i % 2)
            dallocx(p, 0);
        else
            sdallocx(p, (size_t)(i % 200) + 1, 0);
    }
    void *p = mallocx(100, MALLOCX_ZERO);
    p = rallocx(p, 300, 0);
    dallocx(p, 0);
    p = mallocx(100, MALLOCX_ALIGN(64));
    /* 112 is 100's size class: 104 is reached in place */
    if (nallocx(100, 0) != 112 || xallocx(p, 104, 0, 0) < 104 || malloc_usable_size(p) < 104)
        exit(3);
    sdallocx(p, 104, 0);
    keep[0] = mallocx(11, 0);
    keep[1] = mallocx(21, MALLOCX_ZERO);
    keep[2] = rallocx(mallocx(8, 0), 40, 0);
}
#elif defined(API_JE)
static void own(long n)
{
    for (long i = 0; i < n; i++)
        free(malloc((size_t)(i % 200) + 1));
    void *p = calloc(1, 100);
    p = realloc(p, 300);
    free(p);
    p = memalign(64, 100);
    p = realloc(p, 104);
    free(p);
    keep[0] = malloc(11);
    keep[1] = calloc(1, 21);
    keep[2] = realloc(malloc(8), 40);
}
#elif defined(API_TC) && !defined(EQUIV)
#include <gperftools/tcmalloc.h>
#include <gperftools/nallocx.h>
/* declared for C++ only in tcmalloc.h; extern "C" functions */
void *tc_new(size_t size);
void *tc_newarray(size_t size);
void *tc_new_nothrow(size_t size, const void *nothrow);
void tc_delete(void *p);
void tc_deletearray(void *p);
void tc_delete_sized(void *p, size_t size);
static void own(long n)
{
    for (long i = 0; i < n; i++) {
        void *p = tc_malloc((size_t)(i % 200) + 1);
        if (!p)
            exit(2);
        if (i % 2)
            tc_free(p);
        else
            tc_free_sized(p, (size_t)(i % 200) + 1);
    }
    void *p = tc_calloc(10, 10);
    p = tc_realloc(p, 300);
    tc_cfree(p);
    void *q = NULL;
    if (tc_posix_memalign(&q, 64, 100) != 0 || tc_nallocx(100, 0) < 100 || tc_malloc_size(q) < 100)
        exit(2);
    tc_free(q);
    tc_free(tc_memalign(32, 50));
    tc_free(tc_valloc(10));
    tc_delete(tc_new(24));
    tc_deletearray(tc_newarray(48));
    tc_delete_sized(tc_new_nothrow(16, NULL), 16);
    keep[0] = tc_malloc(11);
    keep[1] = tc_calloc(3, 7);
    keep[2] = tc_new(40);
}
#elif defined(API_TC)
static void own(long n)
{
    for (long i = 0; i < n; i++)
        free(malloc((size_t)(i % 200) + 1));
    void *p = calloc(10, 10);
    p = realloc(p, 300);
    free(p);
    void *q = NULL;
    if (posix_memalign(&q, 64, 100) != 0)
        exit(2);
    free(q);
    free(memalign(32, 50));
    free(valloc(10));
    op_delete(op_new(24));
    op_delete_array(op_new_array(48));
    op_delete_sized(op_new(16), 16);
    keep[0] = malloc(11);
    keep[1] = calloc(3, 7);
    keep[2] = op_new(40);
}
#elif defined(API_MI) && !defined(EQUIV)
#include <mimalloc.h>
static void own(long n)
{
    for (long i = 0; i < n; i++) {
        void *p = (i % 3) ? mi_malloc((size_t)(i % 200) + 1) : mi_zalloc((size_t)(i % 200) + 1);
        if (!p)
            exit(2);
        if (i % 2)
            mi_free(p);
        else
            mi_free_size(p, (size_t)(i % 200) + 1);
    }
    void *p = mi_calloc(10, 10);
    p = mi_realloc(p, 300);
    p = mi_reallocn(p, 4, 100);
    p = mi_reallocf(p, 500);
    p = mi_rezalloc(p, 600);
    p = mi_recalloc(p, 7, 100);
    mi_free(p);
    p = mi_mallocn(5, 20);
    /* 100 bytes sit in a 112-byte block: 104 fits in place */
    if (mi_expand(p, 104) != p || mi_usable_size(p) < 104)
        exit(3);
    mi_free(p);
    void *q = NULL;
    if (mi_posix_memalign(&q, 64, 100) != 0)
        exit(2);
    mi_free(q);
    mi_free(mi_memalign(32, 50));
    mi_free(mi_aligned_alloc(64, 128));
    mi_free(mi_valloc(10));
    mi_free_aligned(mi_malloc_aligned(70, 64), 64);
    mi_free(mi_zalloc_aligned(30, 32));
    mi_free(mi_calloc_aligned(3, 10, 16));
    mi_free(mi_realloc_aligned(mi_malloc_aligned(20, 32), 90, 32));
    mi_free(mi_strdup("seven!"));
    mi_free(mi_strndup("eleven chars", 4));
    mi_heap_t *h = mi_heap_get_default();
    mi_free(mi_heap_malloc(h, 33));
    mi_free(mi_heap_calloc(h, 3, 11));
    mi_free(mi_heap_realloc(h, mi_heap_malloc(h, 5), 55));
    mi_free(mi_heap_strdup(h, "heap"));
    mi_free(mi_new(24));
    keep[0] = mi_malloc(11);
    keep[1] = mi_calloc(3, 7);
    keep[2] = mi_new(40);
}
#elif defined(API_MI)
static void own(long n)
{
    for (long i = 0; i < n; i++)
        free((i % 3) ? malloc((size_t)(i % 200) + 1) : calloc(1, (size_t)(i % 200) + 1));
    void *p = calloc(10, 10);
    p = realloc(p, 300);
    p = realloc(p, 400);
    p = realloc(p, 500);
    p = realloc(p, 600);
    p = realloc(p, 700);
    free(p);
    p = calloc(5, 20);
    p = realloc(p, 104);
    free(p);
    void *q = NULL;
    if (posix_memalign(&q, 64, 100) != 0)
        exit(2);
    free(q);
    free(memalign(32, 50));
    free(aligned_alloc(64, 128));
    free(valloc(10));
    free(memalign(64, 70));
    free(memalign(32, 30));
    free(calloc(3, 10));
    free(realloc(memalign(32, 20), 90));
    free(strdup("seven!"));
    free(strndup("eleven chars", 4));
    free(malloc(33));
    free(calloc(3, 11));
    free(realloc(malloc(5), 55));
    free(strdup("heap"));
    op_delete(op_new(24));
    keep[0] = malloc(11);
    keep[1] = calloc(3, 7);
    keep[2] = op_new(40);
}
#else
static void own(long n)
{
    (void)n;
    exit(4); /* built without an API_ */
}
#endif

int main(int argc, char **argv)
{
    long n = argc > 2 ? atol(argv[2]) : 1000;
    if (argc > 1 && strcmp(argv[1], "own") == 0)
        own(n);
    else
        standard(n);
    printf("%p %p %p\n", keep[0], keep[1], keep[2]) < 0 ? exit(5) : (void)0;
    return 0;
}
