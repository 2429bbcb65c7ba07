/* The layout shared by the in-process agent (target/agent/payload/, built
 * freestanding and injected into the traced process) and the tracer's side
 * of the agent engine (the .c files of target/agent).  Only fixed-width types: the
 * agent has no libc.
 *
 * Memory in the target:
 *   agent image   text r-x (header, entry, handlers), then data rw- (struct
 *                 agent_data: the function table and the allocator ranges,
 *                 written by the tracer through /proc/PID/mem);
 *   shared region a memfd mapped in the target and in the tracer: struct
 *                 agent_ctl, AGENT_SLOTS thread slots, then one ring of
 *                 AGENT_RING_SIZE bytes per slot.
 * A thread owns the slot whose key is its thread pointer (fs base, TPIDR_EL0); only
 * that thread writes its ring, only the tracer consumes it.  Everything the
 * tracer reads from the shared region is untrusted. */
#ifndef MT_AGENT_AGENT_ABI_H
#define MT_AGENT_AGENT_ABI_H

#include <stddef.h>
#include <stdint.h>
#include "arch/agent_cpu_flags.h"

#define AGENT_MAGIC_HEX 0x3154474145544d4d /* "MMTEAGT1" */
#define AGENT_CAT_(a, b) a##b
#define AGENT_CAT(a, b) AGENT_CAT_(a, b)
#define AGENT_STR_(x) #x
#define AGENT_STR(x) AGENT_STR_(x)
#define AGENT_MAGIC AGENT_CAT(AGENT_MAGIC_HEX, ull)
#define AGENT_VERSION 1
#define AGENT_MAX_FNS 512
#define AGENT_MAX_RANGES 32
#define AGENT_SLOTS 256
#define AGENT_RING_SIZE (512u * 1024u)
/* A raw record's copy of the stack from sp.  32 KiB, not the breakpoint
 * engine's 8 KiB window: that engine reads on from the stopped thread, a
 * raw record cannot (the thread has moved on), so its stack ends where the
 * copy does.  At 8 KiB, clang -O2 had 1% of its sampled bytes on stacks cut
 * short, and its exact run too (sample_unbiased_clang). */
#define AGENT_STACK_MAX 32768u
#define AGENT_CTL_SIZE 65536u
#define AGENT_ROWS 32768u /* the unwind rows the tracer compiled (struct agent_row): 512 KiB */
#define AGENT_ROWS_OFF AGENT_CTL_SIZE
#define AGENT_RINGS_OFF ((uint64_t)AGENT_ROWS_OFF + (uint64_t)AGENT_ROWS * 16u)
#define AGENT_SHARED_SIZE (AGENT_RINGS_OFF + (uint64_t)AGENT_SLOTS * AGENT_RING_SIZE)
/* The shared region's memfd name: /proc/PID/maps shows "/memfd:" and it
 * (a test program reads its own smaps for it: rss_steps.c). */
#define AGENT_MEMFD_NAME "memtrace-agent"

/* One CFI row in the form the agent unwinds with (x86_64): keyed by the pc
 * looked up (the entry for frame 0, return address - 1 above it), written
 * by the tracer (val first, then key), read by the agent.  val packs:
 *   bits 0-31  CFA offset (signed), from rsp or (bit 60) rbp
 *   bits 32-47 where rbp was saved, CFA-relative (signed); 0x8000: unchanged
 *   bits 48-55 where the return address is, CFA-relative (signed)
 *   bits 56-59 kind: AGENT_ROW_STEP, or AGENT_ROW_STOP (no CFI: the
 *              unwind ends here) or AGENT_ROW_OUTERMOST (_start, clone)
 *   bit 61     (AGENT_ROW_CFA_DEREF) the CFA is the word at rsp or rbp +
 *              offset (a frame that realigned its stack: i386's main), and
 *              bits 32-47 say where rbp was saved relative to rbp itself
 * A pc without an entry, or a row the form cannot hold (a DWARF
 * expression, a signal frame, a CFA on another register), makes the agent
 * send the raw stack instead. */
