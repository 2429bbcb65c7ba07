/* The leak scan of a traced process: the root set from /proc/PID/maps and
 * the threads' registers, memory read with process_vm_readv. */
#ifndef MT_LEAK_LEAK_TRACEE_H
#define MT_LEAK_LEAK_TRACEE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target/leak/leak_scan.h"
#include "target/tracer/tracee.h"

/* Stack pointers of threads seen at their exit stop: the part of their
 * stack below stays out of the root set, as it would for a live thread
 * (glibc keeps the stacks of joined threads mapped for reuse). */
struct leak_dead_stacks {
    uint64_t *sp;
    size_t n, cap;
};
void leak_dead_stacks_add(struct leak_dead_stacks *d, uint64_t sp);
void leak_dead_stacks_free(struct leak_dead_stacks *d);

struct leak_run {
    struct heap_block *blocks;     /* every block of the books, sorted */
    bool *forgotten;               /* per block: forgotten by a clear */
    size_t nblocks;
    struct leak_scan_result res;
    unsigned threads;              /* threads whose registers and stack were used */
    uint64_t root_bytes;           /* bytes of the root set */
    double seconds;
};

/* Scans t; every thread the scan should see must be in a ptrace-stop
 * (tracer_stop_world).  dead may be NULL.  entry_tid, when nonzero, is a
 * thread stopped at the entry of a function (exit()): its caller made a
 * call, so nothing below its stack pointer is live, not even the red zone
 * (the ABI keeps it for leaf functions), and the stack is cut at the stack
 * pointer itself.  stop (may be NULL) ends the scan early
 * (leak_scan_input.stop): out->res.interrupted says so. */
void leak_scan_tracee(struct tracee *t, const struct leak_dead_stacks *dead, pid_t entry_tid,
                      bool (*stop)(void *ctx), void *stop_ctx, struct leak_run *out);
void leak_run_free(struct leak_run *r);

/* Root ranges of one process image, exposed for tests and the benchmark:
 * the readable and writable mappings of maps_text (as in /proc/PID/maps)
 * minus device files and memtrace's pages (skip), with each stack cut at
 * sps[] minus the red zone, and the span of the heap blocks taken out (the
 * blocks are scanned only when reached; `blocks_are_roots` keeps the rest of
 * such mappings, for processes attached to with unknown older blocks). */
struct leak_range *leak_roots_from_maps(const char *maps_text, size_t len,
                                        const struct heap_block *blocks, size_t nblocks,
                                        const uint64_t *sps, size_t nsps,
                                        const struct leak_range *skip, size_t nskip,
                                        bool blocks_are_roots, size_t *count);

/* leak_read_fn on a process: ctx is its struct target_mem.  Many ranges
 * per process_vm_readv; unreadable bytes are zero. */
void leak_read_process(void *ctx, const struct leak_range *ranges, size_t n, uint8_t *dst);

#endif
