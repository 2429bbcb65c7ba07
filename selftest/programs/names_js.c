/* Functions named after JavaScript's built-in properties (report_html.js
 * keys its flame-graph tree by frame name: a plain object would take them
 * for its own), each allocating from a stack of its own, some nested, for
 * the HTML page's test (selftest/tests/report_names_js.sh). */
#include <stdlib.h>
#include <string.h>

static void *keep[16];
static int kept;

__attribute__((noinline)) static void *grab(size_t n)
{
    void *p = malloc(n);
    memset(p, 1, n);
    keep[kept++] = p;
    return p;
}

__attribute__((noinline)) void toString(size_t n) { grab(n); }
__attribute__((noinline)) void constructor(size_t n) { grab(n); }
__attribute__((noinline)) void __proto__(size_t n) { grab(n); }
__attribute__((noinline)) void hasOwnProperty(size_t n) { grab(n); }
__attribute__((noinline)) void valueOf(size_t n) { grab(n); }
/* A built-in's name as the caller of another: a node with kids. */
__attribute__((noinline)) void isPrototypeOf(size_t n)
{
    __proto__(n);
    toString(n + 1);
}

int main(void)
{
    toString(1000);
    constructor(2000);
    __proto__(3000);
    hasOwnProperty(4000);
    valueOf(5000);
    isPrototypeOf(600);
    return 0;
}
