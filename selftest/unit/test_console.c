/* The console driven through console_feed with fake engine hooks.  Every bad
 * line must print exactly one "error: " line and leave the books and the
 * hooks untouched; good commands are checked against figures built here and
 * against report_write called directly; JSON output goes through Python. */
#include "target/console/console.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "selftest/unit/test.h"

struct fake {
    struct heap_books *books;
    struct stack_table *stacks;
    int monitor_calls, quit_calls, scan_calls;
    double monitor_secs;
};

static struct heap_books *f_books(void *ctx) { return ((struct fake *)ctx)->books; }
static const struct stack_table *f_stacks(void *ctx) { return ((struct fake *)ctx)->stacks; }
static unsigned f_threads(void *ctx) { (void)ctx; return 3; }
static void f_target(void *ctx, int *pid, const char **program)
{
    (void)ctx;
    *pid = 777;
    *program = "/bin/fake";
}
static void f_scan(void *ctx, FILE *out)
{
    ((struct fake *)ctx)->scan_calls++;
    fputs("scan: nothing leaked\n", out);
}
static void f_quit(void *ctx) { ((struct fake *)ctx)->quit_calls++; }
static void f_monitor(void *ctx, double secs)
{
    struct fake *f = ctx;
    f->monitor_calls++;
    f->monitor_secs = secs;
}
static void f_resolve(void *ctx, uint64_t pc, unsigned i, struct report_frame *out)
{
    (void)ctx;
    (void)i;
    out->module = "/bin/fake";
    out->offset = pc - 0x400000;
}

static const struct console_ops full_ops = {
    .books = f_books, .stacks = f_stacks, .resolve = f_resolve, .thread_count = f_threads,
    .target = f_target, .scan = f_scan, .quit = f_quit, .set_monitor = f_monitor,
};
static FILE *f_refuse(void *ctx, const char *path)
{
    (void)ctx;
    (void)path;
    errno = EACCES;
    return NULL;
}

static const struct console_ops bare_ops = { .books = f_books, .stacks = f_stacks };

/* Feed script (chunk bytes at a time; 0 = all at once) to a new console and
 * return everything it printed. */
static char *run(struct fake *fk, const struct console_ops *ops, const char *script,
                 size_t len, size_t chunk)
{
    char *buf = NULL;
    size_t blen = 0;
    FILE *out = open_memstream(&buf, &blen);
    struct console *c = console_new(ops, fk, out);
    if (!chunk)
        chunk = len ? len : 1;
    for (size_t i = 0; i < len; i += chunk)
        console_feed(c, script + i, len - i < chunk ? len - i : chunk);
    console_eof(c);
    console_free(c);
    fclose(out);
    return buf;
}

