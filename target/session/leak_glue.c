/* The leak scan in a session: the console's `scan`, the scan at exit (-a,
 * --leak-exitcode), suppressions, and the stack pointers of exited threads. */
#include <stdlib.h>
#include <string.h>

#include "shared/log.h"
#include "shared/xalloc.h"
#include "target/leak/leak_groups.h"
#include "target/leak/leak_tracee.h"
#include "target/leak/suppress.h"
#include "target/session/session.h"
#include "target/tracer/world.h"

struct leak_session {
    bool autoscan;
    int exitcode;
    struct suppressions *supp;
    struct leak_dead_stacks dead;
    bool in_scan;               /* exit stops seen while scanning are not ours to judge */
    bool leader_gone;           /* the main thread ended alone (pthread_exit) */
    bool final_done;
    bool final_interrupted;     /* a signal ended it: no figures to report */
    struct report_leaks final;
    bool last_done;             /* a console scan ran: its result is kept */
    struct report_leaks last;
};

static bool suppress_stack(void *ctx, uint32_t stack_id)
{
    struct session *s = ctx;
    unsigned depth;
    const uint64_t *pcs = stack_table_pcs(s->tracee->stacks, stack_id, &depth);
    for (unsigned i = 0; i < depth; i++) {
        /* Every frame of the pc: inlined functions match too. */
        for (unsigned sub = 0; sub < 64; sub++) {
            struct report_frame f;
            memset(&f, 0, sizeof(f));
            f.pc = pcs[i] & ~(1ull << 63);
            f.sub = sub;
            f.caller_pc = i + 1 < depth ? pcs[i + 1] : 0;
            session_resolve(s, pcs[i], i, &f);
            if (suppressions_match(s->leak->supp, f.function) ||
                suppressions_match(s->leak->supp, f.file) ||
                suppressions_match(s->leak->supp, f.module))
                return true;
            if (!f.more)
                break;
        }
    }
    return false;
}

static bool session_ends(void *ctx)
{
    (void)ctx;
    return session_ending_signal_pending();
}

/* Scans with every thread stopped; threads already in a stop (the one at
 * its exit stop) stay as they are.  false when a signal that ends the
 * session came meanwhile: the scan stopped there and out holds nothing
 * (a half scan would call reachable blocks lost). */
static bool scan_into(struct session *s, pid_t entry_tid, struct report_leaks *out)
{
    struct leak_session *L = s->leak;
    struct world_stop ws;
    struct leak_run run;
    L->in_scan = true;
    tracer_stop_world(s->tracee, &ws);
    leak_scan_tracee(s->tracee, &L->dead, entry_tid, session_ends, NULL, &run);
    /* Before the resume: an exit stop this stop met gets its hook there
     * (the scan at exit of a process that ends meanwhile). */
    L->in_scan = false;
    tracer_resume_world(s->tracee, &ws);
    bool whole = !run.res.interrupted;
    if (whole)
        leak_build_report(&run, suppressions_count(L->supp) ? suppress_stack : NULL, s, out);
    else
        mt_warn("leak scan: interrupted by a signal after %.3f s, %llu bytes read: no leak figures",
                run.seconds, (unsigned long long)run.res.bytes_scanned);
    leak_run_free(&run);
    return whole;
}

static void final_scan(struct session *s, pid_t entry_tid)
{
    struct leak_session *L = s->leak;
    bool whole = scan_into(s, entry_tid, &L->final);
    L->final_done = true;
    if (!whole) {
        L->final_interrupted = true;
        return;
    }
    mt_info("leak scan: %llu bytes definitely lost, %llu indirectly, %llu possibly (%.3f ms)",
            (unsigned long long)L->final.bytes[REPORT_LEAK_DEFINITE],
            (unsigned long long)L->final.bytes[REPORT_LEAK_INDIRECT],
            (unsigned long long)L->final.bytes[REPORT_LEAK_POSSIBLE], L->final.seconds * 1e3);
}

/* Every exit stop: remember where the thread's stack ended; when the whole
 * process is going (the main thread's or the last thread's exit), and -a
 * asks for it, scan while the memory is still there. */
static void on_exit_stop(void *ctx, struct tracee *t, struct thread *th)
{
    struct session *s = ctx;
    struct leak_session *L = s->leak;
    /* The scan and its dead stacks are the first process's; a followed
     * child's report has no leak section. */
    if (L->in_scan || t != s->tracee)
        return;
    struct arch_regs regs;
    if (arch_get_regs(th->tid, &regs) == 0)
        leak_dead_stacks_add(&L->dead, arch_sp(&regs));
    if (!L->autoscan || L->final_done)
        return;
    bool leader = th->tid == t->pid;
    bool last = t->threads_count == 1 || (L->leader_gone && t->threads_count == 2);
    if (!leader && !last)
        return;
    struct world_stop ws;
    L->in_scan = true;
    tracer_stop_world(t, &ws);
    unsigned alive = ws.nalive;
    L->in_scan = false;
    tracer_resume_world(t, &ws); /* may run another thread's exit stop */
    if (L->final_done)
        return;
    if (alive && !last) {
        /* Other threads run on: only the main thread ends. */
        L->leader_gone = true;
        return;
    }
    final_scan(s, 0);
}

