/* The agent's rings, read by the tracer: the decoder (the target writes the
 * rings: every record is copied out, then checked), the merge of all
 * threads' rings in the order of their stamps (agent_ctl order: one
 * counter the agent takes atomically, not a CPU clock), and the replay of each call into the books
 * through the breakpoint engine's own code (target/tracer/calls.c). */
#include <errno.h>
#include <inttypes.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shared/log.h"
#include "shared/xalloc.h"
#include "arch/agent_cpu.h"
#include "target/agent/agent_internal.h"
#include "target/heap/heap.h"
#include "target/tracer/calls.h"
#include "target/tracer/misuse.h"
#include "target/tracer/tracee.h"

uint64_t agent_rec_payload(const struct agent_rec *r)
{
    return r->sig_len ? (((uint64_t)r->stack_len + 7) & ~7ull) + r->sig_len : r->stack_len;
}

int agent_ring_next(const uint8_t *ring, size_t ring_size, uint64_t tail, unsigned nfns,
                    struct agent_rec *copy, const uint8_t **stack, uint64_t *next_tail)
{
    /* (a ring of a power of two, as the agent's, is indexed without a
     * division: it took a fifth of this function's time) */
    uint64_t mask = (ring_size & (ring_size - 1)) == 0 ? ring_size - 1 : 0;
    for (int pads = 0; pads < 2; pads++) {
        uint64_t off = mask ? tail & mask : tail % ring_size;
        if (off % AGENT_REC_ALIGN || ring_size - off < 16)
            return -1;
        uint64_t pos;
        memcpy(&pos, ring + off, sizeof(pos));
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (pos != tail + 1) {
            *next_tail = tail;
            return 0;
        }
        uint32_t len;
        uint16_t kind;
        memcpy(&len, ring + off + 8, sizeof(len));
        memcpy(&kind, ring + off + 12, sizeof(kind));
        if (len < 16 || len % AGENT_REC_ALIGN || len > ring_size - off)
            return -1;
        if (kind == AGENT_REC_PAD) {
            /* Only at the ring's end. */
            if (off + len != ring_size)
                return -1;
            tail += len;
            continue;
        }
        if ((kind != AGENT_REC_CALL && kind != AGENT_REC_PCS && kind != AGENT_REC_BARE) ||
            len < sizeof(struct agent_rec))
            return -1;
        memcpy(copy, ring + off, sizeof(*copy));
        /* Checked on the copy: the target cannot change it any more. */
        if (copy->len != len || copy->kind != kind || copy->fn >= nfns ||
            copy->stack_len > AGENT_STACK_MAX || copy->sig_len > AGENT_STACK_MAX ||
            (kind == AGENT_REC_PCS && (copy->stack_len % 8 || copy->stack_len < 16 ||
                                       copy->sig_len || copy->flags)) ||
            (kind == AGENT_REC_BARE && (copy->stack_len || copy->sig_len || copy->flags)) ||
            AGENT_REC_LEN(agent_rec_payload(copy)) != len)
            return -1;
        *stack = ring + off + sizeof(*copy);
        *next_tail = tail + len;
        return 1;
    }
    return -1;
}

unsigned agent_pcs_expand(uint64_t *prev, unsigned *prev_n, const uint8_t *payload,
                          uint32_t stack_len, const uint64_t **out)
{
    uint64_t info;
    unsigned k = stack_len / 8 - 1, have = *prev_n;
    *prev_n = 0;
    if (stack_len % 8 || stack_len < 16)
        return 0;
    memcpy(&info, payload, sizeof(info));
    if (info == 0) {
        if (k > AGENT_MEMO_MAX) { /* too long to be a later record's base */
            *out = (const uint64_t *)(const void *)(payload + 8);
            return k;
        }
        memcpy(prev, payload + 8, (size_t)k * 8);
        *prev_n = k;
        *out = prev;
        return k;
    }
    uint64_t j = (uint32_t)info, n = info >> 32;
    if (j == 0 || n > AGENT_MEMO_MAX || k >= n || j + (n - k) > have)
        return 0;
    memmove(prev + k, prev + j, (size_t)(n - k) * 8);
    memcpy(prev, payload + 8, (size_t)k * 8);
    *prev_n = (unsigned)n;
    *out = prev;
    return (unsigned)n;
}

void agent_ring_free(struct agent_engine *a)
{
    free(a->dummy);
    free(a->mods);
}

