#include "target/heap/heap.h"

#include "shared/xalloc.h"
#include "target/heap/map_ledger.h"
#include "target/heap/sample_draw.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* One live (or forgotten) block: 20 bytes, the address, one packed word:
 *   bits  0-27  size; SIZE_BIG when it does not fit (then in the big list)
 *   bits 28-31  the heap that made it (heap_set_heap; 0: not said)
 *   bits 32-59  stack id (28 bits: far more stacks than memory could hold;
 *               a larger id is recorded as 0, "no stack")
 *   bits 60-62  kind
 *   bit  63     forgotten (recorded before the last heap_clear)
 * and the allocation's sequence number (the leak scan picks the leader of a
 * lost cycle by allocation order, as memcheck's allocator mostly does;
 * it wraps after 2^32 allocations). */
struct __attribute__((packed, aligned(4))) block_slot {
    uint64_t addr;          /* 0 = empty slot */
    uint64_t meta;
    uint32_t seq;
};

#define SIZE_BIG 0x0fffffffull
#define HEAP_SHIFT 28
#define HEAP_MASK 0xfull
#define STACK_SHIFT 32
#define STACK_MASK ((1ull << 28) - 1)
#define KIND_SHIFT 60
#define FORGOTTEN (1ull << 63)

/* The table grows past 80% load, so right after a doubling it is 40% full.
 * With 20-byte slots a live block costs 25-50 bytes, and at most 60 while
 * the old table and the new one both exist during a growth (the peak). */
#define LOAD_NUM 4
#define LOAD_DEN 5

/* Blocks of 256 MiB or more, by address: rare enough for a plain list. */
struct big_block {
    uint64_t addr, size;
};

/* A stack's figures, and its in-use figures at the peak: valid in
 * peak_bytes/peak_blocks when mod_seq > the peak's sequence number (the
 * stack changed after the peak and saved them first), else its current
 * figures are the ones at the peak. */
struct stack_rec {
    struct stack_totals t;
    uint64_t peak_bytes, peak_blocks;
    uint64_t mod_seq;       /* event that last changed t's in-use figures */
};

/* The last block each thread allocated (temporary allocations). */
struct thread_last {
    uint64_t key;           /* tid + 1; 0 = empty */
    uint64_t last;
};

struct heap_books {
    struct block_slot *slots;
    size_t mask;            /* capacity - 1 */
    unsigned shift;         /* 64 - log2(capacity) */
    size_t used;            /* occupied slots, forgotten blocks included */
    uint64_t seq_next;      /* sequence number of the next allocation */

    struct big_block *big;
    size_t nbig, big_cap;

    struct heap_totals totals;

    struct stack_rec *per_stack;      /* indexed by stack id */
    uint32_t per_stack_cap;
    uint32_t stack_limit;

    struct map_ledger maps;           /* the mmap family's regions */

    uint64_t seq;                     /* alloc and free events recorded */
    uint64_t peak_seq;                /* the event that reached the peak */
    uint64_t peak_alloc;              /* seq_next then: its allocation's number */
    struct heap_peak peak;
    struct timespec origin;           /* when the books were created */
    double loaded_seconds;            /* loaded books: their moment; else < 0 */

    uint32_t cur_tid;
    unsigned cur_heap;                /* heap_set_heap */
    uint64_t cur_last;                /* the last block cur_tid allocated, 0 = none */
    struct thread_last *threads;      /* the other threads' */
    size_t threads_mask;              /* capacity - 1 (0: no table yet) */
    size_t nthreads;

    uint64_t sample_bytes;            /* --sample's mean (0: every block has its stack) */
    uint32_t unsampled_stack;         /* the pseudo-stack of the blocks not sampled */
};

