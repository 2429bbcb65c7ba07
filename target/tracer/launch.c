/* Starting a program under the tracer, and attaching to a running one. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "shared/xalloc.h"
#include "target/tracer/engine.h"
#include "target/tracer/exe_class.h"
#include "target/tracer/placement.h"

#define PTRACE_OPTIONS                                                                            \
    (PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |      \
     PTRACE_O_TRACEEXIT)

/* A failure is ESRCH (the thread was killed while stopped): its end
 * comes as the next stop, so it needs nothing here. */
static void seize_error(pid_t pid, int err, char *buf, size_t len)
{
    if (err == ESRCH)
        snprintf(buf, len, "no such process: %d", (int)pid);
    else if (err == EPERM)
        snprintf(buf, len,
                 "cannot trace process %d: permission denied (run as root or with "
                 "CAP_SYS_PTRACE; check /proc/sys/kernel/yama/ptrace_scope, and that no other "
                 "tracer is attached)",
                 (int)pid);
    else
        snprintf(buf, len, "cannot trace process %d: %s", (int)pid, strerror(err));
}

/* A child of ours that failed to start and was killed (or let go to exit
 * with 127): its end, so that no zombie is left. */
static void reap(pid_t pid)
{
    struct stop st;
    /* A failed resume is not checked: the child is ending, and the next
     * wait tells its end (or that it is gone already). */
    while (stop_next(pid, 0, &st) > 0 && st.kind != STOP_GONE)
        (void)ptrace(PTRACE_CONT, pid, NULL, NULL);
}

struct tracee *tracer_launch(char *const argv[], const struct tracer_options *opts,
                             struct file_locator *loc, char *err, size_t errlen)
{
    int go[2], fail[2];
    if (pipe2(go, O_CLOEXEC) < 0 || pipe2(fail, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return NULL;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        return NULL;
    }
    if (pid == 0) {
        /* Wait until the parent has seized us, then become the program. */
        char c;
        close(go[1]);
        close(fail[0]);
        while (read(go[0], &c, 1) < 0 && errno == EINTR)
            ;
        /* The program's signal mask is the one memtrace was started with,
         * not memtrace's (the session's ending signals blocked). */
        if (opts->program_sigmask)
            sigprocmask(SIG_SETMASK, opts->program_sigmask, NULL);
        execvp(argv[0], argv);
        int e = errno;
        if (write(fail[1], &e, sizeof(e)) < 0)
            _exit(127);
        _exit(127);
    }
    close(go[0]);
    close(fail[1]);
    if (ptrace(PTRACE_SEIZE, pid, NULL, (void *)(long)(PTRACE_OPTIONS | PTRACE_O_EXITKILL)) < 0) {
        seize_error(pid, errno, err, errlen);
        kill(pid, SIGKILL);
        reap(pid);
        return NULL;
    }
    close(go[1]);
    int exec_errno = 0;
    ssize_t n;
    while ((n = read(fail[0], &exec_errno, sizeof(exec_errno))) < 0 && errno == EINTR)
        ;
    close(fail[0]);
    if (n == (ssize_t)sizeof(exec_errno)) {
        snprintf(err, errlen, "cannot run %s: %s", argv[0], strerror(exec_errno));
        /* Not checked: detached or not, the child exits with 127, and
         * reap() waits for that end either way. */
        (void)ptrace(PTRACE_DETACH, pid, NULL, NULL);
        reap(pid);
        return NULL;
    }
    /* The exec is done (its close-on-exec pipe closed) and the program has
     * not run an instruction yet: a program we cannot trace never starts. */
    if (exe_class_check(pid, err, errlen) < 0) {
        kill(pid, SIGKILL);
        reap(pid);
        return NULL;
    }
    struct tracee *t = tracee_create(pid, opts, loc);
    t->program = xstrdup(argv[0]);
    thread_add(t, pid, THREAD_RUNNING);
    /* The exec stop comes through the event loop like any other; the
     * kill-on-exit option only guards this window.  After the exec event
     * it is dropped, so that a detach leaves the program running. */
    return t;
}

static int wait_for_stop(struct tracee *t, struct thread *th)
{
    for (;;) {
        struct stop st;
        int rc = stop_next(th->tid, 0, &st);
        if (rc < 0)
            return rc;
        if (st.kind == STOP_GONE) {
            tracer_handle_stop(t, &st);
            return -ESRCH;
        }
        if (st.kind == STOP_GROUP || st.kind == STOP_INTERRUPT) {
            if (st.kind == STOP_GROUP)
                th->group_stopped = true;
            th->state = THREAD_STOPPED;
            th->interrupt_requested = false;
            return 0;
        }
        if (st.kind == STOP_SIGNAL && !th->resume_signal)
            th->resume_signal = st.sig; /* delivered when we let it go */
        /* Any trap ends a pending interrupt: ask again. */
        if (ptrace(PTRACE_CONT, th->tid, NULL, NULL) < 0 ||
            ptrace(PTRACE_INTERRUPT, th->tid, NULL, NULL) < 0)
            return -errno;
    }
}

/* The kernel refuses PTRACE_SEIZE with EPERM, the error of a thread it
 * forbids, also for two threads of a process being attached that need
 * nothing (issue 29: threads created and cancelled during the attach):
 * one whose exit is done (ptrace_attach: exit_state set), listed in
 * /proc/PID/task until it is reaped, and one already ours, made by a
 * thread seized a moment before (PTRACE_O_TRACECLONE attached it; its
 * first stop adds it, tracer_handle_stop). */

/* Has thread tid of process pid ended (a zombie, dead, or gone)? */
static bool thread_ended(pid_t pid, pid_t tid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT || errno == ESRCH;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    int e = errno;
    close(fd);
    if (n <= 0)
        return n < 0 && e == ESRCH;
    buf[n] = 0;
    /* "tid (comm) S ...": comm may hold spaces and parentheses, the
     * state follows the last ')'. */
    const char *close_paren = strrchr(buf, ')');
    if (!close_paren || close_paren[1] != ' ')
        return false;
    char state = close_paren[2];
    return state == 'Z' || state == 'X' || state == 'x';
}

/* Is thread tid of process pid traced by this process already? */
static bool thread_traced_here(pid_t pid, pid_t tid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    bool ours = false;
    while (fgets(line, sizeof(line), f)) {
        int tracer;
        if (sscanf(line, "TracerPid: %d", &tracer) == 1) {
            ours = tracer == (int)getpid();
            break;
        }
    }
    fclose(f);
    return ours;
}

static int seize_all_threads(struct tracee *t, char *err, size_t errlen)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)t->pid);
    bool added = true;
    /* Threads may be created while we attach: scan until no new one. */
    while (added) {
        added = false;
        DIR *d = opendir(path);
        if (!d) {
            seize_error(t->pid, errno == ENOENT ? ESRCH : errno, err, errlen);
            return -1;
        }
        struct dirent *de;
        while ((de = readdir(d))) {
            pid_t tid = (pid_t)atoi(de->d_name);
            if (tid <= 0 || thread_find(t, tid))
                continue;
            if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)(long)PTRACE_OPTIONS) < 0) {
                /* (a thread other than the leader that ended meanwhile, or
                 * that a seized thread made: see thread_ended) */
                if (errno == ESRCH || (errno == EPERM && tid != t->pid &&
                                       (thread_ended(t->pid, tid) || thread_traced_here(t->pid, tid))))
                    continue;
                seize_error(t->pid, errno, err, errlen);
                closedir(d);
                return -1;
            }
            struct thread *th = thread_add(t, tid, THREAD_RUNNING);
            ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
            th->interrupt_requested = true;
            added = true;
        }
        closedir(d);
    }
    return 0;
}