static char *run_s(struct fake *fk, const char *script)
{
    return run(fk, &full_ops, script, strlen(script), 0);
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static size_t lines(const char *s)
{
    return count(s, "\n");
}

static void setup(struct fake *fk)
{
    memset(fk, 0, sizeof(*fk));
    fk->books = heap_books_new();
    fk->stacks = stack_table_new();
    uint64_t a[2] = { 0x401000, 0x402000 }, b[1] = { 0x403000 };
    uint32_t sa = stack_table_intern(fk->stacks, a, 2), sb = stack_table_intern(fk->stacks, b, 1);
    for (int i = 0; i < 10; i++)
        heap_record_alloc(fk->books, 0x10000 + (uint64_t)i * 64, 32, sa, ALLOC_MALLOC);
    heap_record_alloc(fk->books, 0x20000, 5000, sb, ALLOC_MALLOC);
    heap_record_free(fk->books, 0x10000, ALLOC_MALLOC, NULL);
    /* in use: 9*32 + 5000 = 5288 bytes in 10 blocks; 11 allocs, 1 free, 5320 bytes */
}

static void bad_lines(struct fake *fk)
{
    static const char *const bad[] = {
        "foo", "STATUS", "status x", "monitor", "monitor -1", "monitor abc", "monitor 1e3",
        "monitor 0x10", "monitor 100000", "monitor 0.01", "monitor nan", "monitor -0",
        "monitor .", "monitor 1 2", "monitor 12345678901234567890", "report -n", "report -n x",
        "report -n -1", "report -n 99999999999", "report -s size", "report -f xml", "report >",
        "report > a > b", "report >> x", "report -x", "report extra", "report -", "report -j -n",
        "clear now", "quit now", "scan please", "\"unterminated", "report 'x", "> file",
        "report > /nonexistent-dir/x", "help a b", "help nothing", "sta\x01tus", "status\x1b[A",
        "a b c d e f g h i j k l m n o p q r s t u v w x y z 1 2 3 4 5 6 7",
        "report > ''",
    };
    struct heap_totals before, after;
    heap_get_totals(fk->books, &before);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char line[256];
        snprintf(line, sizeof(line), "%s\n", bad[i]);
        char *out = run_s(fk, line);
        CHECK(lines(out) == 1 && strncmp(out, "error: ", 7) == 0,
              "bad line '%s' gave:\n%s", bad[i], out);
        free(out);
    }
    heap_get_totals(fk->books, &after);
    CHECK(memcmp(&before, &after, sizeof(before)) == 0, "bad lines changed the books");
    CHECK(fk->monitor_calls == 0 && fk->quit_calls == 0 && fk->scan_calls == 0,
          "bad lines called hooks");

    /* Without a scan hook. */
    char *out = run(fk, &bare_ops, "scan\nmonitor 1\n", 15, 0);
    CHECK(strcmp(out, "error: scan: leak scan not available\nerror: monitor: not available\n") == 0,
          "bare ops: %s", out);
    free(out);

    /* The engine's open_output hook decides where "> FILE" goes. */
    struct console_ops refusing = full_ops;
    refusing.open_output = f_refuse;
    out = run(fk, &refusing, "report > x\n", 11, 0);
    CHECK(strcmp(out, "error: report: cannot open x: Permission denied\n") == 0, "hook: %s", out);
    free(out);

    /* A line over the limit: one error, and the next line still works. */
    size_t big = CONSOLE_LINE_MAX * 3;
    char *script = malloc(big + 32);
    memset(script, 'a', big);
    strcpy(script + big, "\nhelp quit\n");
    for (size_t chunk = 0; chunk <= 1000; chunk += 1000) {
        out = run(fk, &full_ops, script, strlen(script), chunk);
        CHECK(count(out, "error: ") == 1 && strstr(out, "error: line too long") == out &&
              strstr(out, "quit\n    detach"), "long line (chunk %zu):\n%.300s", chunk, out);
        free(out);
    }
    /* Exactly at the limit is fine (an unknown command, but not too long). */
    memset(script, 'b', CONSOLE_LINE_MAX);
    strcpy(script + CONSOLE_LINE_MAX, "\n");
    out = run_s(fk, script);
    CHECK(strncmp(out, "error: unknown command", 22) == 0, "line at the limit: %.100s", out);
    free(out);
    free(script);

    /* NUL bytes inside a line. */
    out = run(fk, &full_ops, "sta\0tus\n", 8, 0);
    CHECK(lines(out) == 1 && strncmp(out, "error: ", 7) == 0, "NUL: %s", out);
    free(out);
}

static bool iso8601_line(const char *s)
{
    /* "status at YYYY-MM-DDTHH:MM:SS+hh:mm" */
    const char *pat = "status at dddd-dd-ddTdd:dd:dd+dd:dd\n";
    for (size_t i = 0; pat[i]; i++) {
        if (pat[i] == 'd' ? (s[i] < '0' || s[i] > '9')
                          : pat[i] == '+' ? (s[i] != '+' && s[i] != '-') : s[i] != pat[i])
            return false;
    }
    return true;
}

