/* What Tab offers on a console line: the command names as the first word,
 * a command's options and their values after it (read from the command's
 * usage line, so they follow `help`), and file names after '>' (left to the
 * line editor, which knows the file system).  No terminal here: the line
 * editor (line_edit.c) asks, the unit test asks the same way. */
#ifndef MT_CONSOLE_COMPLETE_H
#define MT_CONSOLE_COMPLETE_H

#include <stddef.h>

enum complete_kind {
    COMPLETE_WORDS,     /* the candidates were passed to add() */
    COMPLETE_FILES,     /* the word is a file name after '>' */
};

/* line[0..start) is the text before the word being completed, prefix the
 * word typed so far.  Calls add(arg, word) for each candidate that starts
 * with prefix, in a stable order. */
enum complete_kind console_complete(const char *line, size_t start, const char *prefix,
                                    void (*add)(void *arg, const char *word), void *arg);

/* The console's commands, i = 0, 1, ... until NULL (console.c). */
const char *console_command_name(size_t i);
/* A command's usage line ("report [-n TOP] ..."), NULL for none
 * (console_commands.c). */
const char *console_command_usage(const char *name);

#endif
