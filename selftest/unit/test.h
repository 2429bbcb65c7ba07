/* The unit tests' one check: CHECK(cond) or CHECK(cond, "fmt", ...) counts
 * a failure in `failures` and says where, what and (optionally) why; main
 * ends with `return failures != 0` after saying how many failed.
 * Header-only: each unit test is one .c file. */
#ifndef MT_SELFTEST_UNIT_TEST_H
#define MT_SELFTEST_UNIT_TEST_H

#include <stdarg.h>
#include <stdio.h>

static int failures;

__attribute__((format(printf, 4, 5), unused)) static void test_failed(const char *file, int line,
                                                                      const char *cond,
                                                                      const char *fmt, ...)
{
    failures++;
    fprintf(stderr, "FAIL %s:%d: %s:", file, line, cond);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* main's end: "NAME: ok" and 0, or how many checks failed and 1. */
__attribute__((unused)) static int test_end(const char *name)
{
    if (failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, failures);
        return 1;
    }
    printf("%s: ok\n", name);
    return 0;
}

/* The message, when given, is a string literal: " " is glued before it. */
#define CHECK(cond, ...)                                                                          \
    do {                                                                                          \
        if (!(cond))                                                                              \
            test_failed(__FILE__, __LINE__, #cond, " " __VA_ARGS__);                              \
    } while (0)

#endif
