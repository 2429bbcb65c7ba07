/* Reports from books built by this test.  Oracles: Python's json module parses
 * the JSON report and checks every figure against the construction (and
 * Python's own UTF-8 decoder, errors='replace', judges the string escaping of
 * random bytes); the folded lines must sum to the books' in-use bytes; the
 * text report's numbers and order come from the construction. */
#include "target/report/report.h"
#include "target/report/report_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "selftest/unit/test.h"

static uint64_t rng_state = 0xfeedface12345ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* pc -> names.  0x1xxx: function + file:line; 0x2xxx: function only;
 * 0x3xxx: module only; 0x4xxx: nothing; 0x5000: hostile names. */
static const char *hostile_fn = "evil;name with spaces\nand\x01" "ctl\"q\\ \xff\xe2\x82";
static void resolve(void *ctx, uint64_t pc, unsigned idx, struct report_frame *f)
{
    static char fn[64];
    (void)idx;
    int *calls = ctx;
    (*calls)++;
    uint64_t clean = pc & ~(1ull << 63);
    CHECK(f->pc == clean, "frame pc not prefilled");
    switch (clean >> 12) {
    case 1:
        snprintf(fn, sizeof(fn), "fn_%" PRIx64, clean);
        f->function = fn;
        f->file = "/src/a.c";
        f->line = (unsigned)(clean & 0xfff);
        f->module = "/bin/prog";
        f->offset = clean - 0x1000;
        break;
    case 2:
        snprintf(fn, sizeof(fn), "ns::g_%" PRIx64 "(int, char)", clean);
        f->function = fn;
        f->module = "/lib/libx.so";
        f->offset = clean - 0x2000;
        break;
    case 3:
        f->module = "/usr/lib/lib y.so";
        f->offset = clean - 0x3000;
        break;
    case 5:
        f->function = hostile_fn;
        f->module = "/m\x7f";
        break;
    default:
        break;
    }
}

struct fixture {
    struct heap_books *books;
    struct stack_table *stacks;
    int calls;
    uint32_t id[6];
};

/* Stack k: bytes/blocks in use chosen so that the orders by bytes, blocks
 * and allocs all differ. */
static void build(struct fixture *fx)
{
    fx->books = heap_books_new();
    fx->stacks = stack_table_new();
    const uint64_t pcs[6][4] = {
        { 0x1010, 0x1020, 0x1030, 0 },
        { 0x2010 | (1ull << 63), 0x1040, 0, 0 },
        { 0x3010, 0x4010, 0x1050, 0x1060 },
        { 0x5000, 0x1070, 0, 0 },
        { 0x1080, 0, 0, 0 },
        { 0x1090, 0x10a0, 0, 0 },
    };
    const unsigned depth[6] = { 3, 2, 4, 2, 1, 2 };
    for (int k = 0; k < 6; k++)
        fx->id[k] = stack_table_intern(fx->stacks, pcs[k], depth[k]);
    uint64_t addr = 0x10000;
    /* stack 0: 3 x 100 live             -> 300 bytes, 3 blocks, 3 allocs */
    for (int i = 0; i < 3; i++)
        heap_record_alloc(fx->books, addr += 0x100, 100, fx->id[0], ALLOC_MALLOC);
    /* stack 1: 1 x 1000 live            -> 1000 bytes, 1 block, 1 alloc */
    heap_record_alloc(fx->books, addr += 0x1000, 1000, fx->id[1], ALLOC_NEW);
    /* stack 2: 5 x 10, 1 freed          -> 40 bytes, 4 blocks, 5 allocs */
    for (int i = 0; i < 5; i++)
        heap_record_alloc(fx->books, addr += 0x100, 10, fx->id[2], ALLOC_MALLOC);
    heap_record_free(fx->books, addr, ALLOC_MALLOC, NULL);
    /* stack 3: 2 x 7                    -> 14 bytes, 2 blocks, 2 allocs */
    heap_record_alloc(fx->books, addr += 0x100, 7, fx->id[3], ALLOC_MALLOC);
    heap_record_alloc(fx->books, addr += 0x100, 7, fx->id[3], ALLOC_MALLOC);
    /* stack 4: 9 allocs, all freed      -> not in the report */
    for (int i = 0; i < 9; i++) {
        heap_record_alloc(fx->books, addr += 0x100, 64, fx->id[4], ALLOC_MALLOC);
        heap_record_free(fx->books, addr, ALLOC_MALLOC, NULL);
    }
    /* stack 5: 1 x 14: ties stack 3 on bytes, loses on blocks */
    heap_record_alloc(fx->books, addr += 0x100, 14, fx->id[5], ALLOC_MALLOC);
    heap_record_map(fx->books, 0x7f0000000000ull, 3 * heap_page_size(), fx->id[0]);
}

