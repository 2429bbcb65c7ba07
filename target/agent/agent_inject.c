/* The agent engine's tracer side: injection, patching, detach, fork. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shared/log.h"
#include "shared/xalloc.h"
#include "target/agent/agent_internal.h"
#include "target/tracer/guardian.h"
#include "target/tracer/map_place.h"
#include "target/tracer/modules.h"
#include "target/tracer/tracee.h"
#include "target/tracer/world.h"

#include "arch/agent_cpu.h"


/* The agent image, built by the Makefile from target/agent/payload/ (empty
 * where no agent exists for the CPU). */
extern const unsigned char mt_agent_blob[];
extern const unsigned long mt_agent_blob_len;

const char *agent_engine_name(const struct tracee *t)
{
    return t && (t->agent || t->agent_used) ? "agent" : "ptrace";
}

static bool read_header(struct agent_header *h)
{
    if (mt_agent_blob_len < sizeof(*h))
        return false;
    memcpy(h, mt_agent_blob, sizeof(*h));
    return h->magic == AGENT_MAGIC && h->entry_off < h->text_size &&
           h->text_size <= h->data_off && h->data_off + sizeof(struct agent_data) <= h->total_size &&
           h->total_size >= mt_agent_blob_len && h->text_size % 4096 == 0 &&
           h->data_off % 4096 == 0 && h->total_size % 4096 == 0;
}

bool agent_engine_built(void)
{
    struct agent_header h;
    return read_header(&h);
}

enum tracer_engine agent_default_engine(void)
{
    return arch_agent_default() && agent_engine_built() ? ENGINE_AGENT : ENGINE_PTRACE;
}

bool agent_supported(int pid, uint32_t *cpu_flags, char *why, size_t whylen)
{
    struct agent_header h;
    if (!read_header(&h)) {
        snprintf(why, whylen, "no agent for this CPU (%s)", ARCH_NAME);
        return false;
    }
    return agent_cpu_ready(pid, cpu_flags, why, whylen);
}

/* --- system calls run in the target --------------------------------------- */

int64_t agent_target_call(struct tracee *t, struct thread *th, long nr, uint64_t a0, uint64_t a1,
                           uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
    const uint64_t args[6] = {a0, a1, a2, a3, a4, a5};
    uint64_t ret = 0;
    int rc = inject_syscall(t, th, nr, args, &ret);
    if (rc < 0)
        return rc;
    return (int64_t)ret;
}


/* A scratch area on th's stack, below the red zone. */
uint64_t agent_stack_scratch(struct thread *th)
{
    struct arch_regs regs;
    if (arch_get_regs(th->tid, &regs) < 0)
        return 0;
    return (arch_sp(&regs) - ARCH_STACK_REDZONE - 512) & ~(uint64_t)15;
}

int agent_write_data(struct tracee *t)
{
    struct agent_engine *a = t->agent;
    /* Not the agent's own fields at the end (its unwind registration). */
    return target_mem_write(&t->mem, a->image + a->hdr.data_off, &a->data, AGENT_DATA_TRACER_SIZE);
}

static void undo_start(struct tracee *t, struct thread *th, struct agent_engine *a, int64_t memfd,
                       int64_t pidfd, int64_t pipe_w)
{
    if (a->image)
        agent_target_call(t, th, SYS_munmap, a->image, a->hdr.total_size, 0, 0, 0, 0);
    if (a->shared)
        agent_target_call(t, th, SYS_munmap, a->shared, AGENT_SHARED_SIZE, 0, 0, 0, 0);
    if (memfd >= 0)
        agent_target_call(t, th, SYS_close, (uint64_t)memfd, 0, 0, 0, 0, 0);
    if (pidfd >= 0)
        agent_target_call(t, th, SYS_close, (uint64_t)pidfd, 0, 0, 0, 0, 0);
    if (pipe_w >= 0)
        agent_target_call(t, th, SYS_close, (uint64_t)pipe_w, 0, 0, 0, 0, 0);
    if (a->target_doorbell_r >= 0)
        agent_target_call(t, th, SYS_close, (uint64_t)a->target_doorbell_r, 0, 0, 0, 0, 0);
    if (a->map)
        munmap(a->map, AGENT_SHARED_SIZE);
    if (a->doorbell_fd >= 0)
        close(a->doorbell_fd);
    free(a);
}

