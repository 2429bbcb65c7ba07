/* The agent engine at a fork followed with -f.
 *
 * The child is a copy of its parent: the agent's text and data, the
 * patched entries and their stubs are in its memory, but the shared region
 * (MAP_SHARED) is the parent's own, so the child's calls would land in the
 * parent's rings.  While the child is held at its first stop, before it
 * runs any code, it gets a region of its own at the same address (a new
 * memfd mapped over the old one: every pointer the agent holds into it,
 * the open call of the forking thread included, stays valid), its own
 * doorbell, and the slots of the threads that did not survive the fork
 * reset.  Its books start as a copy of the parent's (fork.c), once the
 * parent's rings hold no call made before the fork. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "arch/agent_cpu.h"
#include "shared/xalloc.h"
#include "target/agent/agent_internal.h"
#include "target/tracer/guardian.h"
#include "target/tracer/tracee.h"

/* A slot's owner finished what it was writing since the fork event. */
static bool slot_settled(const struct agent_slot *s, uint64_t at)
{
    uint64_t in = __atomic_load_n(&s->inflight, __ATOMIC_ACQUIRE);
    return !__atomic_load_n(&s->busy, __ATOMIC_ACQUIRE) && !(in && in < at);
}

void agent_fork_settle(struct tracee *t)
{
    struct agent_engine *a = t->agent;
    if (!a)
        return;
    /* The fork happened before this moment.  Every call stamped before it
     * goes into the parent's books now, and none after it (the other
     * threads run on: their later calls are the parent's alone).  A thread
     * in the middle of writing a record, or inside a call that releases
     * memory before its record comes, is waited for: at most 50 ms. */
    uint64_t at = agent_order_next(a);
    const struct agent_ctl *ctl = (const struct agent_ctl *)a->map;
    bool seen[AGENT_SLOTS] = {false};
    for (int round = 0; round < 200; round++) {
        bool all = true;
        for (unsigned s = 0; s < AGENT_SLOTS; s++) {
            if (!seen[s] && __atomic_load_n(&ctl->slots[s].key, __ATOMIC_ACQUIRE))
                seen[s] = slot_settled(&ctl->slots[s], at);
            else
                seen[s] = true;
            all = all && seen[s];
        }
        agent_drain_before(t, false, at);
        if (all)
            break;
        struct timespec pause = {0, 250000L};
        nanosleep(&pause, NULL);
    }
}

static int read_target_word(void *ctx, uint64_t addr, uint32_t *out)
{
    struct tracee *t = ctx;
    return target_mem_read(&t->mem, addr, out, sizeof(*out));
}

/* The thread pointer the agent keys the forking thread's slot with. */
static uint64_t slot_key_of(struct tracee *t, const struct thread *th)
{
    return agent_cpu_thread_key(th->tid, read_target_word, t);
}

/* The child's control block and rows: the parent's slots with their keys
 * (a slot's key is only its claim: a thread of the child with the same
 * thread pointer takes it over as a new one), everything else of theirs
 * reset but the forking thread's open calls; the rows compiled so far
 * (the same modules are mapped) under a new generation, so that no unwind
 * memo the child inherited is taken for one of its own. */
static void seed_region(struct agent_engine *a, const struct agent_engine *pa, uint64_t key, pid_t child)
{
    struct agent_ctl *ctl = (struct agent_ctl *)a->map;
    const struct agent_ctl *pc = (const struct agent_ctl *)pa->map;
    agent_rows_copy(a, pa);
    for (unsigned s = 0; s < AGENT_SLOTS; s++) {
        const struct agent_slot *p = &pc->slots[s];
        struct agent_slot *c = &ctl->slots[s];
        uint64_t k = __atomic_load_n(&p->key, __ATOMIC_ACQUIRE);
        if (!k)
            continue;
        c->key = k;
        if (k == key) {
            /* Inside an intercepted call at the fork (a new_handler that
             * forks): the call returns in the child too, into this slot.
             * Its ring goes on from the same position, consumed up to it
             * (a record the thread was writing when a handler that forks
             * interrupted it lands where the tracer looks next). */
            c->depth = p->depth;
            c->inflight = p->inflight;
            c->busy = p->busy;
            c->stack_lo = p->stack_lo;
            c->stack_hi = p->stack_hi;
            c->tid = (int32_t)child;
            c->reserve = c->tail_seen = c->tail = c->rung = p->reserve;
            a->tails[s] = p->reserve;
        }
    }
    ctl->heartbeat = pc->heartbeat;
    /* the forking thread's open call was stamped by the parent's order */
    ctl->order = __atomic_load_n(&pc->order, __ATOMIC_SEQ_CST);
    ctl->rows_gen = (__atomic_load_n(&pc->rows_gen, __ATOMIC_ACQUIRE) | 1) + 1;
    __atomic_store_n(&ctl->magic, AGENT_MAGIC, __ATOMIC_RELEASE);
}

