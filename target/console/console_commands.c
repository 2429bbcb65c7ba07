#include "target/console/complete.h"
#include "target/console/console_internal.h"
#include "target/console/line_edit.h"
#include "target/report/report_file.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <inttypes.h>
#include <string.h>

static const struct help_entry {
    const char *name, *usage, *text;
} help_entries[] = {
    { "help", "help [CMD]", "list the commands, or describe CMD" },
    { "status", "status", "dated HEAP SUMMARY, mapped bytes, traced threads, the peak and temporary allocations, where the RSS went (MEMORY)" },
    { "monitor", "monitor N", "print status every N seconds (decimals allowed) with the growth "
                              "since the previous one; monitor 0 stops" },
    { "report", "report [-n TOP] [-s bytes|blocks|allocs] [-j] [-f text|json|folded|html|massif|heaptrack|pprof] [> FILE]",
      "blocks in use grouped by stack, sorted by the key (default bytes), the TOP first; "
      "-j is -f json; > FILE writes the report to FILE (heaptrack and pprof: gzipped, "
      "to a FILE only)" },
    { "clear", "clear", "forget the blocks recorded so far: later reports show only what is "
                        "allocated from now on and still in use (the peak starts over too)" },
    { "scan", "scan", "leak scan: find blocks no pointer refers to" },
    { "quit", "quit", "detach from the target, write the final report, exit" },
    { "snapshot", "snapshot [> FILE]", "a report with MEMORY written now, to FILE or to a file "
                                       "named after the pid and the time (as --snapshot-rss)" },
};

const char *console_command_usage(const char *name)
{
    for (size_t i = 0; i < sizeof(help_entries) / sizeof(help_entries[0]); i++)
        if (strcmp(help_entries[i].name, name) == 0)
            return help_entries[i].usage;
    return NULL;
}

static bool no_args(struct console *c, const struct tokens *t)
{
    if (t->count == 1)
        return true;
    console_error(c, "%s takes no arguments", t->word[0]);
    return false;
}

void cmd_help(struct console *c, const struct tokens *t)
{
    const size_t n = sizeof(help_entries) / sizeof(help_entries[0]);
    if (t->count > 2 || (t->count == 2 && t->redirect[1])) {
        console_error(c, "usage: help [CMD]");
        return;
    }
    if (t->count == 2) {
        const char *want = strcmp(t->word[1], "exit") == 0 ? "quit" : t->word[1];
        for (size_t i = 0; i < n; i++)
            if (strcmp(help_entries[i].name, want) == 0) {
                fprintf(c->out, "%s\n    %s\n", help_entries[i].usage, help_entries[i].text);
                return;
            }
        console_error(c, "help: no command '%.64s'", t->word[1]);
        return;
    }
    fputs("commands:\n", c->out);
    for (size_t i = 0; i < n; i++)
        fprintf(c->out, "  %-10s %s\n", help_entries[i].name, help_entries[i].text);
    fputs("'help CMD' shows a command's arguments\n", c->out);
}

/* ISO 8601 local time with the offset in its extended form (+hh:mm). */
static void put_now(FILE *out)
{
    time_t now = time(NULL);
    struct tm tm;
    char stamp[64], zone[16];
    if (!localtime_r(&now, &tm) || !strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm) ||
        !strftime(zone, sizeof(zone), "%z", &tm)) {
        fputs("(unknown time)", out);
        return;
    }
    if (strlen(zone) == 5)
        fprintf(out, "%s%.3s:%s", stamp, zone, zone + 3);
    else
        fprintf(out, "%s%s", stamp, zone);
}

static void put_status(struct console *c, const struct heap_totals *t)
{
    fputs("status at ", c->out);
    put_now(c->out);
    fputc('\n', c->out);
    report_write_summary(c->out, t);
    if (!t->maps_recorded && !t->mapped_regions)
        fputs("    mapped: 0 bytes in 0 regions\n", c->out);
    if (c->ops.thread_count)
        fprintf(c->out, "    traced threads: %u\n", c->ops.thread_count(c->ctx));
}

void cmd_status(struct console *c, const struct tokens *t)
{
    if (!no_args(c, t))
        return;
    struct heap_totals tot;
    heap_get_totals(c->ops.books(c->ctx), &tot);
    put_status(c, &tot);
    /* Not in monitor's summaries: their layout stays as it was. */
    struct heap_peak peak;
    heap_get_peak(c->ops.books(c->ctx), &peak);
    fprintf(c->out, "    peak: %" PRIu64 " bytes in %" PRIu64 " blocks at %.3f s\n", peak.bytes,
            peak.blocks, peak.seconds);
    fprintf(c->out, "    temporary allocations: %" PRIu64 "\n", tot.temporary);
    if (c->ops.engine)
        c->ops.engine(c->ctx, c->out);
    /* Not in monitor's summaries either: reading smaps takes a while. */
    struct rss_parts *mem = c->ops.memory ? c->ops.memory(c->ctx) : NULL;
    if (mem) {
        report_write_memory_text(c->out, mem);
        rss_parts_free(mem);
        free(mem);
    }
}

