/* Prints where the kernel put this program's own mappings: mmaps without
 * an address hint, a malloc'd block above the mmap threshold, a thread's
 * stack, a dlopen'ed library and the program break.  Without address
 * randomization an untraced run prints the same lines every time; a tracer
 * whose own mappings in the process are in the way changes them
 * (selftest/tests/trace_layout.sh).
 *
 * layout_probe [DIR]: with DIR, prints "probe: ready" and waits for the
 * file DIR/go before mapping anything (a tracer attaches meanwhile). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static void *thread_stack(void *arg)
{
    (void)arg;
    pthread_attr_t attr;
    void *lo = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstack(&attr, &lo, &size);
        pthread_attr_destroy(&attr);
    }
    return lo;
}

static void wait_for_go(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/go", dir);
    printf("probe: ready\n");
    fflush(stdout);
    const struct timespec tick = {0, 20 * 1000 * 1000};
    while (access(path, F_OK) != 0)
        nanosleep(&tick, NULL);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        wait_for_go(argv[1]);
    /* Small to large: the small ones fill the holes a tracer's page would
     * leave, the large ones go below everything mapped so far. */
    static const size_t sizes[] = {4096, 3 * 4096, 64 << 10, 1 << 20, 3 << 20, 8 << 20, 200 << 20};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        void *p = mmap(NULL, sizes[i], PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        printf("mmap %zu %p\n", sizes[i], p == MAP_FAILED ? NULL : p);
    }
    void *big = malloc(4 << 20);
    printf("malloc %d %p\n", 4 << 20, big);
    pthread_t th;
    void *stack = NULL;
    if (pthread_create(&th, NULL, thread_stack, NULL) == 0)
        pthread_join(th, &stack);
    printf("thread stack %p\n", stack);
    void *lib = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    struct link_map *map = NULL;
    if (lib)
        dlinfo(lib, RTLD_DI_LINKMAP, &map);
    printf("dlopen libz.so.1 %#lx\n", map ? (unsigned long)map->l_addr : 0ul);
    void *after = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("mmap after dlopen %p\n", after == MAP_FAILED ? NULL : after);
    printf("sbrk %p\n", sbrk(0));
    free(big);
    return 0;
}