void agent_patch_plan(struct agent_patch *p)
{
    const struct intercept_fn *fn = p->fn;
    for (unsigned k = 0; k < 5; k++) {
        unsigned i = intercept_arg_index(fn, k); /* --alloc-fn's positions too */
        p->arg_at[k] = (uint8_t)(i < 6 ? i : 6);
    }
    p->two_parts = intercept_is_realloc_op(fn->op);
    p->heap_fn = intercept_is_heap_fn(fn);
    /* munmap and mremap release inside the call: their entry, where the
     * agent held back the others (inflight), so that another thread's
     * mmap of the same range comes after. */
    p->at_entry = fn->releases || fn->op == OP_MUNMAP || fn->op == OP_MREMAP;
}

/* When a record's part happened, its stamp: a release before the
 * function ran, an allocation after it returned. */
static uint64_t part_time(const struct agent_engine *a, unsigned s)
{
    const struct agent_rec *r = a->head_rec[s];
    const struct agent_patch *p = &a->patches[r->fn];
    if (p->at_entry || (p->two_parts && a->head_part[s] == 0))
        return r->t_entry;
    return r->t_exit;
}

/* The mapping that holds a thread's stack: the agent then copies from it
 * without a system call. */
static void learn_stack(struct tracee *t, struct agent_slot *slot, uint64_t sp)
{
    char path[64], line[512];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)t->pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    while (fgets(line, sizeof(line), f)) {
        unsigned long long lo, hi;
        char perms[8];
        if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perms) == 3 && sp >= lo && sp < hi) {
            if (perms[0] == 'r' && perms[1] == 'w') {
                __atomic_store_n(&slot->stack_hi, (uint64_t)hi, __ATOMIC_RELEASE);
                __atomic_store_n(&slot->stack_lo, (uint64_t)lo, __ATOMIC_RELEASE);
            }
            break;
        }
    }
    fclose(f);
}

static void replay(struct tracee *t, unsigned s)
{
    struct agent_engine *a = t->agent;
    const struct agent_rec *r = a->head_rec[s];
    const uint8_t *stack = a->head_stack_bytes[s];
    const struct agent_patch *p = &a->patches[r->fn];
    const struct intercept_fn *fn = p->fn;
    struct thread *th = thread_find(t, r->tid);
    if (!th) {
        if (!a->dummy)
            a->dummy = xcalloc(1, sizeof(*a->dummy));
        th = a->dummy;
        th->tid = r->tid;
    }
    /* The registers at the function's entry, as a breakpoint stop shows
     * them: the unwinder needs the PC, the stack pointer and the
     * callee-saved registers. */
    /* The engine's own copy: zeroed once, these fields set per record
     * (a memset per record cost more than the rest of the setup). */
    struct arch_regs *regs = &a->regs;
    const uint64_t callee[5] = {r->rbx, r->r12, r->r13, r->r14, r->r15};
    agent_cpu_entry_regs(regs, p->addr, r->rsp, r->rbp, r->ra, callee, r->args);
    bool raw = r->kind == AGENT_REC_CALL;
    if (r->kind == AGENT_REC_BARE) {
        /* --sample, not sampled: no stack (capture.c) */
        t->snap_unsampled = true;
        a->bare_records++;
    } else if (raw) {
        t->snap = stack;
        t->snap_base = r->rsp;
        t->snap_len = r->stack_len;
        /* the stack a signal on the alternate stack interrupted */
        t->snap2 = r->sig_len ? stack + ((r->stack_len + 7) & ~7u) : NULL;
        t->snap2_base = r->sig_sp;
        t->snap2_len = r->sig_len;
        a->raw_records++;
    } else {
        /* Unwound in the target already: every capture of this call is
         * these pcs (capture.c). */
        t->snap_pcs = a->head_pcs[s];
        t->snap_npcs = a->head_npcs[s];
        a->pcs_records++;
    }
    uint64_t ret_addr = r->ra;
    uint32_t learn_id = UINT32_MAX;
    if (p->heap_fn && (!p->two_parts || a->head_part[s] == 0))
        allocators_count(&t->allocators, p->alloc_id);

    if (fn->releases) {
        /* (no release takes a leading argument) */
        uint64_t addr = p->arg_at[0] < 6 ? r->args[p->arg_at[0]] : 0;
        call_record_release(t, th, fn, p->addr, p->alloc_id, regs, addr, ret_addr);
        if (raw && a->data.use_rows)
            learn_id = capture_stack(t, regs);
    } else {
        /* the books through calls.c, as a breakpoint's return books them */
        struct pending_call c;
        memset(&c, 0, sizeof(c));
        c.fn = fn;
        c.tid = th->tid;
        c.alloc_id = p->alloc_id;
        /* the function's own arguments (mi_heap_* take the heap first) */
        for (unsigned k = 0; k < 5; k++)
            c.args[k] = p->arg_at[k] < 6 ? r->args[p->arg_at[k]] : 0;
        if (fn->op == OP_STRDUP)
            c.args[0] = r->out; /* the copy's size, measured by the agent */
        if (fn->op == OP_POSIX_MEMALIGN)
            c.out = r->out; /* the pointer it stored, read by the agent */
        c.orig_ret = ret_addr;
        c.ret_slot = r->rsp;
        enum call_book parts = CALL_BOOK_ALL;
        if (p->two_parts && a->head_part[s] != 0) {
            /* realloc's new block, at the return's moment */
            c.stack_id = a->head_stack[s];
            parts = CALL_BOOK_ALLOC;
        } else {
            misuse_end_release_chain(th);
            /* (a bare record's is what capture_stack would give it, without
             * setting up its stack window) */
            c.stack_id = r->kind == AGENT_REC_BARE ? t->unsampled_stack : capture_stack(t, regs);
            learn_id = c.stack_id;
            if (p->two_parts) {
                /* realloc's release, at the entry's moment */
                a->head_stack[s] = c.stack_id;
                if (c.args[0])
                    misuse_check_realloc(t, th, fn, c.args[0], c.stack_id);
                parts = CALL_BOOK_RELEASE;
            }
        }
        call_record_result(t, &c, r->ret, parts);
    }
    t->snap = NULL;
    t->snap2 = NULL;
    t->snap_pcs = NULL;
    t->snap_unsampled = false;
    if (raw && learn_id != UINT32_MAX && a->data.use_rows)
        agent_learn_rows(t, learn_id);
}

