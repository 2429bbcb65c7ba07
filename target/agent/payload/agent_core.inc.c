/* The in-process agent's CPU-independent part (included by the per-CPU
 * payload, agent_<cpu>.c, which defines first: struct agent_frame (idx,
 * orig, ret, track, t_entry, slot, pc), sys3/sys6 and the SYS_ numbers
 * used here, thread_key(), copy(), fd_readable(), FRAME_SP/FP/ARG0,
 * frame_ra() (the return address at the function's entry), fill_regs()
 * (the entry registers into a record), STORE_LOAD_FENCE(),
 * AGENT_UNWIND_ROWS (1: the agent unwinds with the tracer's rows),
 * AGENT_RA_IN_REG (1: at the entry the return address is in a register,
 * frame_ra(), not on the stack) and RA_TO_PC() (a saved return address as
 * a pc: aarch64 strips a pointer authentication code). */
#ifndef MT_AGENT_PAYLOAD_AGENT_CORE_H
#define MT_AGENT_PAYLOAD_AGENT_CORE_H

#include "target/heap/sample_draw.h"

/* A word the size of a pointer at addr, and that size (i386: 4 bytes). */
#ifndef AGENT_LOAD_PTR
#define AGENT_LOAD_PTR(addr) (*(const uint64_t *)(uintptr_t)(addr))
#define AGENT_PTR_SIZE 8u
#endif

static inline struct agent_ctl *ctl_of(void) { return (struct agent_ctl *)(uintptr_t)agent_data.shared; }

/* The stamp that orders a call's part among every thread's (a release's
 * before the function runs, an allocation's after it returned): the
 * shared counter taken atomically, not a CPU clock, which orders threads
 * only as well as the CPUs' clocks agree (a VM's TSC may not: a free
 * could then come before the malloc that made its block; issue 29).  The
 * read-modify-write is a full barrier: taken after every earlier load
 * (the one that found the block free, or that got the pointer passed to
 * free) and before anything the call does later is seen by another
 * thread; so a stamp taken after another thread's call made a block
 * known to this one is larger than that call's. */
static inline uint64_t stamp(struct agent_ctl *ctl)
{
    uint64_t v = __atomic_add_fetch(&ctl->order, 1, __ATOMIC_SEQ_CST);
#if !defined(__x86_64__) && !defined(__i386__)
    /* (x86: the locked instruction is a full barrier already; aarch64's
     * exclusive pair lets a later store be seen before its own) */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
    return v;
}

static struct agent_slot *find_slot(struct agent_ctl *ctl)
{
    uint64_t key = thread_key();
    unsigned h = (unsigned)((key * 0x9e3779b97f4a7c15ull) >> 56) & (AGENT_SLOTS - 1);
    for (unsigned i = 0; i < AGENT_SLOTS; i++) {
        struct agent_slot *s = &ctl->slots[(h + i) & (AGENT_SLOTS - 1)];
        uint64_t k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
        if (k == key)
            return s;
        if (k == 0) {
            uint64_t expect = 0;
            if (__atomic_compare_exchange_n(&s->key, &expect, key, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE))
                return s;
            if (expect == key)
                return s;
        }
    }
    __atomic_fetch_add(&ctl->lost, 1, __ATOMIC_RELAXED);
    return 0;
}

/* What each thread's slot keeps that only the thread reads: in the
 * section of zero pages the tracer never writes (agent.ld), touched only
 * by the threads that call; a forked child has the copy. */
struct slot_private {
    struct sample_state sampler; /* --sample: this slot's stream */
    uint64_t open_sp;       /* the outermost open call's entry stack pointer (depth > 0) */
    uint32_t exception_memory; /* in __cxa_allocate/free_exception: the next heap call is the program's */
    uint32_t pad;
};
__attribute__((section(".bss.agent_memo"))) static struct slot_private privates[AGENT_SLOTS];

static struct slot_private *private_of(const struct agent_slot *s)
{
    return &privates[s - ctl_of()->slots];
}

/* Is ret (the caller's resumption point) the allocator's own call? */
static int call_is_internal(const struct agent_slot *s, uint32_t flags, uint64_t ret)
{
    if (ret >= agent_data.text_lo && ret < agent_data.text_hi)
        return 1; /* a tail call out of an intercepted function */
    if (!(flags & AGENT_FN_MAP) && s->depth == 0)
        return 0;
    if (s->depth == 0 && ret >= agent_data.static_exe.lo && ret < agent_data.static_exe.hi)
        return 0;
    uint32_t n = agent_data.nranges < AGENT_MAX_RANGES ? agent_data.nranges : AGENT_MAX_RANGES;
    for (uint32_t i = 0; i < n; i++)
        if (ret >= agent_data.alloc[i].lo && ret < agent_data.alloc[i].hi)
            return 1;
    return 0;
}