static const char *const kind_names[ALLOC_KIND_COUNT] = {
    [ALLOC_MALLOC] = "malloc",
    [ALLOC_NEW] = "new",
    [ALLOC_NEW_ARRAY] = "new[]",
    [ALLOC_NEW_ALIGNED] = "aligned new",
    [ALLOC_NEW_ARRAY_ALIGNED] = "aligned new[]",
    [ALLOC_ANY] = "any",
    [ALLOC_CUSTOM] = "custom",
};

const char *alloc_kind_name(enum alloc_kind kind)
{
    return (unsigned)kind < ALLOC_KIND_COUNT ? kind_names[kind] : "?";
}

/* The key of a custom block that begins where a live block of another
 * kind begins (heap.h): its address with this bit, which no user address
 * of a traced CPU has.  Blocks are given out without it (slot_to_block). */
#define KEY_NESTED (1ull << 63)

static size_t home_of(const struct heap_books *b, uint64_t addr)
{
    uint64_t h = (addr ^ (addr >> 29)) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> b->shift);
}

static void table_alloc(struct heap_books *b, unsigned bits)
{
    b->slots = xcalloc((size_t)1 << bits, sizeof(*b->slots));
    b->mask = ((size_t)1 << bits) - 1;
    b->shift = 64 - bits;
}

struct heap_books *heap_books_new(void)
{
    struct heap_books *b = xcalloc(1, sizeof(*b));
    table_alloc(b, 10);
    clock_gettime(CLOCK_MONOTONIC, &b->origin);
    b->loaded_seconds = -1;
    return b;
}

void heap_books_free(struct heap_books *b)
{
    if (!b)
        return;
    free(b->slots);
    free(b->big);
    free(b->per_stack);
    map_ledger_free(&b->maps);
    free(b->threads);
    free(b);
}

/* Index of addr's slot, or of the empty slot where it would go. */
static size_t probe(const struct heap_books *b, uint64_t addr)
{
    size_t i = home_of(b, addr);
    while (b->slots[i].addr && b->slots[i].addr != addr)
        i = (i + 1) & b->mask;
    return i;
}

static void table_grow(struct heap_books *b)
{
    struct block_slot *old = b->slots;
    size_t old_cap = b->mask + 1;
    table_alloc(b, 64 - b->shift + 1);
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].addr)
            b->slots[probe(b, old[i].addr)] = old[i];
    free(old);
}

/* Backward-shift deletion: no tombstones, so churn never slows lookups. */
static void slot_remove(struct heap_books *b, size_t i)
{
    size_t j = i;
    for (;;) {
        j = (j + 1) & b->mask;
        if (!b->slots[j].addr)
            break;
        size_t k = home_of(b, b->slots[j].addr);
        /* Move slot j back to the hole at i unless its home lies in (i, j]. */
        bool home_between = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (!home_between) {
            b->slots[i] = b->slots[j];
            i = j;
        }
    }
    b->slots[i].addr = 0;
    b->used--;
}

static struct stack_rec *stack_slot(struct heap_books *b, uint32_t id)
{
    if (id >= b->per_stack_cap) {
        uint32_t cap = b->per_stack_cap ? b->per_stack_cap : 256;
        while (cap <= id)
            cap = cap > UINT32_MAX / 2 ? UINT32_MAX : cap * 2;
        /* calloc, not realloc + memset: a large array comes as untouched
         * zero pages, so a sparse high id costs address space, not RSS. */
        struct stack_rec *grown = xcalloc(cap, sizeof(*grown));
        if (b->per_stack_cap)
            memcpy(grown, b->per_stack, (size_t)b->per_stack_cap * sizeof(*grown));
        free(b->per_stack);
        b->per_stack = grown;
        b->per_stack_cap = cap;
    }
    if (id >= b->stack_limit)
        b->stack_limit = id + 1;
    return &b->per_stack[id];
}

static struct big_block *big_find(const struct heap_books *b, uint64_t addr)
{
    for (size_t i = 0; i < b->nbig; i++)
        if (b->big[i].addr == addr)
            return &b->big[i];
    return NULL;
}