/* The books' slots of the records a few ahead of ring s's head are
 * fetched into the cache while the records before them are replayed: each
 * is a cache miss otherwise, the largest cost of a replay.  Only a hint:
 * the ring is read within its bounds, and a wrong address costs nothing. */
#define PREFETCH_AHEAD 8u
static void prefetch_ahead(struct agent_engine *a, struct heap_books *books, unsigned s)
{
    const uint8_t *ring = a->map + AGENT_RINGS_OFF + (uint64_t)s * AGENT_RING_SIZE;
    if (a->pf_pos[s] < a->tails[s] || a->pf_pos[s] - a->tails[s] > AGENT_RING_SIZE) {
        a->pf_pos[s] = a->tails[s];
        a->pf_ahead[s] = 0;
    }
    for (int pads = 0; a->pf_ahead[s] < PREFETCH_AHEAD && pads < 2;) {
        uint64_t pos = a->pf_pos[s], off = pos % AGENT_RING_SIZE, mark, addr;
        uint32_t len;
        uint16_t kind;
        if (off % AGENT_REC_ALIGN || AGENT_RING_SIZE - off < 16)
            return;
        memcpy(&mark, ring + off, sizeof(mark));
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (mark != pos + 1)
            return;
        memcpy(&len, ring + off + 8, sizeof(len));
        memcpy(&kind, ring + off + 12, sizeof(kind));
        if (len < 16 || len % AGENT_REC_ALIGN || len > AGENT_RING_SIZE - off)
            return;
        a->pf_pos[s] += len;
        if (kind == AGENT_REC_PAD) {
            pads++;
            continue;
        }
        if (len < sizeof(struct agent_rec))
            return;
        /* the record's other lines too, written by another CPU */
        for (uint32_t at = 64; at < sizeof(struct agent_rec); at += 64)
            __builtin_prefetch(ring + off + at);
        memcpy(&addr, ring + off + offsetof(struct agent_rec, args), sizeof(addr));
        heap_prefetch(books, addr);
        memcpy(&addr, ring + off + offsetof(struct agent_rec, ret), sizeof(addr));
        heap_prefetch(books, addr);
        a->pf_ahead[s]++;
    }
}

