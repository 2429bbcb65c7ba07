#include "target/leak/leak_custom.h"

#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"

struct entry {
    struct heap_block b;
    bool forgotten;
};

static int cmp_entry(const void *pa, const void *pb)
{
    const struct heap_block *x = &((const struct entry *)pa)->b, *y = &((const struct entry *)pb)->b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return (x->kind == ALLOC_CUSTOM) - (y->kind == ALLOC_CUSTOM);
}

void leak_custom_blocks(const struct custom_pools *pools, struct heap_block **blocks, size_t *n,
                        bool **forgotten, struct leak_range **hidden, size_t *nhidden)
{
    *hidden = NULL;
    *nhidden = 0;
    size_t npieces = custom_pools_pieces(pools), total = *n + npieces, ncustom = npieces;
    for (size_t i = 0; i < *n; i++)
        ncustom += (*blocks)[i].kind == ALLOC_CUSTOM;
    if (!ncustom)
        return;
    struct entry *e = xcalloc(total, sizeof(*e));
    for (size_t i = 0; i < *n; i++)
        e[i] = (struct entry){(*blocks)[i], *forgotten ? (*forgotten)[i] : false};
    size_t k = *n;
    for (size_t p = 0; p < pools->n; p++)
        for (size_t i = 0; i < pools->v[p].n; i++) {
            const struct pool_piece *pc = &pools->v[p].pieces[i];
            e[k++].b = (struct heap_block){.addr = pc->addr, .size = pc->size,
                                           .stack_id = pc->stack_id, .kind = ALLOC_CUSTOM,
                                           .seq = pc->seq};
        }
    qsort(e, total, sizeof(*e), cmp_entry);
    /* A block of another kind that a custom block starts in holds it:
     * memcheck drops such a block (a MALLOCLIKE block inside a malloc()
     * block, or a mempool piece across it). */
    bool *drop = xcalloc(total, sizeof(*drop));
    size_t ndrop = 0;
    for (size_t i = 0; i < total; i++) {
        if (e[i].b.kind == ALLOC_CUSTOM)
            continue;
        uint64_t end = e[i].b.addr + e[i].b.size;
        for (size_t j = i + 1; j < total && e[j].b.addr < end; j++)
            if (e[j].b.kind == ALLOC_CUSTOM) {
                drop[i] = true;
                ndrop++;
                break;
            }
    }
    struct heap_block *out = xcalloc(total, sizeof(*out));
    bool *fout = xcalloc(total, sizeof(*fout));
    struct leak_range *h = xcalloc(ndrop ? ndrop : 1, sizeof(*h));
    size_t m = 0, nh = 0;
    for (size_t i = 0; i < total; i++) {
        if (drop[i]) {
            h[nh++] = (struct leak_range){e[i].b.addr, e[i].b.size};
            continue;
        }
        out[m] = e[i].b;
        fout[m++] = e[i].forgotten;
    }
    free(drop);
    free(e);
    free(*blocks);
    free(*forgotten);
    *blocks = out;
    *forgotten = fout;
    *n = m;
    *hidden = h;
    *nhidden = nh;
}