struct agent_row {
    uint64_t key;
    uint64_t val;
};
#define AGENT_ROW_STEP 1u
#define AGENT_ROW_STOP 2u
#define AGENT_ROW_OUTERMOST 3u
#define AGENT_ROW_BP_SAME 0x8000u
#define AGENT_ROW_CFA_BP (1ull << 60)
#define AGENT_ROW_CFA_DEREF (1ull << 61)
#define AGENT_ROW_VAL(kind, cfa_bp, cfa_off, bp_off, ra_off)                                  \
    ((uint64_t)(uint32_t)(int32_t)(cfa_off) | ((uint64_t)(uint16_t)(bp_off) << 32) |          \
     ((uint64_t)(uint8_t)(int8_t)(ra_off) << 48) | ((uint64_t)(kind) << 56) |                 \
     ((cfa_bp) ? AGENT_ROW_CFA_BP : 0))
static inline uint32_t agent_row_hash(uint64_t pc)
{
    return (uint32_t)((pc * 0x9e3779b97f4a7c15ull) >> 40) & (AGENT_ROWS - 1);
}

/* agent_data.state */
#define AGENT_OFF 0    /* every call passes straight through */
#define AGENT_ACTIVE 1 /* calls are recorded */
#define AGENT_GONE 2   /* the tracer died: pass through for good */

/* agent_fn.flags */
#define AGENT_FN_RELEASE 1u   /* free-like: recorded at entry, no return */
#define AGENT_FN_MAP 2u       /* mmap family */
#define AGENT_FN_MEMALIGN 4u  /* posix_memalign: the pointer it stored is sent */
#define AGENT_FN_EXCEPTION 16u /* __cxa_allocate/free_exception: not recorded; the
                                  * next heap call is the program's (agent_core.inc.c) */
#define AGENT_FN_CATCH 32u     /* __cxa_begin_catch: not recorded; the calls the
                                  * exception left end there (agent_core.inc.c) */
#define AGENT_FN_OPEN_RELEASE 8u /* releases inside the call, recorded at its return
                                  * (realloc, munmap, mremap): stamped at entry too */
#define AGENT_FN_STRLEN 64u   /* a string copy: its length + 1 is sent in out */
#define AGENT_FN_FIND_EXIDX 128u /* arm: libc's __gnu_Unwind_Find_exidx, answered by the
                                  * agent for its own code (agent_arm.c) */

/* At offset 0 of the image. */
struct agent_header {
    uint64_t magic;
    uint32_t entry_off;  /* the common entry every stub jumps to */
    uint32_t data_off;   /* struct agent_data, page aligned */
    uint32_t text_size;  /* [0, text_size) is r-x */
    uint32_t total_size; /* text + data + bss, page aligned */
};
/* The header as every payload's assembly writes it, first in its image
 * (agent.ld), from the symbols of its entry, its data and the linker's
 * ends; the payload's text follows in .text. */
#define AGENT_HEADER_ASM                                                                      \
    ".section .text.hdr,\"ax\"\n"                                                             \
    ".globl agent_header\n"                                                                    \
    "agent_header:\n"                                                                          \
    "  .quad " AGENT_STR(AGENT_MAGIC_HEX) "\n"                                                 \
    "  .4byte agent_entry - agent_header\n"                                                    \
    "  .4byte agent_data - agent_header\n"                                                     \
    "  .4byte __text_end - agent_header\n"                                                     \
    "  .4byte __image_end - agent_header\n"                                                    \
    ".text\n"

struct agent_fn {
    uint64_t orig;  /* the displaced first instructions, then a jump back */
    uint64_t entry; /* the function itself */
    uint32_t flags;
    uint32_t size_args; /* where an allocation's size is, for --sample: AGENT_SIZE_* */
};
/* agent_fn.size_args: the size is the record's args[i] (times args[j]
 * when a second is given, calloc), or its out (a string copy); 0: not an
 * allocation sampled by size (its record always carries its stack). */
#define AGENT_SIZE_ARG(i) ((uint32_t)(i) + 1u)
#define AGENT_SIZE_ARG2(j) (((uint32_t)(j) + 1u) << 4)
#define AGENT_SIZE_OUT 0x100u

