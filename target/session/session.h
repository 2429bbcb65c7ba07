/* A tracing session: the traced process, the console, the final report. */
#ifndef MT_SESSION_SESSION_H
#define MT_SESSION_SESSION_H

#include <stdbool.h>
#include <stdio.h>

#include "target/report/report.h"
#include "target/tracer/engine.h"
#include "target/tracer/family.h"

struct leak_session;

struct session {
    struct tracee *tracee;      /* the first process (family.procs[0]) */
    struct family family;       /* every traced process (-f: its children too) */
    struct console *console;    /* NULL without a console */
    int console_fd;             /* -1 without a console */
    bool console_ended;         /* its input ended: not polled any more */
    bool console_tty;           /* on a terminal: read only in the foreground */
    bool quit_requested;
    int quit_signal;            /* SIGINT/SIGTERM/SIGHUP that ended us, or 0 */
    double monitor_seconds;
    int timer_fd;
    const char *output_path;    /* final report; NULL: stdout */
    struct report_options report;
    char resolve_buf[2][4096];
    struct leak_session *leak;  /* leak scan state (leak_glue.c); NULL: not set up */
    struct report_family family_report;
    int signal_fd;              /* the loop's signalfd while it runs, else -1 */
    pid_t apart_pid;            /* a report child running (apart.c), else 0/-1 */
    struct misuse_error *deferred; /* misuse errors met while a child reports */
    struct tracee **deferred_of;
    size_t ndeferred;
    size_t deferred_dropped;
    struct timeline *timeline;  /* the first process's heap over time (sampling.c) */
    unsigned sample_ms;         /* its spacing (--record-interval); 0: 100 */
    struct recorder *recorder;  /* --record FILE, or NULL */
    unsigned sampled_epoch;     /* tracee->books_epoch when sampled last (an exec replaces the books) */
    double sample_offset;       /* their clock's start on the timeline's */
    double sample_last;         /* the timeline's time of the last offer */
    double rss_read_next;       /* --record: the monotonic time the RSS may be read again */
    struct report_rss_point *rss_points;    /* --record: the RSS as recorded, for the page */
    size_t nrss_points;
    /* snapshots (snapshot.c) */
    uint64_t snapshot_rss;      /* --snapshot-rss, bytes; 0: off */
    uint64_t snapshot_next;     /* the next RSS that writes one */
    unsigned snapshot_rss_percent;  /* --snapshot-rss N%: of memory.max; 0: off */
    uint64_t snapshot_base;     /* the RSS of the first snapshot (N% of the limit now) */
    uint64_t snapshot_events;   /* memory.events' high + oom when last seen */
    bool snapshot_events_known, snapshot_nolimit_said;
    double snapshot_events_time;    /* monotonic seconds of the last event snapshot */
    bool snapshot_peak;         /* --snapshot-peak */
    uint64_t snapshot_peak_bytes;
    double snapshot_peak_time, snapshot_checked;   /* monotonic seconds */
};

/* Frame names for reports: module, offset, function, file:line (of the
 * first process). */
void session_resolve(void *ctx, uint64_t pc, unsigned frame_index, struct report_frame *out);

/* The same for any traced process: ctx is a process_resolver. */
struct process_resolver {
    struct tracee *tracee;
    char buf[2][4096];
};
void process_resolve(void *ctx, uint64_t pc, unsigned frame_index, struct report_frame *out);

/* Prints a misuse error of t on stderr as it is found (tracee on_misuse
 * hook; ctx is unused). */
void session_print_misuse(void *ctx, struct tracee *t, const struct misuse_error *e);

/* What every report of the first process starts from: its books, stacks
 * and names (the final report adds leaks, errors and children). */
struct report_source session_report_source(struct session *s);

/* The reports of the followed children (procs[1..]) after the first
 * process's: text and folded sections, or a JSON "children" array. */
int session_write_children(FILE *out, struct session *s);
/* What the first process's report adds under -f (its JSON "children");
 * NULL without -f. */
const struct report_family *session_family_report(struct session *s);
/* Reads the signalfd: SIGINT, SIGTERM and SIGHUP ask to quit. */
void session_handle_signals(struct session *s, int sfd);
/* A signal that ends the session (SIGINT, SIGTERM, SIGHUP) is pending:
 * they stay blocked for the signalfd, so work that keeps the loop away
 * from it for long (a leak scan) can look without taking it. */
