/* Rings by demand (issue 28; docs/agent.md, "Rings by demand"): where each
 * slot's ring is, as the tracer follows it; the larger ring granted to a
 * thread that had to wait for room; the move the thread makes to it; and
 * the memory given back when a ring is left or its thread is gone.
 *
 * Every thread starts in its slot's own ring (AGENT_RING_MIN bytes).  A
 * thread that waited for room (its slot's waits went up) is granted a pool
 * ring of twice that (agent_slot grant), then twice that again, up to
 * AGENT_RING_SIZE.  The thread moves when its ring is empty: it ends the
 * ring with a move record after storing the new ring's word and base
 * (agent_core.inc.c, ring_move); the tracer, reading that record, takes
 * the new ring only if it is the one it granted, begun where the old
 * ring's lap holding the record began (so the record keeps its place in a
 * larger ring at the same spot), and gives the old ring's pages back.  When a thread exits its
 * slot is retired; once its ring is read to the end the slot's pages go
 * back and the slot is free for the next thread.  Pages go back with
 * MADV_REMOVE on the tracer's mapping: the memfd's pages are freed, so
 * every mapping of them (the target's RssShmem) loses them. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "shared/log.h"
#include "target/agent/agent_internal.h"
#include "target/tracer/tracee.h"

const uint8_t *agent_ring_at(const struct agent_engine *a, unsigned s, uint64_t *size)
{
    uint64_t off = agent_ring_word(a->ring_word[s], s, size);
    return off ? a->map + off : NULL;
}

/* The pages of a ring word back to the kernel (zeroes from here on: no
 * zero pos is a committed record). */
static void give_back(struct agent_engine *a, uint64_t word, unsigned s)
{
    uint64_t size = 0, off = agent_ring_word(word, s, &size);
    if (word)
        size = AGENT_RING_SIZE; /* a pool ring: all it may have touched */
    if (off && madvise(a->map + off, size, MADV_REMOVE) == 0)
        a->ring_bytes_freed += size;
}

static unsigned pool_index(uint64_t word) { return (unsigned)((word >> 8) & 0xff) - 1; }

bool agent_ring_moved(struct agent_engine *a, unsigned s, uint64_t next_tail)
{
    if (s >= AGENT_SLOTS)
        return false;
    const struct agent_slot *slot = &((const struct agent_ctl *)a->map)->slots[s];
    uint64_t word = __atomic_load_n(&slot->ring, __ATOMIC_ACQUIRE);
    uint64_t base = __atomic_load_n(&slot->ring_base, __ATOMIC_ACQUIRE);
    uint64_t old = a->ring_word[s], size = 0, at = next_tail - 16;
    agent_ring_word(old, s, &size);
    /* Only the ring granted, begun where the old ring's lap with the move
     * record began (agent_core.inc.c, ring_move). */
    if (word == old || word != a->ring_grant[s] || !size ||
        base != at - ((at - a->ring_base[s]) & (size - 1)))
        return false;
    a->ring_word[s] = word;
    a->ring_base[s] = base;
    a->ring_moves++;
    if (!old || pool_index(old) != pool_index(word))
        give_back(a, old, s);
    if (old && pool_index(old) != pool_index(word))
        a->pool_used &= ~(1ull << pool_index(old));
    return true;
}

/* The next larger ring for slot s, or its ring when there is none. */
static uint64_t larger_ring(struct agent_engine *a, unsigned s)
{
    uint64_t word = a->ring_word[s];
    if (word) {
        unsigned lg = (unsigned)(word & 0xff);
        return (1ull << lg) < AGENT_RING_SIZE ? AGENT_RING_POOL_WORD(pool_index(word), lg + 1) : word;
    }
    for (unsigned i = 0; i < AGENT_POOL_RINGS; i++)
        if (!(a->pool_used & (1ull << i))) {
            a->pool_used |= 1ull << i;
            return AGENT_RING_POOL_WORD(i, 17); /* twice AGENT_RING_MIN */
        }
    return word;
}

/* A retired slot whose ring is read to the end: its pages back, its
 * fields as a new thread finds them, then the slot free (the key last,
 * released: a thread that claims it sees the rest).  The ring positions
 * go on where they are, and so do the unwind memos of both sides (a new
 * thread continues the same ring). */