static void big_forget(struct heap_books *b, uint64_t addr)
{
    struct big_block *g = big_find(b, addr);
    if (g)
        *g = b->big[--b->nbig];
}

static void big_set(struct heap_books *b, uint64_t addr, uint64_t size)
{
    struct big_block *g = big_find(b, addr);
    if (!g) {
        if (b->nbig == b->big_cap) {
            b->big_cap = b->big_cap ? b->big_cap * 2 : 8;
            b->big = xreallocarray(b->big, b->big_cap, sizeof(*b->big));
        }
        g = &b->big[b->nbig++];
    }
    *g = (struct big_block){ addr, size };
}

static uint64_t slot_size(const struct heap_books *b, const struct block_slot *s)
{
    uint64_t size = s->meta & SIZE_BIG;
    if (size == SIZE_BIG) {
        const struct big_block *g = big_find(b, s->addr);
        size = g ? g->size : SIZE_BIG;
    }
    return size;
}

static uint32_t slot_stack(const struct block_slot *s)
{
    return (uint32_t)((s->meta >> STACK_SHIFT) & STACK_MASK);
}

static bool slot_forgotten(const struct block_slot *s)
{
    return (s->meta & FORGOTTEN) != 0;
}

/* The stack's record, about to change in event b->seq: the first change
 * after the peak saves the figures it had at the peak. */
static struct stack_rec *stack_touch(struct heap_books *b, uint32_t id)
{
    struct stack_rec *r = stack_slot(b, id);
    if (r->mod_seq <= b->peak_seq) {
        r->peak_bytes = r->t.bytes_in_use;
        r->peak_blocks = r->t.blocks_in_use;
    }
    r->mod_seq = b->seq;
    return r;
}

/* What one block adds to its stack's figures: itself, or under --sample
 * its estimate, the block scaled by the inverse of the probability that it
 * was sampled, 1 - exp(-size/mean).  The count is that weight rounded up
 * or down at random (by the block's sequence number, so that its free
 * takes back what its allocation added): unbiased, and whole. */
struct stack_share {
    uint64_t bytes, blocks;
};

static struct stack_share block_share(const struct heap_books *b, uint64_t size, uint32_t seq)
{
    if (!b->sample_bytes)
        return (struct stack_share){size, 1};
    if (!size)
        return (struct stack_share){0, 0}; /* never sampled: no estimate */
    double w = 1.0 / -expm1(-(double)size / (double)b->sample_bytes);
    double whole = floor(w);
    uint64_t h = sample_seed_for(0, seq); /* by the sequence alone: a seeded run repeats */
    double u = (double)(h >> 11) * 0x1.0p-53;
    return (struct stack_share){(uint64_t)llround((double)size * w),
                                (uint64_t)whole + (u < w - whole ? 1 : 0)};
}

/* Does the block's stack carry figures?  The pseudo-stack of the blocks
 * not sampled does not: the sampled stacks' estimates stand for them. */
static bool stack_counted(const struct heap_books *b, uint32_t stack_id)
{
    return !b->sample_bytes || stack_id != b->unsampled_stack;
}

void heap_set_sample(struct heap_books *b, uint64_t mean, uint32_t unsampled_stack)
{
    b->sample_bytes = mean;
    b->unsampled_stack = unsampled_stack;
}

uint64_t heap_sample_bytes(const struct heap_books *b)
{
    return b->sample_bytes;
}

/* Take a current block out of the in-use figures. */
static void unaccount(struct heap_books *b, const struct block_slot *s)
{
    uint64_t size = slot_size(b, s);
    b->totals.in_use_bytes -= size;
    b->totals.in_use_blocks--;
    if (!stack_counted(b, slot_stack(s)))
        return;
    struct stack_share sh = block_share(b, size, s->seq);
    struct stack_totals *st = &stack_touch(b, slot_stack(s))->t;
    st->bytes_in_use -= sh.bytes;
    st->blocks_in_use -= sh.blocks;
}

