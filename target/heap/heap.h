/* The books: every live heap block, per-stack aggregates, the HEAP SUMMARY
 * totals (valgrind memcheck's conventions) and a ledger of mmap'ed regions.
 *
 * Counting rules (the engine maps each intercepted call onto these):
 *   malloc/calloc/new/...     one heap_record_alloc (failed calls: nothing)
 *   free/delete (non-NULL)    one heap_record_free; EVERY call counts in
 *                             `frees`, valid or not, as valgrind counts it
 *                             (free(NULL) must not be reported at all)
 *   realloc(p, n), p,n != 0   heap_record_free(p) then heap_record_alloc
 *   realloc(NULL, n)          heap_record_alloc;  realloc(p, 0): heap_record_free
 *
 * Totals and per-stack aggregates are "since the last heap_clear" (or since
 * the books were created).  heap_clear forgets the blocks recorded so far:
 * they no longer appear in reports, iteration or totals, but the books still
 * recognise them, so a later free of such a block is quietly accepted
 * (HEAP_FREE_OK, counted in `frees` because the call happened after the clear,
 * in-use figures untouched) instead of being an unknown-pointer error.  The
 * mapping ledger describes the current state of the address space and is not
 * affected by heap_clear. */
#ifndef MT_HEAP_HEAP_H
#define MT_HEAP_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Which allocator family made (or frees) a block.  A free passes the family
 * of the allocator that matches the freeing function: free() ALLOC_MALLOC,
 * operator delete ALLOC_NEW, delete[] ALLOC_NEW_ARRAY, and so on. */
enum alloc_kind {
    ALLOC_MALLOC = 0,          /* malloc, calloc, realloc, memalign, posix_memalign, ... */
    ALLOC_NEW,                 /* operator new */
    ALLOC_NEW_ARRAY,           /* operator new[] */
    ALLOC_NEW_ALIGNED,         /* operator new(size_t, align_val_t) */
    ALLOC_NEW_ARRAY_ALIGNED,   /* operator new[](size_t, align_val_t) */
    ALLOC_ANY,                 /* made or released through an address that carries
                                  names of several families: never mismatched */
    ALLOC_CUSTOM,              /* a program's own allocator: valgrind's
                                  MALLOCLIKE_BLOCK / FREELIKE_BLOCK requests */
    ALLOC_KIND_COUNT
};

const char *alloc_kind_name(enum alloc_kind kind);

enum heap_free_result {
    HEAP_FREE_OK = 0,
    HEAP_FREE_UNKNOWN,   /* never allocated while traced, or already freed */
    HEAP_FREE_MISMATCH,  /* wrong family (delete of new[] memory...): still freed */
    HEAP_FREE_OTHER_HEAP, /* made by another heap than the releasing one: still freed */
};

struct heap_block {
    uint64_t addr;
    uint64_t size;
    uint32_t stack_id;
    enum alloc_kind kind;
    uint32_t seq;           /* allocation order (wraps at 2^32); 0 if unknown */
    unsigned heap;          /* the heap that made it (heap_set_heap); 0: not said */
};

struct heap_totals {
    uint64_t in_use_bytes, in_use_blocks;
    uint64_t allocs, frees, bytes_allocated;
    uint64_t mapped_bytes, mapped_regions;   /* current mmap ledger */
    uint64_t maps_recorded;                  /* heap_record_map/remap calls ever */
    uint64_t replaced_blocks;  /* allocs that landed on a live block: a free was missed */
    uint64_t temporary;        /* heaptrack's temporary allocations (see heap_set_thread) */
};

/* Per-stack figures since the last clear, maintained on every record. */
struct stack_totals {
    uint64_t bytes_in_use, blocks_in_use;
    uint64_t allocs, bytes_allocated;
    uint64_t temporary;        /* of its allocations, how many were temporary */
};

/* The heap's peak since the last clear: the largest in_use_bytes reached
 * (the first moment it was reached), the blocks in use then, and when, in
 * seconds since the books were created.  bytes == 0: no peak yet. */
struct heap_peak {
    uint64_t bytes, blocks;
    double seconds;
};