static int tracer_gone(void)
{
    if (agent_data.state != AGENT_ACTIVE)
        return 1;
    if (agent_data.tracer_pidfd < 0)
        return 0;
    if (fd_readable(agent_data.tracer_pidfd)) {
        agent_data.state = AGENT_GONE;
        return 1;
    }
    return 0;
}

/* Room for need bytes in s's ring: waits (futex) while the ring is full,
 * and then until a quarter of it is free (the tracer wakes it an eighth
 * of a ring at a time: a few wake-ups per ring, not one per record, and
 * no wait for a whole drain).  0, or -1 when the tracer is gone. */
static int ring_room(struct agent_slot *s, uint64_t need)
{
    if (s->reserve - s->rung >= AGENT_RING_SIZE / 4) {
        /* A quarter ring written since the last look: a tracer half a ring
         * behind gets its doorbell now, while there is room left.  Else it
         * may sleep until the ring is full, and the two then take turns
         * (the thread waits while the tracer drains) instead of running
         * at once. */
        s->rung = s->reserve;
        s->tail_seen = __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE);
        if (s->reserve - s->tail_seen >= AGENT_RING_SIZE / 2 && agent_data.doorbell_fd >= 0)
            sys3(SYS_write, agent_data.doorbell_fd, (long)"", 1);
    }
    /* The tail last read first: the tracer's line is read only when the
     * ring looks full from here. */
    if (s->reserve + need - s->tail_seen <= AGENT_RING_SIZE)
        return 0;
    s->tail_seen = __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE);
    if (s->reserve + need - s->tail_seen <= AGENT_RING_SIZE)
        return 0;
    int counted = 0;
    for (;;) {
        uint32_t seq = __atomic_load_n(&s->tail_seq, __ATOMIC_ACQUIRE);
        uint64_t tail = __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE);
        s->tail_seen = tail;
        if (s->reserve + need - tail <= (counted ? AGENT_RING_SIZE / 4 * 3 : AGENT_RING_SIZE))
            return 0;
        if (!counted) {
            s->waits++;
            counted = 1;
        }
        if (tracer_gone())
            return -1;
        __atomic_store_n(&s->waiting, 1, __ATOMIC_SEQ_CST);
        if (agent_data.doorbell_fd >= 0)
            sys3(SYS_write, agent_data.doorbell_fd, (long)"", 1);
        struct {
            long sec, nsec;
        } ts = {0, 20 * 1000 * 1000};
        if (__atomic_load_n(&s->tail_seq, __ATOMIC_SEQ_CST) == seq)
            sys6(SYS_futex, (long)&s->tail_seq, FUTEX_WAIT, (long)seq, (long)&ts, 0, 0);
        __atomic_store_n(&s->waiting, 0, __ATOMIC_RELAXED);
    }
}

static uint8_t *ring_base(struct agent_ctl *ctl, struct agent_slot *s)
{
    return (uint8_t *)ctl + AGENT_RINGS_OFF + (uint64_t)(s - ctl->slots) * AGENT_RING_SIZE;
}

#if AGENT_UNWIND_ROWS
static int find_row(const struct agent_ctl *ctl, uint64_t pc, uint64_t *val)
{
    const struct agent_row *rows = (const struct agent_row *)((const uint8_t *)ctl + AGENT_ROWS_OFF);
    uint32_t h = agent_row_hash(pc);
    for (uint32_t i = 0; i < 16; i++) {
        const struct agent_row *r = &rows[(h + i) & (AGENT_ROWS - 1)];
        uint64_t k = __atomic_load_n(&r->key, __ATOMIC_ACQUIRE);
        if (k == pc) {
            *val = r->val;
            return 1;
        }
        if (k == 0)
            return 0;
    }
    return 0;
}

/* The last unwind of each thread, by slot (see unwind_here).  In a section
 * of its own after the data: zero pages the tracer never writes, touched
 * only by the threads that call. */
#define MEMO_MAX AGENT_MEMO_MAX
struct memo_frame {
    uint64_t pc, sp, bp;   /* the registers entering the frame */
    uint64_t ra_at, bp_at; /* where its step read the return address and rbp (0: no read) */
    uint64_t cfa_at;       /* where it read the CFA (a realigned frame; 0: none) */
};
struct memo {
    uint64_t gen, lo, hi;      /* the rows' generation and the stack's bounds it was made with */
    uint32_t n;                /* frames (0: none kept) */
    uint32_t ended;            /* frame n-1 was stepped and the unwind ended there (else n was the limit) */
    uint64_t last_ra, last_bp, last_cfa; /* what that last step read or made */
    struct memo_frame f[MEMO_MAX];
};
struct memo_pair {
    uint32_t cur;
    uint32_t pad;
    struct memo m[2];
};
__attribute__((section(".bss.agent_memo"))) static struct memo_pair memos[AGENT_SLOTS];