static char *render(struct fixture *fx, enum report_format fmt, enum report_sort sort, size_t top)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct report_source src = { fx->books, fx->stacks, resolve, &fx->calls, 4242, "prog \"x\"", NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, 0 };
    struct report_options opt = { .format = fmt, .sort = sort, .top = top };
    CHECK(report_write(f, &src, &opt) == 0, "report_write failed");
    fclose(f);
    return buf;
}

static void text_report(struct fixture *fx)
{
    char *out = render(fx, REPORT_TEXT, REPORT_SORT_BYTES, 0);
    const char *expect =
        "1000 bytes in 1 blocks were not free\n"
        "    #0 ns::g_2010(int, char) in /lib/libx.so+0x10\n"
        "    #1 fn_1040() in /src/a.c:64\n"
        "\n"
        "300 bytes in 3 blocks were not free\n"
        "    #0 fn_1010() in /src/a.c:16\n"
        "    #1 fn_1020() in /src/a.c:32\n"
        "    #2 fn_1030() in /src/a.c:48\n"
        "\n"
        "40 bytes in 4 blocks were not free\n"
        "    #0 /usr/lib/lib y.so+0x10\n"
        "    #1 0x4010\n"
        "    #2 fn_1050() in /src/a.c:80\n"
        "    #3 fn_1060() in /src/a.c:96\n"
        "\n"
        "14 bytes in 2 blocks were not free\n"
        "    #0 evil;name with spaces\\x0aand\\x01ctl\"q\\ \\xff\\xe2\\x82() in /m\\x7f+0x0\n"
        "    #1 fn_1070() in /src/a.c:112\n"
        "\n"
        "14 bytes in 1 blocks were not free\n"
        "    #0 fn_1090() in /src/a.c:144\n"
        "    #1 fn_10a0() in /src/a.c:160\n"
        "\n";
    char summary[512];
    /* Totals by construction: allocs 3+1+5+2+9+1, frees 1+9. */
    snprintf(summary, sizeof(summary),
             "HEAP SUMMARY\n"
             "    in use: %d bytes in %d blocks\n"
             "    total heap usage: %d allocs, %d frees, %d bytes allocated\n"
             "    mapped: %" PRIu64 " bytes in 1 regions\n",
             300 + 1000 + 40 + 14 + 14, 3 + 1 + 4 + 2 + 1, 3 + 1 + 5 + 2 + 9 + 1, 1 + 9,
             300 + 1000 + 50 + 14 + 9 * 64 + 14, 3 * heap_page_size());
    /* The peak: after the first of stack 4's 64-byte blocks (before its
     * free), with stack 2's fifth block already freed; the temporaries:
     * stack 4's nine and stack 2's last, each freed right after it was made. */
    struct heap_peak pk;
    heap_get_peak(fx->books, &pk);
    char peak[2048];
    snprintf(peak, sizeof(peak),
             "\nPEAK\n    peak heap: %d bytes in %d blocks at %.3f s\n"
             "\n1000 bytes in 1 blocks at the peak\n"
             "    #0 ns::g_2010(int, char) in /lib/libx.so+0x10\n"
             "    #1 fn_1040() in /src/a.c:64\n"
             "\n300 bytes in 3 blocks at the peak\n"
             "    #0 fn_1010() in /src/a.c:16\n"
             "    #1 fn_1020() in /src/a.c:32\n"
             "    #2 fn_1030() in /src/a.c:48\n"
             "\n64 bytes in 1 blocks at the peak\n"
             "    #0 fn_1080() in /src/a.c:128\n"
             "\n40 bytes in 4 blocks at the peak\n"
             "    #0 /usr/lib/lib y.so+0x10\n"
             "    #1 0x4010\n"
             "    #2 fn_1050() in /src/a.c:80\n"
             "    #3 fn_1060() in /src/a.c:96\n"
             "\n14 bytes in 2 blocks at the peak\n"
             "    #0 evil;name with spaces\\x0aand\\x01ctl\"q\\ \\xff\\xe2\\x82() in /m\\x7f+0x0\n"
             "    #1 fn_1070() in /src/a.c:112\n"
             "\nTEMPORARY ALLOCATIONS\n"
             "    10 of 21 allocations were freed with no other allocation or free on their thread in between\n"
             "\n9 temporary of 9 allocations\n"
             "    #0 fn_1080() in /src/a.c:128\n"
             "\n1 temporary of 5 allocations\n"
             "    #0 /usr/lib/lib y.so+0x10\n"
             "    #1 0x4010\n"
             "    #2 fn_1050() in /src/a.c:80\n"
             "    #3 fn_1060() in /src/a.c:96\n",
             300 + 1000 + 40 + 14 + 64, 3 + 1 + 4 + 2 + 1, pk.seconds);
    size_t el = strlen(expect), sl = strlen(summary);
    CHECK(strncmp(out, expect, el) == 0 && strncmp(out + el, summary, sl) == 0 &&
              strcmp(out + el + sl, peak) == 0,
          "text report differs:\n%s\n--- expected ---\n%s%s%s", out, expect, summary, peak);
    free(out);

    /* Sort keys and top N: only the headers matter here. */
    struct { enum report_sort s; size_t top; const char *first; } cases[] = {
        { REPORT_SORT_BLOCKS, 2, "40 bytes in 4 blocks were not free\n" },
        { REPORT_SORT_ALLOCS, 1, "40 bytes in 4 blocks were not free\n" },
        { REPORT_SORT_BYTES, 1, "1000 bytes in 1 blocks were not free\n" },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        out = render(fx, REPORT_TEXT, cases[c].s, cases[c].top);
        size_t headers = 0;
        for (char *p = out; (p = strstr(p, " were not free\n")); p++)
            headers++;
        CHECK(strncmp(out, cases[c].first, strlen(cases[c].first)) == 0 &&
              headers == cases[c].top, "sort %d top %zu: got\n%s", cases[c].s, cases[c].top, out);
        free(out);
    }
    out = render(fx, REPORT_TEXT, REPORT_SORT_BLOCKS, 0);
    char *second = strstr(out, "\n\n");
    CHECK(second && strncmp(second + 2, "300 bytes in 3 blocks", 21) == 0,
          "blocks order: second stack wrong:\n%s", out);
    free(out);
}