bool session_ending_signal_pending(void);

/* Runs fn(arg) in a forked child that writes what it prints (a report, a
 * leak scan's records: symbolized, maybe over a slow network) while this
 * process goes on handling the traced program's stops, and returns when the
 * child is done: fn's result, or -1 when it failed.  Done in place (no
 * fork) when no memtrace-fs connection is in use, or outside the loop.
 * Returns -2 when it could not fork (the caller does it in place). */
int session_run_apart(struct session *s, int (*fn)(void *arg), void *arg);
/* Prints the misuse errors queued (with memtrace-fs, or while a child was
 * reporting): in a child while the loop runs, else here. */
void session_flush_misuse(struct session *s);
void session_misuse_free(struct session *s);

/* Offers the first process's heap totals to the timeline (and to the
 * --record file): kept when the interval has passed, or always with force
 * (a monitor tick, a report).  Creates the timeline on first use. */
void session_sample(struct session *s, bool force);
/* The timeline ending now, for a report; never writes the --record file
 * (a console report may run in a forked child). */
const struct timeline *session_timeline_now(struct session *s);

/* The RSS of t split into parts now (memory_glue.c), for a report's
 * MEMORY section; NULL when t is gone or /proc could not be read.  Free
 * with session_memory_free. */
struct rss_parts *session_memory_of(struct tracee *t);
void session_memory_free(struct rss_parts *m);

/* Writes a snapshot of the first process (its report in the format of
 * -f, with MEMORY) to path, or (NULL) to a file named after its pid and
 * the time, in the directory of -o; the name goes to written.  0, or -1
 * after an error message. */
int session_snapshot(struct session *s, const char *path, char *written, size_t len);
/* --snapshot-rss with a memory cgroup (snapshot_cgroup.c): the RSS of the
 * first snapshot (N% of memory.max, or the MiB given; 0: none yet), and
 * *fire with the reason in why when memory.events counted a new high or
 * oom event (at most one such snapshot a second). */
uint64_t session_snapshot_cgroup(struct session *s, double now, bool *fire, char *why, size_t len);
/* The loop's check for --snapshot-rss and --snapshot-peak: writes the
 * snapshots due; returns the poll timeout it needs (ms), -1 when off. */
int session_snapshot_poll(struct session *s);

/* Runs the event loop until the process ends or the session is asked to
 * quit.  Returns 0, or -1 on a tracer error. */
int session_run(struct session *s);
/* After the detach: the ending signals that came meanwhile dropped, and
 * SIGINT, SIGTERM and SIGHUP let in again (session_run keeps them
 * blocked). */
void session_end_signals(void);
/* Writes the final report to the -o file or stdout: the first process's
 * report, then (-f) each child's. */
int session_final_report(struct session *s);
void session_attach_console(struct session *s, int fd, bool interactive);
/* Arms (seconds > 0) or stops the monitor timer. */
void session_set_monitor(struct session *s, double seconds);

/* Leak scans (leak_glue.c). */
struct session_leak_options {
    bool autoscan;              /* -a: scan when the process is about to exit */
    int exitcode;               /* --leak-exitcode N, or -1 */
    const char *suppressions;   /* --suppressions FILE, or NULL */
};
/* Loads the suppressions (before the target starts); -1 after printing a
 * one-line error. */
int session_leak_setup(struct session *s, const struct session_leak_options *o);
/* The leak scan's exit-stop hook in the options every traced process of
 * s is created with (it acts on the first process only). */
void session_leak_hook(struct session *s, struct tracer_options *opts);
/* The console's scan: stops the process, scans, prints the result. */
void session_leak_scan(struct session *s, FILE *out);
/* Tracing ends without an exit (quit, signal, detach): with -a, scan now. */
void session_leak_finish(struct session *s);
/* The --leak-exitcode verdict: N when the final scan found definitely lost
 * bytes, else -1. */
int session_leak_exit_code(const struct session *s);
/* The final scan for the report, or NULL. */
const struct report_leaks *session_leak_report(const struct session *s);
/* The latest leak scan's result: the final one, else the console's last
 * `scan`; NULL when none ran. */
const struct report_leaks *session_leak_latest(const struct session *s);
void session_leak_free(struct session *s);

#endif