int64_t agent_target_pid(struct tracee *t, struct thread *th)
{
    int64_t pid = agent_target_call(t, th, SYS_getpid, 0, 0, 0, 0, 0, 0);
    return agent_failed(pid) || pid <= 0 ? t->pid : pid;
}

/* The seccomp mode of process pid (/proc/PID/status "Seccomp:"): 0 none,
 * 1 strict, 2 filter; 0 when unknown. */
static int seccomp_mode(int pid)
{
    char path[64], line[128];
    snprintf(path, sizeof(path), "/proc/%d/status", pid);
    FILE *f = fopen(path, "re");
    int mode = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "Seccomp: %d", &mode) == 1)
            break;
    fclose(f);
    return mode;
}

int agent_start(struct tracee *t, struct thread *th, char *why, size_t whylen)
{
    uint32_t cpu_flags = 0;
    if (!agent_supported(t->pid, &cpu_flags, why, whylen))
        return -1;
    /* The agent's injection makes system calls the program itself may
     * never make (memfd_create, pidfd_open, pipe2...): a seccomp policy can
     * kill the process for one.  The default engine does not take that
     * risk; --engine=agent (or $MEMTRACE_ENGINE) tries, and an EPERM from
     * the policy still falls back to breakpoints. */
    int mode = seccomp_mode(t->pid);
    if (mode && !t->opts.engine_asked) {
        snprintf(why, whylen,
                 "it runs under a seccomp %s, which could kill it for the agent's system calls "
                 "(--engine=agent tries anyway)",
                 mode == 1 ? "strict mode" : "filter");
        return -1;
    }
    struct agent_engine *a = xcalloc(1, sizeof(*a));
    a->doorbell_fd = -1;
    a->target_doorbell_fd = -1;
    a->target_doorbell_r = -1;
    read_header(&a->hdr);
    int64_t memfd = -1, pidfd = -1, pipe_w = -1, pipe_r = -1;
    uint64_t scratch = agent_stack_scratch(th);
    static const char name[] = AGENT_MEMFD_NAME;
    if (!scratch || target_mem_write(&t->mem, scratch, name, sizeof(name)) < 0) {
        snprintf(why, whylen, "cannot write to the target's stack");
        goto fail;
    }
    /* Sealable: the tracer seals it before mapping it (agent_fds.c). */
    memfd = agent_target_call(t, th, SYS_memfd_create, scratch, MFD_CLOEXEC | MFD_ALLOW_SEALING, 0,
                              0, 0, 0);
    if (agent_failed(memfd)) {
        snprintf(why, whylen, "memfd_create in the target: %s", strerror((int)-memfd));
        memfd = -1;
        goto fail;
    }
    int64_t r = agent_target_call(t, th, SYS_ftruncate, (uint64_t)memfd, AGENT_SHARED_SIZE, 0, 0, 0, 0);
    if (agent_failed(r)) {
        snprintf(why, whylen, "ftruncate in the target: %s", strerror((int)-r));
        goto fail;
    }
    /* The tracer's mapping first, of the open file the target holds,
     * checked and sealed: whatever the target does to its descriptor from
     * here on concerns its own mapping only. */
    a->map = agent_take_region(t->pid, memfd, AGENT_SHARED_SIZE, why, whylen);
    if (!a->map)
        goto fail;
    /* Far from the program's own mappings (map_place.h): with no hint the
     * kernel would put it right below the libraries, where the program's
     * next mappings go. */
    r = agent_target_call(t, th, MMAP_SYSCALL,
                          map_place_hint(t->pid, MAP_PLACE_FAR, AGENT_SHARED_SIZE, 0, NULL),
                          AGENT_SHARED_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, (uint64_t)memfd, 0);
    if (agent_failed(r)) {
        snprintf(why, whylen, "mmap of the shared region in the target: %s", strerror((int)-r));
        goto fail;
    }
    a->shared = (uint64_t)r;
    agent_target_call(t, th, SYS_close, (uint64_t)memfd, 0, 0, 0, 0, 0);
    memfd = -1;

    /* The doorbell: a full ring writes a byte the event loop polls for. */
    if (agent_target_call(t, th, SYS_pipe2, scratch + 64, O_CLOEXEC | O_NONBLOCK, 0, 0, 0, 0) == 0) {
        int32_t fds[2];
        if (target_mem_read(&t->mem, scratch + 64, fds, sizeof(fds)) == 0) {
            pipe_r = fds[0];
            pipe_w = fds[1];
            a->doorbell_fd = agent_take_doorbell(t->pid, pipe_r);
            /* The target keeps its read end: a dead tracer's closed end
             * must never make the agent's write raise SIGPIPE. */
            a->target_doorbell_r = (int)pipe_r;
            /* A descriptor swapped before the tracer took it: the target's
             * read end is gone, and the tracer holds none either, so the
             * agent's first doorbell would kill the target with SIGPIPE. */
            if (a->doorbell_fd < 0) {
                snprintf(why, whylen, "the target's descriptor %d is not the agent's doorbell pipe",
                         (int)pipe_r);
                goto fail;
            }
        }
    }
    /* The target's own pid, as it sees it: in a PID namespace (a
     * container) not ours.  The agent copies its stacks with
     * process_vm_readv on that pid; with ours it would name no process
     * there, or another one. */
    int64_t own_pid = agent_target_pid(t, th);
    /* The tracer's death: a pidfd of ours turns readable.  Only where the
     * target sees our pids (its pid is ours for it): in another PID
     * namespace our pid names nobody, or somebody else. */
    pidfd = -1;
    if (own_pid == t->pid) {
        pidfd = agent_target_call(t, th, SYS_pidfd_open, (uint64_t)getpid(), 0, 0, 0, 0, 0);
        if (agent_failed(pidfd))
            pidfd = -1;
    }

    /* Its entry is reached by absolute jumps: a small neutral place. */
    r = agent_target_call(t, th, MMAP_SYSCALL,
                          map_place_hint(t->pid, MAP_PLACE_SMALL, a->hdr.total_size, 0, NULL),
                          a->hdr.total_size, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
                          (uint64_t)-1, 0);
    if (agent_failed(r)) {
        snprintf(why, whylen, "mmap of the agent in the target: %s", strerror((int)-r));
        goto fail;
    }
    a->image = (uint64_t)r;
    /* Never writable and executable at once: the text is written through
     * /proc/PID/mem into its r-x mapping, the data pages become rw-. */
    r = agent_target_call(t, th, SYS_mprotect, a->image + a->hdr.data_off,
                    a->hdr.total_size - a->hdr.data_off, PROT_READ | PROT_WRITE, 0, 0, 0);
    if (agent_failed(r) || target_mem_write(&t->mem, a->image, mt_agent_blob, mt_agent_blob_len) < 0) {
        snprintf(why, whylen, "cannot write the agent into the target");
        goto fail;
    }
    struct agent_ctl *ctl = (struct agent_ctl *)a->map;
    ctl->magic = AGENT_MAGIC;
    a->data.state = AGENT_ACTIVE;
    a->data.pid = (int32_t)own_pid;
    a->data.tracer_pidfd = (int32_t)pidfd;
    a->data.shared = a->shared;
    a->data.text_lo = a->image;
    a->data.text_hi = a->image + a->hdr.text_size;
    a->data.depth = t->opts.depth;
    a->data.cpu_flags = cpu_flags;
    /* MEMTRACE_AGENT_ROWS=0: raw stacks only, every stack unwound by the
     * tracer (the tests compare both ways). */
    const char *rows = getenv("MEMTRACE_AGENT_ROWS");
    a->data.use_rows = !(rows && strcmp(rows, "0") == 0);
    a->data.sample_bytes = t->opts.sample_bytes;
    a->data.sample_seed = t->opts.sample_seed;

    a->target_doorbell_fd = (int)pipe_w;
    a->data.doorbell_fd = (int32_t)pipe_w;
    t->agent = a;
    t->agent_used = true;
    agent_write_data(t);
    /* If the tracer dies, the guardian switches the agent off at once (the
     * pidfd tells the agent too, at its next full ring). */
    guardian_note_return(t->pid, a->image + a->hdr.data_off + offsetof(struct agent_data, state),
                         AGENT_GONE, AGENT_ACTIVE, 4);
    return 0;
fail:
    undo_start(t, th, a, memfd, pidfd, pipe_w);
    return -1;
}

