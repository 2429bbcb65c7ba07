/* The guardian's copy of what the tracer changed in the target: a shared
 * anonymous mapping, written by the tracer, read by the supervisor after
 * the tracer died.  The tracer can die between any two stores, so an entry
 * is filled first and published last (its key), and a reader tolerates a
 * half-moved entry (a duplicate, or one missed restoration). */
#ifndef MT_TRACER_GUARDIAN_TABLE_H
#define MT_TRACER_GUARDIAN_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GUARD_BPS 1024          /* breakpoints: tens per libc, a few libraries */
#define GUARD_RETS (1u << 14)   /* open calls: about one or two per thread */
#define GUARD_INSN_MAX 8

struct guard_bp {
    uint64_t addr;              /* 0: free */
    uint8_t orig[GUARD_INSN_MAX];
    uint8_t insn[GUARD_INSN_MAX];
    uint32_t len;
};

struct guard_ret {
    uint64_t slot;              /* 0: free; the stack slot holding the trampoline */
    uint64_t orig;
    uint64_t tramp;
    uint32_t size;
};

struct guard_table {
    volatile int released;      /* the tracer finished cleanly */
    struct guard_bp bp[GUARD_BPS];
    struct guard_ret ret[GUARD_RETS];
};

struct guard_table *guard_table_map(void);

void guard_table_add_bp(struct guard_table *g, uint64_t addr, const uint8_t *orig,
                        const uint8_t *insn, size_t len);
void guard_table_del_bp(struct guard_table *g, uint64_t addr);
void guard_table_add_ret(struct guard_table *g, uint64_t slot, uint64_t orig, uint64_t tramp,
                         unsigned size);
void guard_table_del_ret(struct guard_table *g, uint64_t slot);
void guard_table_clear(struct guard_table *g);

/* Writes every original back through mem_fd where the target still holds
 * our byte or trampoline; counts what was restored. */
void guard_table_restore(const struct guard_table *g, int mem_fd, unsigned *bps, unsigned *rets);

#endif
