/* State shared by the console's line reader and its commands. */
#ifndef MT_CONSOLE_INTERNAL_H
#define MT_CONSOLE_INTERNAL_H

#include "target/console/console.h"
#include "target/console/tokenize.h"

#include <stdint.h>
#include <time.h>

struct console {
    struct console_ops ops;
    void *ctx;
    FILE *out;
    bool interactive, quit;
    bool editing;       /* lines come from the line editor (line_edit.c) */
    int in_fd;          /* where the lines come from (-1: unknown; stdin is checked too) */

    char line[CONSOLE_LINE_MAX];
    size_t len;
    bool overflow;      /* the line being read is too long: skip to its end */
    bool after_cr;      /* a LF right after CR ends no new line */

    /* Baseline for the growth shown by monitor ticks. */
    uint64_t last_bytes, last_blocks;
    struct timespec last_time;
};

void console_error(struct console *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Command handlers: args excludes the command word.  Each prints its output
 * or one error line. */
void cmd_status(struct console *c, const struct tokens *t);
void cmd_monitor(struct console *c, const struct tokens *t);
void cmd_report(struct console *c, const struct tokens *t);
void cmd_clear(struct console *c, const struct tokens *t);
void cmd_scan(struct console *c, const struct tokens *t);
void cmd_quit(struct console *c, const struct tokens *t);
void cmd_help(struct console *c, const struct tokens *t);
void cmd_snapshot(struct console *c, const struct tokens *t);

/* Restart the growth baseline at the current figures. */
void console_reset_baseline(struct console *c);

#endif
