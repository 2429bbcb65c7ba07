/* Allocator misuse found while tracing, in valgrind memcheck's terms:
 *   MISUSE_INVALID_FREE  "Invalid free() / delete / delete[] / realloc()":
 *                        a release of memory that is not a live block's
 *                        start (never allocated, inside a block, freed twice)
 *   MISUSE_MISMATCHED    "Mismatched free() / delete / delete []": a block
 *                        released by the wrong family (delete of new[]
 *                        memory, free of new memory, delete[] of malloc...)
 *   MISUSE_OTHER_HEAP    a block made by one allocator (jemalloc's malloc)
 *                        released by another one's function (glibc's free)
 * Each error keeps the stack of the bad call and, when the address lies in a
 * known block, that block with the stacks of its allocation (and release).
 * Stacks are ids in the traced process's stack table. */
#ifndef MT_HEAP_MISUSE_H
#define MT_HEAP_MISUSE_H

#include <stddef.h>
#include <stdint.h>

enum misuse_kind {
    MISUSE_INVALID_FREE,
    MISUSE_MISMATCHED,
    MISUSE_OTHER_HEAP,
};

enum misuse_block_state {
    MISUSE_BLOCK_UNKNOWN,   /* not in any block we know */
    MISUSE_BLOCK_LIVE,      /* inside (or at) a block in use */
    MISUSE_BLOCK_FREED,     /* inside (or at) a block released before */
};

struct misuse_error {
    enum misuse_kind kind;
    const char *function;       /* the intercepted function called (static name) */
    uint64_t addr;              /* the pointer it was given */
    int tid;
    uint32_t call_stack;
    enum misuse_block_state state;
    uint64_t block_addr, block_size;
    uint32_t alloc_stack;       /* 0 when unknown */
    uint32_t free_stack;        /* MISUSE_BLOCK_FREED only */
    /* MISUSE_OTHER_HEAP: the modules (base names) of the allocator that
     * made the block and of the one that was given it */
    char made_by[64], released_by[64];
};

/* Valgrind's title line for the kind. */
const char *misuse_title(enum misuse_kind kind);
/* A short token for JSON: "invalid_free", "mismatched_free",
 * "other_allocator_free". */
const char *misuse_token(enum misuse_kind kind);

#define MISUSE_LOG_MAX 1000

/* The first MISUSE_LOG_MAX errors, and how many there were in all. */
struct misuse_log {
    struct misuse_error *errors;
    size_t count, cap;
    uint64_t total;
};

/* Adds e; returns the stored copy, or NULL once the log is full (still
 * counted in total). */
const struct misuse_error *misuse_log_add(struct misuse_log *log, const struct misuse_error *e);
void misuse_log_reset(struct misuse_log *log);
void misuse_log_copy(struct misuse_log *dst, const struct misuse_log *src);

#endif
