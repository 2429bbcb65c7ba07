/* The agent engine, tracer side: an agent injected into the traced process
 * records every intercepted call in per-thread rings in shared memory, and
 * the tracer replays the records into the same books, stacks and misuse
 * checks as the breakpoint engine (target/tracer/calls.c).
 *
 * Life cycle: agent_start (every thread stopped) maps the agent and the
 * shared region; agent_patch_module redirects a module's intercepted
 * functions through trampolines; agent_drain replays records (from the
 * event loop, and before the books are read); agent_stop (every thread
 * stopped) removes every patch and unmaps what it can.
 *
 * The tracer calls these through its engine interface
 * (target/tracer/engine_ops.h; the table is agent_ops.c): nothing outside
 * target/agent/ includes this header (make lint: selftest/engine-boundary.sh). */
#ifndef MT_AGENT_AGENT_H
#define MT_AGENT_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target/tracer/engine_ops.h"

struct tracee;
struct thread;
struct module;
struct agent_engine;
struct intercept_fn;

const char *agent_engine_name(const struct tracee *t);

/* This memtrace carries an agent for its CPU (what --version lists). */
bool agent_engine_built(void);
/* The engine used when none is asked for: the agent where this build
 * carries one and the CPU makes it the default (arch_agent_default), else
 * breakpoints.  A process the agent cannot serve (agent_supported) gets
 * breakpoints all the same, said in one line. */
enum tracer_engine agent_default_engine(void);

/* Can this memtrace inject an agent into process pid at all?  false with
 * a one-line reason (another CPU, ...).  *cpu_flags: agent_data's. */
bool agent_supported(int pid, uint32_t *cpu_flags, char *why, size_t whylen);

/* Maps the agent and its shared region into t (th stopped, and every
 * other thread too, or none exists).  0, or -1 with a one-line reason. */
int agent_start(struct tracee *t, struct thread *th, char *why, size_t whylen);

struct intercept_site;
/* Redirects the intercepted functions that module m exports, its n sites
 * (modules.h; alloc_id: m in t->allocators), th stopped; a module already
 * in use only with every thread stopped.  Returns how many were placed;
 * *refused gets how many could not be patched. */
unsigned agent_patch_module(struct tracee *t, struct thread *th, struct module *m,
                            const struct intercept_site *sites, size_t n, unsigned alloc_id,
                            unsigned *refused);
/* Is fn redirected through the agent?  exit() is not: with -a it gets a
 * breakpoint (the leak scan's moment, a stop before any exit handler, as
 * with the breakpoint engine), and a call that never returns must not stay
 * open in the agent (the handlers' calls would count as inside it, and the
 * scan would run below its frame, at exit_group). */
bool agent_fn_patched(const struct intercept_fn *fn);
/* The module map was read again (a rendezvous): the unwind rows whose
 * module is no longer mapped as it was are forgotten (a pc with no module
 * may have one now). */
void agent_rows_clear(struct tracee *t);
/* The module at module_start was unmapped: its patches are gone with it. */
void agent_module_gone(struct tracee *t, uint64_t module_start);

/* Replays what the rings hold.  force: everything, even records that a
 * thread still inside a call could precede (the process is gone or every
 * thread is stopped for good).  Returns the number of calls replayed. */
unsigned agent_drain(struct tracee *t, bool force);
/* The fd to poll for "a ring is full" (-1: none) and how long the loop may
 * sleep before draining again (ms; -1: no agent). */
int agent_poll_fd(const struct tracee *t);
int agent_poll_timeout(const struct tracee *t);
void agent_doorbell(struct tracee *t);

/* A thread exited: its slot's thread id is fetched again by the next
 * thread that reuses it. */
void agent_thread_exit(struct tracee *t, int tid);
/* Every thread stopped: patches out, agent unmapped when no thread is
 * inside it (else left inert).  Drains first. */
void agent_stop(struct tracee *t);
/* exec: the image is gone; forget it (drains first). */
void agent_forget(struct tracee *t);
/* A forked child (its memory a copy of t's): patches undone and the agent
 * switched off in the child's memory, so the child never writes into the
 * parent's rings.  0, or the first write's -errno (the rest is still
 * tried). */
int agent_release_child(struct tracee *t, int child_pid);

/* -f, a fork event of t (the forking thread stopped): the calls made
 * before it are replayed into t's books (which the child's start as a
 * copy of), none made after. */
void agent_fork_settle(struct tracee *t);
/* -f, a followed fork child c of t, held at its first stop (th, its one
 * thread): it gets its own shared region and doorbell, so that its agent
 * records into c.  0, or -1 with a one-line reason (the child's copy of the
 * agent is then still the parent's: agent_release_child switches it off). */
int agent_fork_child(struct tracee *t, struct tracee *c, struct thread *th, char *why, size_t whylen);

bool agent_get_stats(const struct tracee *t, struct engine_stats *out);

/* The agent's own memory in the target (its image, the shared region):
 * up to 2 ranges, which the leak scan does not take for roots. */
unsigned agent_own_ranges(const struct tracee *t, uint64_t lo[2], uint64_t len[2]);

void agent_free(struct tracee *t);

/* agent_ring.c: the decoder of one ring (untrusted: the target writes it),
 * for the tracer and the fuzzer.  ring holds ring_size bytes; the header of
 * the record committed at position tail (pad records skipped) is copied
 * into *copy and checked: 1 with *stack (its stack_len bytes, inside the
 * ring: perf, the copy is not copied again; the target may still change
 * them, but never their place or length) and *next_tail; 0 when nothing is
 * committed there yet (*next_tail past the pads); -1 when malformed. */
struct agent_rec;
/* The bytes of stack a record carries after its header: its first window,
 * then (padded to 8) the interrupted stack's, when it has one. */
uint64_t agent_rec_payload(const struct agent_rec *r);
int agent_ring_next(const uint8_t *ring, size_t ring_size, uint64_t tail, unsigned nfns,
                    struct agent_rec *copy, const uint8_t **stack, uint64_t *next_tail);
/* A PCS record's stack from its payload (stack_len bytes) and prev, the
 * ring's previous such stack (*prev_n frames, room for AGENT_MEMO_MAX),
 * which becomes this one: the number of frames, at *out; 0 when the
 * record is malformed (a continuation that does not fit). */
unsigned agent_pcs_expand(uint64_t *prev, unsigned *prev_n, const uint8_t *payload,
                          uint32_t stack_len, const uint64_t **out);

#endif
