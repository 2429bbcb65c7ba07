/* The event loop: one thread, one poll().  ptrace stops are drained with
 * family_drain() (without blocking) before every poll, so a busy target
 * costs no poll at all between its stops; a signalfd wakes the loop for
 * SIGCHLD and for the signals that end a session (SIGINT, SIGTERM,
 * SIGHUP). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "shared/log.h"
#include "target/console/console.h"
#include "target/session/session.h"

/* At most a batch of stops at a time: a busy multi-threaded program always
 * has another stop ready (on one CPU all the time), and SIGTERM or `quit`
 * must still be seen within one batch, not when the program pauses. */
enum { STOP_BATCH = 256 };

void session_set_monitor(struct session *s, double seconds)
{
    s->monitor_seconds = seconds;
    struct itimerspec its;
    memset(&its, 0, sizeof(its));
    if (s->monitor_seconds > 0) {
        its.it_value.tv_sec = (time_t)s->monitor_seconds;
        its.it_value.tv_nsec = (long)((s->monitor_seconds - (double)its.it_value.tv_sec) * 1e9);
        if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
            its.it_value.tv_nsec = 1;
        its.it_interval = its.it_value;
    }
    timerfd_settime(s->timer_fd, 0, &its, NULL);
}

void session_handle_signals(struct session *s, int sfd)
{
    /* perf: several at a time, and no second read that would only say
     * EAGAIN after a short one (SIGCHLD wakes us at every busy stop). */
    struct signalfd_siginfo si[8];
    ssize_t n;
    do {
        n = read(sfd, si, sizeof(si));
        for (ssize_t i = 0; n > 0 && i < n / (ssize_t)sizeof(si[0]); i++) {
            uint32_t sig = si[i].ssi_signo;
            if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
                s->quit_requested = true;
                s->quit_signal = (int)sig;
            } else if (sig == SIGWINCH && s->console) {
                console_terminal_resized(s->console);
            }
        }
    } while (n == (ssize_t)sizeof(si));
}

/* The signals that end a session. */
static void ending_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGHUP);
}

bool session_ending_signal_pending(void)
{
    sigset_t pending, ending, both;
    if (sigpending(&pending) != 0)
        return false;
    ending_signals(&ending);
    sigandset(&both, &pending, &ending);
    return !sigisemptyset(&both);
}

/* A console on a terminal where memtrace is a background job (`memtrace
 * -p PID &`) is not read: the read would stop memtrace (SIGTTIN), and the
 * program it traces with it.  The shell's `fg` of a running job sends no
 * signal, so the loop looks again every CONSOLE_RECHECK_MS meanwhile. */
enum { CONSOLE_RECHECK_MS = 200 };

static int console_poll_fd(const struct session *s)
{
    if (!s->console || s->console_ended)
        return -1;
    if (!s->console_tty)
        return s->console_fd;
    pid_t fg = tcgetpgrp(s->console_fd);
    return fg < 0 || fg == getpgrp() ? s->console_fd : -1;
}

static void handle_console_input(struct session *s)
{
    if (console_editing(s->console)) {
        /* One key at a time: the editor reads nothing poll() did not
         * announce (but the rest of an escape sequence, briefly). */
        if (!console_read_edited(s->console))
            s->console_ended = true;
        if (console_wants_quit(s->console))
            s->quit_requested = true;
        return;
    }
    char buf[4096];
    ssize_t n = read(s->console_fd, buf, sizeof(buf));
    if (n > 0) {
        console_feed(s->console, buf, (size_t)n);
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        /* End of the script: tracing goes on until the program ends or a
         * signal or `quit` stops it. */
        console_eof(s->console);
        s->console_ended = true;
    }
    if (console_wants_quit(s->console))
        s->quit_requested = true;
}

/* Engines that record apart (the agent): the processes of the session
 * (-f: the followed children too), each drained; their doorbells into fds
 * (at most ENGINE_DOORBELLS: beyond, the timeout drains them) and the
 * shortest wait they allow into *timeout.  Returns how many fds. */
enum { ENGINE_DOORBELLS = 61 };
static unsigned engine_doorbells(struct session *s, struct pollfd *fds, struct tracee **owner,
                                 int *timeout)
{
    unsigned n = 0;
    for (size_t i = 0; i < s->family.count; i++) {
        struct tracee *t = s->family.procs[i];
        if (!t || t->exited)
            continue;
        engine_drain(t, false);
        int ms = engine_poll_timeout(t);
        if (ms >= 0 && (*timeout < 0 || ms < *timeout))
            *timeout = ms;
        int fd = engine_poll_fd(t);
        if (fd >= 0 && n < ENGINE_DOORBELLS) {
            fds[n] = (struct pollfd){.fd = fd, .events = POLLIN};
            owner[n++] = t;
        }
    }
    return n;
}