/* --- patches ---------------------------------------------------------------- */

__attribute__((unused)) static uint32_t fn_flags(const struct intercept_fn *fn)
{
    uint32_t f = 0;
    if (fn->releases)
        f |= AGENT_FN_RELEASE;
    if (intercept_is_map_op(fn->op))
        f |= AGENT_FN_MAP;
    if (fn->op == OP_POSIX_MEMALIGN)
        f |= AGENT_FN_MEMALIGN;
    if (fn->op == OP_EXCEPTION_ALLOC)
        f |= AGENT_FN_EXCEPTION;
    if (fn->op == OP_CATCH)
        f |= AGENT_FN_CATCH;
    if (fn->op == OP_STRDUP)
        f |= AGENT_FN_STRLEN;
    if (fn->op == OP_FIND_EXIDX)
        f |= AGENT_FN_FIND_EXIDX;
    if (intercept_is_realloc_op(fn->op) || fn->op == OP_MUNMAP || fn->op == OP_MREMAP)
        f |= AGENT_FN_OPEN_RELEASE;
    return f;
}

/* Where the agent finds an allocation's size for --sample (agent_abi.h). */
static uint32_t fn_size_args(const struct intercept_fn *fn)
{
    int i, j;
    switch (intercept_size_args(fn->op, &i, &j)) {
    case INTERCEPT_SIZE_ARGS:
        return AGENT_SIZE_ARG(intercept_arg_index(fn, (unsigned)i)) |
               (j >= 0 ? AGENT_SIZE_ARG2(intercept_arg_index(fn, (unsigned)j)) : 0);
    case INTERCEPT_SIZE_COPY:
        return AGENT_SIZE_OUT;
    case INTERCEPT_SIZE_NONE:
        break;
    }
    return 0;
}

