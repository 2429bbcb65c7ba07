#include "target/tracer/stops.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "shared/xalloc.h"

void stop_classify(struct stop *st, pid_t tid, int status)
{
    memset(st, 0, sizeof(*st));
    st->tid = tid;
    st->status = status;
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
        st->kind = STOP_GONE;
        return;
    }
    if (!WIFSTOPPED(status)) {
        st->kind = STOP_OTHER_EVENT;
        return;
    }
    st->sig = WSTOPSIG(status);
    switch ((unsigned)status >> 16) {
    case 0:
        st->kind = st->sig == SIGTRAP ? STOP_TRAP : STOP_SIGNAL;
        break;
    case PTRACE_EVENT_STOP:
        st->kind = is_job_control_stop(st->sig) ? STOP_GROUP : STOP_INTERRUPT;
        break;
    case PTRACE_EVENT_CLONE:
        st->kind = STOP_CLONE;
        break;
    case PTRACE_EVENT_FORK:
        st->kind = STOP_FORK;
        break;
    case PTRACE_EVENT_VFORK:
        st->kind = STOP_VFORK;
        break;
    case PTRACE_EVENT_EXEC:
        st->kind = STOP_EXEC;
        break;
    case PTRACE_EVENT_EXIT:
        st->kind = STOP_EXIT;
        break;
    default:
        st->kind = STOP_OTHER_EVENT;
        break;
    }
}

bool is_job_control_stop(int sig)
{
    return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

bool stop_is_event(const struct stop *st)
{
    return st->kind != STOP_GONE && st->kind != STOP_SIGNAL && st->kind != STOP_TRAP;
}

/* Stops taken from the kernel but not handled yet, oldest first.  The
 * tracer is single-threaded and waitpid() results are per process, so one
 * list serves the whole session. */
struct held_stop {
    struct stop st;
    bool for_any;   /* a wait for -1 may take it (held), or only one for its tid (parked) */
};

static struct held_stop *held;
/* The untraced child of stop_own_child(), and its end once reaped. */
static struct {
    pid_t pid;
    int status;
    bool reaped;
} own_child;
static size_t nheld, held_cap;

static void put(const struct stop *st, bool for_any)
{
    if (nheld == held_cap) {
        held_cap = held_cap ? held_cap * 2 : 8;
        held = xreallocarray(held, held_cap, sizeof(*held));
    }
    held[nheld++] = (struct held_stop){*st, for_any};
}

void stop_hold(const struct stop *st) { put(st, true); }

void stop_park(const struct stop *st) { put(st, false); }

/* The oldest stop for tid, or (-1) the oldest held for dispatch. */
static bool take(pid_t tid, struct stop *st)
{
    for (size_t i = 0; i < nheld; i++) {
        if (tid == -1 ? !held[i].for_any : held[i].st.tid != tid)
            continue;
        *st = held[i].st;
        memmove(&held[i], &held[i + 1], (nheld - i - 1) * sizeof(*held));
        nheld--;
        return true;
    }
    return false;
}

bool stop_take_held(pid_t tid, struct stop *st) { return tid > 0 && take(tid, st); }

int stop_next(pid_t tid, unsigned flags, struct stop *st)
{
    if (!(flags & STOP_FRESH) && take(tid, st))
        return 1;
    int status;
    pid_t got;
    for (;;) {
        got = waitpid(tid, &status, __WALL | ((flags & STOP_NOHANG) ? WNOHANG : 0));
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -errno;
        if (got == 0)
            return 0;
        if (got != own_child.pid || own_child.pid <= 0)
            break;
        own_child.status = status; /* not a traced thread: kept, not a stop */
        own_child.reaped = true;
    }
    stop_classify(st, got, status);
    return 1;
}

void stop_own_child(pid_t pid)
{
    own_child.pid = pid;
    own_child.reaped = false;
}

int stop_reap_own_child(pid_t pid, int *status)
{
    int rc = 0;
    if (own_child.pid == pid && own_child.reaped) {
        *status = own_child.status;
    } else {
        while (waitpid(pid, status, __WALL) < 0) {
            if (errno != EINTR) {
                rc = -errno;
                break;
            }
        }
    }
    if (own_child.pid == pid)
        own_child.pid = 0;
    return rc;
}

void stop_forget_all(void)
{
    free(held);
    held = NULL;
    nheld = held_cap = 0;
}
