// One allocator misuse per run, chosen by argv[1], for memtrace's misuse
// diagnostics (compared with valgrind memcheck's errors).  Cases glibc
// detects end the run with an abort; memtrace must have reported them
// before.  Each misuse sits in its own function so that the stacks of the
// bad call, of the allocation and of the first free differ.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

static char not_heap[64];

__attribute__((noinline)) static void *make_block(size_t n)
{
    void *p = malloc(n);
    memset(p, 0, n);
    return p;
}

__attribute__((noinline)) static void release_block(void *p) { free(p); }

__attribute__((noinline)) static void release_again(void *p) { free(p); }

__attribute__((noinline)) static void double_free()
{
    void *p = make_block(32);
    release_block(p);
    release_again(p); // glibc: "free(): double free detected in tcache 2"
}

__attribute__((noinline)) static void interior_free()
{
    char *p = static_cast<char *>(make_block(64));
    release_block(p + 16); // glibc: "free(): invalid pointer" (or size)
}

__attribute__((noinline)) static void global_free()
{
    release_block(not_heap); // glibc: "free(): invalid pointer"
}

__attribute__((noinline)) static void realloc_freed()
{
    void *p = make_block(48);
    release_block(p);
    void *q = realloc(p, 100); // valgrind refuses; glibc may survive or not
    (void)q;
    fflush(stdout);
    _exit(0); // the heap may be damaged: stop here
}

__attribute__((noinline)) static void delete_new_array()
{
    int *a = new int[10];
    delete a; // NOLINT: the misuse under test
}

__attribute__((noinline)) static void free_new()
{
    int *a = new int(7);
    free(a);
}

__attribute__((noinline)) static void free_new_array()
{
    char *a = new char[24];
    free(a);
}

__attribute__((noinline)) static void delete_malloc()
{
    int *a = static_cast<int *>(make_block(sizeof(int)));
    delete a; // NOLINT
}

__attribute__((noinline)) static void delete_array_malloc()
{
    char *a = static_cast<char *>(make_block(56));
    delete[] a; // NOLINT
}

__attribute__((noinline)) static void double_delete()
{
    int *a = new int(1);
    delete a;
    delete a; // NOLINT
}

// Mismatches glibc survives: all of them in one run.
static void mismatches()
{
    delete_new_array();
    free_new();
    free_new_array();
    delete_malloc();
    delete_array_malloc();
}

struct misuse_case {
    const char *name;
    void (*run)();
    bool listed; // in the list printed without arguments (one run each)
};

static const misuse_case cases[] = {
    {"double_free", double_free, true},
    {"interior_free", interior_free, true},
    {"global_free", global_free, true},
    {"realloc_freed", realloc_freed, true},
    {"delete_new_array", delete_new_array, false},
    {"free_new", free_new, false},
    {"free_new_array", free_new_array, false},
    {"delete_malloc", delete_malloc, false},
    {"delete_array_malloc", delete_array_malloc, false},
    {"mismatches", mismatches, true},
    {"double_delete", double_delete, true},
};

int main(int argc, char **argv)
{
    if (argc < 2) {
        for (const misuse_case &c : cases)
            if (c.listed)
                printf("%s\n", c.name);
        return 0;
    }
    for (const misuse_case &c : cases) {
        if (strcmp(c.name, argv[1]) == 0) {
            c.run();
            printf("misuse: %s survived\n", c.name);
            return 0;
        }
    }
    fprintf(stderr, "misuse: unknown case %s\n", argv[1]);
    return 2;
}