static void good_commands(struct fake *fk)
{
    char *out = run_s(fk, "status\n");
    CHECK(iso8601_line(out), "status date line: %.60s", out);
    const char *nl = strchr(out, '\n');
    static const char want[] = "HEAP SUMMARY\n"
                               "    in use: 5288 bytes in 10 blocks\n"
                               "    total heap usage: 11 allocs, 1 frees, 5320 bytes allocated\n"
                               "    mapped: 0 bytes in 0 regions\n"
                               "    traced threads: 3\n"
                               "    peak: 5320 bytes in 11 blocks at ";
    CHECK(nl && strncmp(nl + 1, want, sizeof(want) - 1) == 0, "status:\n%s", out);
    /* The peak came before the free; no block freed was the last one made. */
    const char *tail = nl ? strstr(nl, " blocks at ") : NULL;
    CHECK(tail && strspn(tail + 11, "0123456789.") >= 5 &&
              strcmp(tail + 11 + strspn(tail + 11, "0123456789."),
                     " s\n    temporary allocations: 0\n") == 0,
          "status peak:\n%s", out);
    free(out);

    /* Line endings, backspace, comments, blank lines, eof without newline. */
    out = run_s(fk, "status\r\nstatus\rstatus\n\n   \n# comment\nstatux\x7fs\nstatus");
    CHECK(count(out, "HEAP SUMMARY\n") == 5 && !strstr(out, "error"), "line endings:\n%s", out);
    free(out);

    out = run_s(fk, "help\nhelp report\n");
    CHECK(strncmp(out, "commands:\n", 10) == 0 && strstr(out, "\nreport [-n TOP]") &&
          strstr(out, "  monitor ") && strstr(out, "  scan ") && !strstr(out, "error"),
          "help:\n%s", out);
    free(out);

    /* monitor: the hook gets the interval; ticks show growth. */
    char *buf = NULL;
    size_t blen = 0;
    FILE *mem = open_memstream(&buf, &blen);
    struct console *c = console_new(&full_ops, fk, mem);
    console_feed(c, "monitor 2.5\n", 12);
    CHECK(fk->monitor_calls == 1 && fk->monitor_secs == 2.5, "monitor 2.5 -> %g", fk->monitor_secs);
    heap_record_alloc(fk->books, 0x30000, 100, 1, ALLOC_MALLOC);
    console_monitor_tick(c);
    heap_record_free(fk->books, 0x30000, ALLOC_MALLOC, NULL);
    heap_record_free(fk->books, 0x20000, ALLOC_MALLOC, NULL);
    console_monitor_tick(c);
    console_feed(c, "monitor 0\nmonitor 7\n", 20);
    CHECK(fk->monitor_calls == 3 && fk->monitor_secs == 7, "monitor 0/7");
    fflush(mem);
    CHECK(strstr(buf, "monitor: every 2.5 s\n") && strstr(buf, "growth: +100 bytes, +1 blocks in ") &&
          strstr(buf, "growth: -5100 bytes, -2 blocks in ") && strstr(buf, "monitor: off\n") &&
          count(buf, "HEAP SUMMARY") == 2, "monitor output:\n%s", buf);
    console_free(c);
    fclose(mem);
    free(buf);
    /* Restore the big block for the report tests: stack 1 has now seen 11
     * allocs (10 + the monitor's), stack 2 two. */
    heap_record_alloc(fk->books, 0x20000, 5000, 2, ALLOC_MALLOC);
}