/* The next record of ring s into its head; false when there is none. */
static bool fetch_head(struct tracee *t, unsigned s)
{
    struct agent_engine *a = t->agent;
    if (a->head_rec[s])
        return true;
    if (a->broken[s])
        return false;
    const uint8_t *ring = a->map + AGENT_RINGS_OFF + (uint64_t)s * AGENT_RING_SIZE;
    int rc = agent_ring_next(ring, AGENT_RING_SIZE, a->tails[s], a->npatches, &a->head[s],
                             &a->head_stack_bytes[s], &a->head_next[s]);
    if (rc == 1)
        a->head_rec[s] = &a->head[s];
    if (rc < 0) {
        a->broken[s] = true;
        a->head_rec[s] = NULL;
        mt_warn("agent: thread slot %u of process %d holds a malformed record at %" PRIu64
                "; its calls are ignored from here on",
                s, (int)t->pid, a->tails[s]);
        return false;
    }
    if (rc == 0) {
        a->head_rec[s] = NULL;
        a->tails[s] = a->head_next[s]; /* past the pad records skipped */
        return false;
    }
    a->head_part[s] = 0;
    if (a->head_rec[s]->kind == AGENT_REC_PCS) {
        a->head_npcs[s] = agent_pcs_expand(a->prev_pcs[s], &a->prev_n[s], a->head_stack_bytes[s],
                                           a->head_rec[s]->stack_len, &a->head_pcs[s]);
        uint64_t info;
        memcpy(&info, a->head_stack_bytes[s], sizeof(info));
        a->delta_records += info != 0;
        if (!a->head_npcs[s]) {
            a->broken[s] = true;
            a->head_rec[s] = NULL;
            mt_warn("agent: thread slot %u of process %d sent a stack that does not follow its "
                    "previous one; its calls are ignored from here on",
                    s, (int)t->pid);
            return false;
        }
    }
    prefetch_ahead(a, t->books, s);
    if (a->patches[a->head_rec[s]->fn].fn == NULL) {
        a->broken[s] = true;
        a->head_rec[s] = NULL;
        return false;
    }
    return true;
}

static void consume_head(struct tracee *t, unsigned s)
{
    struct agent_engine *a = t->agent;
    struct agent_slot *slot = &((struct agent_ctl *)a->map)->slots[s];
    a->tails[s] = a->head_next[s];
    a->head_rec[s] = NULL;
    if (a->pf_ahead[s])
        a->pf_ahead[s]--;
    /* The room made goes to the thread an eighth of a ring at a time (and
     * at the end of every drain): a store per record would take the
     * slot's line from the thread's cache per record. */
    if (a->tails[s] - __atomic_load_n(&slot->tail, __ATOMIC_RELAXED) >= AGENT_RING_SIZE / 8) {
        __atomic_store_n(&slot->tail, a->tails[s], __ATOMIC_RELEASE);
        /* a thread waiting for room goes on now, not after the drain */
        __atomic_fetch_add(&slot->tail_seq, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&slot->waiting, __ATOMIC_SEQ_CST))
            syscall(SYS_futex, &slot->tail_seq, FUTEX_WAKE, 1, NULL, NULL, 0);
    }
}

/* MEMTRACE_TEST_FULL_RINGS=1, for the tests only (agent_ring_order.sh):
 * the rings are read only when a thread waits on a full one (and at the
 * drains that must take everything: exit, detach, fork), so every ring
 * is filled to its last bytes, the thread waits, and the tracer then
 * reads all rings at once, merged as always.  What a slow tracer meets
 * once in a while, made to happen at every ring's turn. */
static bool full_rings_only(void)
{
    static int on = -1;
    if (on < 0) {
        const char *v = getenv("MEMTRACE_TEST_FULL_RINGS");
        on = v && strcmp(v, "1") == 0;
    }
    return on;
}

static bool some_thread_waits(const struct agent_ctl *ctl)
{
    for (unsigned s = 0; s < AGENT_SLOTS; s++)
        if (__atomic_load_n(&ctl->slots[s].key, __ATOMIC_ACQUIRE) &&
            __atomic_load_n(&ctl->slots[s].waiting, __ATOMIC_SEQ_CST))
            return true;
    return false;
}

unsigned agent_drain(struct tracee *t, bool force)
{
    return agent_drain_before(t, force, UINT64_MAX);
}

