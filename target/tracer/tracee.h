/* One traced process: its threads, breakpoints, scratch pages, modules and
 * books.  The engine is single-threaded; all of this belongs to the event
 * loop. */
#ifndef MT_TRACER_TRACEE_H
#define MT_TRACER_TRACEE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch/arch.h"
#include "target/heap/misuse.h"
#include "target/heap/allocators.h"
#include "target/heap/custom_pools.h"
#include "target/heap/sample_draw.h"
#include "target/tracer/engine_ops.h"
#include "target/tracer/intercept.h"
#include "target/tracer/stops.h"
#include "target/tracer/target_mem.h"

struct module_map;
struct heap_books;
struct stack_table;
struct file_locator;
struct return_sites;
struct freed_history;
struct family;
struct agent_engine;

/* An intercepted call whose return we wait for. */
struct pending_call {
    const struct intercept_fn *fn;
    unsigned alloc_id;   /* the allocator whose function it is (allocators.h) */
    uint64_t args[5];
    pid_t tid;           /* the thread that made it (misuse errors at its return) */
    uint64_t ret_slot;   /* where our trampoline address replaced the return address */
    uint64_t orig_ret;
    /* The stack pointer at the call's entry: with the return address in a
     * register (arm, aarch64; ret_slot 0) the callee may have saved our
     * trampoline address anywhere below it (calls.c restores it there). */
    uint64_t entry_sp;
    uint32_t stack_id;
    uint64_t out;        /* posix_memalign: the pointer it stored (calls.c, read_out) */
    bool old_released;   /* realloc: args[0] already taken off the books (calls.c) */
    bool unhooked;       /* its return address put back while an exception passes (calls.c) */
    /* ret_slot 0: the stack word where the callee had saved our
     * trampoline (and its value), found when an exception unhooked the
     * call; where hook_again puts it back once the handler runs inside the
     * call (calls.c). */
    uint64_t saved_slot, saved_tramp;
};

enum thread_state {
    THREAD_RUNNING,
    THREAD_STOPPED,       /* in a ptrace-stop, not yet resumed */
    THREAD_NEW,           /* announced by a clone event, first stop not seen */
};

struct thread {
    pid_t tid;
    enum thread_state state;
    int resume_signal;          /* signal to deliver when resumed */
    bool interrupt_requested;   /* we sent PTRACE_INTERRUPT */
    bool group_stopped;         /* in a job-control stop (PTRACE_LISTEN) */
    bool exit_held;             /* its exit stop came to a world stop: its
                                   exit hooks run when the world resumes */
    struct pending_call *calls; /* shadow stack of intercepted calls */
    unsigned ncalls, calls_cap;
    bool exception_memory;      /* in __cxa_allocate/free_exception (calls.c) */
    uint64_t exceptions[4];     /* in flight: thrown and not yet caught (calls.c) */
    unsigned nexceptions;
    /* The last release this thread entered (misuse.c): operator delete
     * tail-calls free with the same stack pointer, return address and
     * pointer, and that chain is one release, not several. */
    struct release_mark {
        uint64_t sp, ret, ptr;
        uint64_t head, last;   /* the entry addresses of the first and last function */
    } last_release;
    struct sample_state sampler; /* --sample: the breakpoint engine's stream */
};

struct breakpoint {
    uint64_t addr;                   /* a code address (arm: bit 0 is Thumb) */
    uint8_t orig[ARCH_BREAKPOINT_LEN];
    uint8_t trap[ARCH_BREAKPOINT_LEN];  /* what is written (arch_breakpoint_for) */
    uint8_t len;                     /* bytes of trap and orig in use */
    const struct intercept_fn *fn;   /* NULL: the dynamic linker rendezvous, or: */
    bool client_request;             /* a valgrind client request (client_requests.h) */
    unsigned alloc_id;               /* its module in t->allocators (0: none) */
    struct displace_plan plan;
    uint64_t slot_addr;
    uint64_t module_start;           /* the module it lives in (for unloads) */
    bool inserted;
};

