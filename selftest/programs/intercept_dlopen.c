/* Loads a plugin (argv[1]) ROUNDS times (argv[2], default 3): dlopen, call
 * plugin_work (which allocates and returns a block kept here, so blocks of
 * the library outlive it), dlclose.  Every round's block is kept. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static void *kept[16];

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: intercept_dlopen PLUGIN.so [ROUNDS]\n");
        return 2;
    }
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    if (rounds < 1 || rounds > 16)
        rounds = 3;
    for (int r = 0; r < rounds; r++) {
        void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "intercept_dlopen: %s\n", dlerror());
            return 1;
        }
        void *(*work)(int) = (void *(*)(int))dlsym(h, "plugin_work");
        if (!work) {
            fprintf(stderr, "intercept_dlopen: %s\n", dlerror());
            return 1;
        }
        kept[r] = work(r);
        dlclose(h);
    }
    free(kept[0]);
    printf("intercept_dlopen: %d rounds\n", rounds);
    return 0;
}
