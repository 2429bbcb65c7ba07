/* A plugin of two_heaps.c, which is linked with jemalloc: loaded with
 * RTLD_DEEPBIND (or into a namespace of its own with dlmopen), its malloc
 * and free are glibc's while the program's are jemalloc's. */
#include <stdlib.h>
#include <string.h>

void *plugin_make(size_t n)
{
    char *p = malloc(n);
    if (p)
        memset(p, 'g', n);
    return p;
}

void plugin_release(void *p)
{
    free(p);
}
