/* memtrace-fs logs what its peers send (paths they asked for, the names
 * they give): raw, a peer could end a log line early, forge the next one or
 * put escape sequences on the terminal of whoever reads the log.  Every
 * such line goes through log_escape first. */
#ifndef MTFS_LOG_ESCAPE_H
#define MTFS_LOG_ESCAPE_H

#include <stddef.h>

/* The longest line log_escape writes, its NUL aside. */
#define LOG_ESCAPE_MAX 600

/* Copies src into dst (room: len bytes, at least 8) with every byte outside
 * printable ASCII (controls, DEL, bytes of 0x80 and above) and every
 * backslash written as \xNN, so that the line is one line of plain ASCII
 * whatever src holds; a line longer than len - 1 (or LOG_ESCAPE_MAX) ends
 * in "...".  Returns dst. */
char *log_escape(char *dst, size_t len, const char *src);

#endif
