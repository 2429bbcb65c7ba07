#include "target/symbols/tailcall.h"

#include <string.h>

/* Edges looked at per function: real functions make a handful of jumps. */
#define EDGES_MAX 32
/* Functions visited per search, so that a hostile call graph stays cheap. */
#define VISIT_MAX 256

struct search {
    const struct tail_oracle *o;
    struct tail_edge path[TAIL_CHAIN_MAX];
    struct tail_edge found[TAIL_CHAIN_MAX];
    unsigned found_len, paths, visits;
};

static bool on_path(const struct search *s, unsigned depth, const char *name)
{
    for (unsigned i = 0; i < depth; i++)
        if (strcmp(s->path[i].function, name) == 0)
            return true;
    return false;
}

/* Depth-first from function; stops early once two chains are known. */
static void walk(struct search *s, const char *function, unsigned depth)
{
    if (depth >= TAIL_CHAIN_MAX || s->paths > 1 || ++s->visits > VISIT_MAX)
        return;
    struct tail_edge e[EDGES_MAX];
    size_t n = s->o->edges(s->o->ctx, function, e, EDGES_MAX);
    if (n == EDGES_MAX)
        s->paths = 2; /* more than we look at: cannot tell it is unique */
    for (size_t i = 0; i < n && s->paths <= 1; i++) {
        if (!e[i].target)
            continue;
        e[i].function = function;
        s->path[depth] = e[i];
        if (s->o->is_callee(s->o->ctx, e[i].target)) {
            if (++s->paths == 1) {
                memcpy(s->found, s->path, (depth + 1) * sizeof(*s->path));
                s->found_len = depth + 1;
            }
            continue;
        }
        if (!on_path(s, depth, e[i].target) && strcmp(e[i].target, function) != 0)
            walk(s, e[i].target, depth + 1);
    }
}

unsigned tailcall_restore(const char *called, const struct tail_oracle *o, struct tail_edge *out, unsigned max)
{
    if (!called || o->is_callee(o->ctx, called))
        return 0;
    struct search s = { .o = o };
    walk(&s, called, 0);
    if (s.paths != 1 || s.visits > VISIT_MAX || s.found_len > max)
        return 0;
    /* Innermost first: the last jump of the chain reached the callee. */
    for (unsigned i = 0; i < s.found_len; i++)
        out[i] = s.found[s.found_len - 1 - i];
    return s.found_len;
}