struct agent_range {
    uint64_t lo, hi;
};

/* The agent's private data page (rw-, not shared). */
struct agent_data {
    uint32_t state;        /* AGENT_OFF / ACTIVE / GONE */
    int32_t pid;           /* the target's pid (process_vm_readv on itself) */
    int32_t tracer_pidfd;  /* readable once the tracer is gone; -1: none */
    uint32_t nranges;
    int32_t doorbell_fd;   /* a full ring writes a byte here (the tracer polls it); -1: none */
    uint32_t cpu_flags;    /* AGENT_CPU_* (arch/agent_cpu_flags.h), set by agent_cpu_ready */
    uint64_t shared;       /* address of the shared region in the target */
    uint32_t depth;        /* frames kept per call (-d) */
    uint32_t use_rows;     /* unwind in the target with the rows (else raw stacks only) */
    uint64_t text_lo, text_hi;    /* the agent's own code */
    struct agent_range static_exe; /* a static executable: its calls are the program's */
    struct agent_range alloc[AGENT_MAX_RANGES]; /* modules whose functions are intercepted */
    struct agent_fn fns[AGENT_MAX_FNS];
    /* The target's C++ unwinder (libgcc_s): __register_frame_info there (0:
     * none loaded yet), its module and the dynamic linker's, whose calls
     * never register (see agent_core.inc.c, register_frames). */
    uint64_t register_frame_info;
    struct agent_range unwinder, interp;
    /* --sample: the mean bytes between sampled allocations (0: every call
     * carries its stack) and the seed of the threads' streams
     * (target/heap/sample_draw.h). */
    uint64_t sample_bytes;
    uint64_t sample_seed;
    /* From here on the agent's own: agent_write_data stops before it. */
    uint32_t frames;              /* 0, 1 registering, 2 its unwind info is registered */
    uint32_t pad2;
    uint64_t frame_object[16];    /* libgcc's struct object (about 7 words), kept forever */
    uint64_t sample_streams;      /* --sample: the threads that drew so far (each its own stream) */
};
#define AGENT_DATA_TRACER_SIZE offsetof(struct agent_data, frames)

/* One per thread, in the shared region.  Fields marked (T) are written by
 * the tracer, the rest by the owning thread.  Two cache lines: the first
 * the thread writes on every call, the second the tracer (the tail, once
 * in a while), so that neither takes the other's line away per record. */
struct agent_slot {
    /* the thread's line */
    uint64_t key;        /* fs base (1 before the thread pointer is set); 0: free */
    int32_t tid;         /* (T may clear it: the thread exited; refetched) */
    uint32_t depth;      /* open recorded calls (only the outermost counts) */
    uint64_t inflight;   /* 0 idle; else the entry stamp (order) of the open call */
    uint64_t reserve;    /* next ring position to write */
    uint64_t tail_seen;  /* the tail last read: the ring has room up to it */
    uint32_t waiting;    /* the thread sleeps on tail_seq */
    uint32_t busy;       /* the thread is inside the agent (a signal handler's call passes) */
    uint64_t waits;      /* times the ring was full */
    uint64_t rung;       /* ring position at the last look for a tracer half a ring behind */
    /* the tracer's line */
    uint64_t tail;       /* (T) ring position consumed up to */
    uint32_t tail_seq;   /* (T) bumped with tail: the futex a full ring waits on */
    uint32_t pad;
    uint64_t stack_lo, stack_hi; /* (T) the mapping holding this thread's stack */
    uint64_t lost;       /* calls passed unrecorded (reentered from a signal handler; rare) */
    uint64_t reserved[3];
};

struct agent_ctl {
    uint64_t magic;
    uint64_t heartbeat;  /* (T) */
    uint64_t lost;       /* calls passed unrecorded: no free slot */
    /* The order of every recorded call's parts across threads: each stamp
     * (agent_rec t_entry, t_exit; agent_slot inflight) is this counter
     * taken atomically, never a CPU clock, which orders threads only as
     * well as the CPUs agree (a VM's TSC may not; issue 29). */
    uint64_t order;
    uint64_t pad[4];
    uint64_t rows_gen;   /* (T) odd while the tracer removes rows: a seqlock; a line of
                          * its own, read on every unwind */
    uint64_t pad2[7];
    struct agent_slot slots[AGENT_SLOTS];
};