static bool patched_addr(const struct agent_engine *a, uint64_t addr)
{
    for (unsigned i = 0; i < a->npatches; i++)
        if (a->patches[i].active && a->patches[i].addr == addr)
            return true;
    return false;
}

/* A stopped thread whose PC is inside bytes about to be replaced steps
 * out of them first. */
__attribute__((unused)) static void step_out(struct tracee *t, uint64_t lo, uint64_t hi)
{
    for (unsigned i = 0; i < t->threads_cap; i++) {
        struct thread *th = t->threads[i];
        if (!th || th->state != THREAD_STOPPED)
            continue;
        for (int n = 0; n < 16; n++) {
            struct arch_regs regs;
            if (arch_get_regs(th->tid, &regs) < 0)
                break;
            uint64_t pc = arch_pc(&regs);
            if (pc <= lo || pc >= hi)
                break;
            struct stop st;
            if (ptrace(PTRACE_SINGLESTEP, th->tid, NULL, NULL) < 0 ||
                stop_next(th->tid, 0, &st) < 1 || st.kind == STOP_GONE)
                break;
            if (st.kind == STOP_SIGNAL && !th->resume_signal)
                th->resume_signal = st.sig;
        }
    }
}

static int patch_one(struct tracee *t, struct thread *th, struct module *m, uint64_t addr,
                     const struct intercept_fn *fn, unsigned alloc_id)
{
    struct agent_engine *a = t->agent;
    if (a->npatches >= AGENT_MAX_FNS)
        return -ENOSPC;
    /* (arm: addr carries the Thumb bit, its bytes lie at at) */
    uint64_t at = ARCH_CODE_ADDR(addr);
    uint8_t code[AGENT_PATCH_READ];
    size_t avail = target_mem_read_partial(&t->mem, at, code, sizeof(code));
    if (avail < agent_patch_min_len())
        return -EFAULT;
    uint64_t slot = 0;
    int rc = scratch_reserve_slot(t, th, m->start, &slot);
    if (rc < 0)
        return rc;
    uint8_t bytes[SCRATCH_SLOT_SIZE], jump[sizeof(a->patches[0].orig)];
    unsigned covered = 0, idx = a->npatches;
    const char *why = NULL;
    size_t n = agent_patch_build(code, avail, addr, slot, idx, a->image + a->hdr.entry_off, bytes,
                                 sizeof(bytes), jump, &covered, &why);
    if (!n) {
        mt_warn("agent engine: %s in %s: %s", fn->name, m->path, why ? why : "stub out of reach");
        return -ENOTSUP;
    }
    unsigned stub = agent_patch_stub_len();
    if ((rc = target_mem_write(&t->mem, slot, bytes, stub + n)) < 0)
        return rc;
    a->data.fns[idx].orig = slot + stub + (addr - at); /* entered in the function's state */
    a->data.fns[idx].entry = at; /* frame 0's pc, as a breakpoint stop gives it */
    a->data.fns[idx].flags = fn_flags(fn);
    a->data.fns[idx].size_args = fn_size_args(fn);
    uint64_t fn_off = a->hdr.data_off + offsetof(struct agent_data, fns) + idx * sizeof(struct agent_fn);
    if ((rc = target_mem_write(&t->mem, a->image + fn_off, &a->data.fns[idx], sizeof(struct agent_fn))) < 0)
        return rc;
    step_out(t, at, at + covered);
    struct agent_patch *p = &a->patches[idx];
    memset(p, 0, sizeof(*p));
    memcpy(p->orig, code, covered);
    if ((rc = target_mem_write(&t->mem, at, jump, covered)) < 0)
        return rc;
    p->addr = addr;
    p->slot = slot;
    p->module_start = m->start;
    p->fn = fn;
    p->alloc_id = alloc_id;
    agent_patch_plan(p);
    p->covered = covered;
    p->active = true;
    a->npatches++;
    return 0;
}

