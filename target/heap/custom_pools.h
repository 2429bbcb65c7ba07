/* Valgrind's memory pools (VALGRIND_CREATE_MEMPOOL and its family), as
 * memcheck keeps them: each pool, named by the program's handle, holds the
 * pieces given out of it (MEMPOOL_ALLOC).  Pieces are not heap blocks of
 * the books: memcheck counts them among the allocations but never in use
 * nor freed (heap_count_pool_alloc); the leak scan takes them as blocks
 * (target/leak/leak_custom.c).  Plain data, no tracer. */
#ifndef MT_HEAP_CUSTOM_POOLS_H
#define MT_HEAP_CUSTOM_POOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CREATE_MEMPOOL's flags (valgrind.h) */
#define CUSTOM_POOL_AUTO_FREE 1u
#define CUSTOM_POOL_METAPOOL 2u

struct pool_piece {
    uint64_t addr, size;
    uint32_t stack_id;
    uint32_t seq;           /* allocation order, for the leak scan */
};

struct custom_pool {
    uint64_t handle;
    unsigned flags;
    struct pool_piece *pieces;
    size_t n, cap;
};

struct custom_pools {
    struct custom_pool *v;
    size_t n, cap;
    uint32_t seq_next;
};

/* The pool of handle, or NULL. */
struct custom_pool *custom_pool_find(struct custom_pools *ps, uint64_t handle);
/* A new pool (an existing one of the same handle is replaced, its pieces
 * forgotten, as memcheck does after its warning). */
struct custom_pool *custom_pool_create(struct custom_pools *ps, uint64_t handle, unsigned flags);
/* Removes the pool of handle with its pieces; false when there is none. */
bool custom_pool_destroy(struct custom_pools *ps, uint64_t handle);
/* MOVE_MEMPOOL: false when there is no pool at from. */
bool custom_pool_move(struct custom_pools *ps, uint64_t from, uint64_t to);

/* A piece at addr (one at the same address is replaced). */
void custom_pool_add(struct custom_pools *ps, struct custom_pool *p, uint64_t addr, uint64_t size,
                     uint32_t stack_id);
/* Removes the piece at addr into *out; false when there is none. */
bool custom_pool_remove(struct custom_pool *p, uint64_t addr, struct pool_piece *out);
/* MEMPOOL_CHANGE: the piece at from is now at to with size; false when
 * there is none. */
bool custom_pool_change(struct custom_pool *p, uint64_t from, uint64_t to, uint64_t size);
/* MEMPOOL_TRIM: pieces wholly outside [addr, addr + size) go, pieces
 * across its ends are cut to it.  Returns how many went. */
size_t custom_pool_trim(struct custom_pool *p, uint64_t addr, uint64_t size);

/* Every piece of every pool. */
size_t custom_pools_pieces(const struct custom_pools *ps);
void custom_pools_copy(struct custom_pools *dst, const struct custom_pools *src);
void custom_pools_free(struct custom_pools *ps);

#endif