void console_reset_baseline(struct console *c)
{
    struct heap_totals tot;
    heap_get_totals(c->ops.books(c->ctx), &tot);
    c->last_bytes = tot.in_use_bytes;
    c->last_blocks = tot.in_use_blocks;
    clock_gettime(CLOCK_MONOTONIC, &c->last_time);
}

static int64_t delta(uint64_t now, uint64_t before)
{
    return (int64_t)(now - before);
}

void console_monitor_tick(struct console *c)
{
    if (c->quit)
        return;
    struct heap_totals tot;
    heap_get_totals(c->ops.books(c->ctx), &tot);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double secs = (double)(now.tv_sec - c->last_time.tv_sec) +
                  (double)(now.tv_nsec - c->last_time.tv_nsec) / 1e9;
    if (c->editing)
        line_edit_hide();   /* the line being typed comes back below */
    put_status(c, &tot);
    fprintf(c->out, "    growth: %+" PRId64 " bytes, %+" PRId64 " blocks in %.1f s\n",
            delta(tot.in_use_bytes, c->last_bytes), delta(tot.in_use_blocks, c->last_blocks),
            secs);
    c->last_bytes = tot.in_use_bytes;
    c->last_blocks = tot.in_use_blocks;
    c->last_time = now;
    /* The summary landed after the prompt: show it again below. */
    if (c->editing)
        line_edit_show();
    else if (c->interactive)
        fputs("> ", c->out);
    fflush(c->out);
}

/* Unsigned decimal, at most 9 digits: enough for any count here, and no
 * overflow to worry about. */
static bool parse_count(const char *s, size_t *out)
{
    size_t v = 0, n = 0;
    for (; *s; s++, n++) {
        if (*s < '0' || *s > '9' || n == 9)
            return false;
        v = v * 10 + (size_t)(*s - '0');
    }
    *out = v;
    return n > 0;
}

/* Seconds as DIGITS[.DIGITS] (no signs, exponents, hex, inf or nan), in
 * microseconds (digits past the sixth decimal are dropped): whole numbers,
 * so the bounds hold whatever precision the CPU computes doubles in (the
 * i386 build's x87 keeps more bits than the constants have). */
static bool parse_seconds_us(const char *s, uint64_t *out)
{
    uint64_t whole = 0, frac = 0, unit = 1000000;
    size_t int_digits = 0, frac_digits = 0;
    for (; *s >= '0' && *s <= '9'; s++, int_digits++) {
        if (int_digits == 9)
            return false;
        whole = whole * 10 + (uint64_t)(*s - '0');
    }
    if (*s == '.') {
        for (s++; *s >= '0' && *s <= '9'; s++, frac_digits++) {
            if (frac_digits == 9)
                return false;
            unit /= 10;
            frac += (uint64_t)(*s - '0') * unit;
        }
    }
    if (*s || int_digits + frac_digits == 0)
        return false;
    *out = whole * 1000000 + frac;
    return true;
}

#define MONITOR_MIN_US 100000ull          /* 0.1 s */
#define MONITOR_MAX_US 86400000000ull     /* a day */

void cmd_monitor(struct console *c, const struct tokens *t)
{
    uint64_t us;
    if (t->count != 2 || t->redirect[1]) {
        console_error(c, "usage: monitor N (seconds; 0 stops)");
        return;
    }
    if (!parse_seconds_us(t->word[1], &us) ||
        (us != 0 && (us < MONITOR_MIN_US || us > MONITOR_MAX_US))) {
        console_error(c, "monitor: '%.32s' is not 0 or a number of seconds from %g to %g",
                      t->word[1], (double)MONITOR_MIN_US / 1e6, (double)MONITOR_MAX_US / 1e6);
        return;
    }
    if (!c->ops.set_monitor) {
        console_error(c, "monitor: not available");
        return;
    }
    double secs = (double)us / 1e6;
    c->ops.set_monitor(c->ctx, secs);
    console_reset_baseline(c);
    if (us == 0)
        fputs("monitor: off\n", c->out);
    else
        fprintf(c->out, "monitor: every %g s\n", secs);
}

struct report_job {
    struct console *c;
    FILE *out;
    const struct report_options *opt;
};

static int report_job_run(void *arg)
{
    struct report_job *j = arg;
    struct console *c = j->c;
    struct report_source src = {
        .books = c->ops.books(c->ctx),
        .stacks = c->ops.stacks(c->ctx),
        .resolve = c->ops.resolve,
        .resolve_ctx = c->ctx,
        .max_frames = c->ops.max_frames ? c->ops.max_frames(c->ctx) : 0,
    };
    if (c->ops.target)
        c->ops.target(c->ctx, &src.pid, &src.program);
    if (c->ops.timeline)
        src.timeline = c->ops.timeline(c->ctx);
    if (c->ops.leaks && j->opt->format == REPORT_HTML)
        src.leaks = c->ops.leaks(c->ctx);
    struct rss_parts *mem = c->ops.memory ? c->ops.memory(c->ctx) : NULL;
    src.memory = mem;
    int rc = report_write(j->out, &src, j->opt);
    if (mem) {
        rss_parts_free(mem);
        free(mem);
    }
    if (fflush(j->out) != 0 || ferror(j->out))
        rc = -1;
    return rc;
}

