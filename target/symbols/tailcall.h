/* Frames that tail calls removed, restored from DWARF call-site
 * information as gdb does: the caller's call site names the function it
 * called (T); when that is not the function found running below it (the
 * callee), T must have reached the callee through jumps (call sites with
 * DW_AT_call_tail_call).  Only a unique chain of such jumps from T to the
 * callee restores frames; none, or more than one, restores nothing: a
 * guessed frame is worse than a missing one. */
#ifndef MT_SYMBOLS_TAILCALL_H
#define MT_SYMBOLS_TAILCALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One tail call: function makes a jump to target (NULL if not named),
 * which would have returned to site; owner tells the caller of
 * tailcall_restore where the site lives (its module). */
struct tail_edge {
    const char *function;
    const char *target;
    uint64_t site;
    void *owner;
};

struct tail_oracle {
    /* The tail calls the function named function makes, from every place
     * that defines it; returns how many were written (at most max). */
    size_t (*edges)(void *ctx, const char *function, struct tail_edge *out, size_t max);
    /* Does name stand for the callee? */
    bool (*is_callee)(void *ctx, const char *name);
    void *ctx;
};

/* Longest chain looked for, and the most frames restored. */
#define TAIL_CHAIN_MAX 8

/* The chain from called (the target of the caller's call site) to the
 * callee: out[0] is the jump that reached the callee (innermost frame),
 * the last one was made by called itself.  Returns the number of frames,
 * 0 when called is the callee, no chain reaches it, or more than one does. */
unsigned tailcall_restore(const char *called, const struct tail_oracle *o, struct tail_edge *out, unsigned max);

#endif