/* A page the tracer mapped into the target: a return trampoline, a syscall
 * gadget, and one displaced-instruction slot per breakpoint. */
struct scratch_page {
    uint64_t addr;
    uint64_t size;
    unsigned slots_used;
    uint64_t near;                   /* the module it serves */
};

#define SCRATCH_TRAMPOLINE_OFF 0
#define SCRATCH_SYSCALL_OFF 16
#define SCRATCH_SLOTS_OFF 64
#define SCRATCH_SLOT_SIZE ARCH_DISPLACE_SLOT_MAX
#define SCRATCH_PAGE_SIZE 4096

struct tracee;

/* Everything a process is given when the tracer takes it on: the session's
 * choices and its hooks.  A followed fork child gets its parent's. */
struct tracer_options {
    unsigned depth;          /* frames kept per allocation */
    enum tracer_engine engine;
    bool engine_asked;       /* named by --engine or $MEMTRACE_ENGINE, not the default */
    bool follow_fork;
    bool check;              /* --check: freed-block history for double frees */
    /* --sample: the mean bytes between allocations whose stack is kept
     * (target/heap/sample_draw.h; 0: every stack), and the seed of the
     * threads' streams ($MEMTRACE_SAMPLE_SEED, else from the clock). */
    uint64_t sample_bytes;
    uint64_t sample_seed;
    /* The signal mask a launched program starts with: the one memtrace was
     * given (memtrace blocks the signals that end a session from its
     * start; the program must not inherit that).  NULL: memtrace's own. */
    const sigset_t *program_sigmask;

    /* Called at every thread's exit stop (PTRACE_EVENT_EXIT), while the
     * process's memory still exists, before the thread is let go: the leak
     * scan's hook (target/session/leak_glue.c).  NULL: none. */
    void (*exit_stop_hook)(void *ctx, struct tracee *t, struct thread *th);
    void *exit_stop_ctx;
    /* Called at the entry of exit() (before any exit handler), with the
     * calling thread stopped there and its registers: the leak scan at
     * exit's moment (leak_glue.c).  NULL: none. */
    void (*exit_call_hook)(void *ctx, struct tracee *t, struct thread *th,
                           const struct arch_regs *regs);
    void *exit_call_ctx;
    /* Who prints each misuse error as it is found (misuse.c).  NULL: none. */
    void (*on_misuse)(void *ctx, struct tracee *t, const struct misuse_error *e);
    void *on_misuse_ctx;
};

struct tracee {
    pid_t pid;
    pid_t ppid;              /* -f: the traced process it was forked from; else 0 */
    bool attached_mode;      /* -p: detach at the end; else we started it */
    bool shares_vm;          /* a vfork child that has not exec'ed yet */
    struct family *family;   /* every process of the session (NULL: alone) */
    struct thread **vfork_kids; /* unfollowed vfork children kept until exec or exit (vfork_kids.h),
                                   each with its own calls: not in threads */
    unsigned nvfork_kids, vfork_kids_cap;
    char *program;
    struct target_mem mem;
    struct tracer_options opts;

    struct thread **threads; /* open addressing on tid */
    unsigned threads_cap, threads_count;

    struct breakpoint *bps;  /* open addressing on addr */
    unsigned bps_cap, bps_count;

    struct scratch_page *scratch;
    unsigned scratch_count, scratch_cap;
    struct return_sites *ret_sites;  /* return stubs per call site (return_sites.h) */

    struct module_map *modules;
    struct file_locator *locator;
    struct heap_books *books;
    struct stack_table *stacks;

    uint64_t rendezvous_addr;
    bool exec_seen;
    unsigned books_epoch;       /* grows when an exec replaces books and stacks */
    bool exited;
    bool cannot_follow;      /* exec'ed into another word size (exe_class.h) */
    int exit_status;         /* as waitpid gives it */
    uint8_t *stack_window;   /* reused per event */

