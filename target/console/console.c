#include "target/console/console.h"
#include "target/console/complete.h"
#include "target/console/console_internal.h"
#include "target/console/line_edit.h"

#include "shared/xalloc.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct console *console_new(const struct console_ops *ops, void *ctx, FILE *out)
{
    struct console *c = xcalloc(1, sizeof(*c));
    c->ops = *ops;
    c->ctx = ctx;
    c->out = out;
    c->in_fd = -1;
    console_reset_baseline(c);
    return c;
}

void console_set_input_fd(struct console *c, int fd)
{
    c->in_fd = fd;
}

void console_free(struct console *c)
{
    console_stop_editing(c);
    free(c);
}

static void prompt(struct console *c)
{
    if (c->interactive && !c->editing && !c->quit) {
        fputs("> ", c->out);
        fflush(c->out);
    }
}

void console_set_interactive(struct console *c, bool interactive)
{
    c->interactive = interactive;
    prompt(c);
}

bool console_wants_quit(const struct console *c)
{
    return c->quit;
}

void console_error(struct console *c, const char *fmt, ...)
{
    va_list ap;
    fputs("error: ", c->out);
    va_start(ap, fmt);
    /* va_start above: the analyzer's valist check misses it here */
    vfprintf(c->out, fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized)
    va_end(ap);
    fputc('\n', c->out);
}

static const struct command {
    const char *name;
    void (*run)(struct console *c, const struct tokens *t);
} commands[] = {
    { "help", cmd_help },   { "status", cmd_status }, { "monitor", cmd_monitor },
    { "report", cmd_report }, { "clear", cmd_clear }, { "scan", cmd_scan },
    { "quit", cmd_quit },   { "exit", cmd_quit },   { "snapshot", cmd_snapshot },
};

const char *console_command_name(size_t i)
{
    return i < sizeof(commands) / sizeof(commands[0]) ? commands[i].name : NULL;
}

static void run_line(struct console *c, const char *line, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)line[i];
        if ((ch < 0x20 && ch != '\t') || ch == 0x7f) {
            console_error(c, "line contains a control character (0x%02x)", ch);
            return;
        }
    }
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (i == len || line[i] == '#')
        return;

    struct tokens t;
    const char *err = tokenize(line, len, &t);
    if (err) {
        console_error(c, "%s", err);
        return;
    }
    if (t.redirect[0]) {
        console_error(c, "a command must come before '>'");
    } else {
        const struct command *cmd = NULL;
        for (size_t k = 0; k < sizeof(commands) / sizeof(commands[0]); k++)
            if (strcmp(commands[k].name, t.word[0]) == 0)
                cmd = &commands[k];
        if (cmd)
            cmd->run(c, &t);
        else
            console_error(c, "unknown command '%.64s' (try 'help')", t.word[0]);
    }
    tokens_release(&t);
}

void console_execute(struct console *c, const char *line, size_t len)
{
    if (c->quit)
        return;
    run_line(c, line, len);
    fflush(c->out);
}

static void end_of_line(struct console *c)
{
    if (c->quit)
        return;
    if (c->overflow)
        console_error(c, "line too long (more than %d bytes): ignored", CONSOLE_LINE_MAX);
    else
        console_execute(c, c->line, c->len);
    c->len = 0;
    c->overflow = false;
    prompt(c);
    fflush(c->out);
}

void console_feed(struct console *c, const char *data, size_t n)
{
    for (size_t i = 0; i < n && !c->quit; i++) {
        char ch = data[i];
        bool lf_after_cr = c->after_cr && ch == '\n';
        c->after_cr = ch == '\r';
        if (lf_after_cr)
            continue;
        if (ch == '\n' || ch == '\r') {
            end_of_line(c);
        } else if (ch == '\b' || ch == 0x7f) {
            if (c->len && !c->overflow)
                c->len--;
        } else if (c->len < CONSOLE_LINE_MAX) {
            c->line[c->len++] = ch;
        } else {
            c->overflow = true;
        }
    }
}

void console_eof(struct console *c)
{
    if (c->len || c->overflow)
        end_of_line(c);
}

/* A line from the editor (line_edit.c), already free of its terminator. */
static bool edited_line(void *arg, const char *line, size_t len)
{
    struct console *c = arg;
    if (len > CONSOLE_LINE_MAX)
        console_error(c, "line too long (more than %d bytes): ignored", CONSOLE_LINE_MAX);
    else
        console_execute(c, line, len);
    fflush(c->out);
    return !c->quit;
}

bool console_start_editing(struct console *c, int fd)
{
    if (!line_edit_start(fd, c->out, "> ", edited_line, c))
        return false;
    c->interactive = c->editing = true;
    return true;
}

void console_terminal_resized(struct console *c)
{
    if (c->editing)
        line_edit_resized();
}

bool console_editing(const struct console *c)
{
    return c->editing;
}

bool console_read_edited(struct console *c)
{
    if (c->editing && line_edit_readable())
        return true;
    c->editing = false;
    return false;
}

void console_stop_editing(struct console *c)
{
    if (c->editing)
        line_edit_stop();
    c->editing = false;
}

const char *console_line_reader(void)
{
    return line_edit_kind();
}