static double seconds_since(const struct timespec *origin)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - origin->tv_sec) + (double)(now.tv_nsec - origin->tv_nsec) / 1e9;
}

double heap_seconds(const struct heap_books *b)
{
    if (b->loaded_seconds >= 0)
        return b->loaded_seconds;
    return seconds_since(&b->origin);
}

/* ---- threads' last allocations ---- */

static size_t thread_home(const struct heap_books *b, uint64_t key)
{
    return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & b->threads_mask;
}

static struct thread_last *thread_entry(struct heap_books *b, uint32_t tid, bool create)
{
    uint64_t key = (uint64_t)tid + 1;
    if (!b->threads_mask) {
        if (!create)
            return NULL;
        b->threads = xcalloc(16, sizeof(*b->threads));
        b->threads_mask = 15;
    }
    size_t i = thread_home(b, key);
    while (b->threads[i].key && b->threads[i].key != key)
        i = (i + 1) & b->threads_mask;
    if (b->threads[i].key || !create)
        return b->threads[i].key ? &b->threads[i] : NULL;
    if ((b->nthreads + 1) * 2 > b->threads_mask + 1) {
        /* Grow at half full; entries are never removed (one per tid seen). */
        struct thread_last *old = b->threads;
        size_t old_cap = b->threads_mask + 1;
        b->threads = xcalloc(old_cap * 2, sizeof(*b->threads));
        b->threads_mask = old_cap * 2 - 1;
        for (size_t k = 0; k < old_cap; k++)
            if (old[k].key) {
                size_t j = thread_home(b, old[k].key);
                while (b->threads[j].key)
                    j = (j + 1) & b->threads_mask;
                b->threads[j] = old[k];
            }
        free(old);
        return thread_entry(b, tid, true);
    }
    b->nthreads++;
    b->threads[i].key = key;
    return &b->threads[i];
}

void heap_set_thread(struct heap_books *b, uint32_t tid)
{
    if (tid == b->cur_tid)
        return;
    /* The current thread's figure lives in the books; the table is only
     * touched when the thread changes. */
    if (b->cur_last || thread_entry(b, b->cur_tid, false))
        thread_entry(b, b->cur_tid, true)->last = b->cur_last;
    const struct thread_last *e = thread_entry(b, tid, false);
    b->cur_last = e ? e->last : 0;
    b->cur_tid = tid;
}

/* The books' peak moves up with what is in use now. */
static void note_peak(struct heap_books *b)
{
    if (b->totals.in_use_bytes > b->peak.bytes) {
        b->peak.bytes = b->totals.in_use_bytes;
        b->peak.blocks = b->totals.in_use_blocks;
        b->peak.seconds = seconds_since(&b->origin);
        b->peak_seq = b->seq;
        b->peak_alloc = b->seq_next;
    }
}

void heap_record_alloc(struct heap_books *b, uint64_t addr, uint64_t size,
                       uint32_t stack_id, enum alloc_kind kind)
{
    if (!addr)
        return;
    if (stack_id > STACK_MASK)
        stack_id = 0;
    b->seq++;
    size_t i = probe(b, addr);
    struct block_slot *s = &b->slots[i];
    if (kind == ALLOC_CUSTOM && s->addr && !slot_forgotten(s) &&
        ((s->meta >> KIND_SHIFT) & 7) != ALLOC_CUSTOM) {
        addr |= KEY_NESTED;
        i = probe(b, addr);
        s = &b->slots[i];
    }
    if (s->addr) {
        if (!slot_forgotten(s)) {
            unaccount(b, s);
            b->totals.replaced_blocks++;
        }
        if ((s->meta & SIZE_BIG) == SIZE_BIG)
            big_forget(b, addr);
    } else {
        b->used++;
    }
    uint64_t small = size;
    if (size >= SIZE_BIG) {
        small = SIZE_BIG;
        big_set(b, addr, size);
    }
    *s = (struct block_slot){ addr, small | ((uint64_t)(b->cur_heap & HEAP_MASK) << HEAP_SHIFT) |
                                        ((uint64_t)stack_id << STACK_SHIFT) |
                                        ((uint64_t)kind << KIND_SHIFT),
                              (uint32_t)++b->seq_next };

    b->totals.allocs++;
    b->totals.bytes_allocated += size;
    b->totals.in_use_bytes += size;
    b->totals.in_use_blocks++;
    if (stack_counted(b, stack_id)) {
        struct stack_share sh = block_share(b, size, s->seq);
        struct stack_totals *st = &stack_touch(b, stack_id)->t;
        st->allocs += sh.blocks;
        st->bytes_allocated += sh.bytes;
        st->bytes_in_use += sh.bytes;
        st->blocks_in_use += sh.blocks;
    }
    b->cur_last = addr & ~KEY_NESTED;
    note_peak(b);

    if (b->used * LOAD_DEN > (b->mask + 1) * LOAD_NUM)
        table_grow(b);
}

