/* The supervisor half of memtrace and the tracer's hooks into it (see
 * guardian.h).  The supervisor is the process the user started; it owns no
 * ptrace state, so killing it costs the target nothing. */
#include "target/tracer/guardian.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "shared/log.h"
#include "target/tracer/guardian_table.h"

/* Process-wide on purpose: the table is one shared mapping made before the
 * fork, and the hooks sit deep in breakpoint and call handling, which have
 * no reason to carry it. */
static struct guard_table *table;
static int tracer_sock = -1;
static pid_t tracer_pid;
static pid_t guarded_pid; /* tracer side: the process the table describes */

/* pid 0 (no descriptor): the tracer is done with the target and asks the
 * supervisor to pass on what it holds and answer (guardian_release). */
struct watch_msg {
    pid_t pid;
};

/* How long the tracer waits for that answer: the supervisor only has to be
 * scheduled (seconds on a loaded host); one stopped on its own (SIGSTOP)
 * must not hold the final report for good. */
enum { RELEASE_ANSWER_MS = 2000 };

/* --- supervisor --------------------------------------------------------- */

static void forward_signal(int sig, siginfo_t *info, void *uctx)
{
    (void)uctx;
    /* A terminal's ^C already reached the tracer in the same process
     * group: only a signal some process sent to this pid is passed on. */
    if (info->si_code <= 0 && tracer_pid > 0)
        kill(tracer_pid, sig);
}

/* Reads one watch message (and its descriptor) or EOF; returns the
 * descriptor, -1 for a message without one, -2 at EOF or on error, -3 for
 * the tracer's release. */
static int receive_watch(int sock, pid_t *pid)
{
    struct watch_msg msg;
    struct iovec iov = { &msg, sizeof(msg) };
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    struct msghdr mh = { 0 };
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = control.buf;
    mh.msg_controllen = sizeof(control.buf);
    ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR)
        return -1;
    if (n != (ssize_t)sizeof(msg))
        return -2;
    if (msg.pid == 0)
        return -3;
    *pid = msg.pid;
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
        return -1;
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof(fd));
    return fd;
}

static void undo_in_target(pid_t target, int mem_fd)
{
    if (table->released || mem_fd < 0)
        return;
    unsigned bps, rets;
    guard_table_restore(table, mem_fd, &bps, &rets);
    mt_warn("the tracer (pid %d) ended without detaching: restored %u breakpoints and %u "
            "return addresses in process %d", (int)tracer_pid, bps, rets, (int)target);
}

/* The terminal as memtrace found it: the tracer's console edits lines in
 * raw mode and restores it on every exit it sees; a tracer killed outright
 * (SIGKILL, a crash) cannot, so the supervisor does. */
static struct termios tty_at_start;
static bool tty_saved;

static void restore_terminal(int status)
{
    if (tty_saved && WIFSIGNALED(status))
        tcsetattr(STDIN_FILENO, TCSADRAIN, &tty_at_start);
}

static void mirror_exit(int status)
{
    if (WIFEXITED(status))
        _exit(WEXITSTATUS(status));
    int sig = WTERMSIG(status);
    if (sig != SIGKILL) {
        signal(sig, SIG_DFL);
        raise(sig);
    }
    _exit(128 + sig);
}

static void supervise(int sock)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = forward_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* Blocked since the start (main.c): one that came meanwhile is passed
     * on now, to a tracer that has them blocked too and ends cleanly. */
    sigset_t ending;
    sigemptyset(&ending);
    sigaddset(&ending, SIGINT);
    sigaddset(&ending, SIGTERM);
    sigaddset(&ending, SIGHUP);
    sigprocmask(SIG_UNBLOCK, &ending, NULL);

    pid_t target = 0;
    int mem_fd = -1;
    for (;;) {
        struct pollfd p = { sock, POLLIN, 0 };
        if (poll(&p, 1, -1) < 0)
            continue; /* EINTR: a forwarded signal */
        pid_t pid = 0;
        int fd = receive_watch(sock, &pid);
        if (fd == -2)
            break; /* the tracer's end closed: it exits, cleanly or not */
        if (fd == -3) {
            /* Any ending signal sent to us before this message has been
             * passed on by now: a pending signal's handler runs before
             * the recvmsg() that took it returns to us.  The answer tells
             * the tracer that its copies are all there to be dropped. */
            char done = 'R';
            if (send(sock, &done, 1, MSG_NOSIGNAL) < 0)
                break;
            continue;
        }
        if (fd >= 0) {
            if (mem_fd >= 0)
                close(mem_fd);
            mem_fd = fd;
            target = pid;
        }
    }
    /* Its descriptors close before the kernel detaches its tracees: act
     * now, while threads stopped by it are still held. */
    undo_in_target(target, mem_fd);
    int status = 0;
    while (waitpid(tracer_pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFSIGNALED(status))
        mt_warn("the tracer (pid %d) was killed by %s", (int)tracer_pid, strsignal(WTERMSIG(status)));
    restore_terminal(status);
    mirror_exit(status);
}

