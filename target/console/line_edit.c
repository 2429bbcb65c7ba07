#include "target/console/line_edit.h"
#include "target/console/complete.h"

#ifndef MT_LIBEDIT

const char *line_edit_kind(void) { return "plain line reader"; }
bool line_edit_start(int fd, FILE *out, const char *prompt,
                     bool (*on_line)(void *arg, const char *line, size_t len), void *arg)
{
    (void)fd, (void)out, (void)prompt, (void)on_line, (void)arg;
    return false;
}
bool line_edit_readable(void) { return false; }
void line_edit_hide(void) {}
void line_edit_show(void) {}
void line_edit_resized(void) {}
void line_edit_stop(void) {}
bool line_edit_active(void) { return false; }

#else

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <editline/readline.h>

#include "shared/xalloc.h"

static struct {
    bool active, saved, at_exit;
    pid_t owner;                /* atexit() runs in forked children too */
    int fd;
    FILE *out;
    const char *prompt;
    bool (*on_line)(void *arg, const char *line, size_t len);
    void *arg;
    struct termios termios;     /* the terminal as we found it */
    /* One call of rl_callback_read_char: */
    bool first_byte;            /* the next read is the one poll() announced */
    bool end;                   /* Ctrl-D on an empty line, or a hang-up */
    char *line;                 /* a finished line */
} ed = { .fd = -1 };

const char *line_edit_kind(void) { return "libedit"; }

bool line_edit_active(void) { return ed.active; }

/* libedit's byte source: the byte poll() announced at once, and for the rest
 * of an escape sequence at most LINE_EDIT_KEY_MS.  -1 (end of input, to
 * libedit) drops a key left incomplete, not the line. */
static int edit_getc(FILE *unused)
{
    (void)unused;
    struct pollfd p = { .fd = ed.fd, .events = POLLIN };
    int wait = ed.first_byte ? 0 : LINE_EDIT_KEY_MS;
    ed.first_byte = false;
    if (poll(&p, 1, wait) <= 0)
        return -1;
    unsigned char ch;
    ssize_t n = read(ed.fd, &ch, 1);
    if (n == 1)
        return ch;
    if (n == 0 || (errno != EAGAIN && errno != EINTR))
        ed.end = true;
    return -1;
}

static void got_line(char *line)
{
    if (!line) {
        ed.end = true;
        return;
    }
    free(ed.line);
    ed.line = line;
}

/* Tab: rl_completion_matches() takes a generator called with state 0 first. */
struct cands {
    char **word;
    size_t n, next;
};
static struct cands cands;

static void add_cand(void *arg, const char *word)
{
    struct cands *c = arg;
    c->word = xrealloc(c->word, (c->n + 1) * sizeof(*c->word));
    c->word[c->n++] = xstrdup(word);
}

static char *next_cand(const char *text, int state)
{
    (void)text;
    if (state == 0)
        cands.next = 0;
    if (cands.next >= cands.n)
        return NULL;
    return xstrdup(cands.word[cands.next++]);   /* libedit frees it */
}

static char **complete(const char *text, int start, int end)
{
    (void)end;
    for (size_t i = 0; i < cands.n; i++)
        free(cands.word[i]);
    cands.n = 0;
    enum complete_kind k = console_complete(rl_line_buffer, (size_t)(start > 0 ? start : 0),
                                            text, add_cand, &cands);
    if (k == COMPLETE_FILES)
        return NULL;    /* libedit's own file-name completion */
    rl_attempted_completion_over = 1;
    return cands.n ? rl_completion_matches(text, next_cand) : NULL;
}

static void restore_at_exit(void)
{
    if (getpid() == ed.owner)
        line_edit_stop();
}

bool line_edit_start(int fd, FILE *out, const char *prompt,
                     bool (*on_line)(void *arg, const char *line, size_t len), void *arg)
{
    /* A memtrace started in the background (`memtrace -p PID &`) keeps the
     * plain reader: setting the terminal's mode from there would stop it
     * (SIGTTOU), and the program it traces with it. */
    if (ed.active || !isatty(fd) || !isatty(fileno(out)) || tcgetpgrp(fd) != getpgrp())
        return false;
    ed.saved = tcgetattr(fd, &ed.termios) == 0;
    if (!ed.saved)
        return false;
    ed.fd = fd;
    ed.out = out;
    ed.prompt = prompt;
    ed.on_line = on_line;
    ed.arg = arg;
    ed.end = false;
    /* The session takes its signals from a signalfd; libedit's handlers
     * would never run. */
    rl_catch_signals = 0;
    rl_catch_sigwinch = 0;
    rl_getc_function = edit_getc;
    rl_outstream = out;
    rl_attempted_completion_function = complete;
    using_history();
    stifle_history(1000);
    ed.owner = getpid();
    if (!ed.at_exit) {
        atexit(restore_at_exit);
        ed.at_exit = true;
    }
    ed.active = true;
    fflush(out);
    rl_callback_handler_install(prompt, got_line);
    return true;
}

static bool blank(const char *s)
{
    return s[strspn(s, " \t")] == '\0';
}

bool line_edit_readable(void)
{
    if (!ed.active)
        return false;
    ed.first_byte = true;
    rl_callback_read_char();
    if (ed.end) {
        fputc('\n', ed.out);
        line_edit_stop();
        return false;
    }
    if (!ed.line)
        return true;
    /* libedit put the terminal back in its normal mode for the line: it is
     * raw again only when the handler is installed anew. */
    char *line = ed.line;
    ed.line = NULL;
    if (!blank(line))
        add_history(line);
    bool more = ed.on_line(ed.arg, line, strlen(line));
    free(line);
    if (!more) {
        line_edit_stop();
        return false;
    }
    fflush(ed.out);
    rl_callback_handler_install(ed.prompt, got_line);
    return true;
}

void line_edit_hide(void)
{
    if (ed.active) {
        fputs("\r\033[K", ed.out);
        fflush(ed.out);
    }
}

void line_edit_show(void)
{
    if (ed.active) {
        fflush(ed.out);
        rl_forced_update_display();
    }
}

void line_edit_resized(void)
{
    if (ed.active)
        rl_resize_terminal();
}

void line_edit_stop(void)
{
    if (!ed.active)
        return;
    ed.active = false;
    rl_callback_handler_remove();
    if (ed.saved)
        tcsetattr(ed.fd, TCSADRAIN, &ed.termios);
    fflush(ed.out);
    free(ed.line);
    ed.line = NULL;
    for (size_t i = 0; i < cands.n; i++)
        free(cands.word[i]);
    free(cands.word);
    cands.word = NULL;
    cands.n = 0;
}

#endif
