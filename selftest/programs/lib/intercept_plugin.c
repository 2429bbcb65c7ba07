/* A plugin for intercept_dlopen, built into libintercept_plugin.so by the
 * intercept_dlopen test.  Its functions allocate, and some blocks outlive
 * the library (the driver keeps them after dlclose).  It also brings its own
 * operator new and delete (as a plugin with a private C++ runtime would), so
 * the program has functions to intercept that come and go with the plugin:
 * they put a 16-byte header before each block, so a missed interception
 * shows in the byte counts (valgrind replaces them through
 * --soname-synonyms=somalloc=...). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define HEADER 16

/* operator new(size_t), new[](size_t), delete(void *), delete[](void *) */
__attribute__((visibility("default"))) void *_Znwm(size_t size);
__attribute__((visibility("default"))) void *_Znam(size_t size);
__attribute__((visibility("default"))) void _ZdlPv(void *p);
__attribute__((visibility("default"))) void _ZdaPv(void *p);

void *_Znwm(size_t size)
{
    char *p = malloc(size + HEADER);
    if (!p)
        abort();
    return p + HEADER;
}

void *_Znam(size_t size) { return _Znwm(size); }

void _ZdlPv(void *p)
{
    if (p)
        free((char *)p - HEADER);
}

void _ZdaPv(void *p) { _ZdlPv(p); }

__attribute__((noinline)) static char *plugin_make_name(int round)
{
    char *s = malloc(32 + (size_t)round);
    memset(s, 'a' + round, 31);
    s[31] = '\0';
    return s;
}

__attribute__((noinline)) static void plugin_scratch(int round)
{
    for (int i = 0; i < 10; i++) {
        void *p = calloc((size_t)(i + 1), 8 + (size_t)round);
        p = realloc(p, 100 * (size_t)(i + 1));
        free(p);
        void *n = _Znwm(24 + (size_t)i);
        _ZdlPv(n);
    }
    void *a = _Znam(100 + (size_t)round);
    _ZdaPv(a);
}

/* A block made by the plugin's operator new that nobody frees. */
__attribute__((noinline)) static void plugin_leak_object(int round)
{
    static void *volatile sink;
    sink = _Znwm(200 + (size_t)round);
}

/* Returns a block the caller keeps; it outlives the library. */
__attribute__((visibility("default"))) void *plugin_work(int round);
void *plugin_work(int round)
{
    plugin_scratch(round);
    plugin_leak_object(round);
    return plugin_make_name(round);
}
