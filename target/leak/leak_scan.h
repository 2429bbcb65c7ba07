/* The leak scan's core: which heap blocks can the program still reach?
 *
 * Memcheck's rules (valgrind --leak-check=full), on an abstract memory:
 *   - the root set is a list of memory ranges plus loose words (registers);
 *   - an aligned pointer-sized word "points to" a block when its value lies in
 *     [addr, addr + size) (a zero-size block: equals addr);
 *   - reachable: a chain of start pointers leads to it from the root set;
 *   - possibly lost: some chain from the root set leads to it, but every such
 *     chain has an interior pointer (or passes a possibly lost block);
 *   - indirectly lost: not reached from the roots, but from a lost block;
 *   - definitely lost: the rest (the heads of the lost structures).  Lost
 *     blocks are visited in allocation order (heap_block.seq, then address)
 *     and each one claims every block it reaches that no earlier one
 *     claimed, and earlier leaders too: memcheck visits them in address
 *     order in its own allocator, which hands out memory in allocation
 *     order, so in a lost cycle the block allocated first is the definitely
 *     lost one, as memcheck mostly reports.
 * Memory is read through a callback in large batches, so the same core runs
 * on a fake image (unit test) and on a stopped process (process_vm_readv). */
#ifndef MT_LEAK_LEAK_SCAN_H
#define MT_LEAK_LEAK_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target/heap/heap.h"

enum leak_kind {
    LEAK_DEFINITE = 0,
    LEAK_INDIRECT,
    LEAK_POSSIBLE,
    LEAK_REACHABLE,
    LEAK_KIND_COUNT
};

/* "definitely lost", "indirectly lost", "possibly lost", "still reachable" */
const char *leak_kind_phrase(enum leak_kind k);
/* "definite", "indirect", "possible", "reachable" (JSON) */
const char *leak_kind_name(enum leak_kind k);

struct leak_range {
    uint64_t addr, len;
};

/* Fills dst with the bytes of ranges[0..n), back to back; bytes that cannot
 * be read must be zero. */
typedef void (*leak_read_fn)(void *ctx, const struct leak_range *ranges, size_t n, uint8_t *dst);

struct leak_scan_input {
    const struct heap_block *blocks;   /* sorted by address, disjoint */
    size_t nblocks;
    /* Optional, per block: nonzero = part of the graph but not of the
     * totals (blocks forgotten by a clear: their pointers still count). */
    const bool *uncounted;
    const struct leak_range *roots;    /* memory of the root set */
    size_t nroots;
    /* Memory of the allocator itself (the data of the module whose malloc
     * runs: glibc's main_arena and mp_, musl's malloc context; a static
     * program's whole data; mappings that hold blocks), scanned as roots
     * with one exception: a word that lands inside a block, not at its
     * start, at an offset aligned like the block to two words, is a chunk
     * header and no pointer.  glibc's bins, top and last_remainder point to
     * chunk headers, 2 words before the memory a chunk hands out: the
     * header of the chunk after a block whose size mod 16 is 1..8 lies
     * inside the block, and last_remainder may still name a chunk that a
     * block has since grown over (realloc in place).  Memcheck and
     * LeakSanitizer never see these words: their own allocator replaces
     * the program's.  The price: a real interior pointer kept in the
     * allocator module's data (strtok's position in libc) at such an
     * offset is not seen. */
    const struct leak_range *alloc_roots;
    size_t nalloc_roots;
    const uint64_t *root_words;        /* registers of the threads */
    size_t nroot_words;
    unsigned word_size;                /* 4 or 8: the target's pointer size */
    /* Optional: the readable memory, sorted, adjacent mappings merged.  A
     * block's contents are read only as far as the run its start lies in:
     * a size booked wrong (an --alloc-fn naming the wrong argument, a
     * hostile client request) must not make the scan read terabytes of
     * zeros.  NULL: all memory counts as readable. */
    const struct leak_range *readable;
    size_t nreadable;
    leak_read_fn read;
    void *read_ctx;
    /* Optional: asked before each read; true ends the scan there (a
     * signal that ends the session: a scan of a huge heap must not keep
     * the target stopped and the tracer deaf).  The result is then only
     * marked interrupted: its kinds mean nothing. */
    bool (*stop)(void *ctx);
    void *stop_ctx;
};

struct leak_scan_result {
    uint8_t *kind;                     /* per input block: enum leak_kind */
    uint64_t bytes[LEAK_KIND_COUNT], blocks[LEAK_KIND_COUNT];   /* counted blocks */
    uint64_t bytes_scanned;            /* roots plus the contents of blocks read */
    uint64_t words_checked;
    bool interrupted;                  /* in->stop said so: no kind is known */
};

/* Classifies every block.  result->kind is allocated (free with
 * leak_scan_result_free).  Never fails (out of memory exits). */
void leak_scan_run(const struct leak_scan_input *in, struct leak_scan_result *result);
void leak_scan_result_free(struct leak_scan_result *r);

/* Bytes the scan reads in one go (roots in chunks of this size, block
 * contents in batches up to it). */
#define LEAK_BATCH_BYTES (4u << 20)
/* Ranges per read call (process_vm_readv takes at most IOV_MAX = 1024). */
#define LEAK_BATCH_RANGES 1024u

#endif