static void slot_to_block(const struct heap_books *b, const struct block_slot *s,
                          struct heap_block *out)
{
    out->addr = s->addr & ~KEY_NESTED;
    out->size = slot_size(b, s);
    out->stack_id = slot_stack(s);
    out->kind = (enum alloc_kind)((s->meta >> KIND_SHIFT) & 7);
    out->heap = (unsigned)((s->meta >> HEAP_SHIFT) & HEAP_MASK);
    out->seq = s->seq;
}

enum heap_free_result heap_record_free(struct heap_books *b, uint64_t addr,
                                       enum alloc_kind kind, struct heap_block *freed)
{
    b->totals.frees++;
    if (!addr)
        return HEAP_FREE_UNKNOWN;
    size_t i = probe(b, addr);
    if (kind == ALLOC_CUSTOM && b->slots[probe(b, addr | KEY_NESTED)].addr)
        i = probe(b, addr |= KEY_NESTED);
    struct block_slot *s = &b->slots[i];
    if (!s->addr)
        return HEAP_FREE_UNKNOWN;
    struct heap_block blk;
    slot_to_block(b, s, &blk);
    b->seq++;
    if (!slot_forgotten(s)) {
        unaccount(b, s);
        if (b->cur_last == (addr & ~KEY_NESTED)) {
            b->totals.temporary++;
            if (stack_counted(b, blk.stack_id))
                stack_slot(b, blk.stack_id)->t.temporary +=
                    block_share(b, blk.size, blk.seq).blocks;
        }
    }
    /* heaptrack's rule: any free ends the chance of the next one. */
    b->cur_last = 0;
    if ((s->meta & SIZE_BIG) == SIZE_BIG)
        big_forget(b, addr);
    slot_remove(b, i);
    if (freed)
        *freed = blk;
    if (blk.heap && b->cur_heap && blk.heap != b->cur_heap)
        return HEAP_FREE_OTHER_HEAP;
    return blk.kind == kind || blk.kind == ALLOC_ANY || kind == ALLOC_ANY ? HEAP_FREE_OK
                                                                          : HEAP_FREE_MISMATCH;
}

enum heap_free_result heap_record_drop(struct heap_books *b, uint64_t addr, enum alloc_kind kind,
                                       struct heap_block *freed)
{
    enum heap_free_result r = heap_record_free(b, addr, kind, freed);
    b->totals.frees--;
    return r;
}

