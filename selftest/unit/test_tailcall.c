/* tailcall_restore on made-up call graphs: the rule gdb follows (a frame
 * is restored only from a unique chain of tail calls from the function
 * the caller called to the callee), and nothing at all when there is no
 * chain, more than one, a cycle, or more edges than it looks at. */
#include "target/symbols/tailcall.h"

#include <stdio.h>
#include <string.h>

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; \
    fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

/* "from>to@site" edges of one graph, and the callee's name. */
struct graph {
    const char *const *edges;
    const char *callee;
};

static size_t edges(void *ctx, const char *function, struct tail_edge *out, size_t max)
{
    const struct graph *g = ctx;
    static char from[64][32], to[64][32];
    size_t n = 0;
    for (size_t i = 0; g->edges[i] && n < max && i < 64; i++) {
        unsigned site;
        if (sscanf(g->edges[i], "%31[^>]>%31[^@]@%u", from[i], to[i], &site) != 3)
            continue;
        if (strcmp(from[i], function) == 0)
            out[n++] = (struct tail_edge){ .target = strcmp(to[i], "-") ? to[i] : NULL, .site = site };
    }
    return n;
}

static bool is_callee(void *ctx, const char *name)
{
    return strcmp(name, ((const struct graph *)ctx)->callee) == 0;
}

/* The sites restored, innermost first, as "1,2,3" ("" for none). */
static void restore(const char *called, const char *const *e, const char *callee, char *buf, size_t len)
{
    struct graph g = { e, callee };
    struct tail_oracle o = { edges, is_callee, &g };
    struct tail_edge out[TAIL_CHAIN_MAX];
    unsigned n = tailcall_restore(called, &o, out, TAIL_CHAIN_MAX);
    buf[0] = 0;
    for (unsigned i = 0; i < n; i++)
        snprintf(buf + strlen(buf), len - strlen(buf), "%s%s@%u", i ? "," : "", out[i].function, (unsigned)out[i].site);
}

int main(void)
{
    char got[256];
    static const char *const direct[] = { "grow>realloc@10", NULL };
    restore("realloc", direct, "realloc", got, sizeof(got));
    CHECK(strcmp(got, "") == 0, "the called function is the callee: %s", got);
    restore("grow", direct, "realloc", got, sizeof(got));
    CHECK(strcmp(got, "grow@10") == 0, "one jump: %s", got);

    static const char *const chain[] = { "a>b@1", "b>c@2", "c>malloc@3", "c>free@4", "a>-@5", NULL };
    restore("a", chain, "malloc", got, sizeof(got));
    CHECK(strcmp(got, "c@3,b@2,a@1") == 0, "chain of three, innermost first: %s", got);
    restore("a", chain, "calloc", got, sizeof(got));
    CHECK(strcmp(got, "") == 0, "no chain reaches the callee: %s", got);

    static const char *const two[] = { "pick>wa@1", "pick>wb@2", "wa>malloc@3", "wb>malloc@4", NULL };
    restore("pick", two, "malloc", got, sizeof(got));
    CHECK(strcmp(got, "") == 0, "two chains: ambiguous, nothing restored: %s", got);
    static const char *const twice[] = { "w>malloc@1", "w>malloc@2", NULL };
    restore("w", twice, "malloc", got, sizeof(got));
    CHECK(strcmp(got, "") == 0, "two jumps to the callee: ambiguous: %s", got);

    static const char *const cycle[] = { "a>b@1", "b>a@2", "b>b@3", "b>malloc@4", NULL };
    restore("a", cycle, "malloc", got, sizeof(got));
    CHECK(strcmp(got, "b@4,a@1") == 0, "a cycle is not walked around: %s", got);

    static const char *const deep[] = { "f0>f1@1", "f1>f2@2", "f2>f3@3", "f3>f4@4", "f4>f5@5", "f5>f6@6",
                                        "f6>f7@7", "f7>f8@8", "f8>malloc@9", NULL };
    restore("f0", deep, "malloc", got, sizeof(got));
    CHECK(strcmp(got, "") == 0, "longer than TAIL_CHAIN_MAX: nothing: %s", got);
    restore("f1", deep, "malloc", got, sizeof(got));
    CHECK(strcmp(got, "f8@9,f7@8,f6@7,f5@6,f4@5,f3@4,f2@3,f1@2") == 0, "TAIL_CHAIN_MAX frames: %s", got);

    static const char *wide[40];
    static char wide_text[40][32];
    for (int i = 0; i < 33; i++) {
        snprintf(wide_text[i], sizeof(wide_text[i]), "w>x%d@%d", i, i + 1);
        wide[i] = wide_text[i];
    }
    snprintf(wide_text[33], sizeof(wide_text[33]), "x32>malloc@99");
    wide[33] = wide_text[33];
    restore("w", wide, "malloc", got, sizeof(got));
    CHECK(strcmp(got, "") == 0, "more edges than looked at: nothing: %s", got);

    if (failures)
        return 1;
    printf("test_tailcall: all checks passed\n");
    return 0;
}