/* exit() called: the moment of the scan at exit.  The program's frames are
 * gone (main returned into exit, or the caller's frames stay live above the
 * stack pointer, as they are), and no exit handler has freed anything yet.
 * Memcheck looks later, at exit_group after the handlers, LeakSanitizer
 * from an exit handler of its own: both see the heap as it is here unless a
 * handler frees memory, and neither sees the stale words that the exit
 * path leaves in the dead part of the stack (memcheck knows them as
 * undefined, and glibc's allocator, which leaves them, is theirs to
 * replace).  A program that ends without exit() (_exit, a signal, the last
 * thread's pthread_exit) is scanned at its exit stop as before. */
static void on_exit_call(void *ctx, struct tracee *t, struct thread *th,
                         const struct arch_regs *regs)
{
    struct session *s = ctx;
    struct leak_session *L = s->leak;
    (void)regs;
    /* The scan is the first process's: a followed child's exit() (its
     * options, hooks and all, are a copy of its parent's) is not it. */
    if (t != s->tracee || !L->autoscan || L->final_done || L->in_scan)
        return;
    final_scan(s, th->tid);
}

int session_leak_setup(struct session *s, const struct session_leak_options *o)
{
    struct leak_session *L = xcalloc(1, sizeof(*L));
    L->autoscan = o->autoscan || o->exitcode >= 0;
    L->exitcode = o->exitcode;
    if (o->suppressions) {
        char err[512];
        L->supp = suppressions_load(o->suppressions, err, sizeof(err));
        if (!L->supp) {
            mt_error("--suppressions: %s", err);
            free(L);
            return -1;
        }
    }
    s->leak = L;
    return 0;
}

void session_leak_hook(struct session *s, struct tracer_options *opts)
{
    if (!s->leak)
        return;
    opts->exit_stop_hook = on_exit_stop;
    opts->exit_stop_ctx = s;
    /* Only when the scan at exit is asked for: the agent engine places a
     * breakpoint on exit() for it (tracer/placement.c). */
    if (s->leak->autoscan) {
        opts->exit_call_hook = on_exit_call;
        opts->exit_call_ctx = s;
    }
}

struct scan_print {
    struct session *s;
    FILE *out;
    const struct report_leaks *leaks;
};

static int print_scan(void *arg)
{
    struct scan_print *j = arg;
    struct report_source src = session_report_source(j->s);
    report_write_leaks_text(j->out, &src, j->leaks);
    return fflush(j->out) == 0 ? 0 : -1;
}

void session_leak_scan(struct session *s, FILE *out)
{
    if (!s->leak) {
        fputs("error: scan: leak scanning is not set up\n", out);
        return;
    }
    struct report_leaks leaks;
    if (!scan_into(s, 0, &leaks)) {
        fputs("error: scan: interrupted by a signal\n", out);
        return;
    }
    /* The world runs again: its records are symbolized apart. */
    struct scan_print job = { s, out, &leaks };
    if (session_run_apart(s, print_scan, &job) == -2)
        print_scan(&job);
    /* Kept for the console's report -f html, until the next scan. */
    if (s->leak->last_done)
        leak_report_free(&s->leak->last);
    s->leak->last = leaks;
    s->leak->last_done = true;
}

void session_leak_finish(struct session *s)
{
    if (s->leak && s->leak->autoscan && !s->leak->final_done && !tracer_finished(s->tracee))
        final_scan(s, 0);
}

int session_leak_exit_code(const struct session *s)
{
    const struct leak_session *L = s->leak;
    if (!L || L->exitcode < 0 || !L->final_done || L->final_interrupted || !L->final.bytes[REPORT_LEAK_DEFINITE])
        return -1;
    return L->exitcode;
}

const struct report_leaks *session_leak_report(const struct session *s)
{
    return s->leak && s->leak->final_done && !s->leak->final_interrupted ? &s->leak->final : NULL;
}

const struct report_leaks *session_leak_latest(const struct session *s)
{
    if (!s->leak)
        return NULL;
    if (s->leak->final_done && !s->leak->final_interrupted)
        return &s->leak->final;
    return s->leak->last_done ? &s->leak->last : NULL;
}

void session_leak_free(struct session *s)
{
    struct leak_session *L = s->leak;
    if (!L)
        return;
    for (size_t i = 0; i < s->family.count; i++) {
        struct tracer_options *o = &s->family.procs[i]->opts;
        if (o->exit_stop_ctx == s)
            o->exit_stop_hook = NULL;
        if (o->exit_call_ctx == s)
            o->exit_call_hook = NULL;
    }
    suppressions_free(L->supp);
    leak_dead_stacks_free(&L->dead);
    leak_report_free(&L->final);
    if (L->last_done)
        leak_report_free(&L->last);
    free(L);
    s->leak = NULL;
}
