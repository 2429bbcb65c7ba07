/* shared/text_escape.c: what is kept, what becomes \xHH, and the cut of
 * text_escape_buf at a whole unit.  The oracle for "well-formed UTF-8" is
 * the Unicode standard's table 3-7 (the cases below are its examples). */
#include "shared/text_escape.h"

#include "selftest/unit/test.h"

#include <stdlib.h>
#include <string.h>

static void check(const char *in, const char *want)
{
    char *got = text_escape_dup(in);
    CHECK(strcmp(got, want) == 0, "%s -> %s, want %s", in, got, want);
    CHECK(text_escape_clean(in) == (strcmp(in, want) == 0), "clean(%s)", in);
    char *again = text_escape_dup(got);
    CHECK(strcmp(again, got) == 0, "not idempotent: %s", again);
    free(again);
    free(got);
}

int main(void)
{
    /* Kept: ordinary names, C++ names, backslashes, UTF-8 from U+00A0 on. */
    check("", "");
    check("main", "main");
    check("std::vector<int, std::allocator<int> >::push_back(int&&)", "std::vector<int, std::allocator<int> >::push_back(int&&)");
    check("a\\b \"q\" 'x' #;", "a\\b \"q\" 'x' #;");
    check("caf\xc3\xa9 \xc2\xa0 \xe2\x80\xa8 \xf0\x9f\x98\x80", "caf\xc3\xa9 \xc2\xa0 \xe2\x80\xa8 \xf0\x9f\x98\x80");
    /* C0, DEL and C1 controls, one escape per byte. */
    check("evil\x1b[31mname\x07", "evil\\x1b[31mname\\x07");
    check("\t\n\r\x01\x7f", "\\x09\\x0a\\x0d\\x01\\x7f");
    check("csi\xc2\x9b" "2J \xc2\x80 \xc2\x9f", "csi\\xc2\\x9b2J \\xc2\\x80 \\xc2\\x9f");
    /* Ill-formed UTF-8: each maximal subpart's bytes. */
    check("\xff", "\\xff");
    check("\xc0\xaf", "\\xc0\\xaf");                 /* overlong */
    check("\xed\xa0\x80", "\\xed\\xa0\\x80");        /* a surrogate */
    check("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* above U+10FFFF */
    check("\xe2\x82" "x", "\\xe2\\x82x");            /* cut short */
    /* text_escape_buf cuts before a unit that does not fit whole. */
    char buf[8];
    CHECK(strcmp(text_escape_buf(buf, sizeof(buf), "abcd\x1b" "ef"), "abcd") == 0, "%s", buf);
    CHECK(strcmp(text_escape_buf(buf, sizeof(buf), "ab\x1b" "cdef"), "ab\\x1bc") == 0, "%s", buf);
    CHECK(strcmp(text_escape_buf(buf, sizeof(buf), "abcdef\xc3\xa9"), "abcdef") == 0, "%s", buf);
    CHECK(strcmp(text_escape_buf(buf, 1, "abc"), "") == 0, "%s", buf);
    /* To a stream, as dup gives it. */
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    text_escape_put(f, "x\x1b" "y");
    text_escape_put(f, "plain");
    fclose(f);
    CHECK(strcmp(s, "x\\x1byplain") == 0, "%s", s);
    free(s);
    return test_end("test_text_escape");
}
