/* A leak scan's blocks grouped into loss records (stack, kind) for the
 * reports, with suppressions applied. */
#ifndef MT_LEAK_LEAK_GROUPS_H
#define MT_LEAK_LEAK_GROUPS_H

#include <stdbool.h>
#include <stdint.h>

#include "target/leak/leak_tracee.h"
#include "target/report/report.h"

/* Should the lost blocks of this stack be suppressed?  Asked once per stack
 * that has lost blocks. */
typedef bool (*leak_suppress_fn)(void *ctx, uint32_t stack_id);

/* Blocks forgotten by a clear are left out.  suppress may be NULL. */
void leak_build_report(const struct leak_run *run, leak_suppress_fn suppress, void *ctx,
                       struct report_leaks *out);
void leak_report_free(struct report_leaks *l);

#endif
