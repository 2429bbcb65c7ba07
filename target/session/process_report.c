/* Reports of one traced process: misuse errors as they are found. */
#include <stdio.h>
#include <stdlib.h>

#include "shared/xalloc.h"
#include "target/session/session.h"

static struct report_source source_of(struct tracee *t, struct process_resolver *r)
{
    r->tracee = t;
    return (struct report_source){
        .books = t->books,
        .stacks = t->stacks,
        .resolve = process_resolve,
        .resolve_ctx = r,
        .pid = t->pid,
        .program = t->program,
        .errors = &t->errors,
    };
}

void session_print_misuse(void *ctx, struct tracee *t, const struct misuse_error *e)
{
    (void)ctx;
    struct process_resolver *r = xmalloc(sizeof(*r));
    struct report_source src = source_of(t, r);
    report_write_misuse(stderr, &src, e);
    fflush(stderr);
    free(r);
}