bool heap_record_resize(struct heap_books *b, uint64_t addr, uint64_t old_size, uint64_t new_size)
{
    if (!addr || !new_size)
        return false;
    size_t i = probe(b, addr | KEY_NESTED);
    if (!b->slots[i].addr)
        i = probe(b, addr);
    struct block_slot *s = &b->slots[i];
    if (!s->addr || slot_forgotten(s) || slot_size(b, s) != old_size)
        return false;
    if (old_size == new_size)
        return true;
    b->seq++;
    if ((s->meta & SIZE_BIG) == SIZE_BIG)
        big_forget(b, s->addr);
    uint64_t small = new_size;
    if (new_size >= SIZE_BIG) {
        small = SIZE_BIG;
        big_set(b, s->addr, new_size);
    }
    s->meta = (s->meta & ~SIZE_BIG) | small;
    b->totals.in_use_bytes += new_size - old_size;  /* wraps right when it shrinks */
    /* The stack's share moves from the old size's to the new one's, as
     * unaccount will take the new one's out (the same under --sample). */
    if (stack_counted(b, slot_stack(s))) {
        struct stack_share was = block_share(b, old_size, s->seq), now = block_share(b, new_size, s->seq);
        struct stack_totals *st = &stack_touch(b, slot_stack(s))->t;
        st->bytes_in_use += now.bytes - was.bytes;
        st->blocks_in_use += now.blocks - was.blocks;
    }
    note_peak(b);
    return true;
}

void heap_count_pool_alloc(struct heap_books *b, uint64_t size, uint32_t stack_id)
{
    if (stack_id > STACK_MASK)
        stack_id = 0;
    b->totals.allocs++;
    b->totals.bytes_allocated += size;
    struct stack_totals *st = &stack_touch(b, stack_id)->t;
    st->allocs++;
    st->bytes_allocated += size;
}

bool heap_lookup(const struct heap_books *b, uint64_t addr, struct heap_block *out)
{
    if (!addr)
        return false;
    const struct block_slot *s = &b->slots[probe(b, addr)];
    if (!s->addr || slot_forgotten(s))
        return false;
    if (out)
        slot_to_block(b, s, out);
    return true;
}

void heap_prefetch(const struct heap_books *b, uint64_t addr)
{
    if (addr)
        __builtin_prefetch(&b->slots[home_of(b, addr)]);
}

bool heap_knows(const struct heap_books *b, uint64_t addr)
{
    return addr && b->slots[probe(b, addr)].addr != 0;
}

static void *memdup_array(const void *p, size_t n, size_t size)
{
    if (!p || !n)
        return NULL;
    void *c = xreallocarray(NULL, n, size);
    memcpy(c, p, n * size);
    return c;
}

struct heap_books *heap_books_clone(const struct heap_books *b)
{
    struct heap_books *c = xmalloc(sizeof(*c));
    *c = *b;
    c->slots = memdup_array(b->slots, b->mask + 1, sizeof(*b->slots));
    c->per_stack = memdup_array(b->per_stack, b->per_stack_cap, sizeof(*b->per_stack));
    c->big = memdup_array(b->big, b->big_cap, sizeof(*b->big)); /* its own, as the slots */
    if (!c->big)
        c->nbig = c->big_cap = 0;
    map_ledger_clone(&c->maps, &b->maps);
    c->threads = memdup_array(b->threads, b->threads_mask ? b->threads_mask + 1 : 0,
                              sizeof(*b->threads));
    return c;
}

void heap_clear(struct heap_books *b)
{
    /* One pass over the table: clears are rare (a console command). */
    for (size_t i = 0; i <= b->mask; i++)
        if (b->slots[i].addr)
            b->slots[i].meta |= FORGOTTEN;
    uint64_t mapped_bytes = b->totals.mapped_bytes;
    uint64_t mapped_regions = b->totals.mapped_regions;
    uint64_t maps_recorded = b->totals.maps_recorded;
    memset(&b->totals, 0, sizeof(b->totals));
    b->totals.mapped_bytes = mapped_bytes;
    b->totals.mapped_regions = mapped_regions;
    b->totals.maps_recorded = maps_recorded;
    if (b->per_stack)
        memset(b->per_stack, 0, (size_t)b->per_stack_cap * sizeof(*b->per_stack));
    /* Every mod_seq is now 0: all stacks read their (zero) current figures. */
    memset(&b->peak, 0, sizeof(b->peak));
    b->peak_seq = b->seq;
}