struct heap_books;

struct heap_books *heap_books_new(void);
void heap_books_free(struct heap_books *b);

/* addr must be non-zero.  An alloc on an address that is still live means a
 * free was missed: the old block is dropped (not counted as a free) and
 * replaced_blocks grows. */
void heap_record_alloc(struct heap_books *b, uint64_t addr, uint64_t size,
                       uint32_t stack_id, enum alloc_kind kind);

/* A custom block (ALLOC_CUSTOM) may begin where a live block of another
 * kind begins (an arena's first object at the start of its malloc'ed
 * superblock): both are kept, and a custom release finds the custom one
 * first, as memcheck's tables do.  Exported blocks may then overlap. */

/* Counts one free call (see above).  freed, when not NULL, receives the block
 * on HEAP_FREE_OK and HEAP_FREE_MISMATCH. */
enum heap_free_result heap_record_free(struct heap_books *b, uint64_t addr,
                                       enum alloc_kind kind, struct heap_block *freed);

/* A block released without a free call: the custom blocks inside a piece
 * an AUTO_FREE mempool gives back (memcheck counts no free for them). */
enum heap_free_result heap_record_drop(struct heap_books *b, uint64_t addr, enum alloc_kind kind,
                                       struct heap_block *freed);

/* valgrind's RESIZEINPLACE_BLOCK: the live block at addr of old_size
 * (a custom one first) now has new_size; no alloc or free is counted.
 * false (nothing changed) when there is no such block or new_size is 0. */
bool heap_record_resize(struct heap_books *b, uint64_t addr, uint64_t old_size, uint64_t new_size);

/* A piece of a valgrind mempool (MEMPOOL_ALLOC): memcheck counts it among
 * the allocations and bytes allocated, never in use nor freed (the pool's
 * pieces are kept apart: target/heap/custom_pools.h). */
void heap_count_pool_alloc(struct heap_books *b, uint64_t size, uint32_t stack_id);

/* The live block starting at addr (not a forgotten one); false if none. */
bool heap_lookup(const struct heap_books *b, uint64_t addr, struct heap_block *out);

/* Is there a block starting at addr, live or forgotten by heap_clear (so
 * that releasing it is not an error)? */
bool heap_knows(const struct heap_books *b, uint64_t addr);
/* A hint: addr's slot will be looked up soon (a cache miss hidden). */
void heap_prefetch(const struct heap_books *b, uint64_t addr);

/* A copy of the books (a forked child's heap is a copy of its parent's). */
struct heap_books *heap_books_clone(const struct heap_books *b);

/* Forget all blocks recorded so far and zero the totals and per-stack figures
 * (not the mapping ledger). */
void heap_clear(struct heap_books *b);

void heap_get_totals(const struct heap_books *b, struct heap_totals *out);

/* Figures of one stack id; ids never recorded read as zeros. */
void heap_get_stack_totals(const struct heap_books *b, uint32_t stack_id,
                           struct stack_totals *out);
/* One more than the largest stack id recorded since creation: iterate
 * 0..limit-1 with heap_get_stack_totals. */
uint32_t heap_stack_id_limit(const struct heap_books *b);

/* Live blocks in table order (unsorted).  The callback must not record into
 * the same books. */
typedef void (*heap_block_fn)(void *ctx, const struct heap_block *block);
void heap_foreach_block(const struct heap_books *b, heap_block_fn fn, void *ctx);

/* All live blocks sorted by address, in a new array the caller frees;
 * *count receives their number (the array may be NULL when it is 0). */
struct heap_block *heap_export_blocks(const struct heap_books *b, size_t *count);

/* Like heap_export_blocks, with the blocks forgotten by heap_clear too (they
 * still exist in the process: the leak scan follows their pointers).  When
 * forgotten is not NULL it receives a new array, one flag per block, true
 * for a forgotten one. */
struct heap_block *heap_export_all_blocks(const struct heap_books *b, size_t *count,
                                          bool **forgotten);

