/* Where the tracer's own mappings go in the target (scratch pages, return
 * stubs, the agent's image and its shared region), so that the program's
 * own mappings land where they would untraced.
 *
 * In the default (top-down) layout the kernel looks for room for a mapping
 * without an address hint below mm->mmap_base only, highest gap first
 * (vm_unmapped_area with high_limit = mmap_base), and the program break
 * grows up from the executable.  So a mapping of ours is never in the way
 * of the program's own if it lies
 *   - above mmap_base, in the gap the kernel keeps for the stack, and below
 *     the lowest address the stack may grow to (its RLIMIT_STACK and the
 *     kernel's stack guard gap, and a margin): small things, and code the
 *     libraries reach (they sit just below mmap_base);
 *   - just below the executable: code the executable reaches (the top-down
 *     search gets there last, the break never);
 *   - halfway down the largest free gap, on 64-bit CPUs: the big shared
 *     region, tebibytes from anything the search or the break will reach.
 * mmap_base itself: the end of the ELF interpreter's mapping, which the
 * kernel placed first, at mmap_base minus its size (AT_BASE in the auxiliary
 * vector).  Where a fact is missing (no interpreter, the bottom-up layout
 * of an unlimited stack, vm.legacy_va_layout, ADDR_COMPAT_LAYOUT) or the
 * place is taken, the answer is 0: no hint, the kernel's choice, as before
 * (docs/tracing.md, "Where memtrace's own mappings go"). */
#ifndef MT_TRACER_MAP_PLACE_H
#define MT_TRACER_MAP_PLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "target/tracer/maps.h"

/* What the kernel says of the target, from /proc. */
struct place_facts {
    struct proc_maps maps;
    uint64_t interp_base;   /* AT_BASE: 0 without an ELF interpreter */
    uint64_t entry;         /* AT_ENTRY: in the executable */
    uint64_t stack_limit;   /* RLIMIT_STACK's soft limit; UINT64_MAX: unlimited */
    bool legacy;            /* vm.legacy_va_layout or ADDR_COMPAT_LAYOUT */
    unsigned word;          /* the target's word size: 4 or 8 */
};

/* The neutral places of one address space. */
struct place_layout {
    const char *why;        /* non-NULL: none known, and why */
    uint64_t mmap_base;     /* the top of the kernel's search (an upper bound) */
    uint64_t room_top;      /* above mmap_base: the lowest the stack may need */
    uint64_t exe_lo;        /* the executable's lowest address (0: unknown) */
};

/* The stack guard gap the kernel keeps below a growing stack (its default,
 * 256 pages, the stack_guard_gap= boot parameter aside), and our margin
 * above it. */
#define PLACE_STACK_GUARD (1ull << 20)
#define PLACE_STACK_MARGIN (8ull << 20)

void place_layout_of(const struct place_facts *f, struct place_layout *out);

/* A free page-aligned address for size bytes within reach of near (and
 * every byte of it), in a neutral place; 0: none. */
uint64_t place_near(const struct place_layout *l, const struct proc_maps *m, uint64_t size,
                    uint64_t near, uint64_t reach);
/* A free address for size bytes out of everyone's way (a big region that
 * needs no reach); 0: none. */
uint64_t place_far(const struct place_layout *l, const struct proc_maps *m, uint64_t size,
                   unsigned word);

/* --- /proc readers (map_place_proc.c) --- */

/* The value of auxiliary vector entry type in buf (len bytes of words of
 * word bytes, as /proc/PID/auxv holds them); 0 when absent. */
uint64_t place_auxv_value(const uint8_t *buf, size_t len, unsigned word, uint64_t type);
/* The soft "Max stack size" of /proc/PID/limits text; UINT64_MAX for
 * unlimited; 0 when the line is missing or malformed. */
uint64_t place_limits_stack(const char *text, size_t len);
/* Fills f from /proc/PID/{maps,auxv,limits,personality}; <0: -errno
 * (maps unreadable).  place_facts_free releases it. */
int place_facts_read(pid_t pid, struct place_facts *f);
void place_facts_free(struct place_facts *f);

/* --- for the tracer's injected mmaps --- */

enum map_place_kind {
    MAP_PLACE_CODE,   /* code a module at near branches to: within ARCH_PLACE_REACH */
    MAP_PLACE_SMALL,  /* a few pages that need no reach */
    MAP_PLACE_FAR,    /* a big region that needs no reach */
};
/* The address hint for the tracer's mmap of size bytes in process pid; 0
 * (the kernel's choice) where no neutral place is known or free, with
 * *why (if why) saying why. */
uint64_t map_place_hint(pid_t pid, enum map_place_kind kind, uint64_t size, uint64_t near,
                        const char **why);

#endif
