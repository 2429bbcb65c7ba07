/* The console's command language, independent of where lines come from:
 * the event loop feeds it whatever bytes stdin delivered and owns the timer;
 * the console executes each complete line and writes to its FILE.
 *
 *   help [CMD]    status    monitor N    clear    scan    quit    snapshot [> FILE]
 *   report [-n TOP] [-s bytes|blocks|allocs] [-j] [-f text|json|folded|massif|html|heaptrack|pprof] [> FILE]
 *
 * A bad line prints exactly one "error: ..." line and changes nothing. */
#ifndef MT_CONSOLE_CONSOLE_H
#define MT_CONSOLE_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "target/heap/heap.h"
#include "target/heap/stacks.h"
#include "target/report/report.h"

/* Hooks into the engine.  books and stacks are required; the rest may be
 * NULL (the matching feature then reports itself unavailable or is left out). */
struct console_ops {
    struct heap_books *(*books)(void *ctx);
    const struct stack_table *(*stacks)(void *ctx);
    report_resolve_fn resolve;                  /* ctx is the console's ctx */
    unsigned (*max_frames)(void *ctx);          /* frames shown per stack (--depth); NULL: all */
    unsigned (*thread_count)(void *ctx);
    /* status: a line naming the engine in use. */
    void (*engine)(void *ctx, FILE *out);
    void (*target)(void *ctx, int *pid, const char **program);
    /* Runs the leak scan and prints its result to out. */
    void (*scan)(void *ctx, FILE *out);
    /* The console stops executing lines after this; the engine detaches. */
    void (*quit)(void *ctx);
    /* Arm (seconds > 0) or stop (0) the timer that calls console_monitor_tick. */
    void (*set_monitor)(void *ctx, double seconds);
    /* Open the file of "report > FILE"; NULL: fopen(path, "w").  Returns
     * NULL with errno set on failure. */
    FILE *(*open_output)(void *ctx, const char *path);
    /* Runs fn(arg) (which writes a report) where symbolizing cannot hold the
     * traced program, and returns its result when done; -2 when it cannot
     * (the console then calls fn itself).  NULL: always in place. */
    int (*run_apart)(void *ctx, int (*fn)(void *arg), void *arg);
    /* The heap's totals over time, brought up to now (report -f html
     * and massif draw them); NULL: none. */
    const struct timeline *(*timeline)(void *ctx);
    /* The latest leak scan's result (report -f html shows it); NULL: none. */
    const struct report_leaks *(*leaks)(void *ctx);
    /* The process's RSS split into parts now (status, report), a new
     * object for rss_parts_free and free; NULL: not available. */
    struct rss_parts *(*memory)(void *ctx);
    /* Writes a snapshot report to path (NULL: a name of its own), the name
     * used into written; 0, or -1 after saying why. */
    int (*snapshot)(void *ctx, const char *path, char *written, size_t len);
};

/* Lines longer than this are rejected whole with one error. */
#define CONSOLE_LINE_MAX 4096

struct console;

struct console *console_new(const struct console_ops *ops, void *ctx, FILE *out);
void console_free(struct console *c);

/* The fd the console's lines are read from: `report > FILE` never writes
 * into it (nor into stdin). */
void console_set_input_fd(struct console *c, int fd);

/* On a terminal the console prints "> " now and after every line. */
void console_set_interactive(struct console *c, bool interactive);

/* On a terminal: edit lines with libedit (line_edit.h), which prints the
 * prompt and hands over finished lines.  False when this build has no
 * editor or fd is not a terminal: then console_set_interactive and
 * console_feed, as for a pipe. */
bool console_start_editing(struct console *c, int fd);
bool console_editing(const struct console *c);
/* The editor's fd is readable.  False: no more input (Ctrl-D, hang-up, quit);
 * the terminal is back in its normal mode. */
bool console_read_edited(struct console *c);
/* The terminal changed size (SIGWINCH): the editor redraws to fit. */
void console_terminal_resized(struct console *c);
/* Restore the terminal (the session ends).  Idempotent. */
void console_stop_editing(struct console *c);
/* "libedit" or "plain line reader" (--version). */
const char *console_line_reader(void);

/* Bytes as read from stdin, any split.  Lines end at LF, CR or CR LF;
 * backspace/DEL erase the previous byte of the line being typed. */
void console_feed(struct console *c, const char *data, size_t n);
/* End of input: an unterminated last line is executed. */
void console_eof(struct console *c);

/* Execute one line (no terminator). */
void console_execute(struct console *c, const char *line, size_t len);

/* The timer fired: status plus growth since the previous tick. */
void console_monitor_tick(struct console *c);

bool console_wants_quit(const struct console *c);

#endif
