#include "target/leak/leak_groups.h"

#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"

_Static_assert(LEAK_DEFINITE == (int)REPORT_LEAK_DEFINITE && LEAK_INDIRECT == (int)REPORT_LEAK_INDIRECT &&
                   LEAK_POSSIBLE == (int)REPORT_LEAK_POSSIBLE &&
                   LEAK_REACHABLE == (int)REPORT_LEAK_REACHABLE &&
                   LEAK_KIND_COUNT == (int)REPORT_LEAK_KINDS,
               "leak kinds and report kinds in the same order");

struct keyed {
    uint32_t stack_id;
    uint32_t kind;
    uint64_t size;
};

static int cmp_key(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;
    if (x->stack_id != y->stack_id)
        return x->stack_id < y->stack_id ? -1 : 1;
    return x->kind < y->kind ? -1 : x->kind > y->kind;
}

/* Kind first (definite first), then bigger groups first, then stack id. */
static int cmp_group(const void *a, const void *b)
{
    const struct report_leak_group *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return x->stack_id < y->stack_id ? -1 : x->stack_id > y->stack_id;
}

void leak_build_report(const struct leak_run *run, leak_suppress_fn suppress, void *ctx,
                       struct report_leaks *out)
{
    memset(out, 0, sizeof(*out));
    out->threads = run->threads;
    out->root_bytes = run->root_bytes;
    out->bytes_scanned = run->res.bytes_scanned;
    out->blocks_checked = run->nblocks;
    out->seconds = run->seconds;
    size_t n = 0;
    struct keyed *k = xreallocarray(NULL, run->nblocks ? run->nblocks : 1, sizeof(*k));
    for (size_t i = 0; i < run->nblocks; i++)
        if (!run->forgotten[i])
            k[n++] = (struct keyed){run->blocks[i].stack_id, run->res.kind[i], run->blocks[i].size};
    qsort(k, n, sizeof(*k), cmp_key);
    out->groups = xreallocarray(NULL, n ? n : 1, sizeof(*out->groups));
    uint32_t asked_for = 0;
    bool asked = false, answer = false;
    for (size_t i = 0; i < n;) {
        struct report_leak_group g = {.stack_id = k[i].stack_id, .kind = k[i].kind};
        for (; i < n && k[i].stack_id == g.stack_id && k[i].kind == g.kind; i++) {
            g.bytes += k[i].size;
            g.blocks++;
        }
        if (g.kind < REPORT_LEAK_REACHABLE && suppress) {
            if (!asked || asked_for != g.stack_id) {
                answer = suppress(ctx, g.stack_id);
                asked = true;
                asked_for = g.stack_id;
            }
            g.suppressed = answer;
        }
        if (g.suppressed) {
            out->suppressed_bytes += g.bytes;
            out->suppressed_blocks += g.blocks;
        } else {
            out->bytes[g.kind] += g.bytes;
            out->blocks[g.kind] += g.blocks;
        }
        out->groups[out->ngroups++] = g;
    }
    free(k);
    qsort(out->groups, out->ngroups, sizeof(*out->groups), cmp_group);
}

void leak_report_free(struct report_leaks *l)
{
    free(l->groups);
    memset(l, 0, sizeof(*l));
}
