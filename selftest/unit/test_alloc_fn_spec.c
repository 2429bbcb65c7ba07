/* --alloc-fn's words (NAME=KIND[:POSITIONS]) and @FILE format: what each
 * word means (the op and where its arguments are), and every refusal one
 * line that names FILE:LINE.  What the engines do with the positions is
 * heaps_alloc_fn_args's (memcheck as the oracle). */
#include "target/tracer/alloc_fn_spec.h"

#include <stdio.h>
#include <string.h>
#include "selftest/unit/test.h"

static void words(void)
{
    static const struct {
        const char *word;
        enum intercept_op op;
        unsigned char p0, p1;
    } ok[] = {
        {"pool_alloc=malloc", OP_MALLOC, 0, 0},
        {"pool_alloc=malloc:2", OP_MALLOC, 2, 0},
        {"zc=calloc:4,2", OP_CALLOC, 4, 2},
        {"pool_realloc=realloc:1,3", OP_REALLOC, 1, 3},
        {"pool_free=free:2", OP_FREE, 2, 0},
        {"al=aligned:3,2", OP_ALIGNED_ALLOC, 3, 2},
        {"_ZN4Pool3getEm=malloc:2", OP_MALLOC, 2, 0},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        struct alloc_fn_spec sp;
        char err[128] = "";
        int rc = alloc_fn_spec_parse(ok[i].word, strlen(ok[i].word), &sp, err, sizeof(err));
        CHECK(rc == 0, "%s refused: %s", ok[i].word, err);
        if (rc)
            continue;
        CHECK(sp.op == ok[i].op && sp.pos[0] == ok[i].p0 && sp.pos[1] == ok[i].p1,
              "%s: op %d positions %u,%u", ok[i].word, sp.op, sp.pos[0], sp.pos[1]);
        CHECK(strncmp(sp.name, ok[i].word, strlen(sp.name)) == 0 &&
                  ok[i].word[strlen(sp.name)] == '=',
              "%s: name %s", ok[i].word, sp.name);
    }
    static const char *const bad[] = {
        "pool_alloc",          "=malloc",           "p=alloca",          "p=malloc:",
        "p=malloc:0",          "p=malloc:7",        "p=malloc:1,2",      "p=calloc:1",
        "p=calloc:1,1",        "p=calloc:1,,2",     "p=realloc:1,2,3",   "p=free:x",
        "p=free:-1",           "p=free:1 ",         "p q=malloc",        "@p=malloc",
        "p=mallocx",           "p=malloc:99999999999999999999", "p=malloc:01x",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct alloc_fn_spec sp;
        char err[128] = "";
        CHECK(alloc_fn_spec_parse(bad[i], strlen(bad[i]), &sp, err, sizeof(err)) < 0,
              "%s accepted", bad[i]);
        CHECK(err[0] && !strchr(err, '\n'), "%s: error \"%s\"", bad[i], err);
    }
    /* a name at the bound, and one byte over */
    char word[ALLOC_FN_NAME_MAX + 16];
    memset(word, 'a', ALLOC_FN_NAME_MAX);
    strcpy(word + ALLOC_FN_NAME_MAX, "=free");
    struct alloc_fn_spec sp;
    char err[128] = "";
    CHECK(alloc_fn_spec_parse(word, strlen(word), &sp, err, sizeof(err)) == 0 &&
              strlen(sp.name) == ALLOC_FN_NAME_MAX,
          "a %d-byte name: %s", ALLOC_FN_NAME_MAX, err);
    memset(word, 'a', ALLOC_FN_NAME_MAX + 1);
    strcpy(word + ALLOC_FN_NAME_MAX + 1, "=free");
    CHECK(alloc_fn_spec_parse(word, strlen(word), &sp, err, sizeof(err)) < 0,
          "a %d-byte name accepted", ALLOC_FN_NAME_MAX + 1);
}

