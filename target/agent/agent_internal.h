/* The agent engine's state in the tracer (the .c files of target/agent). */
#ifndef MT_AGENT_AGENT_INTERNAL_H
#define MT_AGENT_AGENT_INTERNAL_H

#include "arch/arch.h"
#include "target/agent/agent.h"
#include "target/agent/agent_abi.h"
#include "target/tracer/intercept.h"

#include <sys/syscall.h>
#include <sys/types.h>

#ifdef SYS_mmap2
#define MMAP_SYSCALL SYS_mmap2 /* offsets here are 0: the same call */
#else
#define MMAP_SYSCALL SYS_mmap
#endif

struct agent_mod_sig;

struct agent_patch {
    uint64_t addr;              /* the function's entry */
    uint64_t slot;              /* stub, then the displaced copy */
    uint64_t module_start;
    const struct intercept_fn *fn;
    unsigned alloc_id;          /* its module in t->allocators */
    uint8_t orig[16];           /* bytes the jump replaced */
    unsigned covered;
    bool active;
    /* What the replay of each record needs to know of fn, worked out once
     * when it is patched (agent_patch_plan), not asked of intercept.c
     * some ten times per record. */
    uint8_t arg_at[5];          /* intercept_arg_index; 6 and over: none */
    bool two_parts;             /* realloc's kin: a release, then an allocation */
    bool heap_fn;               /* intercept_is_heap_fn */
    bool at_entry;              /* booked at its entry's stamp (part_time) */
};

struct agent_engine {
    uint64_t image;             /* the agent's image in the target */
    struct agent_header hdr;
    uint64_t shared;            /* the shared region in the target */
    uint8_t *map;               /* ... and in the tracer */
    struct agent_data data;     /* the tracer's copy of the agent's data page */
    int doorbell_fd;            /* read end of the target's pipe; -1: none */
    int target_doorbell_fd;     /* the target's write end */
    int target_doorbell_r;      /* the target's read end, kept open */
    struct agent_patch patches[AGENT_MAX_FNS];
    unsigned npatches;
    uint64_t tails[AGENT_SLOTS];/* consumed positions: the tracer's own */
    bool broken[AGENT_SLOTS];   /* a malformed ring is read no more */
    bool stack_known[AGENT_SLOTS];
    struct agent_rec head[AGENT_SLOTS]; /* the next record of each ring, copied */
    const uint8_t *head_stack_bytes[AGENT_SLOTS]; /* its stack, in the ring */
    const struct agent_rec *head_rec[AGENT_SLOTS];
    uint64_t head_next[AGENT_SLOTS];
    unsigned head_part[AGENT_SLOTS]; /* realloc: 0 its release, 1 its allocation */
    uint32_t head_stack[AGENT_SLOTS];
    uint64_t calls, waits_seen;
    bool last_drain_busy;
    bool rang;                  /* the doorbell rang since the last drain */
    unsigned idle_drains;       /* drains in a row that replayed nothing though asked to */
    struct thread *dummy;       /* records of a thread already gone */
    uint64_t raw_records, pcs_records, delta_records, bare_records;
    uint32_t rows;              /* entries in the shared row table */
    struct agent_mod_sig *mods; /* the modules the rows were made with */
    uint64_t pf_pos[AGENT_SLOTS];   /* ring position read ahead up to (the books prefetched) */
    uint32_t pf_ahead[AGENT_SLOTS]; /* records between the head and pf_pos */
    struct arch_regs regs;      /* all zero: a replay's registers start from it */
    uint64_t prev_pcs[AGENT_SLOTS][AGENT_MEMO_MAX]; /* each ring's last stack unwound in the target */
    unsigned prev_n[AGENT_SLOTS];
    const uint64_t *head_pcs[AGENT_SLOTS]; /* the head's stack (PCS records) */
    unsigned head_npcs[AGENT_SLOTS];
    size_t nmods;
};

/* agent_inject.c */
/* The agent_data block into the target: 0 or -errno. */
int agent_write_data(struct tracee *t);
void agent_ring_free(struct agent_engine *a);
/* The tracer's side of an engine (its mapping, doorbell, memory). */
void agent_free_local(struct agent_engine *a);
/* One system call run by th (stopped) in t: its raw result, or -errno. */
int64_t agent_target_call(struct tracee *t, struct thread *th, long nr, uint64_t a0, uint64_t a1,
                          uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5);
static inline bool agent_failed(int64_t r) { return r < 0 && r > -4096; }
/* t's pid as t itself sees it (getpid run by th): another number inside a
 * PID namespace; t->pid when the call fails. */
int64_t agent_target_pid(struct tracee *t, struct thread *th);
/* A scratch area on th's stack, below the red zone (0: none). */
uint64_t agent_stack_scratch(struct thread *th);
/* agent_fds.c: the target's descriptors, taken (never reopened by path)
 * and checked.  The open file behind the target's descriptor fd, as the
 * target holds it (pidfd_getfd): a descriptor, or -errno. */
int agent_take_target_fd(pid_t pid, int64_t fd);
/* The target's memfd fd, sealed here against shrinking and growing, and
 * mapped if it is exactly size bytes: the mapping, or NULL with a one-line
 * reason. */
void *agent_take_region(pid_t pid, int64_t fd, uint64_t size, char *why, size_t whylen);
/* The target's descriptor fd if it is a FIFO (the doorbell's read end), or -1. */
int agent_take_doorbell(pid_t pid, int64_t fd);
/* One read of the doorbell that never blocks: the bytes read (0: none
 * now), or -errno when the doorbell is of no more use (no writer left). */
int agent_doorbell_read(int fd);
/* agent_ring.c: the replay's plan of a patch whose fn is set. */
void agent_patch_plan(struct agent_patch *p);
/* agent_ring.c: agent_drain, replaying only the records stamped before
 * cutoff (an agent_order_next value; UINT64_MAX: all). */
unsigned agent_drain_before(struct tracee *t, bool force, uint64_t cutoff);
/* The stamp the agent's next call part will get at least (agent_ctl
 * order): every part stamped so far is below it, every later one not. */
static inline uint64_t agent_order_next(const struct agent_engine *a)
{
    const struct agent_ctl *ctl = (const struct agent_ctl *)a->map;
    uint64_t o = __atomic_load_n(&ctl->order, __ATOMIC_SEQ_CST);
    return o == UINT64_MAX ? o : o + 1; /* (the target can write it: no wrap to 0) */
}
/* agent_rows.c */
/* A CFI expression (the module's bytes: untrusted) that is exactly
 * DW_OP_breg<reg> off, then with deref DW_OP_deref, reg the stack or frame
 * pointer: true with reg and off (fuzzed: fuzz_agent_breg.c). */
bool agent_breg_expr(const uint8_t *e, size_t len, bool deref, unsigned *reg, int32_t *off);
void agent_learn_rows(struct tracee *t, uint32_t stack_id);
/* A fork child's region (dst->map) gets the rows of its parent's. */
void agent_rows_copy(struct agent_engine *dst, const struct agent_engine *src);

#endif
