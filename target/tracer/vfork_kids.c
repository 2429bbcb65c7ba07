#include "target/tracer/vfork_kids.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "shared/log.h"
#include "shared/xalloc.h"
#include "target/tracer/calls.h"
#include "target/tracer/family.h"
#include "target/tracer/stops.h"
#include "target/tracer/tracee.h"

static int find(const struct tracee *t, pid_t tid)
{
    for (unsigned i = 0; i < t->nvfork_kids; i++)
        if (t->vfork_kids[i]->tid == tid)
            return (int)i;
    return -1;
}

/* Its open calls go with it: an exec or exit inside an allocation
 * function cannot happen, and what it left on the stack is below the
 * frame its parent returns to. */
static void forget(struct tracee *t, pid_t tid)
{
    int i = find(t, tid);
    if (i < 0)
        return;
    struct thread *kid = t->vfork_kids[i];
    t->vfork_kids[i] = t->vfork_kids[--t->nvfork_kids];
    free(kid->calls);
    free(kid);
}

static void cont(pid_t tid, int sig)
{
    /* ESRCH: killed meanwhile; its end comes as its next stop */
    if (ptrace(PTRACE_CONT, tid, NULL, (void *)(long)sig) < 0 && errno != ESRCH)
        mt_warn("process %d: cannot resume it: %s", (int)tid, strerror(errno));
}

static void let_go(struct tracee *t, pid_t tid, int sig)
{
    if (ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)sig) < 0 && errno != ESRCH)
        mt_warn("process %d: cannot let it go: %s", (int)tid, strerror(errno));
    forget(t, tid);
}

void vfork_kid_keep(struct tracee *t, pid_t child)
{
    if (find(t, child) < 0) {
        if (t->nvfork_kids == t->vfork_kids_cap) {
            t->vfork_kids_cap = t->vfork_kids_cap ? 2 * t->vfork_kids_cap : 2;
            t->vfork_kids = xreallocarray(t->vfork_kids, t->vfork_kids_cap, sizeof(*t->vfork_kids));
        }
        struct thread *kid = xcalloc(1, sizeof(*kid));
        kid->tid = child;
        kid->state = THREAD_RUNNING;
        t->vfork_kids[t->nvfork_kids++] = kid;
    }
    /* Its first stop (parked, when it came before the event). */
    struct stop st;
    if (stop_next(child, 0, &st) < 0) {
        forget(t, child);
        return;
    }
    if (st.kind == STOP_INTERRUPT || (st.kind == STOP_SIGNAL && st.sig == SIGSTOP)) {
        cont(child, 0);
        return;
    }
    vfork_kid_stop(t, &st);
}

struct tracee *vfork_kid_keeper(const struct family *f, pid_t tid)
{
    for (size_t i = 0; f && i < f->count; i++)
        if (f->procs[i] && find(f->procs[i], tid) >= 0)
            return f->procs[i];
    return NULL;
}

/* A trap of the shared memory.  The heap it allocates from is its
 * parent's (dash's vfork child mallocs, and the parent frees the block
 * after the exec), so its heap calls are booked in its parent's books, as
 * the agent's records of a vfork child are; anything else (exit under -a,
 * the mmap family, the C++ runtime's hooks, the loader's rendezvous) it
 * passes as its parent would, recording nothing. */
static void trap(struct tracee *t, struct thread *kid)
{
    pid_t tid = kid->tid;
    struct arch_regs was, regs;
    if (arch_get_regs(tid, &was) < 0)
        return; /* gone: its end comes next */
    regs = was;
    uint64_t at = arch_breakpoint_addr_from_pc(arch_pc(&regs));
    if (scratch_is_trampoline(t, at)) {
        call_on_return(t, kid, &regs); /* one of its own calls: no other returns here */
    } else {
        struct breakpoint *bp = bp_find(t, at);
        if (!bp || !bp->inserted) {
            cont(tid, SIGTRAP); /* not ours */
            return;
        }
        arch_set_pc(&regs, at);
        if (bp->fn && intercept_is_heap_fn(bp->fn)) {
            call_on_entry(t, kid, bp, &regs);
        } else if (bp->fn || bp->client_request) {
            call_skip_breakpoint(bp, &regs);
        } else {
            /* the loader's rendezvous: the child's dlopen is not followed */
            struct arch_return_slot slot;
            struct stack_window w;
            stack_window_init(&w, t, arch_sp(&regs));
            arch_emulate_return(&regs, call_return_address(&w, &regs, &slot));
        }
    }
    if (arch_set_regs(tid, &regs) < 0 && errno != ESRCH)
        mt_warn("process %d: cannot set its registers: %s", (int)tid, strerror(errno));
    cont(tid, 0);
}

void vfork_kid_stop(struct tracee *t, const struct stop *st)
{
    pid_t tid = st->tid;
    unsigned long msg = 0;
    switch (st->kind) {
    case STOP_GONE:
        forget(t, tid);
        break;
    case STOP_TRAP: {
        int i = find(t, tid);
        if (i >= 0)
            trap(t, t->vfork_kids[i]);
        else
            cont(tid, SIGTRAP);
        break;
    }
    case STOP_SIGNAL:
        cont(tid, st->sig); /* its own signal, delivered */
        break;
    case STOP_EXEC: /* a new image: none of our traps */
    case STOP_EXIT: /* its end: its memory is its parent's again */
        let_go(t, tid, 0);
        break;
    case STOP_GROUP:
        /* job control: stay stopped, but keep reporting */
        if (ptrace(PTRACE_LISTEN, tid, NULL, NULL) < 0 && errno != ESRCH)
            mt_warn("process %d: cannot leave it stopped: %s", (int)tid, strerror(errno));
        break;
    case STOP_FORK:
    case STOP_VFORK:
    case STOP_CLONE:
        /* What it makes holds our traps too (a copy, or the same memory). */
        if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg) == 0 && msg)
            vfork_kid_keep(t, (pid_t)msg);
        cont(tid, 0);
        break;
    default:
        cont(tid, 0);
        break;
    }
}

void vfork_kids_finish(struct tracee *t)
{
    if (t->nvfork_kids)
        mt_info("process %d: waiting for its vfork child %d to exec or exit", (int)t->pid,
                (int)t->vfork_kids[0]->tid);
    while (t->nvfork_kids) {
        struct stop st;
        pid_t tid = t->vfork_kids[0]->tid;
        if (stop_next(tid, 0, &st) < 0) {
            forget(t, tid);
            continue;
        }
        vfork_kid_stop(t, &st);
    }
}