    /* Misuse (misuse.c): what was found, and the freed-block history
     * (--check only, else NULL). */
    /* The agent engine (target/agent): NULL while breakpoints intercept.
     * While a recorded call is replayed, stack reads at snap_base come
     * from its stack copy (capture.c). */
    struct agent_engine *agent;
    bool agent_refused;
    bool agent_used;         /* the agent recorded this process (reports say so) */
    const uint8_t *snap;
    uint64_t snap_base;
    size_t snap_len;
    const uint8_t *snap2; /* ... and the stack a signal on the alternate stack interrupted */
    uint64_t snap2_base;
    size_t snap2_len;
    const uint64_t *snap_pcs; /* ... or the stack the agent unwound itself */
    size_t snap_npcs;
    /* --sample: the call being booked was not sampled, and every capture
     * of its stack is the pseudo-stack unsampled_stack (capture.c). */
    bool snap_unsampled;
    uint32_t unsampled_stack;
    uint64_t sample_streams; /* --sample: the threads that drew so far (calls.c) */

    struct misuse_log errors;
    struct freed_history *freed;
    /* The modules whose functions are intercepted (allocators.h). */
    struct allocators allocators;
    /* valgrind's mempools (client_requests.h) */
    struct custom_pools pools;
};

/* threads.c */
struct thread *thread_find(struct tracee *t, pid_t tid);
struct thread *thread_add(struct tracee *t, pid_t tid, enum thread_state state);
void thread_remove(struct tracee *t, pid_t tid);
struct pending_call *thread_push_call(struct thread *th);
/* The process (thread group) thread tid belongs to; 0 when it is gone. */
pid_t thread_group_of(pid_t tid);
/* Lets a thread we hold stopped go on: a group-stopped one stays in its
 * job-control stop (PTRACE_LISTEN), any other continues with the signal
 * it was keeping.  Nothing for a thread not in THREAD_STOPPED. */
void thread_resume_stopped(struct thread *th);
/* Calls over all threads: fn(th, ctx) for each. */
void thread_foreach(struct tracee *t, void (*fn)(struct tracee *, struct thread *, void *), void *ctx);

/* regs_write.c: writes back only what changed in now since was (the
 * registers read at the stop).  0, or -1 with errno. */
int regs_write_changes(pid_t tid, const struct arch_regs *was, const struct arch_regs *now);

/* breakpoints.c */
struct breakpoint *bp_find(struct tracee *t, uint64_t addr);
struct breakpoint *bp_add(struct tracee *t, uint64_t addr);
int bp_insert(struct tracee *t, struct breakpoint *bp);
int bp_remove(struct tracee *t, struct breakpoint *bp);
void bp_foreach(struct tracee *t, void (*fn)(struct tracee *, struct breakpoint *, void *), void *ctx);
/* Drops breakpoints of a module that is gone (no memory to restore). */
void bp_forget_module(struct tracee *t, uint64_t module_start);

/* scratch.c */
/* Is pc one of our return catches: the trampoline of a scratch page, or a
 * call site's return stub? */
bool scratch_is_trampoline(const struct tracee *t, uint64_t pc);
uint64_t scratch_trampoline(const struct tracee *t, uint64_t near);
/* A slot for a breakpoint in module `near`, mapping a page when needed.
 * th must be stopped; all other threads stopped when no page exists yet. */
int scratch_reserve_slot(struct tracee *t, struct thread *th, uint64_t near, uint64_t *slot);
/* Every slot reserved for module `near` is free again (it was unloaded). */
void scratch_release_slots(struct tracee *t, uint64_t near);
/* inject.c: runs one system call in the stopped thread th (at the first
 * scratch page's gadget, or at th's PC before there is one).  0 with the
 * call's raw result in *ret, or -errno (-ESRCH: the thread is gone). */
int inject_syscall(struct tracee *t, struct thread *th, long nr, const uint64_t args[6], uint64_t *ret);

#endif