static void file_ok(void)
{
    const char text[] = "# the pool's functions\n\n  pool_alloc=malloc:1  \r\n"
                        "\tpool_free=free:2\n# end\npool_realloc=realloc:1,3";
    struct alloc_fn_spec sp[4];
    size_t n = 9;
    char err[256] = "";
    CHECK(alloc_fn_file_parse(text, sizeof(text) - 1, "ok.fns", sp, 4, &n, err, sizeof(err)) == 0,
          "valid file refused: %s", err);
    CHECK(n == 3, "want 3 functions, got %zu", n);
    if (n != 3)
        return;
    CHECK(strcmp(sp[0].name, "pool_alloc") == 0 && sp[0].line == 3, "first: %s at %u", sp[0].name,
          sp[0].line);
    CHECK(strcmp(sp[1].name, "pool_free") == 0 && sp[1].op == OP_FREE && sp[1].pos[0] == 2 &&
              sp[1].line == 4,
          "second: %s at %u", sp[1].name, sp[1].line);
    CHECK(sp[2].op == OP_REALLOC && sp[2].pos[0] == 1 && sp[2].pos[1] == 3 && sp[2].line == 6,
          "third (no newline at the end)");
    CHECK(alloc_fn_file_parse("", 0, "empty", sp, 4, &n, err, sizeof(err)) == 0 && n == 0,
          "an empty file");
}

static void file_errors(void)
{
    /* blanks, then a word ending the line at byte MAX (at), or MAX + 1 */
    char atmax[ALLOC_FN_LINE_MAX + 1], longline[ALLOC_FN_LINE_MAX + 2];
    memset(atmax, ' ', sizeof(atmax));
    memcpy(atmax + ALLOC_FN_LINE_MAX - 8, "a=malloc\n", 9);
    memset(longline, ' ', sizeof(longline));
    memcpy(longline + ALLOC_FN_LINE_MAX - 7, "a=malloc\n", 9);
    static const struct {
        const char *text;
        size_t len;
        const char *where;
    } cases[] = {
        {"a=malloc\nb=alloca\n", 0, "bad.fns:2:"},
        {"# x\n\n=free\n", 0, "bad.fns:3:"},
        {"a=malloc:0\n", 0, "bad.fns:1:"},
        {"a=realloc:1\n", 0, "bad.fns:1:"},
        {"a=free:3,4\n", 0, "bad.fns:1:"},
        {"a=malloc\nb=free\nc=calloc\nd=free\n", 0, "bad.fns:4:"}, /* cap 3 */
        {"a=mal\0loc\n", 10, "bad.fns:1:"},
        {"a=malloc\nb free\n", 0, "bad.fns:2:"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct alloc_fn_spec sp[3];
        size_t n, len = cases[i].len ? cases[i].len : strlen(cases[i].text);
        char err[256] = "";
        CHECK(alloc_fn_file_parse(cases[i].text, len, "bad.fns", sp, 3, &n, err, sizeof(err)) < 0,
              "case %zu accepted", i);
        CHECK(strncmp(err, cases[i].where, strlen(cases[i].where)) == 0 && !strchr(err, '\n'),
              "case %zu: error \"%s\", want it to start with %s", i, err, cases[i].where);
    }
    struct alloc_fn_spec sp[3];
    size_t n;
    char err[256] = "";
    CHECK(alloc_fn_file_parse(longline, sizeof(longline), "long.fns", sp, 3, &n, err,
                              sizeof(err)) < 0 &&
              strncmp(err, "long.fns:1: line longer", 23) == 0,
          "an overlong line: \"%s\"", err);
    CHECK(alloc_fn_file_parse(atmax, sizeof(atmax), "long.fns", sp, 3, &n, err, sizeof(err)) == 0 &&
              n == 1,
          "a line at the bound refused: \"%s\"", err);
    CHECK(alloc_fn_file_load("/nonexistent/x.fns", sp, 3, &n, err, sizeof(err)) < 0 &&
              strstr(err, "x.fns") && !strchr(err, '\n'),
          "missing file: \"%s\"", err);
}

int main(void)
{
    words();
    file_ok();
    file_errors();
    return test_end("test_alloc_fn_spec");
}