bool agent_fn_patched(const struct intercept_fn *fn)
{
    /* exit: a breakpoint when wanted; the unwinder: the agent's frames
     * carry unwind information of their own (agent_core.inc.c) */
    return fn->op != OP_EXIT && fn->op != OP_UNWIND;
}

static void add_range(struct agent_engine *a, uint64_t lo, uint64_t hi)
{
    for (uint32_t i = 0; i < a->data.nranges; i++)
        if (a->data.alloc[i].lo == lo)
            return;
    if (a->data.nranges < AGENT_MAX_RANGES) {
        a->data.alloc[a->data.nranges].lo = lo;
        a->data.alloc[a->data.nranges].hi = hi;
        a->data.nranges++;
    }
}

/* The target's C++ unwinder (libgcc_s, which exports both names) and the
 * dynamic linker: the agent registers the unwind information of its entry
 * with the first, so that an exception thrown out of an intercepted
 * function unwinds through the agent's frame to the program's handler
 * (agent_core.inc.c, register_frames).  The unwinder is the module that
 * also throws (_Unwind_RaiseException): i386 glibc's libc.so.6 exports a
 * second registry of its own (_Unwind_Find_FDE@@GCC_3.0,
 * __register_frame_info@@GLIBC_2.0, for programs of gcc 2.x) that
 * libgcc_s never searches; loaded first, it took the registration, and
 * every bad_alloc out of an intercepted operator new ended in
 * std::terminate there (the i386 board's except_* checks). */