/* The tracer's unwinder (target/unwind/unwind.c) on the rows it compiled:
 * the same steps, the same stop conditions.  Reads stay inside the
 * thread's stack mapping.  Returns the number of pcs, or 0 when some frame
 * needs what the rows cannot say (the raw stack goes instead).
 *
 * The memo: a frame entered with the same pc, rsp and rbp as a frame of
 * the thread's previous unwind (rows unchanged) steps the same way from
 * there on, as long as the stack words those steps read hold the same
 * values.  Those words are read again and compared (no row lookups, and
 * no chain of dependent loads); any difference and the unwind goes on
 * step by step from that frame.  So the memo gives exactly what the steps
 * would.  When the frames from the memo's on all matched, *info says so
 * (agent_abi.h) and only the first *fresh pcs need sending. */
static uint32_t unwind_here(const struct agent_ctl *ctl, const struct agent_slot *s,
                            const struct agent_frame *f, uint64_t *pcs, uint32_t max,
                            uint64_t *info, uint32_t *fresh)
{
    *info = 0;
    *fresh = 0;
    uint64_t lo = __atomic_load_n(&s->stack_lo, __ATOMIC_ACQUIRE);
    uint64_t hi = __atomic_load_n(&s->stack_hi, __ATOMIC_ACQUIRE);
    uint64_t sp = FRAME_SP(f), bp = FRAME_FP(f), pc;
    if (!lo || sp < lo || sp >= hi || max == 0)
        return 0;
    uint64_t gen = __atomic_load_n(&ctl->rows_gen, __ATOMIC_ACQUIRE);
    if (gen & 1)
        return 0; /* the tracer is removing rows */
    struct memo_pair *mp = max <= MEMO_MAX ? &memos[s - ctl->slots] : 0;
    if (!mp) /* the tracer's copy of the previous stack moves on without it */
        memos[s - ctl->slots].m[0].n = memos[s - ctl->slots].m[1].n = 0;
    const struct memo *old = mp ? &mp->m[mp->cur] : 0;
    struct memo *nw = mp ? &mp->m[mp->cur ^ 1] : 0;
    if (old && (!old->n || old->gen != gen || old->lo != lo || old->hi != hi))
        old = 0;
    pc = f->pc;
    uint64_t sp0 = sp, last_ra = 0, last_bp = 0, last_cfa = 0;
    uint32_t n = 0, j = 1, ended = 0, hit_k = 0, hit_j = 0;
    pcs[n++] = pc;
#if AGENT_RA_IN_REG
    /* At the entry the return address is still in its register and sp is
     * the caller's: frame 1 needs no row (the tracer's
     * unwind_stack_at_entry).  Frame 0 reads no memory. */
    if (nw) {
        nw->f[0].pc = pc;
        nw->f[0].sp = sp;
        nw->f[0].bp = bp;
        nw->f[0].ra_at = nw->f[0].bp_at = nw->f[0].cfa_at = 0;
    }
    pc = RA_TO_PC(frame_ra(f));
    if (pc == 0 || max < 2) {
        ended = pc == 0;
        goto done;
    }
    pcs[n++] = pc;
#endif
    for (;;) {
        /* Frame n-1, entered with pc, sp, bp (the unwind's state). */
        if (nw) {
            struct memo_frame *m = &nw->f[n - 1];
            m->pc = pc;
            m->sp = sp;
            m->bp = bp;
            m->ra_at = m->bp_at = m->cfa_at = 0;
        }
        if (n >= max)
            break;
        if (old && n >= 2) {
            while (j < old->n && old->f[j].sp < sp)
                j++;
            if (j < old->n && old->f[j].sp == sp && old->f[j].pc == pc && old->f[j].bp == bp) {
                /* The same frame as the previous unwind's j: check its steps. */
                uint32_t k = n - 1, m = j;
                int resume = 0;
                for (;; m++) {
                    const struct memo_frame *o = &old->f[m];
                    uint32_t kk = k + (m - j);
                    pcs[kk] = o->pc;
                    if (nw)
                        nw->f[kk] = *o;
                    n = kk + 1;
                    if (n >= max)
                        break; /* the limit, not stepped */
                    int last = m + 1 == old->n;
                    if (last && !old->ended) {
                        resume = 1; /* the previous unwind stopped at its limit: go on */
                        break;
                    }
                    uint64_t want_ra = last ? old->last_ra : old->f[m + 1].pc;
                    uint64_t want_bp = last ? old->last_bp : old->f[m + 1].bp;
                    uint64_t want_cfa = last ? old->last_cfa : old->f[m + 1].sp;
                    if (o->cfa_at && (o->cfa_at < sp0 || o->cfa_at + AGENT_PTR_SIZE > hi ||
                                      AGENT_LOAD_PTR(o->cfa_at) != want_cfa)) {
                        resume = 1;
                        break;
                    }
                    if (o->ra_at && (o->ra_at < sp0 || o->ra_at + AGENT_PTR_SIZE > hi ||
                                     RA_TO_PC(AGENT_LOAD_PTR(o->ra_at)) != want_ra)) {
                        resume = 1;
                        break;
                    }
                    if (o->bp_at && (o->bp_at < sp0 || o->bp_at + AGENT_PTR_SIZE > hi ||
                                     AGENT_LOAD_PTR(o->bp_at) != want_bp)) {
                        resume = 1;
                        break;
                    }
                    if (last) {
                        ended = 1;
                        last_ra = old->last_ra;
                        last_bp = old->last_bp;
                        last_cfa = old->last_cfa;
                        break;
                    }
                }
                if (!resume) {
                    hit_k = k;
                    hit_j = j;
                    break;
                }
                /* Step frame n-1 (its registers verified) from here on. */
                pc = old->f[m].pc;
                sp = old->f[m].sp;
                bp = old->f[m].bp;
                old = 0;
                if (nw)
                    nw->f[n - 1].ra_at = nw->f[n - 1].bp_at = nw->f[n - 1].cfa_at = 0;
            }
        }
        uint64_t val;
        if (!find_row(ctl, n == 1 ? pc : pc - 1, &val))
            return 0;
        uint32_t kind = (uint32_t)(val >> 56) & 0xf;
        if (kind == AGENT_ROW_STOP || kind == AGENT_ROW_OUTERMOST) {
            ended = 1;
            break;
        }
        if (kind != AGENT_ROW_STEP)
            return 0;
        uint64_t cfa = ((val & AGENT_ROW_CFA_BP) ? bp : sp) + (uint64_t)(int64_t)(int32_t)(uint32_t)val;
        uint64_t cfa_at = 0;
        if (val & AGENT_ROW_CFA_DEREF) {
            /* A realigned frame: the CFA was saved in it (the memo checks
             * that word too). */
            cfa_at = cfa;
            if (cfa_at < sp0 || cfa_at + AGENT_PTR_SIZE > hi)
                return 0;
            cfa = AGENT_LOAD_PTR(cfa_at);
        }
        uint64_t ra_at = cfa + (uint64_t)(int64_t)(int8_t)(uint8_t)(val >> 48);
        if (ra_at < sp0 || ra_at + AGENT_PTR_SIZE > hi)
            return 0;
        uint64_t ra = RA_TO_PC(AGENT_LOAD_PTR(ra_at));
        uint16_t bpo = (uint16_t)(val >> 32);
        uint64_t bp_at = 0;
        if (bpo != AGENT_ROW_BP_SAME) {
            bp_at = ((val & AGENT_ROW_CFA_DEREF) ? bp : cfa) + (uint64_t)(int64_t)(int16_t)bpo;
            if (bp_at < sp0 || bp_at + AGENT_PTR_SIZE > hi)
                return 0;
            bp = AGENT_LOAD_PTR(bp_at);
        }
        if (nw) {
            nw->f[n - 1].ra_at = ra_at;
            nw->f[n - 1].bp_at = bp_at;
            nw->f[n - 1].cfa_at = cfa_at;
        }
        /* (after the first step, sp is the previous frame's CFA) */
        if (n >= 2 + AGENT_RA_IN_REG ? cfa <= sp : cfa < sp0) {
            ended = 1;
            last_ra = ra;
            last_bp = bp;
            last_cfa = cfa;
            break;
        }
        sp = cfa;
        pc = ra;
        if (pc == 0) {
            ended = 1;
            last_ra = 0;
            last_bp = bp;
            last_cfa = cfa;
            break;
        }
        pcs[n++] = pc;
    }
#if AGENT_RA_IN_REG
done:
#endif
    /* Rows removed meanwhile: this unwind may have used one. */
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&ctl->rows_gen, __ATOMIC_RELAXED) != gen)
        return 0;
    if (nw) {
        nw->gen = gen;
        nw->lo = lo;
        nw->hi = hi;
        nw->n = n;
        nw->ended = ended;
        nw->last_ra = last_ra;
        nw->last_bp = last_bp;
        nw->last_cfa = last_cfa;
        mp->cur ^= 1;
        if (hit_k) {
            *info = hit_j | ((uint64_t)n << 32);
            *fresh = hit_k;
        }
    }
    return n;
}

