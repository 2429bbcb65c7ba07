/* The console's line editor on a terminal: libedit (BSD editline) through
 * its readline-compatible callback interface, driven by the session's
 * poll().  History (Up/Down, for the session), cursor movement and editing
 * (emacs keys), Tab completion (complete.h).  Built without libedit (a
 * cross build whose target has none), every call says "not here" and the
 * console reads lines itself, as it does from a pipe.
 *
 * One editor per process: libedit's readline interface is global state. */
#ifndef MT_CONSOLE_LINE_EDIT_H
#define MT_CONSOLE_LINE_EDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* "libedit" or "plain line reader": for --version. */
const char *line_edit_kind(void);

/* Start editing lines read from fd (a terminal; out a terminal too) with
 * prompt.  Each finished line goes to on_line, with the terminal in its
 * normal mode, so commands print as usual; on_line returns false when no
 * further line is wanted (quit).  Returns false when this build has no
 * editor or fd/out is not a terminal: the caller reads lines itself. */
bool line_edit_start(int fd, FILE *out, const char *prompt,
                     bool (*on_line)(void *arg, const char *line, size_t len), void *arg);

/* fd is readable: handle one key (one byte, or one escape sequence: for its
 * rest the editor waits at most LINE_EDIT_KEY_MS, never longer).  Returns
 * false at the end of input (Ctrl-D on an empty line, a hang-up) or after
 * on_line said stop; the terminal is restored then. */
bool line_edit_readable(void);
enum { LINE_EDIT_KEY_MS = 100 };

/* Around output that is not the answer to a line (monitor ticks): clear the
 * line being typed, then draw the prompt and that line again. */
void line_edit_hide(void);
void line_edit_show(void);

/* The terminal changed size (SIGWINCH, taken by the session's signalfd). */
void line_edit_resized(void);

/* Stop editing and put the terminal back as it was.  Idempotent; also run
 * at exit. */
void line_edit_stop(void);

bool line_edit_active(void);

#endif