/* Equal figures: the lower stack id comes first, whatever the table order. */
static void ties(void)
{
    struct fixture fx = { 0 };
    fx.books = heap_books_new();
    fx.stacks = stack_table_new();
    uint64_t pcs[3] = { 0x1100, 0x1200, 0x1300 };
    uint32_t ids[3];
    for (int k = 0; k < 3; k++)
        ids[k] = stack_table_intern(fx.stacks, &pcs[k], 1);
    for (int k = 2; k >= 0; k--)
        heap_record_alloc(fx.books, 0x9000 + (uint64_t)k * 0x100, 8, ids[k], ALLOC_MALLOC);
    for (int s = REPORT_SORT_BYTES; s <= REPORT_SORT_ALLOCS; s++) {
        char *out = render(&fx, REPORT_FOLDED, (enum report_sort)s, 0);
        CHECK(strcmp(out, "fn_1100 8\nfn_1200 8\nfn_1300 8\n") == 0, "ties, sort %d:\n%s", s, out);
        free(out);
    }
    heap_books_free(fx.books);
    stack_table_free(fx.stacks);
}

static int run_python(const char *script, const char *path)
{
    char cmd[4096];
    snprintf(cmd, sizeof(cmd), "python3 -c '%s' '%s'", script, path);
    return system(cmd);
}