#endif

/* The record at the ring's write position with len bytes of room (a pad
 * record fills the ring's end when it would not fit there); NULL when the
 * tracer is gone. */
static struct agent_rec *ring_reserve(struct agent_ctl *ctl, struct agent_slot *s, uint32_t len)
{
    uint64_t off = s->reserve % AGENT_RING_SIZE;
    uint64_t pad = off + len > AGENT_RING_SIZE ? AGENT_RING_SIZE - off : 0;
    if (ring_room(s, pad + len) < 0)
        return 0;
    uint8_t *base = ring_base(ctl, s);
    if (pad) {
        struct agent_rec *p = (struct agent_rec *)(base + off);
        p->len = (uint32_t)pad;
        p->kind = AGENT_REC_PAD;
        __atomic_store_n(&p->pos, s->reserve + 1, __ATOMIC_RELEASE);
        s->reserve += pad;
    }
    return (struct agent_rec *)(base + s->reserve % AGENT_RING_SIZE);
}

/* Up to max bytes of this process's memory from addr into dst: the kernel
 * copies what is mapped, so a window may end early. */
static uint64_t read_window(uint8_t *dst, uint64_t addr, uint64_t max)
{
    struct {
        uintptr_t base, len;
    } local = {(uintptr_t)dst, (uintptr_t)max}, remote = {(uintptr_t)addr, (uintptr_t)max};
    long n = sys6(SYS_process_vm_readv, agent_data.pid, (long)&local, 1, (long)&remote, 1, 0);
    return n > 0 ? (uint64_t)n : 0;
}