int guardian_start(void)
{
    struct guard_table *g = guard_table_map();
    int sv[2];
    if (!g || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        mt_warn("no guardian process (%s): a SIGKILL of memtrace would harm the target",
                strerror(errno));
        return -1;
    }
    pid_t supervisor = getpid();
    tty_saved = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &tty_at_start) == 0;
    pid_t child = fork();
    if (child < 0) {
        mt_warn("no guardian process (fork: %s)", strerror(errno));
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    table = g;
    if (child > 0) {
        tracer_pid = child;
        close(sv[1]);
        supervise(sv[0]);
    }
    close(sv[0]);
    tracer_sock = sv[1];
    /* The supervisor's death (SIGKILL included) reaches us as SIGTERM: the
     * ordinary clean detach. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != supervisor)
        raise(SIGTERM);
    return 0;
}

/* --- tracer side ---------------------------------------------------------- */

void guardian_watch(pid_t pid, int mem_fd)
{
    if (tracer_sock < 0 || mem_fd < 0 || (guarded_pid && pid != guarded_pid))
        return;
    guarded_pid = pid;
    struct watch_msg msg = { pid };
    struct iovec iov = { &msg, sizeof(msg) };
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof(control));
    struct msghdr mh = { 0 };
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = control.buf;
    mh.msg_controllen = sizeof(control.buf);
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &mem_fd, sizeof(int));
    if (sendmsg(tracer_sock, &mh, MSG_NOSIGNAL) < 0)
        mt_warn("cannot hand the target to the guardian: %s", strerror(errno));
}

void guardian_release(void)
{
    if (table)
        table->released = 1;
    if (tracer_sock < 0)
        return;
    /* A SIGINT sent to memtrace's process group reaches us directly and
     * once more through the supervisor, whenever it is next scheduled: on
     * a loaded host after our detach, when the ending signals are let in
     * again (session_end_signals), and that late copy killed us in the
     * final report (3 of 40 rounds, 2026-12-02).  Once the supervisor has
     * answered, every copy it made is pending here, to be dropped. */
    struct watch_msg msg = { 0 };
    if (send(tracer_sock, &msg, sizeof(msg), MSG_NOSIGNAL) != (ssize_t)sizeof(msg))
        return;
    struct pollfd p = { tracer_sock, POLLIN, 0 };
    int rc;
    while ((rc = poll(&p, 1, RELEASE_ANSWER_MS)) < 0 && errno == EINTR)
        ;
    char done;
    if (rc > 0 && recv(tracer_sock, &done, 1, 0) < 0)
        mt_warn("the guardian did not answer: %s", strerror(errno));
}

/* Before the first watch (breakpoints placed while attaching) the only
 * process there is is the one about to be watched. */
static bool guarded(pid_t pid) { return table && (!guarded_pid || pid == guarded_pid); }

void guardian_note_breakpoint(pid_t pid, uint64_t addr, const uint8_t *orig, const uint8_t *insn,
                              size_t len)
{
    if (guarded(pid))
        guard_table_add_bp(table, addr, orig, insn, len);
}

void guardian_forget_breakpoint(pid_t pid, uint64_t addr)
{
    if (guarded(pid))
        guard_table_del_bp(table, addr);
}

void guardian_note_return(pid_t pid, uint64_t slot, uint64_t orig, uint64_t tramp, unsigned size)
{
    if (guarded(pid))
        guard_table_add_ret(table, slot, orig, tramp, size);
}

void guardian_forget_return(pid_t pid, uint64_t slot)
{
    if (guarded(pid))
        guard_table_del_ret(table, slot);
}

void guardian_forget_all(pid_t pid)
{
    if (guarded(pid))
        guard_table_clear(table);
}