static void json_report(struct fixture *fx, const char *dir)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/report.json", dir);
    char *out = render(fx, REPORT_JSON, REPORT_SORT_BYTES, 0);
    FILE *f = fopen(path, "w");
    fputs(out, f);
    fclose(f);
    free(out);
    /* Expected figures restated from the construction in build(). */
    const char *script =
        "import json,sys\n"
        "r=json.load(open(sys.argv[1]))\n"
        "assert r[\"memtrace\"]==1 and r[\"pid\"]==4242 and r[\"program\"]==\"prog \\\"x\\\"\", r\n"
        "h=r[\"heap\"]\n"
        "assert h==dict(in_use_bytes=1368,in_use_blocks=11,allocs=21,frees=10,bytes_allocated=1954,temporary=10), h\n"
        "s=r[\"stacks\"]\n"
        "assert [(x[\"bytes\"],x[\"blocks\"],x[\"allocs\"]) for x in s]==[(1000,1,1),(300,3,3),(40,4,5),(14,2,2),(14,1,1)], s\n"
        "assert sum(x[\"bytes\"] for x in s)==h[\"in_use_bytes\"]\n"
        "f=s[0][\"frames\"]\n"
        "assert f[0]==dict(pc=\"0x2010\",module=\"/lib/libx.so\",offset=\"0x10\",function=\"ns::g_2010(int, char)\",file=None,line=0,inlined=False,tail_call=False), f[0]\n"
        "assert f[1][\"file\"]==\"/src/a.c\" and f[1][\"line\"]==64 and f[1][\"pc\"]==\"0x1040\"\n"
        "assert s[2][\"frames\"][1]==dict(pc=\"0x4010\",module=None,offset=\"0x0\",function=None,file=None,line=0,inlined=False,tail_call=False)\n"
        "e=s[3][\"frames\"][0]\n"
        "raw=b\"evil;name with spaces\\nand\\x01ctl\\\"q\\\\ \\xff\\xe2\\x82\"\n"
        "assert e[\"function\"]==raw.decode(\"utf-8\",\"replace\"), repr(e[\"function\"])\n"
        "assert e[\"module\"]==\"/m\\x7f\"\n"
        "assert r[\"mapped\"][\"regions\"]==1\n"
        "assert [x[\"temporary\"] for x in s]==[0,0,1,0,0], s\n"
        "p=r[\"peak\"]\n"
        "assert (p[\"bytes\"],p[\"blocks\"])==(1418,11) and 0<=p[\"seconds\"]<60, p\n"
        "ps=p[\"stacks\"]\n"
        "assert [(x[\"bytes\"],x[\"blocks\"],x[\"allocs\"],x[\"temporary\"]) for x in ps]==[(1000,1,1,0),(300,3,3,0),(64,1,9,9),(40,4,5,1),(14,2,2,0)], ps\n"
        "assert sum(x[\"bytes\"] for x in ps)==p[\"bytes\"] and ps[0][\"frames\"]==f\n"
        "t=r[\"temporary_allocations\"]\n"
        "assert t[\"count\"]==10 and [(x[\"temporary\"],x[\"allocs\"]) for x in t[\"stacks\"]]==[(9,9),(1,5)], t\n"
        "assert t[\"stacks\"][1][\"frames\"]==s[2][\"frames\"]\n";
    CHECK(run_python(script, path) == 0, "python rejected the JSON report (%s)", path);

    /* Empty books: still valid JSON with an empty stacks list. */
    struct heap_books *empty = heap_books_new();
    f = fopen(path, "w");
    struct report_source src = { empty, fx->stacks, NULL, NULL, 1, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, 0 };
    struct report_options opt = { .format = REPORT_JSON, .sort = REPORT_SORT_BYTES, .top = 0 };
    report_write(f, &src, &opt);
    fclose(f);
    CHECK(run_python("import json,sys\nr=json.load(open(sys.argv[1]))\n"
                     "assert r[\"stacks\"]==[] and r[\"program\"]==\"\" and r[\"heap\"][\"allocs\"]==0\n"
                     "assert r[\"peak\"]==dict(bytes=0,blocks=0,seconds=0,stacks=[])\n"
                     "assert r[\"temporary_allocations\"]==dict(count=0,stacks=[])\n",
                     path) == 0, "empty JSON report");
    heap_books_free(empty);
}

/* Random byte strings through report_json_string; Python decodes the same
 * bytes with errors='replace' (Unicode's maximal-subpart rule) and compares. */
