/* libFuzzer harness for the HTML report's escaping (target/report/report_html*.c):
 * the names a target's files supply (functions, source files, modules, the
 * program) are the input, split at '\n' into up to 8 names; three stacks
 * use them.  The page is written twice, with those names and with plain
 * ones ("n0", "n1", ...), and must hold:
 *   - exactly two <script elements and two </script (any case): no name
 *     ends or opens one;
 *   - in the JSON data, no '<', '>' or '&';
 *   - as many '<' and '>' as the page with plain names: names add none;
 *   - valid UTF-8 and no control character but '\n'. */
#include "target/report/report.h"
#include "target/report/report_internal.h"
#include "shared/text_escape.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NAMES 8

struct fuzz_names {
    char *name[NAMES];
    size_t count;
    bool plain;
    char plain_buf[NAMES][8];
};

static const char *name_of(struct fuzz_names *fn, unsigned i)
{
    if (!fn->count)
        return NULL;
    i %= (unsigned)fn->count;
    return fn->plain ? fn->plain_buf[i] : fn->name[i];
}

static void resolve(void *ctx, uint64_t pc, unsigned frame_index, struct report_frame *out)
{
    struct fuzz_names *fn = ctx;
    unsigned k = (unsigned)(pc & 0xff);
    (void)frame_index;
    if (k % 5 != 4)
        out->function = name_of(fn, k);
    if (k % 3 == 0)
        out->file = name_of(fn, k + 1), out->line = k;
    out->module = name_of(fn, k + 2);
    out->offset = pc;
    out->inlined = k % 7 == 0;
}

static size_t count_char(const char *s, size_t n, char c)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += s[i] == c;
    return k;
}

static size_t count_ci(const char *s, size_t n, const char *word)
{
    size_t k = 0, w = strlen(word);
    for (size_t i = 0; i + w <= n; i++)
        if (strncasecmp(s + i, word, w) == 0)
            k++;
    return k;
}

static char *page(struct fuzz_names *fn, const struct heap_books *b, const struct stack_table *st,
                  size_t *len)
{
    char *buf = NULL;
    FILE *out = open_memstream(&buf, len);
    if (!out)
        abort();
    struct report_source src = {
        .books = b, .stacks = st, .resolve = resolve, .resolve_ctx = fn, .pid = 42,
        .program = fn->plain ? "prog" : name_of(fn, 3),
    };
    struct report_options opt = { .format = REPORT_HTML, .sort = REPORT_SORT_BYTES, .top = 0 };
    report_write(out, &src, &opt);
    fclose(out);
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_names fn = {0};
    const char *p = (const char *)data, *end = p + size;
    while (p <= end && fn.count < NAMES) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        fn.name[fn.count] = strndup(p, n); /* stops at a NUL byte too */
        snprintf(fn.plain_buf[fn.count], sizeof(fn.plain_buf[0]), "n%zu", fn.count);
        fn.count++;
        if (!nl)
            break;
        p = nl + 1;
    }

    struct heap_books *b = heap_books_new();
    struct stack_table *st = stack_table_new();
    static const uint64_t stacks[3][4] = {
        {0x1000, 0x2001, 0x3002, 0x4003}, {0x1000, 0x2004, 0x3005, 0}, {0x1006, 0x2007, 0, 0}};
    for (unsigned s = 0; s < 3; s++) {
        unsigned depth = stacks[s][3] ? 4 : stacks[s][2] ? 3 : 2;
        uint32_t id = stack_table_intern(st, stacks[s], depth);
        heap_record_alloc(b, 0x10000 + s * 0x100, 16 + s, id, ALLOC_MALLOC);
        if (s == 1)
            heap_record_free(b, 0x10000 + s * 0x100, ALLOC_MALLOC, NULL);
    }

    size_t alen, plen;
    char *a = page(&fn, b, st, &alen);
    fn.plain = true;
    char *pl = page(&fn, b, st, &plen);

    if (count_ci(a, alen, "<script") != 2 || count_ci(a, alen, "</script") != 2)
        abort();
    const char *tag = "<script id=\"mt-data\" type=\"application/json\">";
    const char *d = strstr(a, tag);
    if (!d)
        abort();
    d += strlen(tag);
    const char *dend = strstr(d, "</script>");
    if (!dend || memchr(d, '<', (size_t)(dend - d)) || memchr(d, '>', (size_t)(dend - d)) ||
        memchr(d, '&', (size_t)(dend - d)))
        abort();
    if (count_char(a, alen, '<') != count_char(pl, plen, '<') ||
        count_char(a, alen, '>') != count_char(pl, plen, '>'))
        abort();
    for (size_t i = 0; i < alen;) {
        unsigned char c = (unsigned char)a[i];
        if (c >= 0x80) {
            size_t bad, n = utf8_sequence((const unsigned char *)a + i, &bad);
            if (!n)
                abort();
            i += n;
            continue;
        }
        if ((c < 0x20 && c != '\n') || c == 0x7f)
            abort();
        i++;
    }

    free(a);
    free(pl);
    heap_books_free(b);
    stack_table_free(st);
    for (size_t i = 0; i < fn.count; i++)
        free(fn.name[i]);
    return 0;
}