/* Mapping ledger (mmap family).  Lengths are rounded up to whole pages of
 * heap_page_size() as the kernel does.  A map over existing regions replaces
 * the overlap (MAP_FIXED); an unmap may cut a region in two. */
void heap_record_map(struct heap_books *b, uint64_t addr, uint64_t len, uint32_t stack_id);
void heap_record_unmap(struct heap_books *b, uint64_t addr, uint64_t len);
void heap_record_remap(struct heap_books *b, uint64_t old_addr, uint64_t old_len,
                       uint64_t new_addr, uint64_t new_len, uint32_t stack_id);
uint64_t heap_page_size(void);

struct heap_region {
    uint64_t start, end;    /* [start, end) */
    uint32_t stack_id;
};
/* The ledger's regions, sorted by address; valid until the next map call. */
const struct heap_region *heap_regions(const struct heap_books *b, size_t *count);

/* ---- peak and temporary allocations ----
 *
 * The peak costs O(1) per record: reaching a new peak only notes the totals,
 * the time and the event's sequence number.  A stack's figures at the peak
 * are saved lazily, by the first record that changes that stack after the
 * peak (until then its current figures are its figures at the peak). */
void heap_get_peak(const struct heap_books *b, struct heap_peak *out);
/* One stack's bytes_in_use and blocks_in_use at the peak (other fields 0). */
void heap_get_stack_peak(const struct heap_books *b, uint32_t stack_id,
                         struct stack_totals *out);

/* The thread that makes the following records (the tracer sets it before
 * each one; 0 until set).  A free is a temporary allocation, as heaptrack's
 * recorder counts it, when the freed block is the last one its thread
 * allocated and the thread neither allocated nor freed a known block since:
 * its stack's `temporary` and the totals' grow by one. */
void heap_set_thread(struct heap_books *b, uint32_t tid);

/* The heap (an allocator of its own: glibc's, jemalloc's...; 1..15, 0:
 * not said) that makes the following records, as heap_set_thread.  A block
 * made by one heap and released by another (both said) is
 * HEAP_FREE_OTHER_HEAP. */
void heap_set_heap(struct heap_books *b, unsigned heap);

/* Seconds since the books were created (the clock of the peak's time and
 * of target/heap/timeline). */
double heap_seconds(const struct heap_books *b);

/* Books rebuilt from figures alone (memtrace --replay): no blocks, only
 * the totals, the peak, and per stack its figures now and at the peak.
 * On books fresh from heap_books_new.  seconds: the moment the figures
 * describe, which heap_seconds answers from then on. */
void heap_load_totals(struct heap_books *b, const struct heap_totals *t,
                      const struct heap_peak *peak, double seconds);
void heap_load_stack(struct heap_books *b, uint32_t stack_id, const struct stack_totals *now,
                     uint64_t peak_bytes, uint64_t peak_blocks);
/* Were the books loaded (heap_load_totals), not kept from a live process? */
bool heap_books_loaded(const struct heap_books *b);

/* Was the live block blk (from heap_export_blocks) in use at the peak,
 * i.e. allocated before it?  Exact while fewer than 2^32 allocations were
 * recorded after the peak (block sequence numbers are 32-bit). */
bool heap_block_in_use_at_peak(const struct heap_books *b, const struct heap_block *blk);

/* --sample (target/heap/sample_draw.h): from here on the blocks of
 * unsampled_stack (the pseudo-stack of allocations not sampled) add
 * nothing to any stack's figures, and every other block adds its
 * estimate (its size and count scaled by the inverse of its chance of
 * being sampled, 1 - exp(-size/mean)).  The totals, the peak and the
 * block table stay exact.  mean 0: exact books.  Set once, before the
 * first record (a block is taken out of its stack's figures with the
 * weight it was put in with). */
void heap_set_sample(struct heap_books *b, uint64_t mean, uint32_t unsampled_stack);
/* The mean set by heap_set_sample (0: not sampled). */
uint64_t heap_sample_bytes(const struct heap_books *b);

/* Bytes the books hold (block table, per-stack array, ledger). */
size_t heap_books_memory(const struct heap_books *b);

#endif
