/* Leak suppressions: LeakSanitizer's pattern rules (substring unless
 * anchored with ^ or $, * for any run; the same rules leak_flags.sh checks
 * against LeakSanitizer itself on a real program) and the file format's
 * errors, each one line naming FILE:LINE. */
#include "target/leak/suppress.h"

#include <stdio.h>
#include <string.h>
#include "selftest/unit/test.h"

static void patterns(void)
{
    static const struct { const char *pattern, *name; bool match; } cases[] = {
        {"foo", "xfooy", true},       {"foo", "fo", false},         {"^foo", "foox", true},
        {"^foo", "xfoo", false},      {"foo$", "xfoo", true},       {"foo$", "foox", false},
        {"^foo$", "foo", true},       {"^foo$", "afoo", false},     {"f*o", "afbbo", true},
        {"f*o", "ofx", false},        {"^a*b*c$", "aXbYc", true},   {"^a*b*c$", "aXbYcd", false},
        {"*", "x", true},             {"", "x", true},              {"x", "", false},
        {"x", NULL, false},           {"libc.so", "/usr/lib/x86_64-linux-gnu/libc.so.6", true},
        {"^/usr/lib/*/libc.so*", "/usr/lib/x86_64-linux-gnu/libc.so.6", true},
        {"leak_*cle", "leak_cycle", true}, {"a**b", "ab", true},    {"^$", "x", false},
        {"^", "x", true},             {"*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        CHECK(suppress_pattern_match(cases[i].pattern, cases[i].name) == cases[i].match,
              "\"%s\" on \"%s\": want %s", cases[i].pattern, cases[i].name ? cases[i].name : "(null)",
              cases[i].match ? "match" : "no match");
}

static void parse_ok(void)
{
    const char text[] = "# a comment\n\n   leak:leak_list  \r\n\tleak:^drop_one$\nleak:*x*";
    char err[256] = "";
    struct suppressions *s = suppressions_parse(text, sizeof(text) - 1, "ok.supp", err, sizeof(err));
    CHECK(s != NULL, "valid file refused: %s", err);
    if (!s)
        return;
    CHECK(suppressions_count(s) == 3, "want 3 patterns, got %zu", suppressions_count(s));
    CHECK(strcmp(suppressions_pattern(s, 0, NULL), "leak_list") == 0, "blanks not trimmed");
    CHECK(suppressions_match(s, "leak_list") && suppressions_match(s, "drop_one") &&
              !suppressions_match(s, "drop_one2") && suppressions_match(s, "axb"),
          "matching through the list");
    unsigned long hits;
    suppressions_pattern(s, 0, &hits);
    CHECK(hits == 1, "hits of pattern 0: %lu", hits);
    suppressions_free(s);
}

static void parse_errors(void)
{
    static const struct { const char *text; size_t len; const char *where; } cases[] = {
        {"leak:a\nleak:b\nrace:c\n", 0, "bad.supp:3:"},
        {"no colon here", 0, "bad.supp:1:"},
        {"\n\nLeak:x", 0, "bad.supp:3:"},
        {"leak:a\n:x\n", 0, "bad.supp:2:"},
        {"leak:a\0b\n", 9, "bad.supp:1:"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[256] = "";
        size_t len = cases[i].len ? cases[i].len : strlen(cases[i].text);
        struct suppressions *s = suppressions_parse(cases[i].text, len, "bad.supp", err, sizeof(err));
        CHECK(s == NULL, "case %zu accepted", i);
        suppressions_free(s);
        CHECK(strncmp(err, cases[i].where, strlen(cases[i].where)) == 0 && !strchr(err, '\n'),
              "case %zu: error \"%s\", want it to start with %s", i, err, cases[i].where);
    }
    char err[256] = "";
    CHECK(suppressions_load("/nonexistent/x.supp", err, sizeof(err)) == NULL && strstr(err, "x.supp"),
          "missing file: \"%s\"", err);
}

int main(void)
{
    patterns();
    parse_ok();
    parse_errors();
    return test_end("test_suppress");
}