static void note_unwinder(struct tracee *t, struct module *m)
{
    struct agent_engine *a = t->agent;
    if (m->is_interp && !a->data.interp.lo) {
        a->data.interp.lo = m->start;
        a->data.interp.hi = m->end;
        agent_write_data(t);
    }
    if (a->data.register_frame_info || !module_export_addr(t->modules, m, "_Unwind_Find_FDE") ||
        !module_export_addr(t->modules, m, "_Unwind_RaiseException"))
        return;
    uint64_t reg = module_export_addr(t->modules, m, "__register_frame_info");
    if (!reg)
        return;
    a->data.register_frame_info = reg;
    a->data.unwinder.lo = m->start;
    a->data.unwinder.hi = m->end;
    agent_write_data(t);
}

#ifdef ARCH_UNWIND_FIND_EXIDX
/* The unwinder's table lookup in libc (arm): patched like an allocation
 * function, so that the agent answers it for its own frames
 * (agent_arm.c); never recorded, never a breakpoint. */
static const struct intercept_fn find_exidx_fn = {ARCH_UNWIND_FIND_EXIDX, OP_FIND_EXIDX, FAMILY_ANY,
                                                  false, 0};

static void patch_find_exidx(struct tracee *t, struct thread *th, struct module *m, unsigned alloc_id)
{
    uint64_t addr = module_export_addr(t->modules, m, ARCH_UNWIND_FIND_EXIDX);
    if (!addr || patched_addr(t->agent, addr))
        return;
    if (patch_one(t, th, m, addr, &find_exidx_fn, alloc_id) < 0)
        mt_warn("agent engine: %s in %s not patched: an exception thrown out of an intercepted "
                "function ends the program",
                ARCH_UNWIND_FIND_EXIDX, m->path);
}
#endif

unsigned agent_patch_module(struct tracee *t, struct thread *th, struct module *m,
                            const struct intercept_site *sites, size_t n, unsigned alloc_id,
                            unsigned *refused)
{
    struct agent_engine *a = t->agent;
    unsigned placed = 0;
    *refused = 0;
    note_unwinder(t, m);
#ifdef ARCH_UNWIND_FIND_EXIDX
    patch_find_exidx(t, th, m, alloc_id);
#endif
    for (size_t i = 0; i < n; i++) {
        const struct intercept_fn *fn = sites[i].fn;
        if (!agent_fn_patched(fn)) /* a breakpoint instead (placement.c) */
            continue;
        if (patched_addr(a, sites[i].addr))
            continue;
        int rc = patch_one(t, th, m, sites[i].addr, fn, alloc_id);
        if (rc == 0)
            placed++;
        else
            (*refused)++;
    }
    if (placed) {
        add_range(a, m->start, m->end);
        if (module_is_static_executable(t->modules, m->start)) {
            a->data.static_exe.lo = m->start;
            a->data.static_exe.hi = m->end;
        }
        agent_write_data(t);
    }
    return placed;
}

void agent_module_gone(struct tracee *t, uint64_t module_start)
{
    struct agent_engine *a = t->agent;
    if (!a)
        return;
    for (unsigned i = 0; i < a->npatches; i++)
        if (a->patches[i].module_start == module_start)
            a->patches[i].active = false; /* its index stays: records may name it */
    if (a->data.unwinder.lo == module_start) {
        /* (a registration made stays in its memory, gone with it) */
        a->data.register_frame_info = 0;
        a->data.unwinder.lo = a->data.unwinder.hi = 0;
        agent_write_data(t);
    }
    for (uint32_t i = 0; i < a->data.nranges; i++)
        if (a->data.alloc[i].lo == module_start) {
            a->data.alloc[i] = a->data.alloc[--a->data.nranges];
            a->data.alloc[a->data.nranges].lo = a->data.alloc[a->data.nranges].hi = 0;
            agent_write_data(t);
            break;
        }
}