/* Is sp on the thread's alternate signal stack, [*alo, *ahi)?  One system
 * call, made only for an sp outside the thread's known stack. */
static int on_altstack(uint64_t sp, uint64_t *alo, uint64_t *ahi)
{
    struct {
        uintptr_t sp;
        int flags;
        unsigned long size;
    } ss = {0, 0, 0};
    if (sys3(SYS_sigaltstack, 0, (long)&ss, 0) != 0 || !(ss.flags & 1 /* SS_ONSTACK */))
        return 0;
    *alo = ss.sp;
    *ahi = (uint64_t)ss.sp + ss.size;
    return sp >= *alo && sp < *ahi;
}

/* The stack from rsp into the record: its first window (the return value,
 * r->stack_len) and, on an alternate signal stack, the interrupted stack
 * from the stack pointer the signal frame saved (r->sig_sp, r->sig_len,
 * after the first window padded to 8).  Everything the tracer unwinds is
 * copied now: frames below the signal frame read later from the live
 * process would belong to another moment (issue 29). */
static uint64_t copy_stack(uint64_t lo, uint64_t hi, struct agent_rec *r, uint64_t rsp)
{
    uint8_t *dst = (uint8_t *)(r + 1);
    r->sig_sp = 0;
    r->sig_len = 0;
    r->flags = 0;
    if (lo && rsp >= lo) {
        if (rsp < hi) {
            uint64_t n = hi - rsp < AGENT_STACK_MAX ? hi - rsp : AGENT_STACK_MAX;
            copy(dst, (const void *)(uintptr_t)rsp, n);
            return n;
        }
    }
    /* Where the stack ends is not known yet, or this is another stack:
     * the kernel copies what is mapped. */
    uint64_t alo, ahi;
    if (!on_altstack(rsp, &alo, &ahi))
        return read_window(dst, rsp, AGENT_STACK_MAX);
    r->flags = AGENT_REC_ALTSTACK;
    uint64_t n = read_window(dst, rsp, ahi - rsp < AGENT_STACK_MAX ? ahi - rsp : AGENT_STACK_MAX);
    uint64_t isp = sig_interrupted_sp(dst, n, alo, ahi);
    if (isp) {
        uint64_t m = read_window(dst + ((n + 7) & ~7ull), isp, AGENT_STACK_MAX);
        if (m) {
            r->sig_sp = isp;
            r->sig_len = (uint32_t)m;
        }
    }
    return n;
}

/* --sample: does the call r records go without its stack?  Releases
 * always (a release's stack is not kept by the books); an allocation when
 * no sample point falls in its bytes.  The mmap family always carries its
 * stack (few calls, the ledger's regions keep theirs). */