/* Returns -1 when writing failed. */
static int write_report(struct console *c, FILE *out, const struct report_options *opt)
{
    struct report_job j = { c, out, opt };
    int rc = c->ops.run_apart ? c->ops.run_apart(c->ctx, report_job_run, &j) : -2;
    if (rc == -2)
        rc = report_job_run(&j);
    return rc;
}

/* Is st the file the console reads its lines from (or stdin)?  A report
 * written into the pipe, FIFO or socket it reads would come back as
 * commands, one into the script file it reads would cut the script short.
 * /proc/self/fd/0, /dev/fd/0 and /dev/stdin all open that same file: the
 * device and inode say so, whatever the path.  A terminal is not refused:
 * what is written to it is shown, never read back. */
static bool is_console_input(const struct console *c, const struct stat *st)
{
    int fds[2] = { c->in_fd, 0 };
    for (int i = 0; i < 2; i++) {
        struct stat in;
        if (fds[i] >= 0 && fstat(fds[i], &in) == 0 && in.st_dev == st->st_dev &&
            in.st_ino == st->st_ino && !S_ISCHR(in.st_mode))
            return true;
    }
    return false;
}

void cmd_report(struct console *c, const struct tokens *t)
{
    struct report_options opt = { .format = REPORT_TEXT, .sort = REPORT_SORT_BYTES, .top = 0 };
    const char *path = NULL;
    for (size_t i = 1; i < t->count; i++) {
        const char *w = t->word[i];
        if (t->redirect[i]) {
            if (path || i + 1 >= t->count || t->redirect[i + 1]) {
                console_error(c, "report: '>' needs exactly one FILE");
                return;
            }
            path = t->word[++i];
            if (!*path) {
                console_error(c, "report: empty file name");
                return;
            }
            continue;
        }
        if (strcmp(w, "-j") == 0) {
            opt.format = REPORT_JSON;
            continue;
        }
        if (w[0] != '-' || !w[1] || !strchr("nsf", w[1])) {
            console_error(c, "report: unexpected '%.64s' (usage: %s)", w, help_entries[3].usage);
            return;
        }
        /* "-n 5" and "-n5" alike. */
        const char *val = w[2] ? w + 2 : NULL;
        if (!val) {
            if (i + 1 >= t->count || t->redirect[i + 1]) {
                console_error(c, "report: %s needs a value", w);
                return;
            }
            val = t->word[++i];
        }
        bool ok = w[1] == 'n'   ? parse_count(val, &opt.top)
                  : w[1] == 's' ? report_parse_sort(val, &opt.sort)
                                : report_parse_format(val, &opt.format);
        if (!ok) {
            console_error(c, "report: bad value '%.64s' for -%c", val, w[1]);
            return;
        }
    }

    if (!path && report_format_binary(opt.format)) {
        console_error(c, "report: -f %s is gzip-compressed: give > FILE",
                      report_format_name(opt.format));
        return;
    }
    if (!path) {
        write_report(c, c->out, &opt);
        return;
    }
    /* Before the open (which truncates a file), and after it (the file
     * opened is the one written). */
    struct stat st;
    if (stat(path, &st) == 0 && is_console_input(c, &st)) {
        console_error(c, "report: %.256s is the console's own input: not written", path);
        return;
    }
    char why[512] = "";
    FILE *f = c->ops.open_output ? c->ops.open_output(c->ctx, path)
                                 : report_file_open(path, why, sizeof(why));
    if (!f) {
        if (why[0])
            console_error(c, "report: cannot open %.400s", why);
        else
            console_error(c, "report: cannot open %.256s: %s", path, strerror(errno));
        return;
    }
    if (fstat(fileno(f), &st) == 0 && is_console_input(c, &st)) {
        fclose(f);
        console_error(c, "report: %.256s is the console's own input: not written", path);
        return;
    }
    bool failed = write_report(c, f, &opt) < 0 || ferror(f) != 0;
    int saved = errno ? errno : EIO;
    if (fclose(f) != 0 && !failed) {
        failed = true;
        saved = errno;
    }
    if (failed)
        console_error(c, "report: writing %.256s failed: %s", path, strerror(saved));
    else
        fprintf(c->out, "report written to %.256s\n", path);
}

void cmd_clear(struct console *c, const struct tokens *t)
{
    if (!no_args(c, t))
        return;
    heap_clear(c->ops.books(c->ctx));
    console_reset_baseline(c);
    fputs("cleared: reports now show only blocks allocated from here on\n", c->out);
}

void cmd_scan(struct console *c, const struct tokens *t)
{
    if (!no_args(c, t))
        return;
    if (!c->ops.scan) {
        console_error(c, "scan: leak scan not available");
        return;
    }
    c->ops.scan(c->ctx, c->out);
}

void cmd_quit(struct console *c, const struct tokens *t)
{
    if (!no_args(c, t))
        return;
    c->quit = true;
    if (c->ops.quit)
        c->ops.quit(c->ctx);
}