bool heap_block_in_use_at_peak(const struct heap_books *b, const struct heap_block *blk)
{
    if (!b->peak.bytes)
        return false;
    uint64_t after = b->seq_next - b->peak_alloc;
    if (after >= (1ull << 32))
        return blk->seq <= (uint32_t)b->peak_alloc; /* a guess: too many to tell */
    /* Allocated after the peak: its number is one of the `after` ones that
     * follow the peak's, modulo 2^32. */
    uint32_t d = blk->seq - (uint32_t)b->peak_alloc;
    return d == 0 || d > after;
}

void heap_get_peak(const struct heap_books *b, struct heap_peak *out)
{
    *out = b->peak;
}

void heap_get_stack_peak(const struct heap_books *b, uint32_t stack_id, struct stack_totals *out)
{
    memset(out, 0, sizeof(*out));
    if (stack_id >= b->per_stack_cap)
        return;
    const struct stack_rec *r = &b->per_stack[stack_id];
    bool changed_since = r->mod_seq > b->peak_seq;
    out->bytes_in_use = changed_since ? r->peak_bytes : r->t.bytes_in_use;
    out->blocks_in_use = changed_since ? r->peak_blocks : r->t.blocks_in_use;
}

void heap_get_totals(const struct heap_books *b, struct heap_totals *out)
{
    *out = b->totals;
}

void heap_get_stack_totals(const struct heap_books *b, uint32_t stack_id,
                           struct stack_totals *out)
{
    if (stack_id < b->per_stack_cap)
        *out = b->per_stack[stack_id].t;
    else
        memset(out, 0, sizeof(*out));
}

uint32_t heap_stack_id_limit(const struct heap_books *b)
{
    return b->stack_limit;
}

void heap_foreach_block(const struct heap_books *b, heap_block_fn fn, void *ctx)
{
    for (size_t i = 0; i <= b->mask; i++) {
        const struct block_slot *s = &b->slots[i];
        if (s->addr && !slot_forgotten(s)) {
            struct heap_block blk;
            slot_to_block(b, s, &blk);
            fn(ctx, &blk);
        }
    }
}

static int cmp_block_addr(const void *a, const void *b)
{
    const struct heap_block *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    /* a custom block nested at another's address: after it */
    return (x->kind == ALLOC_CUSTOM) - (y->kind == ALLOC_CUSTOM);
}

struct heap_block *heap_export_blocks(const struct heap_books *b, size_t *count)
{
    /* The figure may exceed the blocks kept (loaded books keep none): the
     * array is sized by the table. */
    size_t n = b->totals.in_use_blocks < b->used ? (size_t)b->totals.in_use_blocks : b->used, k = 0;
    struct heap_block *out = n ? xreallocarray(NULL, n, sizeof(*out)) : NULL;
    for (size_t i = 0; i <= b->mask && k < n; i++) {
        const struct block_slot *s = &b->slots[i];
        if (s->addr && !slot_forgotten(s))
            slot_to_block(b, s, &out[k++]);
    }
    if (k > 1)
        qsort(out, k, sizeof(*out), cmp_block_addr);
    *count = k;
    return out;
}

struct heap_block *heap_export_all_blocks(const struct heap_books *b, size_t *count,
                                          bool **forgotten)
{
    size_t k = 0;
    struct heap_block *out = b->used ? xreallocarray(NULL, b->used, sizeof(*out)) : NULL;
    for (size_t i = 0; i <= b->mask && k < b->used; i++)
        if (b->slots[i].addr)
            slot_to_block(b, &b->slots[i], &out[k++]);
    if (k > 1)
        qsort(out, k, sizeof(*out), cmp_block_addr);
    if (forgotten) {
        /* Sorted by address: look each one's forgotten bit up again (a
         * custom block nested at another's address: under its own key). */
        *forgotten = xcalloc(k ? k : 1, sizeof(**forgotten));
        for (size_t j = 0; j < k; j++) {
            const struct block_slot *s = &b->slots[probe(b, out[j].addr)];
            if (out[j].kind == ALLOC_CUSTOM && b->slots[probe(b, out[j].addr | KEY_NESTED)].addr)
                s = &b->slots[probe(b, out[j].addr | KEY_NESTED)];
            (*forgotten)[j] = slot_forgotten(s);
        }
    }
    *count = k;
    return out;
}

