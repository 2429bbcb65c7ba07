/* What the export writers (heaptrack's trace format, pprof) read of a
 * stack.  They name its strings, addresses and call-tree nodes by number
 * through the shared interner (shared/intern.h). */
#ifndef MT_REPORT_REPORT_EXPORT_STACK_H
#define MT_REPORT_REPORT_EXPORT_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A stack as the exports see it: its stored pcs from the allocator's
 * caller outwards (the intercepted function itself, frame 0, is left out
 * unless it is all there is, as heaptrack and pprof show stacks), each with
 * the frames the user sees at it, the innermost inlined function first. */
struct export_frame {
    char *function, *file;  /* NULL if unknown */
    unsigned line;
};
struct export_pc {
    uint64_t pc;
    char *module;           /* NULL if unknown */
    uint64_t offset;        /* in module */
    uint64_t map_start, map_end;    /* the module's runtime extent; 0 if unknown */
    char *build_id;         /* hex; NULL if unknown */
    size_t first, count;    /* its frames in export_stack.frames */
};
struct export_stack {
    struct export_pc *pcs;
    size_t npcs, pcs_cap;
    struct export_frame *frames;
    size_t nframes, frames_cap;
};
struct report_source;
/* Fills *st (reused between calls; zero it first) with stack_id's pcs. */
void export_stack_load(struct export_stack *st, const struct report_source *src, uint32_t stack_id);
void export_stack_free(struct export_stack *st);

#endif
