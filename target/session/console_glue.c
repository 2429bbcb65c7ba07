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
    if (!s->tracee->exited)
        engine_drain(s->tracee, false); /* an engine that records apart: books up to date */
    return s->tracee->books;
}

/* status: the engine in use (and the agent's ring waits). */
static void glue_engine(void *ctx, FILE *out)
{
    struct session *s = ctx;
    struct engine_stats st;
    fprintf(out, "    engine: %s", engine_name(s->tracee));
    if (engine_get_stats(s->tracee, &st))
        fprintf(out,
                " (%llu functions patched, %llu calls, ring waits: %llu, unrecorded: %llu, "
                "stacks unwound in the target: %llu, raw: %llu)",
                (unsigned long long)st.patched, (unsigned long long)st.calls,
                (unsigned long long)st.waits, (unsigned long long)st.lost,
                (unsigned long long)st.unwound_in_target, (unsigned long long)st.raw_stacks);
    fputc('\n', out);
    if (s->tracee->allocators.count) {
        fputs("    allocators: ", out);
        report_write_allocators(out, &s->tracee->allocators);
        fputc('\n', out);
    }
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

static const struct timeline *glue_timeline(void *ctx)
{
    return session_timeline_now(ctx);   /* the chart ends now */
}

static const struct report_leaks *glue_leaks(void *ctx)
{
    return session_leak_latest(ctx);
}

static struct rss_parts *glue_memory(void *ctx)
{
    struct session *s = ctx;
    return session_memory_of(s->tracee);
}

static int glue_snapshot(void *ctx, const char *path, char *written, size_t len)
{
    return session_snapshot(ctx, path, written, len);
}

static const struct console_ops session_console_ops = {
    .memory = glue_memory,
    .snapshot = glue_snapshot,
    .leaks = glue_leaks,
    .timeline = glue_timeline,
    .run_apart = glue_run_apart,
    .books = glue_books,
    .stacks = glue_stacks,
    .resolve = session_resolve,
    .max_frames = glue_max_frames,
    .thread_count = glue_thread_count,
    .engine = glue_engine,
    .target = glue_target,
    .scan = glue_scan,
    .quit = glue_quit,
    .set_monitor = glue_set_monitor,
};

void session_attach_console(struct session *s, int fd, bool interactive)
{
    s->console = console_new(&session_console_ops, s, stdout);
    s->console_fd = fd;
    console_set_input_fd(s->console, fd);
    s->console_tty = isatty(fd);
    if (!interactive || !console_start_editing(s->console, fd))
        console_set_interactive(s->console, interactive);
}