int agent_fork_child(struct tracee *t, struct tracee *c, struct thread *th, char *why, size_t whylen)
{
    const struct agent_engine *pa = t->agent;
    if (!pa || c->agent)
        return 0;
    struct agent_engine *a = xcalloc(1, sizeof(*a));
    a->image = pa->image;
    a->hdr = pa->hdr;
    a->shared = pa->shared;
    a->data = pa->data;
    memcpy(a->patches, pa->patches, sizeof(a->patches));
    a->npatches = pa->npatches;
    a->doorbell_fd = a->target_doorbell_fd = a->target_doorbell_r = -1;

    uint64_t key = slot_key_of(c, th);
    uint64_t scratch = agent_stack_scratch(th);
    static const char name[] = AGENT_MEMFD_NAME;
    if (!key || !scratch || target_mem_write(&c->mem, scratch, name, sizeof(name)) < 0) {
        snprintf(why, whylen, "cannot read its registers or write to its stack");
        agent_free_local(a);
        return -1;
    }
    int64_t memfd = agent_target_call(c, th, SYS_memfd_create, scratch, MFD_CLOEXEC | MFD_ALLOW_SEALING,
                                      0, 0, 0, 0);
    if (agent_failed(memfd)) {
        snprintf(why, whylen, "memfd_create in the child: %s", strerror((int)-memfd));
        agent_free_local(a);
        return -1;
    }
    /* As agent_start: the tracer maps the open file the child holds, once
     * checked and sealed (a child made with CLONE_FILES shares its table
     * with a parent that runs on). */
    int64_t r = agent_target_call(c, th, SYS_ftruncate, (uint64_t)memfd, AGENT_SHARED_SIZE, 0, 0, 0, 0);
    char took[160] = "";
    if (!agent_failed(r)) {
        a->map = agent_take_region(c->pid, memfd, AGENT_SHARED_SIZE, took, sizeof(took));
        if (a->map)
            r = agent_target_call(c, th, MMAP_SYSCALL, pa->shared, AGENT_SHARED_SIZE,
                                  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, (uint64_t)memfd, 0);
    }
    agent_target_call(c, th, SYS_close, (uint64_t)memfd, 0, 0, 0, 0, 0);
    if (!a->map || agent_failed(r) || (uint64_t)r != pa->shared) {
        snprintf(why, whylen, "cannot map a shared region of its own: %s",
                 agent_failed(r) ? strerror((int)-r) : took[0] ? took : "mapped elsewhere");
        agent_free_local(a);
        return -1;
    }
    seed_region(a, pa, key, c->pid);

    /* Its own doorbell; the parent's ends it inherited are closed. */
    for (int i = 0; i < 2; i++) {
        int fd = i ? pa->target_doorbell_r : pa->target_doorbell_fd;
        if (fd >= 0)
            agent_target_call(c, th, SYS_close, (uint64_t)fd, 0, 0, 0, 0, 0);
    }
    a->data.doorbell_fd = -1;
    if (agent_target_call(c, th, SYS_pipe2, scratch + 64, O_CLOEXEC | O_NONBLOCK, 0, 0, 0, 0) == 0) {
        int32_t fds[2];
        if (target_mem_read(&c->mem, scratch + 64, fds, sizeof(fds)) == 0) {
            a->doorbell_fd = agent_take_doorbell(c->pid, fds[0]);
            a->target_doorbell_r = fds[0];
            a->target_doorbell_fd = fds[1];
            /* A descriptor swapped before the tracer took it leaves the
             * pipe with no reader: a doorbell there would kill the child
             * with SIGPIPE.  It goes without one (the tracer drains on its
             * timer, as when pipe2 fails). */
            if (a->doorbell_fd >= 0)
                a->data.doorbell_fd = fds[1];
        }
    }
    /* tracer_pidfd: the child's copy names this tracer too.  The child's
     * pid as it sees it (a PID namespace: not the tracer's number). */
    a->data.pid = (int32_t)agent_target_pid(c, th);
    a->data.state = AGENT_ACTIVE;
    c->agent = a;
    if (agent_write_data(c) < 0) {
        c->agent = NULL;
        snprintf(why, whylen, "cannot write the agent's data in the child");
        agent_free_local(a);
        return -1;
    }
    c->agent_used = true;
    guardian_note_return(c->pid, a->image + a->hdr.data_off + offsetof(struct agent_data, state),
                         AGENT_GONE, AGENT_ACTIVE, 4);
    return 0;
}