static int unsampled(struct agent_slot *s, const struct agent_rec *r, uint64_t out)
{
    uint64_t mean = agent_data.sample_bytes;
    const struct agent_fn *fn = &agent_data.fns[r->fn];
    if (!mean || (fn->flags & AGENT_FN_MAP))
        return 0;
    if (fn->flags & AGENT_FN_RELEASE)
        return 1;
    uint32_t a = fn->size_args;
    if (!a)
        return 0;
    uint64_t size = out;
    if (!(a & AGENT_SIZE_OUT)) {
        uint32_t i = (a & 0xf) - 1, j = ((a >> 4) & 0xf) - 1;
        size = i < 6 ? r->args[i] : 0;
        if (j < 6) {
            uint64_t m = r->args[j], p;
            size = __builtin_mul_overflow(size, m, &p) ? ~0ull : p;
        }
    }
    struct sample_state *st = &private_of(s)->sampler;
    if (!st->mean) /* the n-th thread to draw gets stream n: a seed repeats a run */
        st->rng = sample_seed_for(agent_data.sample_seed,
                                  __atomic_fetch_add(&agent_data.sample_streams, 1, __ATOMIC_RELAXED));
    return !sample_take(st, mean, size);
}

/* The fields every kind of record ends with, then its publication: the
 * tracer reads a record only once its pos is stored. */
static inline void seal(struct agent_slot *s, struct agent_rec *r, const struct agent_frame *f, uint64_t payload,
                        uint64_t stack_len, uint64_t t_exit, uint64_t ret, uint64_t out)
{
    r->len = (uint32_t)AGENT_REC_LEN(payload);
    r->tid = s->tid;
    r->stack_len = (uint32_t)stack_len;
    r->t_entry = f->t_entry;
    r->t_exit = t_exit;
    r->ret = ret;
    r->out = out;
    r->ra = frame_ra(f);
    uint64_t pos = s->reserve;
    s->reserve += r->len;
    __atomic_store_n(&r->pos, pos + 1, __ATOMIC_RELEASE);
}

static void publish(struct agent_ctl *ctl, struct agent_slot *s, const struct agent_frame *f,
                    uint64_t t_exit, uint64_t ret, uint64_t out)
{
    uint32_t depth = agent_data.depth < AGENT_STACK_MAX / 8 - 1 ? agent_data.depth : AGENT_STACK_MAX / 8 - 1;
    /* The room this record may need: on the thread's known stack, no more
     * of it than lies above sp (and the pcs of an unwind), so that a
     * shallow stack does not reserve the deepest copy's room and wait for
     * it in a full ring. */
    uint64_t lo = __atomic_load_n(&s->stack_lo, __ATOMIC_ACQUIRE);
    uint64_t hi = __atomic_load_n(&s->stack_hi, __ATOMIC_ACQUIRE);
    uint64_t sp = FRAME_SP(f), room = AGENT_REC_MAX_STACK;
    if (lo && sp >= lo && sp < hi) {
        uint64_t window = hi - sp < AGENT_STACK_MAX ? hi - sp : AGENT_STACK_MAX;
        uint64_t pcs = 8ull * (2 + depth);
        room = window > pcs ? window : pcs;
    }
    uint32_t max = (uint32_t)(sizeof(struct agent_rec) + room);
    struct agent_rec *r = ring_reserve(ctl, s, max);
    if (!r)
        return;
    if (!s->tid)
        s->tid = (int32_t)sys3(SYS_gettid, 0, 0, 0);
    r->fn = (uint16_t)f->idx;
    fill_regs(r, f);
    if (unsampled(s, r, out)) {
        /* No unwind, no stack: the block's address and size only. */
        r->kind = AGENT_REC_BARE;
        r->sig_sp = 0;
        r->sig_len = 0;
        r->flags = 0;
        seal(s, r, f, 0, 0, t_exit, ret, out);
        return;
    }
    uint64_t *payload = (uint64_t *)(r + 1), info = 0, n = 0;
    uint32_t fresh = 0;
#if AGENT_UNWIND_ROWS
    uint32_t np = agent_data.use_rows ? unwind_here(ctl, s, f, payload + 1, depth, &info, &fresh) : 0;
#else
    uint32_t np = 0;
    (void)depth;
#endif
    r->kind = AGENT_REC_PCS;
    uint64_t total;
    if (np) {
        payload[0] = info;
        n = total = 8ull * (1 + (info ? fresh : np));
        r->sig_sp = 0;
        r->sig_len = 0;
        r->flags = 0;
    } else {
        n = copy_stack(lo, hi, r, sp);
        total = r->sig_len ? ((n + 7) & ~7ull) + r->sig_len : n;
        r->kind = AGENT_REC_CALL;
    }
    seal(s, r, f, total, n, t_exit, ret, out);
}