static char *direct_report(struct fake *fk, enum report_format fmt, size_t top)
{
    char *buf = NULL;
    size_t blen = 0;
    FILE *f = open_memstream(&buf, &blen);
    struct report_source src = { fk->books, fk->stacks, f_resolve, fk, 777, "/bin/fake", NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, 0 };
    struct report_options opt = { .format = fmt, .sort = REPORT_SORT_BYTES, .top = top };
    report_write(f, &src, &opt);
    fclose(f);
    return buf;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return strdup("");
    char *buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static void reports(struct fake *fk, const char *dir)
{
    char *want = direct_report(fk, REPORT_TEXT, 0);
    char *out = run_s(fk, "report\n");
    CHECK(strcmp(out, want) == 0, "report differs from report_write:\n%s", out);
    CHECK(strstr(out, "5000 bytes in 1 blocks were not free\n    #0 /bin/fake+0x3000\n") == out,
          "report starts with the biggest stack:\n%s", out);
    free(out);

    char script[4096], path[1024];
    char path2[1024];
    snprintf(path, sizeof(path), "%s/r1.txt", dir);
    snprintf(path2, sizeof(path2), "%s/r 2.txt", dir);
    snprintf(script, sizeof(script), "report >%s\nreport -s bytes > \"%s\"\n", path, path2);
    out = run_s(fk, script);
    char *file = slurp(path), *file2 = slurp(path2);
    CHECK(count(out, "report written to ") == 2 && strcmp(file, want) == 0 &&
          strcmp(file2, want) == 0,
          "report > FILE: console said\n%s\nfile holds\n%s", out, file);
    free(out);
    free(file);
    free(file2);
    free(want);

    want = direct_report(fk, REPORT_FOLDED, 1);
    out = run_s(fk, "report -f folded -n 1\nreport -ffolded -n1\n");
    CHECK(strncmp(out, want, strlen(want)) == 0 && strcmp(out + strlen(want), want) == 0,
          "folded top 1:\n%s", out);
    free(out);
    free(want);

    snprintf(path, sizeof(path), "%s/r.json", dir);
    snprintf(script, sizeof(script), "report -j -s allocs > %s\n", path);
    out = run_s(fk, script);
    free(out);
    char cmd[4096];
    snprintf(cmd, sizeof(cmd),
             "python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); "
             "assert r[\"pid\"]==777 and r[\"heap\"][\"in_use_bytes\"]==5288, r; "
             "assert [s[\"allocs\"] for s in r[\"stacks\"]]==[11,2], r' %s", path);
    CHECK(system(cmd) == 0, "python rejected the console's JSON report");

    /* clear: later reports show only what is allocated afterwards. */
    out = run_s(fk, "clear\nreport\n");
    CHECK(strstr(out, "cleared") == out && strstr(out, "in use: 0 bytes in 0 blocks\n") &&
          !strstr(out, "were not free"), "clear + report:\n%s", out);
    free(out);
    heap_record_alloc(fk->books, 0x50000, 77, 1, ALLOC_MALLOC);
    heap_record_free(fk->books, 0x10040, ALLOC_MALLOC, NULL); /* a pre-clear block */
    out = run_s(fk, "report\n");
    CHECK(strstr(out, "77 bytes in 1 blocks were not free\n") == out &&
          strstr(out, "in use: 77 bytes in 1 blocks\n    total heap usage: 1 allocs, 1 frees, 77 bytes allocated\n"),
          "report after clear:\n%s", out);
    free(out);
}

static void session(struct fake *fk)
{
    /* Prompt on a terminal only, after each line; nothing after quit. */
    char *buf = NULL;
    size_t blen = 0;
    FILE *mem = open_memstream(&buf, &blen);
    struct console *c = console_new(&full_ops, fk, mem);
    console_set_interactive(c, true);
    console_feed(c, "scan\nbogus\nquit\nstatus\n", 24);
    CHECK(console_wants_quit(c) && fk->quit_calls == 1 && fk->scan_calls == 1, "quit/scan hooks");
    console_monitor_tick(c);
    console_free(c);
    fclose(mem);
    CHECK(strcmp(buf, "> scan: nothing leaked\n> error: unknown command 'bogus' (try 'help')\n> ") == 0,
          "interactive session:\n%s", buf);
    free(buf);

    /* Any split of the input gives the same output. */
    const char *script = "help\nreport -n 1\r\nfoo bar\nreport -s blocks -f folded\nhelp monitor\n";
    char *whole = run_s(fk, script);
    for (size_t chunk = 1; chunk < 9; chunk++) {
        char *part = run(fk, &full_ops, script, strlen(script), chunk);
        CHECK(strcmp(whole, part) == 0, "chunk %zu differs", chunk);
        free(part);
    }
    free(whole);
}

int main(void)
{
    char dir[] = "/tmp/test_console.XXXXXX";
    const char *tmp = getenv("MT_TMP");
    if (!(tmp && *tmp) && !(tmp = mkdtemp(dir))) {
        perror("mkdtemp");
        return 1;
    }
    struct fake fk;
    setup(&fk);
    bad_lines(&fk);
    good_commands(&fk);
    reports(&fk, tmp);
    session(&fk);
    heap_books_free(fk.books);
    stack_table_free(fk.stacks);
    if (failures) {
        fprintf(stderr, "%d failures (files in %s)\n", failures, tmp);
        return 1;
    }
    puts("test_console: ok");
    return 0;
}