#define AGENT_REC_CALL 1 /* then the raw stack from rsp */
#define AGENT_REC_PAD 2
#define AGENT_REC_PCS 3  /* then the stack already unwound: an info word, then pcs */
#define AGENT_REC_BARE 4 /* --sample, a call not sampled: the header alone, no stack
                          * (stack_len, sig_len and flags 0; no registers) */
/* A PCS record's info word: 0, the pcs are the whole stack; else the first
 * pcs only, and the stack goes on with the frames of the ring's previous
 * PCS record from frame j = (uint32_t)info, n = info >> 32 frames in all
 * (both at most AGENT_MEMO_MAX: the agent's memo of its last unwind). */
#define AGENT_MEMO_MAX 64u

/* A record in a ring; never wraps (a pad record fills the end instead). */
struct agent_rec {
    uint64_t pos;        /* its ring position + 1, stored last: the commit (zeroed
                          * memory is never a committed record) */
    uint32_t len;        /* whole record: AGENT_REC_LEN, a multiple of 16 */
    uint16_t kind;
    uint16_t fn;         /* index into agent_data.fns */
    int32_t tid;
    uint32_t stack_len;  /* bytes of stack copied from rsp */
    uint64_t t_entry, t_exit;
    uint64_t args[6];
    uint64_t ret;        /* return value (releases: 0) */
    uint64_t out;        /* posix_memalign: the pointer stored; a string copy: its size */
    uint64_t ra;         /* the return address at entry */
    /* registers at the function's entry (aarch64: rsp is sp, rbp x29,
     * rbx and r12-r15 x19-x23, ra x30; arm: rsp is sp, rbp r7, rbx and
     * r12-r15 r4, r5, r6, r11, r8, ra lr) */
    uint64_t rsp, rbp, rbx, r12, r13, r14, r15;
    /* A raw record made on an alternate signal stack (AGENT_REC_ALTSTACK):
     * the stack the signal interrupted, sig_len bytes from sig_sp, copied
     * after the first window (the frames below the signal frame: read from
     * the live process later they would be another moment's). */
    uint64_t sig_sp;
    uint32_t sig_len;
    uint32_t flags;      /* AGENT_REC_* flags */
    /* then stack_len bytes from rsp, padded to 8, then sig_len bytes */
};
#define AGENT_REC_ALTSTACK 1u /* rsp was on the thread's alternate signal stack */

_Static_assert(sizeof(struct agent_slot) == 128, "agent_slot is two cache lines");
_Static_assert(__builtin_offsetof(struct agent_slot, tail) == 64, "the tracer's line is the second");
_Static_assert(__builtin_offsetof(struct agent_ctl, slots) % 64 == 0, "slots start a cache line");
_Static_assert(sizeof(struct agent_ctl) <= AGENT_CTL_SIZE, "agent_ctl fits its pages");
_Static_assert(sizeof(struct agent_rec) % 8 == 0, "records stay 8-aligned");
/* The room a record may take: its header and both stack windows. */
#define AGENT_REC_MAX_STACK (2u * AGENT_STACK_MAX)

/* Records and pads are multiples of 16 bytes, so the room left at a ring's
 * end is 0 or at least a pad record's header (pos, len, kind): never the
 * 8 bytes that could hold a pos but not a length. */
#define AGENT_REC_ALIGN 16u
#define AGENT_REC_LEN(stack_len)                                                                \
    (((uint64_t)sizeof(struct agent_rec) + (uint64_t)(stack_len) + AGENT_REC_ALIGN - 1) &      \
     ~(uint64_t)(AGENT_REC_ALIGN - 1))
_Static_assert(AGENT_RING_SIZE % AGENT_REC_ALIGN == 0, "rings hold whole records");

#endif