/* ---- mapping ledger ---- */

/* The totals change by what the ledger says (not set from it): loaded
 * books (heap_load_totals) have figures and no regions. */
static void ledger_cut(struct heap_books *b, uint64_t s, uint64_t e)
{
    b->totals.mapped_bytes -= map_ledger_cut(&b->maps, s, e);
    b->totals.mapped_regions = b->maps.count;
}

static void ledger_add(struct heap_books *b, uint64_t s, uint64_t e, uint32_t stack_id)
{
    uint64_t removed;
    map_ledger_add(&b->maps, s, e, stack_id, &removed);
    b->totals.mapped_bytes -= removed;
    b->totals.mapped_bytes += e - s;
    b->totals.mapped_regions = b->maps.count;
}

void heap_record_map(struct heap_books *b, uint64_t addr, uint64_t len, uint32_t stack_id)
{
    uint64_t s, e;
    b->totals.maps_recorded++;
    if (map_ledger_pages(addr, len, &s, &e))
        ledger_add(b, s, e, stack_id);
}

void heap_record_unmap(struct heap_books *b, uint64_t addr, uint64_t len)
{
    uint64_t s, e;
    if (map_ledger_pages(addr, len, &s, &e))
        ledger_cut(b, s, e);
}

void heap_record_remap(struct heap_books *b, uint64_t old_addr, uint64_t old_len,
                       uint64_t new_addr, uint64_t new_len, uint32_t stack_id)
{
    uint64_t s, e;
    b->totals.maps_recorded++;
    if (map_ledger_pages(old_addr, old_len, &s, &e))
        ledger_cut(b, s, e);
    if (map_ledger_pages(new_addr, new_len, &s, &e))
        ledger_add(b, s, e, stack_id);
}

const struct heap_region *heap_regions(const struct heap_books *b, size_t *count)
{
    *count = b->maps.count;
    return b->maps.regions;
}

size_t heap_books_memory(const struct heap_books *b)
{
    return sizeof(*b) + (b->mask + 1) * sizeof(*b->slots) + b->big_cap * sizeof(*b->big) +
           (size_t)b->per_stack_cap * sizeof(*b->per_stack) +
           map_ledger_memory(&b->maps) +
           (b->threads_mask ? b->threads_mask + 1 : 0) * sizeof(*b->threads);
}

void heap_load_totals(struct heap_books *b, const struct heap_totals *t,
                      const struct heap_peak *peak, double seconds)
{
    b->loaded_seconds = seconds > 0 ? seconds : 0;
    b->totals = *t;
    b->peak = *peak;
    b->peak_seq = 0;
    b->seq = 1;
}

bool heap_books_loaded(const struct heap_books *b)
{
    return b->loaded_seconds >= 0;
}

void heap_load_stack(struct heap_books *b, uint32_t stack_id, const struct stack_totals *now,
                     uint64_t peak_bytes, uint64_t peak_blocks)
{
    struct stack_rec *r = stack_slot(b, stack_id);
    r->t = *now;
    /* changed after the peak (mod_seq > peak_seq): the saved figures count */
    r->peak_bytes = peak_bytes;
    r->peak_blocks = peak_blocks;
    r->mod_seq = 1;
}

void heap_set_heap(struct heap_books *b, unsigned heap)
{
    b->cur_heap = heap <= HEAP_MASK ? heap : 0;
}