unsigned agent_drain_before(struct tracee *t, bool force, uint64_t cutoff)
{
    struct agent_engine *a = t->agent;
    if (!a)
        return 0;
    struct agent_ctl *ctl = (struct agent_ctl *)a->map;
    ctl->heartbeat++;
    if (!force && cutoff == UINT64_MAX && full_rings_only() && !some_thread_waits(ctl)) {
        a->rang = false;
        a->last_drain_busy = false;
        return 0;
    }
    /* Records stamped at or after the entry of a call still open in some
     * thread wait: that call's own record may have to come first.  And
     * those stamped after this moment: a record another thread commits
     * while the rings are read may precede them.  (A record that proves
     * its block exists, a malloc's, is committed before its thread
     * returns the block: a free of it elsewhere is stamped later, above
     * this watermark if the malloc was not seen.)  The order is read
     * before the slots' inflight (agent_core.inc.c). */
    uint64_t watermark = force ? UINT64_MAX : agent_order_next(a);
    if (cutoff < watermark)
        watermark = cutoff;
    unsigned active[AGENT_SLOTS], nactive = 0;
    for (unsigned s = 0; s < AGENT_SLOTS; s++) {
        struct agent_slot *slot = &ctl->slots[s];
        if (!__atomic_load_n(&slot->key, __ATOMIC_ACQUIRE))
            continue;
        if (a->broken[s]) {
            /* Its calls are ignored, but the thread must never wait on a
             * ring nobody reads: all it wrote counts as consumed. */
            __atomic_store_n(&slot->tail, __atomic_load_n(&slot->reserve, __ATOMIC_ACQUIRE),
                             __ATOMIC_RELEASE);
            __atomic_fetch_add(&slot->tail_seq, 1, __ATOMIC_SEQ_CST);
            if (__atomic_load_n(&slot->waiting, __ATOMIC_SEQ_CST))
                syscall(SYS_futex, &slot->tail_seq, FUTEX_WAKE, 1, NULL, NULL, 0);
            continue;
        }
        uint64_t in = __atomic_load_n(&slot->inflight, __ATOMIC_ACQUIRE);
        if (!force && in && in < watermark)
            watermark = in;
        active[nactive++] = s;
    }
    /* At most a ring's worth of each ring per drain: a process that
     * shares the region (it can map the memfd while it is in the target's
     * descriptor table) may write records as fast as they are read, even
     * while every thread of the target is stopped. */
    uint64_t start[AGENT_SLOTS];
    for (unsigned i = 0; i < nactive; i++)
        start[active[i]] = a->tails[active[i]];
    unsigned n = 0;
    bool held = false;
    /* A ring whose share of this drain is used up keeps its next record
     * for the next drain: nothing stamped after that record may go before
     * it, from any ring (the block a free releases may be that record's). */
    uint64_t share_end = UINT64_MAX;
    for (;;) {
        int best = -1;
        uint64_t best_time = UINT64_MAX;
        held = false;
        for (unsigned i = 0; i < nactive; i++) {
            unsigned s = active[i];
            if (!fetch_head(t, s))
                continue;
            held = true;
            uint64_t when = part_time(a, s);
            if (a->tails[s] - start[s] >= AGENT_RING_SIZE) {
                if (when < share_end)
                    share_end = when;
                continue;
            }
            if ((when < watermark || (force && cutoff == UINT64_MAX)) && when < share_end &&
                (best < 0 || when < best_time)) {
                best = (int)s;
                best_time = when;
            }
        }
        if (best < 0)
            break;
        unsigned s = (unsigned)best;
        /* (not from an alternate signal stack: its mapping is not the
         * thread's stack) */
        if (!a->stack_known[s] && !(a->head_rec[s]->flags & AGENT_REC_ALTSTACK)) {
            a->stack_known[s] = true;
            learn_stack(t, &ctl->slots[s], a->head_rec[s]->rsp);
        }
        replay(t, s);
        if (a->patches[a->head_rec[s]->fn].two_parts && a->head_part[s] == 0) {
            a->head_part[s] = 1;
            continue;
        }
        consume_head(t, s);
        n++;
    }
    /* The room made (pads skipped while looking included; a head held
     * back stays where tails[s] is, out of the thread's reach), and one
     * wake-up per waiting thread. */
    for (unsigned i = 0; i < nactive; i++) {
        unsigned s = active[i];
        struct agent_slot *slot = &ctl->slots[s];
        if (__atomic_load_n(&slot->tail, __ATOMIC_RELAXED) != a->tails[s]) {
            __atomic_store_n(&slot->tail, a->tails[s], __ATOMIC_RELEASE);
            __atomic_fetch_add(&slot->tail_seq, 1, __ATOMIC_SEQ_CST);
        }
        if (__atomic_load_n(&slot->waiting, __ATOMIC_SEQ_CST)) {
            __atomic_fetch_add(&slot->tail_seq, 1, __ATOMIC_SEQ_CST);
            syscall(SYS_futex, &slot->tail_seq, FUTEX_WAKE, 1, NULL, NULL, 0);
        }
    }
    a->calls += n;
    a->last_drain_busy = n > 0;
    /* Nothing replayed though the doorbell rang or a record waits: the
     * next drains come further apart (agent_poll_timeout). */
    if (n > 0 || !(a->rang || held))
        a->idle_drains = 0;
    else if (a->idle_drains < 1000)
        a->idle_drains++;
    a->rang = false;
    return n;
}