static void wait_interrupted(struct tracee *t, struct thread *th, void *ctx)
{
    (void)ctx;
    if (th->interrupt_requested)
        wait_for_stop(t, th);
}

static void resume_after_attach(struct tracee *t, struct thread *th, void *ctx)
{
    (void)t;
    (void)ctx;
    thread_resume_stopped(th);
}

struct tracee *tracer_attach(pid_t pid, const struct tracer_options *opts, struct file_locator *loc,
                             char *err, size_t errlen)
{
    if (pid <= 0 || kill(pid, 0) < 0) {
        seize_error(pid, pid <= 0 ? ESRCH : errno, err, errlen);
        return NULL;
    }
    if (exe_class_check(pid, err, errlen) < 0)
        return NULL;
    struct tracee *t = tracee_create(pid, opts, loc);
    t->attached_mode = true;
    t->exec_seen = true;
    char path[64], exe[4096];
    snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(path, exe, sizeof(exe) - 1);
    t->program = xstrdup(n > 0 ? (exe[n] = '\0', exe) : "?");
    if (seize_all_threads(t, err, errlen) < 0) {
        tracer_detach(t);
        tracer_free(t);
        return NULL;
    }
    thread_foreach(t, wait_interrupted, NULL);
    struct thread *leader = thread_find(t, pid);
    if (!leader || target_mem_open(&t->mem, pid) < 0) {
        snprintf(err, errlen, "process %d exited while attaching", (int)pid);
        tracer_detach(t);
        tracer_free(t);
        return NULL;
    }
    scan_modules(t, leader);
    thread_foreach(t, resume_after_attach, NULL);
    return t;
}
