/* The console's view of a session. */
#include <stdio.h>
#include <unistd.h>

#include "target/console/console.h"
#include "shared/log.h"
#include "target/report/report_file.h"
#include "target/session/session.h"

static struct heap_books *glue_books(void *ctx)
{
    struct session *s = ctx;
    return s->tracee->books;
}

static const struct stack_table *glue_stacks(void *ctx)
{
    struct session *s = ctx;
    return s->tracee->stacks;
}

static unsigned glue_thread_count(void *ctx)
{
    struct session *s = ctx;
    return s->tracee->threads_count;
}

static void glue_target(void *ctx, int *pid, const char **program)
{
    struct session *s = ctx;
    *pid = s->tracee->pid;
    *program = s->tracee->program;
}

static void glue_quit(void *ctx)
{
    struct session *s = ctx;
    s->quit_requested = true;
}

static void glue_set_monitor(void *ctx, double seconds)
{
    session_set_monitor(ctx, seconds);
}

static void glue_scan(void *ctx, FILE *out)
{
    session_leak_scan(ctx, out);
}

static unsigned glue_max_frames(void *ctx)
{
    struct session *s = ctx;
    return s->tracee->opts.depth;
}

static int glue_run_apart(void *ctx, int (*fn)(void *arg), void *arg)
{
    return session_run_apart(ctx, fn, arg);
}

static const struct console_ops session_console_ops = {
    .run_apart = glue_run_apart,
    .books = glue_books,
    .stacks = glue_stacks,
    .resolve = session_resolve,
    .max_frames = glue_max_frames,
    .thread_count = glue_thread_count,
    .target = glue_target,
    .scan = glue_scan,
    .quit = glue_quit,
    .set_monitor = glue_set_monitor,
};

void session_attach_console(struct session *s, int fd, bool interactive)
{
    s->console = console_new(&session_console_ops, s, stdout);
    s->console_fd = fd;
    console_set_interactive(s->console, interactive);
}

struct report_source session_report_source(struct session *s)
{
    return (struct report_source){
        .books = s->tracee->books,
        .stacks = s->tracee->stacks,
        .resolve = session_resolve,
        .resolve_ctx = s,
        .pid = s->tracee->pid,
        .program = s->tracee->program,
        .max_frames = s->tracee->opts.depth,
    };
}

int session_final_report(struct session *s)
{
    FILE *out = stdout;
    if (s->output_path) {
        char why[512];
        out = report_file_open(s->output_path, why, sizeof(why));
        if (!out) {
            mt_error("report: cannot open %s", why);
            return -1;
        }
    }
    struct report_source src = session_report_source(s);
    src.leaks = session_leak_report(s);
    src.errors = &s->tracee->errors;
    src.family = session_family_report(s);
    int rc = report_write(out, &src, &s->report);
    rc |= session_write_children(out, s);
    if (out != stdout)
        rc |= fclose(out);
    else
        fflush(out);
    return rc;
}