#ifdef AGENT_EH_FRAME
extern const char __agent_eh_frame[] __attribute__((visibility("hidden")));

static int in_range(const struct agent_range *r, uint64_t a) { return a >= r->lo && a < r->hi; }

/* An exception thrown out of an intercepted function (operator new's
 * bad_alloc) is unwound by the target's unwinder (libgcc_s), which must
 * find unwind information for every frame it passes, the agent's entry
 * included, or the program ends in std::terminate.  The agent's is in its
 * image (.eh_frame, agent.ld), which no loaded object covers: it is
 * registered once with __register_frame_info(begin, object), whose address
 * the tracer gives when the unwinder is loaded.  From the agent, in the
 * calling thread, and not from the tracer at a stop: the call must come
 * after libgcc_s is relocated, from a thread that holds none of its locks,
 * and libgcc 13's registration allocates (unwinder_bookkeeping below: not
 * recorded).  So never from a call the dynamic linker makes
 * (loading, relocating) nor from one libgcc_s makes (it holds its object
 * lock while it allocates).  The object lives in the agent's data, which
 * stays mapped once registered (agent_stop).  A forked child has the copy
 * of both, registered already. */
static void register_frames(uint64_t ret)
{
    uint64_t fn = agent_data.register_frame_info;
    if (!fn || __atomic_load_n(&agent_data.frames, __ATOMIC_ACQUIRE) != 0 ||
        in_range(&agent_data.unwinder, ret) || in_range(&agent_data.interp, ret))
        return;
    uint32_t expect = 0;
    if (!__atomic_compare_exchange_n(&agent_data.frames, &expect, 1, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return;
    ((void (*)(const void *, void *))(uintptr_t)fn)(__agent_eh_frame, agent_data.frame_object);
    __atomic_store_n(&agent_data.frames, 2, __ATOMIC_RELEASE);
}

/* A heap call the unwinder makes once the agent's unwind information is
 * registered: its bookkeeping of that object (libgcc 12 sorts its FDEs
 * into an array it keeps, at the process's first throw; libgcc 13 inserts
 * it in a tree at the registration), which the untraced program never
 * makes (its own objects are found through dl_iterate_phdr).  Not the
 * program's: not recorded.  (A program that registers frames of its own,
 * a JIT, loses the record of the unwinder's allocations for them.) */
static int unwinder_bookkeeping(uint64_t ret)
{
    return __atomic_load_n(&agent_data.frames, __ATOMIC_ACQUIRE) != 0 && in_range(&agent_data.unwinder, ret);
}
#else
static void register_frames(uint64_t ret) { (void)ret; }
static int unwinder_bookkeeping(uint64_t ret) { (void)ret; return 0; }
#endif

/* Open calls whose frames are gone: an exception (or longjmp) left them
 * and agent_leave never ran.  Such a call writes no record (it made no
 * block: a failed call); its depth and its hold on the tracer's ordering
 * (inflight) end when the thread next enters the agent with a stack
 * pointer at or above the outermost open call's entry one, on the same
 * stack (a signal handler's on another stack proves nothing; before the
 * tracer gave the stack's bounds, within 1 MiB above it).  A live
 * call's own calls, tail calls included, enter below it: the agent's
 * frame lies between. */
static void drop_abandoned_calls(struct agent_slot *s, uint64_t sp)
{
    uint64_t open_sp = private_of(s)->open_sp;
    if (!s->depth || sp < open_sp)
        return;
    uint64_t lo = __atomic_load_n(&s->stack_lo, __ATOMIC_ACQUIRE);
    uint64_t hi = __atomic_load_n(&s->stack_hi, __ATOMIC_ACQUIRE);
    if (lo ? sp >= hi || open_sp < lo
           : sp - open_sp >= (1u << 20)) /* bounds not learnt yet (the tracer reads
                                            them at the thread's first record): near */
        return;
    s->depth = 0;
    __atomic_store_n(&s->inflight, 0, __ATOMIC_RELEASE);
}

__attribute__((visibility("hidden"), used)) void agent_enter(struct agent_frame *f);
__attribute__((visibility("hidden"), used)) void agent_leave(struct agent_frame *f);

void agent_enter(struct agent_frame *f)
{
    f->track = 0;
    f->slot = 0;
    if (f->idx >= AGENT_MAX_FNS) {
        f->orig = 0; /* cannot happen: the tracer writes the stubs */
        return;
    }
    const struct agent_fn *fn = &agent_data.fns[f->idx];
    f->orig = fn->orig;
    f->pc = fn->entry;
#ifdef AGENT_OWN_EXIDX
    if (fn->flags & AGENT_FN_FIND_EXIDX) {
        answer_find_exidx(f); /* else on to the function, untracked */
        return;
    }
#endif
    if (__atomic_load_n(&agent_data.state, __ATOMIC_ACQUIRE) != AGENT_ACTIVE)
        return;
    struct agent_ctl *ctl = ctl_of();
    struct agent_slot *s = find_slot(ctl);
    if (!s)
        return;
    if (s->busy) {
        s->lost++;
        return;
    }
    drop_abandoned_calls(s, FRAME_SP(f));
    struct slot_private *p = private_of(s);
    if (fn->flags & AGENT_FN_EXCEPTION) {
        p->exception_memory = 1;
        return;
    }
    /* A handler begins: drop_abandoned_calls above ended the calls the
     * exception left, entered from the handler's frame or deeper (until
     * then a heap call made inside the handler, puts' buffer, would look
     * like the allocator's own). */
    if (fn->flags & AGENT_FN_CATCH)
        return;
    uint64_t ret = frame_ra(f);
    if (unwinder_bookkeeping(ret))
        return;
    /* The C++ runtime's thrown object, allocated inside a call that is
     * about to fail by throwing (operator new's bad_alloc), or freed inside
     * one that caught it: the program's, as valgrind counts it; else its
     * free after the catch, outside any call, would be of a block the
     * books never had (or its allocation would stay booked). */
    uint32_t program_call = p->exception_memory && !(fn->flags & AGENT_FN_MAP);
    if (!(fn->flags & AGENT_FN_MAP))
        p->exception_memory = 0;
    if (!program_call && call_is_internal(s, fn->flags, ret))
        return;
    register_frames(ret);
    s->busy = 1;
    if (fn->flags & AGENT_FN_RELEASE) {
        /* Recorded before the function runs: whatever another thread does
         * with the memory released comes after this record is visible. */
        f->t_entry = stamp(ctl);
        publish(ctl, s, f, f->t_entry, 0, 0);
        s->busy = 0;
        return;
    }
    f->t_entry = 0; /* an allocation's record is stamped when it returns */
    if (fn->flags & AGENT_FN_OPEN_RELEASE) {
        /* It releases memory inside the call but is recorded at its return:
         * the tracer holds back every record stamped after this entry until
         * the call's own record is in (agent_ring.c).  A plain store is
         * enough (x86 stores become visible in program order): before
         * anything the call does is seen by another thread (the block a
         * realloc frees inside, taken by another thread's malloc), the
         * tracer sees this stamp, or else it read its own watermark before
         * that thread's call even began. */
        f->t_entry = stamp(ctl);
        if (s->depth == 0)
            __atomic_store_n(&s->inflight, f->t_entry, __ATOMIC_RELEASE);
        STORE_LOAD_FENCE(); /* (x86: none needed; weaker CPUs: the stamp goes first) */
    }
    if (s->depth++ == 0)
        private_of(s)->open_sp = FRAME_SP(f);
    s->busy = 0;
    f->slot = (uint64_t)(uintptr_t)s;
    f->track = 1;
}

void agent_leave(struct agent_frame *f)
{
    struct agent_slot *s = (struct agent_slot *)(uintptr_t)f->slot;
    uint64_t t_exit = stamp(ctl_of());
    s->busy = 1;
    if (s->depth)
        s->depth--;
    uint64_t out = 0;
    if ((agent_data.fns[f->idx].flags & AGENT_FN_MEMALIGN) && (int)f->ret == 0 && FRAME_ARG0(f))
        out = AGENT_LOAD_PTR(FRAME_ARG0(f));
    if ((agent_data.fns[f->idx].flags & AGENT_FN_STRLEN) && f->ret) {
        /* a string copy just made: its size, read here while it is ours */
        const volatile char *c = (const volatile char *)(uintptr_t)f->ret;
        uint64_t n = 0;
        while (c[n])
            n++;
        out = n + 1;
    }
    if (__atomic_load_n(&agent_data.state, __ATOMIC_ACQUIRE) == AGENT_ACTIVE)
        publish(ctl_of(), s, f, t_exit, f->ret, out);
    if (s->depth == 0)
        __atomic_store_n(&s->inflight, 0, __ATOMIC_RELEASE);
    s->busy = 0;
}

#endif
