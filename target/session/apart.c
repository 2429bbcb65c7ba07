/* Reports symbolized apart: the traced program never waits on the network.
 *
 * Names for a report come from debug files that may sit on a memtrace-fs
 * host behind a slow link.  The tracer is single-threaded and every
 * allocation of the traced program stops at a breakpoint until the tracer
 * handles it, so a report symbolized in the loop holds the program for as
 * long as the fetches take.  Instead the report is written by a forked
 * child: it has a copy-on-write snapshot of the books, the stacks and the
 * module map as they are at the command, and the memtrace-fs connections,
 * which it uses as they are.  The parent meanwhile goes on handling stops
 * (nested loop below), and the console takes its next line only once the
 * child is done, so output keeps its order.
 *
 * Why not a symbolizer thread or non-blocking fetches in the loop: the
 * symbolizer, the module map and the books are single-threaded structures
 * that stop handling mutates (new stacks, dlopen, exec); a thread would
 * need locks on every hot path, and interleaving fetches with stops would
 * let the books change under the report being written.  The child's
 * snapshot costs one fork (page tables only) and leaves every hot path as
 * it is.  Its price: what the child fetched is not cached in the parent
 * (the next report fetches it again), and the parent reconnects after a
 * child used the connection. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/log.h"
#include "shared/xalloc.h"
#include "target/net/remote.h"
#include "target/session/session.h"
#include "target/tracer/stops.h"

int session_run_apart(struct session *s, int (*fn)(void *arg), void *arg)
{
    if (s->signal_fd < 0 || !remote_conns_any() || s->apart_pid > 0 ||
        getenv("MEMTRACE_REPORT_IN_PLACE"))
        return -2;
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) < 0)
        return -2;
    fflush(NULL); /* nothing buffered may be written twice */
    uint64_t before = remote_conns_requests();
    pid_t pid = fork();
    if (pid < 0) {
        close(pipefd[0]);
        close(pipefd[1]);
        return -2;
    }
    if (pid == 0) {
        close(pipefd[0]);
        int rc = fn(arg);
        fflush(NULL);
        char used = remote_conns_requests() != before ? 'U' : 'N';
        if (write(pipefd[1], &used, 1) < 0)
            rc = -1;
        _exit(rc < 0 ? 1 : 0);
    }
    close(pipefd[1]);
    s->apart_pid = pid;
    stop_own_child(pid); /* the loop's waits for any thread may reap it */
    remote_conns_lend(true);
    char used = 'U'; /* unless told otherwise, the connection moved on */
    bool eof = false;
    while (!eof) {
        family_drain(&s->family);
        struct pollfd pfd[2] = {
            { .fd = s->signal_fd, .events = POLLIN },
            { .fd = pipefd[0], .events = POLLIN },
        };
        if (poll(pfd, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (pfd[0].revents)
            session_handle_signals(s, s->signal_fd); /* quit after the report */
        if (pfd[1].revents) {
            char b;
            ssize_t n = read(pipefd[0], &b, 1);
            if (n == 1)
                used = b;
            else if (n == 0 || errno != EINTR)
                eof = true;
        }
    }
    close(pipefd[0]);
    int st = 0;
    int reaped = stop_reap_own_child(pid, &st);
    s->apart_pid = 0;
    remote_conns_lend(false);
    if (used != 'N')
        remote_conns_forget();
    return reaped == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}