/* --- the end ------------------------------------------------------------- */

static bool inside(uint64_t pc, uint64_t lo, uint64_t len) { return pc >= lo && pc - lo < len; }

/* Is any thread inside the agent, or inside a call it made? */
static bool agent_busy(struct tracee *t)
{
    struct agent_engine *a = t->agent;
    for (unsigned i = 0; i < t->threads_cap; i++) {
        struct thread *th = t->threads[i];
        struct arch_regs regs;
        if (!th || arch_get_regs(th->tid, &regs) < 0)
            continue;
        uint64_t pc = arch_pc(&regs);
        if (inside(pc, a->image, a->hdr.total_size))
            return true;
        for (unsigned k = 0; k < a->npatches; k++)
            if (inside(pc, a->patches[k].slot, agent_patch_stub_len()))
                return true;
    }
    const struct agent_ctl *ctl = (const struct agent_ctl *)a->map;
    for (unsigned s = 0; s < AGENT_SLOTS; s++)
        if (ctl->slots[s].key && ctl->slots[s].depth)
            return true;
    return false;
}

static struct thread *any_stopped(struct tracee *t)
{
    struct thread *best = NULL;
    for (unsigned i = 0; i < t->threads_cap; i++) {
        struct thread *th = t->threads[i];
        if (th && th->state == THREAD_STOPPED && (!best || th->tid == t->pid))
            best = th;
    }
    return best;
}

void agent_free_local(struct agent_engine *a)
{
    if (a->map)
        munmap(a->map, AGENT_SHARED_SIZE);
    if (a->doorbell_fd >= 0)
        close(a->doorbell_fd);
    agent_ring_free(a);
    free(a);
}

static void release_local(struct tracee *t)
{
    struct agent_engine *a = t->agent;
    struct engine_stats st;
    /* MEMTRACE_AGENT_STATS=1: where the calls went, at the end (bench, perf work) */
    const char *want = getenv("MEMTRACE_AGENT_STATS");
    if (want && strcmp(want, "1") == 0 && agent_get_stats(t, &st))
        mt_info("agent engine: %llu calls, stacks unwound in the target: %llu (%llu continuing "
                "the previous), raw: %llu, ring waits: %llu, unrecorded: %llu, "
                "unwind rows: %u",
                (unsigned long long)st.calls, (unsigned long long)st.unwound_in_target,
                (unsigned long long)a->delta_records, (unsigned long long)st.raw_stacks,
                (unsigned long long)st.waits, (unsigned long long)st.lost, a->rows);
    guardian_forget_return(t->pid, a->image + a->hdr.data_off + offsetof(struct agent_data, state));
    agent_free_local(a);
    t->agent = NULL;
}