static void json_escaping(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/strings.txt", dir);
    FILE *f = fopen(path, "w");
    for (int k = 0; k < 3000; k++) {
        unsigned char s[24];
        size_t n = rnd() % (sizeof(s) - 1);
        for (size_t i = 0; i < n; i++) {
            unsigned r = (unsigned)(rnd() % 8);
            /* Bias towards UTF-8 lead and continuation bytes. */
            s[i] = (unsigned char)(r < 2 ? 0x80 + rnd() % 0x40 : r < 4 ? 0xc0 + rnd() % 0x40
                                   : r < 5 ? rnd() % 0x20 : 1 + rnd() % 255);
            if (!s[i])
                s[i] = 1;
        }
        s[n] = 0;
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%02x", s[i]);
        fputc('\t', f);
        report_json_string(f, (const char *)s);
        fputc('\n', f);
    }
    fclose(f);
    CHECK(run_python("import json,sys\n"
                     "for ln in open(sys.argv[1],\"rb\"):\n"
                     " h,j=ln.rstrip(b\"\\n\").split(b\"\\t\",1)\n"
                     " want=bytes.fromhex(h.decode()).decode(\"utf-8\",\"replace\")\n"
                     " got=json.loads(j.decode(\"utf-8\"))\n"
                     " assert got==want,(h,j,want)\n", path) == 0,
          "JSON escaping differs from Python's decoder (%s)", path);
}

static void folded_report(struct fixture *fx)
{
    char *out = render(fx, REPORT_FOLDED, REPORT_SORT_BYTES, 0);
    struct heap_totals t;
    heap_get_totals(fx->books, &t);
    uint64_t sum = 0;
    size_t lines = 0;
    char *save = NULL;
    for (char *ln = strtok_r(out, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
        lines++;
        char *sp = strrchr(ln, ' ');
        CHECK(sp && strchr(ln, ' ') == sp, "folded line has more than one space: %s", ln);
        if (!sp)
            continue;
        char *end;
        sum += strtoull(sp + 1, &end, 10);
        CHECK(*end == '\0' && end != sp + 1, "bad count in %s", ln);
        if (lines == 1)
            CHECK(strncmp(ln, "fn_1040;ns::g_2010(int,_char) 1000", 34) == 0,
                  "first folded line is root-first: %s", ln);
        if (lines == 3)
            CHECK(strcmp(ln, "fn_1060;fn_1050;0x4010;lib_y.so+0x10 40") == 0, "line 3: %s", ln);
        static const char hostile[] = "fn_1070;evil:name_with_spaces\\x0aand\\x01ctl\"q\\_\\xff\\xe2\\x82 ";
        if (lines == 4)
            CHECK(strncmp(ln, hostile, strlen(hostile)) == 0, "hostile name not escaped: %s", ln);
    }
    CHECK(lines == 5, "folded: %zu lines", lines);
    CHECK(sum == t.in_use_bytes, "folded sum %" PRIu64 " != in use %" PRIu64, sum, t.in_use_bytes);
    free(out);
}

int main(void)
{
    char dir[] = "/tmp/test_report.XXXXXX";
    const char *tmp = getenv("MT_TMP");
    char path[512];
    if (tmp && *tmp) {
        snprintf(path, sizeof(path), "%s", tmp);
    } else {
        if (!mkdtemp(dir)) {
            perror("mkdtemp");
            return 1;
        }
        snprintf(path, sizeof(path), "%s", dir);
    }
    struct fixture fx = { 0 };
    build(&fx);
    text_report(&fx);
    json_report(&fx, path);
    json_escaping(path);
    folded_report(&fx);
    ties();
    CHECK(fx.calls > 0, "resolver never called");

    enum report_format fmt;
    enum report_sort sort;
    CHECK(report_parse_format("folded", &fmt) && fmt == REPORT_FOLDED, "parse folded");
    CHECK(!report_parse_format("xml", &fmt), "parse xml must fail");
    CHECK(report_parse_sort("allocs", &sort) && sort == REPORT_SORT_ALLOCS, "parse allocs");
    CHECK(!report_parse_sort("", &sort), "parse empty sort must fail");

    heap_books_free(fx.books);
    stack_table_free(fx.stacks);
    if (failures) {
        fprintf(stderr, "%d failures (files in %s)\n", failures, path);
        return 1;
    }
    puts("test_report: ok");
    return 0;
}