int session_run(struct session *s)
{
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    sigaddset(&mask, SIGWINCH);     /* the line editor's width */
    sigprocmask(SIG_BLOCK, &mask, NULL);
    int sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    s->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    s->signal_fd = sfd;
    if (sfd < 0 || s->timer_fd < 0) {
        mt_error("signalfd/timerfd: %s", strerror(errno));
        return -1;
    }
    struct pollfd fds[3 + ENGINE_DOORBELLS] = {
        {.fd = sfd, .events = POLLIN},
        {.fd = -1, .events = POLLIN},   /* the console, when it may be read */
        {.fd = s->timer_fd, .events = POLLIN},
    };
    struct tracee *rang[3 + ENGINE_DOORBELLS];
    while (!s->quit_requested) {
        /* before the stops: the totals held until now */
        session_sample(s, false);
        bool more = family_drain_batch(&s->family, STOP_BATCH);
        if (s->ndeferred || s->deferred_dropped)
            session_flush_misuse(s); /* a child names their stacks */
        if (family_finished(&s->family) || tracer_cannot_follow(s->tracee))
            break;
        /* an engine that records apart (the agent's rings) is drained
         * between polls; a full ring rings its doorbell */
        int timeout = -1;
        nfds_t nfds = 3 + engine_doorbells(s, fds + 3, rang + 3, &timeout);
        fds[1].fd = console_poll_fd(s);
        if (fds[1].fd < 0 && s->console && !s->console_ended &&
            (timeout < 0 || timeout > CONSOLE_RECHECK_MS))
            timeout = CONSOLE_RECHECK_MS;
        if (more)
            timeout = 0;
        /* --record: a sample at least every interval, idle or not */
        int sample_ms = s->sample_ms ? (int)s->sample_ms : 100;
        if (s->recorder && (timeout < 0 || timeout > sample_ms))
            timeout = sample_ms;
        /* --snapshot-rss, --snapshot-peak: RSS read every few ms */
        int snap_ms = session_snapshot_poll(s);
        if (snap_ms >= 0 && (timeout < 0 || timeout > snap_ms))
            timeout = snap_ms;
        if (poll(fds, nfds, timeout) < 0) {
            if (errno == EINTR)
                continue;
            mt_error("poll: %s", strerror(errno));
            break;
        }
        for (nfds_t i = 3; i < nfds; i++)
            if (fds[i].revents)
                engine_doorbell(rang[i]);
        if (fds[0].revents)
            session_handle_signals(s, sfd);
        if (fds[1].fd >= 0 && fds[1].revents)
            handle_console_input(s);
        if (fds[2].revents) {
            uint64_t ticks;
            if (read(s->timer_fd, &ticks, sizeof(ticks)) > 0 && s->console) {
                session_sample(s, true);   /* monitor's figures are samples too */
                console_monitor_tick(s->console);
            }
        }
    }
    /* quit, a signal, or the program's end: the terminal as it was, for the
     * final report and the shell. */
    if (s->console)
        console_stop_editing(s->console);
    close(sfd);
    s->signal_fd = -1;
    close(s->timer_fd);
    /* SIGINT, SIGTERM and SIGHUP stay blocked until the detach is done
     * (main.c, session_end_signals): one a program sends to memtrace's
     * process group (timeout, kill -- -PGID) reaches the tracer twice,
     * directly and forwarded by the supervisor, and the second copy, let
     * in here, killed the tracer in the middle of the detach (7 of 20,
     * 2026-12-02; the guardian then restores what it can, and a thread on
     * a breakpoint dies of SIGTRAP). */
    sigset_t rest;
    sigemptyset(&rest);
    sigaddset(&rest, SIGCHLD);
    sigaddset(&rest, SIGWINCH);
    sigprocmask(SIG_UNBLOCK, &rest, NULL);
    return 0;
}

void session_end_signals(void)
{
    sigset_t ending;
    ending_signals(&ending);
    /* Those that came while the session ended asked for what is done
     * now; one that comes later (a long final report) ends memtrace. */
    const struct timespec now = {0, 0};
    while (sigtimedwait(&ending, NULL, &now) > 0)
        ;
    sigprocmask(SIG_UNBLOCK, &ending, NULL);
}