void agent_stop(struct tracee *t)
{
    struct agent_engine *a = t->agent;
    if (!a)
        return;
    agent_drain(t, true);
    a->data.state = AGENT_OFF;
    /* No doorbell from here on: the tracer's read end closes below, and
     * so may the target's (or a hostile program has closed it already),
     * and a thread still inside the agent must not write into a pipe with
     * no reader (SIGPIPE) or into whatever reuses the number later. */
    a->data.doorbell_fd = -1;
    /* Said, as a breakpoint that cannot be removed is: the detach goes on. */
    if (agent_write_data(t) < 0)
        mt_warn("process %d: cannot switch the agent off", (int)t->pid);
    unsigned undone = 0, kept = 0;
    for (unsigned i = 0; i < a->npatches; i++) {
        struct agent_patch *p = &a->patches[i];
        if (p->active && target_mem_write(&t->mem, ARCH_CODE_ADDR(p->addr), p->orig, p->covered) == 0)
            undone++;
        else if (p->active)
            kept++;
        p->active = false;
    }
    if (kept)
        mt_warn("process %d: %u patched functions cannot be restored", (int)t->pid, kept);
    struct thread *th = any_stopped(t);
    /* A thread inside the agent (waiting for room in its ring, or in a
     * call the agent made) leaves it by itself now that the agent is off
     * and no function leads into it: let the threads run a moment. */
    for (int tries = 0; th && agent_busy(t) && tries < 20; tries++) {
        for (unsigned i = 0; i < t->threads_cap; i++)
            if (t->threads[i])
                thread_resume_stopped(t->threads[i]);
        struct timespec pause = {0, 2000000L << (tries < 5 ? tries : 5)};
        nanosleep(&pause, NULL);
        struct world_stop ws;
        tracer_stop_world(t, &ws);
        free(ws.stopped);
        th = any_stopped(t);
    }
    /* The agent's unwind information registered with the target's
     * unwinder points into its image: the image stays (text and data; no
     * function leads into it any more), the rings go. */
    uint32_t frames = 0;
    bool keep_image = target_mem_read(&t->mem, a->image + a->hdr.data_off + offsetof(struct agent_data, frames),
                                      &frames, sizeof(frames)) < 0 || frames != 0;
    if (th && !agent_busy(t)) {
        if (a->data.tracer_pidfd >= 0)
            agent_target_call(t, th, SYS_close, (uint64_t)a->data.tracer_pidfd, 0, 0, 0, 0, 0);
        if (a->target_doorbell_fd >= 0)
            agent_target_call(t, th, SYS_close, (uint64_t)a->target_doorbell_fd, 0, 0, 0, 0, 0);
        if (a->target_doorbell_r >= 0)
            agent_target_call(t, th, SYS_close, (uint64_t)a->target_doorbell_r, 0, 0, 0, 0, 0);
        if (!keep_image)
            agent_target_call(t, th, SYS_munmap, a->image, a->hdr.total_size, 0, 0, 0, 0);
        agent_target_call(t, th, SYS_munmap, a->shared, AGENT_SHARED_SIZE, 0, 0, 0, 0);
        mt_info("agent engine: %u patches removed, agent %s", undone,
                keep_image ? "kept mapped (its unwind information is registered), switched off"
                           : "unmapped");
    } else {
        mt_info("agent engine: %u patches removed; a thread is inside the agent, which stays "
                "mapped and switched off", undone);
    }
    release_local(t);
}

void agent_forget(struct tracee *t)
{
    if (!t->agent)
        return;
    agent_drain(t, true);
    release_local(t);
}

int agent_release_child(struct tracee *t, int child_pid)
{
    struct agent_engine *a = t->agent;
    if (!a)
        return 0;
    struct target_mem cm;
    int rc = target_mem_open(&cm, child_pid);
    if (rc < 0)
        return rc;
    for (unsigned i = 0; i < a->npatches; i++)
        if (a->patches[i].active) {
            int w = target_mem_write(&cm, ARCH_CODE_ADDR(a->patches[i].addr), a->patches[i].orig,
                                     a->patches[i].covered);
            rc = rc < 0 ? rc : w;
        }
    uint32_t off = AGENT_OFF;
    int w = target_mem_write(&cm, a->image + a->hdr.data_off + offsetof(struct agent_data, state), &off,
                             sizeof(off));
    rc = rc < 0 ? rc : w;
    target_mem_close(&cm);
    return rc;
}

unsigned agent_own_ranges(const struct tracee *t, uint64_t lo[2], uint64_t len[2])
{
    const struct agent_engine *a = t->agent;
    if (!a)
        return 0;
    lo[0] = a->image;
    len[0] = a->hdr.total_size;
    lo[1] = a->shared;
    len[1] = AGENT_SHARED_SIZE;
    return 2;
}

void agent_free(struct tracee *t)
{
    if (t->agent)
        release_local(t);
}
