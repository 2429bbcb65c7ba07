/* Refusals (a path outside the sysroot, a peer not in --allow, a full table,
 * a rate limit) are logged at a bounded rate: a peer that provokes them by
 * the thousand must not flood the log or the disk.  Shared by every listener
 * and session thread. */
#ifndef MTFS_REFUSAL_LOG_H
#define MTFS_REFUSAL_LOG_H

/* At most this many lines per window; the rest are counted, and the count
 * is printed in one line when the next window opens. */
#define REFUSAL_LOG_BURST 20
#define REFUSAL_LOG_WINDOW_S 10

/* A warning line, unless the budget of this window is spent; every byte
 * outside printable ASCII is written as \xNN (log_escape.h). */
void refusal_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints the count of suppressed lines now, if any (at exit). */
void refusal_log_flush(void);

#endif