static void free_slot(struct agent_engine *a, unsigned s)
{
    struct agent_slot *slot = &((struct agent_ctl *)a->map)->slots[s];
    uint64_t at = a->tails[s];
    give_back(a, 0, s);
    if (a->ring_word[s]) {
        give_back(a, a->ring_word[s], s);
        a->pool_used &= ~(1ull << pool_index(a->ring_word[s]));
    }
    if (a->ring_grant[s] && (!a->ring_word[s] ||
                             pool_index(a->ring_grant[s]) != pool_index(a->ring_word[s])))
        a->pool_used &= ~(1ull << pool_index(a->ring_grant[s]));
    a->ring_word[s] = a->ring_grant[s] = 0;
    a->ring_base[s] = at;
    a->broken[s] = false;
    a->stack_known[s] = false;
    a->waits_at[s] = __atomic_load_n(&slot->waits, __ATOMIC_RELAXED);
    slot->tid = 0;
    slot->depth = 0;
    slot->busy = 0;
    slot->waiting = 0;
    slot->inflight = 0;
    slot->reserve = slot->tail_seen = slot->rung = at;
    slot->stack_lo = slot->stack_hi = 0;
    slot->ring = slot->grant = 0;
    slot->ring_base = at;
    __atomic_store_n(&slot->tail, at, __ATOMIC_RELEASE);
    __atomic_store_n(&slot->key, (uint64_t)AGENT_KEY_FREE, __ATOMIC_RELEASE);
    a->slots_freed++;
}

void agent_rings_tend(struct agent_engine *a, const unsigned *active, unsigned nactive)
{
    struct agent_ctl *ctl = (struct agent_ctl *)a->map;
    for (unsigned i = 0; i < nactive; i++) {
        unsigned s = active[i];
        struct agent_slot *slot = &ctl->slots[s];
        if (__atomic_load_n(&slot->key, __ATOMIC_ACQUIRE) == AGENT_KEY_RETIRED) {
            /* (its thread is gone: nothing more comes) */
            if (a->broken[s] ||
                (!a->head_rec[s] && a->tails[s] == __atomic_load_n(&slot->reserve, __ATOMIC_ACQUIRE)))
                free_slot(a, s);
            continue;
        }
        uint64_t waits = __atomic_load_n(&slot->waits, __ATOMIC_RELAXED);
        if (waits == a->waits_at[s] || a->broken[s])
            continue;
        a->waits_at[s] = waits;
        /* It waited for room: a larger ring, unless one is granted already. */
        if (a->ring_grant[s] != a->ring_word[s])
            continue;
        uint64_t grant = larger_ring(a, s);
        if (grant != a->ring_word[s]) {
            a->ring_grant[s] = grant;
            __atomic_store_n(&slot->grant, grant, __ATOMIC_RELEASE);
        }
    }
}

void agent_rings_retire(struct agent_engine *a, unsigned s)
{
    struct agent_slot *slot = &((struct agent_ctl *)a->map)->slots[s];
    /* The thread is stopped at its exit: it writes nothing more.  A thread
     * with the same thread pointer later (its stack reused) takes a new slot. */
    __atomic_store_n(&slot->key, (uint64_t)AGENT_KEY_RETIRED, __ATOMIC_RELEASE);
}

void agent_rings_fork(struct agent_engine *a, const struct agent_slot *p, unsigned s)
{
    struct agent_slot *c = &((struct agent_ctl *)a->map)->slots[s];
    /* The forking thread may be writing a record where its ring is now (it
     * may have moved since the parent's tracer last read that ring): the
     * child's region has the same ring at the same place, from the same
     * base.  (The parent's values: checked as any.) */
    uint64_t word = __atomic_load_n(&p->ring, __ATOMIC_ACQUIRE), size = 0;
    uint64_t base = __atomic_load_n(&p->ring_base, __ATOMIC_ACQUIRE);
    if (!agent_ring_word(word, s, &size))
        word = 0;
    a->ring_word[s] = a->ring_grant[s] = word;
    a->ring_base[s] = base;
    if (word)
        a->pool_used |= 1ull << pool_index(word);
    c->ring = c->grant = word;
    c->ring_base = base;
}