/* The target writes the doorbell, and can ring it without end, or hold
 * every record back (a call left "in flight" in every slot): a doorbell
 * that brought nothing to replay is not listened to again until a drain
 * replays something, and the drains in between come further apart, up to
 * AGENT_IDLE_MAX_MS (a program whose realloc runs long waits that much at
 * most for its ring; an adversary costs the tracer a few drains a
 * second). */
enum { AGENT_IDLE_MAX_MS = 40, AGENT_DOORBELL_READS = 16 };

int agent_poll_fd(const struct tracee *t)
{
    /* (one doorbell that brought nothing is no sign: the drain before it
     * may have taken what it rang for) */
    if (!t || !t->agent || t->agent->idle_drains >= 2)
        return -1;
    return t->agent->doorbell_fd;
}

int agent_poll_timeout(const struct tracee *t)
{
    if (!t || !t->agent)
        return -1;
    const struct agent_engine *a = t->agent;
    if (a->last_drain_busy)
        return 0;
    unsigned idle = a->idle_drains < 2 ? 0 : a->idle_drains < 5 ? a->idle_drains - 1 : 4;
    int ms = 5 << idle;
    return ms < AGENT_IDLE_MAX_MS ? ms : AGENT_IDLE_MAX_MS;
}

void agent_doorbell(struct tracee *t)
{
    struct agent_engine *a = t->agent;
    if (!a || a->doorbell_fd < 0)
        return;
    /* A bounded number of reads (the pipe holds 64 KiB; /dev/zero, had it
     * been let in, never ends), none of which blocks. */
    for (int i = 0; i < AGENT_DOORBELL_READS; i++) {
        int n = agent_doorbell_read(a->doorbell_fd);
        if (n < 0) {
            close(a->doorbell_fd); /* the timeout drains from here on */
            a->doorbell_fd = -1;
            break;
        }
        if (n < 256)
            break;
    }
    a->rang = true;
}

void agent_thread_exit(struct tracee *t, int tid)
{
    struct agent_engine *a = t->agent;
    if (!a)
        return;
    struct agent_ctl *ctl = (struct agent_ctl *)a->map;
    for (unsigned s = 0; s < AGENT_SLOTS; s++)
        if (ctl->slots[s].key && ctl->slots[s].tid == tid) {
            /* The thread is stopped at its exit: no call of its is open. */
            ctl->slots[s].tid = 0;
            ctl->slots[s].depth = 0;
            __atomic_store_n(&ctl->slots[s].inflight, 0, __ATOMIC_RELEASE);
        }
}

bool agent_get_stats(const struct tracee *t, struct engine_stats *out)
{
    if (!t || !t->agent)
        return false;
    const struct agent_engine *a = t->agent;
    const struct agent_ctl *ctl = (const struct agent_ctl *)a->map;
    memset(out, 0, sizeof(*out));
    out->calls = a->calls;
    out->lost = ctl->lost;
    for (unsigned s = 0; s < AGENT_SLOTS; s++) {
        out->waits += ctl->slots[s].waits;
        out->lost += ctl->slots[s].lost;
    }
    for (unsigned i = 0; i < a->npatches; i++)
        out->patched += a->patches[i].active;
    out->unwound_in_target = a->pcs_records;
    out->raw_stacks = a->raw_records;
    return true;
}
