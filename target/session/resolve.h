/* Names for the frames of a report: module, offset, function (demangled),
 * file:line, and the frames that inlining and tail calls hide.  Asks only the
 * objects (objects/object.h) of a space the caller gives. */
#ifndef MT_SESSION_RESOLVE_H
#define MT_SESSION_RESOLVE_H

#include <stdint.h>

#include "target/objects/object.h"
#include "target/report/report.h"

/* Fills out (sub-frame out->sub of the frame at pc) for the report's
 * resolve callback; the names it points to live in buf until the next
 * call. */
void resolve_frame(const struct object_space *space, char (*buf)[4096], uint64_t pc, unsigned frame_index,
                   struct report_frame *out);

/* Before a report names many frames: the debug data every frame of
 * stacks will ask for is read now, each object's in the order it lies in
 * (symbolizer_prefetch).  The names are the same as without. */
struct stack_table;
void resolve_prefetch(const struct object_space *space, const struct stack_table *stacks);

#endif
