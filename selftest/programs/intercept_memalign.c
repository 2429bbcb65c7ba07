/* Every memalign-family function with its failure cases, and realloc/free
 * of the blocks they return: posix_memalign (good, EINVAL alignment, ENOMEM
 * size), aligned_alloc, memalign, valloc, pvalloc. */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *keep[16];

/* pvalloc rounds the size up to whole pages.  valgrind 3.19 aborts on
 * pvalloc, so this part runs only when asked, and prints the figures it adds
 * to the HEAP SUMMARY, computed from the page size here.  pvalloc(0) counts
 * one page, as newer valgrind counts it (glibc 2.36 gives a minimal chunk,
 * so only non-zero sizes are checked against malloc_usable_size). */
static void use_pvalloc(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t sizes[] = {1, page + 1, 0, 2 * page};
    size_t rounded[] = {page, 2 * page, page, 2 * page};
    unsigned long long bytes = 0, kept_bytes = 0;
    for (int i = 0; i < 4; i++) {
        void *p = pvalloc(sizes[i]);
        if (!p || (sizes[i] && malloc_usable_size(p) < rounded[i]) || ((uintptr_t)p & (page - 1)))
            abort();
        bytes += rounded[i];
        if (i == 2) {
            free(p);
        } else {
            keep[8 + i] = p;
            kept_bytes += rounded[i];
        }
    }
    printf("pvalloc adds: allocs 4 frees 1 bytes %llu in_use_bytes %llu in_use_blocks 3\n", bytes,
           kept_bytes);
}

int main(int argc, char **argv)
{
    void *p = NULL;
    volatile size_t huge = SIZE_MAX - 4096;
    int rc_ok = posix_memalign(&keep[0], 64, 100);
    int rc_inval = posix_memalign(&p, 24, 100);           /* not a power of two */
    int rc_inval2 = posix_memalign(&p, 4, 100);           /* less than sizeof(void *) */
    int rc_nomem = posix_memalign(&p, 64, SIZE_MAX / 2);  /* too big */
    void *q = NULL;
    posix_memalign(&q, 4096, 5000);
    q = realloc(q, 9000);                                 /* one free, one alloc */
    keep[1] = q;
    keep[2] = aligned_alloc(32, 96);
    void *a = aligned_alloc(256, 1024);
    free(a);
    void *bad = aligned_alloc(64, huge);                  /* fails */
    keep[3] = memalign(128, 300);
    void *m = memalign(16, 40);
    m = realloc(m, 400);
    free(m);
    keep[4] = valloc(123);
    void *v = valloc(10000);
    free(v);
    if (argc > 1 && strcmp(argv[1], "pvalloc") == 0)
        use_pvalloc();
    printf("intercept_memalign: %d %d %d %d %p %p\n", rc_ok, rc_inval, rc_inval2, rc_nomem, p, bad);
    return 0;
}
