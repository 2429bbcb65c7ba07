/* Two allocators in one process (intercept_two_heaps.sh): the program is
 * linked with jemalloc, a plugin it loads uses glibc's malloc and free
 * (RTLD_DEEPBIND, or dlmopen: a namespace with a libc of its own).  Blocks
 * each one makes and releases itself are fine; one block the program made
 * is released by the plugin (a real bug: glibc's free of a jemalloc block),
 * and glibc aborts on it.  That abort is the program's expected end: its
 * handler exits with status 0 after saying so.
 *   two_heaps PLUGIN.so [deepbind|dlmopen] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void on_abort(int sig)
{
    (void)sig;
    static const char msg[] = "two_heaps: glibc refused the other allocator's block\n";
    if (write(2, msg, sizeof(msg) - 1) < 0)
        _exit(4);
    _exit(0);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    void *h = argc > 2 && strcmp(argv[2], "dlmopen") == 0
                  ? dlmopen(LM_ID_NEWLM, argv[1], RTLD_NOW)
                  : dlopen(argv[1], RTLD_NOW | RTLD_DEEPBIND);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        return 2;
    }
    void *(*make)(size_t) = (void *(*)(size_t))dlsym(h, "plugin_make");
    void (*release)(void *) = (void (*)(void *))dlsym(h, "plugin_release");
    if (!make || !release)
        return 2;
    for (int i = 0; i < 100; i++) {
        free(malloc(24));         /* jemalloc's, both */
        release(make(40));        /* glibc's, both */
    }
    void *crossing = malloc(64);
    memset(crossing, 'j', 64);
    signal(SIGABRT, on_abort);
    release(crossing);            /* the bug: glibc's free, jemalloc's block */
    fputs("two_heaps: glibc's free took the block\n", stderr);
    return 0;
}
