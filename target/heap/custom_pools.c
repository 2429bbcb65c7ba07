#include "target/heap/custom_pools.h"

#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"

/* Pools are few (a program has tens), pieces many: a pool's pieces are an
 * array searched from its end, where a pool's recent pieces are (most
 * programs give back what they took last first). */

struct custom_pool *custom_pool_find(struct custom_pools *ps, uint64_t handle)
{
    for (size_t i = 0; i < ps->n; i++)
        if (ps->v[i].handle == handle)
            return &ps->v[i];
    return NULL;
}

struct custom_pool *custom_pool_create(struct custom_pools *ps, uint64_t handle, unsigned flags)
{
    struct custom_pool *p = custom_pool_find(ps, handle);
    if (p) {
        p->n = 0;
    } else {
        if (ps->n == ps->cap) {
            ps->cap = ps->cap ? ps->cap * 2 : 8;
            ps->v = xreallocarray(ps->v, ps->cap, sizeof(*ps->v));
        }
        p = &ps->v[ps->n++];
        memset(p, 0, sizeof(*p));
        p->handle = handle;
    }
    p->flags = flags;
    return p;
}

bool custom_pool_destroy(struct custom_pools *ps, uint64_t handle)
{
    struct custom_pool *p = custom_pool_find(ps, handle);
    if (!p)
        return false;
    free(p->pieces);
    *p = ps->v[--ps->n];
    return true;
}

bool custom_pool_move(struct custom_pools *ps, uint64_t from, uint64_t to)
{
    struct custom_pool *p = custom_pool_find(ps, from);
    if (!p)
        return false;
    if (from != to && custom_pool_find(ps, to)) {
        custom_pool_destroy(ps, to); /* moves the array's last pool */
        p = custom_pool_find(ps, from);
    }
    p->handle = to;
    return true;
}

static struct pool_piece *piece_at(struct custom_pool *p, uint64_t addr)
{
    for (size_t i = p->n; i-- > 0;)
        if (p->pieces[i].addr == addr)
            return &p->pieces[i];
    return NULL;
}

void custom_pool_add(struct custom_pools *ps, struct custom_pool *p, uint64_t addr, uint64_t size,
                     uint32_t stack_id)
{
    struct pool_piece *e = piece_at(p, addr);
    if (!e) {
        if (p->n == p->cap) {
            p->cap = p->cap ? p->cap * 2 : 16;
            p->pieces = xreallocarray(p->pieces, p->cap, sizeof(*p->pieces));
        }
        e = &p->pieces[p->n++];
    }
    *e = (struct pool_piece){addr, size, stack_id, ++ps->seq_next};
}

bool custom_pool_remove(struct custom_pool *p, uint64_t addr, struct pool_piece *out)
{
    struct pool_piece *e = piece_at(p, addr);
    if (!e)
        return false;
    if (out)
        *out = *e;
    /* order kept: the search from the end finds recent pieces first */
    memmove(e, e + 1, (size_t)(&p->pieces[p->n] - (e + 1)) * sizeof(*e));
    p->n--;
    return true;
}

bool custom_pool_change(struct custom_pool *p, uint64_t from, uint64_t to, uint64_t size)
{
    struct pool_piece *e = piece_at(p, from);
    if (!e)
        return false;
    e->addr = to;
    e->size = size;
    return true;
}

size_t custom_pool_trim(struct custom_pool *p, uint64_t addr, uint64_t size)
{
    uint64_t lo = addr, hi = addr + size;
    size_t k = 0, gone = 0;
    for (size_t i = 0; i < p->n; i++) {
        struct pool_piece e = p->pieces[i];
        uint64_t end = e.addr + e.size;
        if (end <= lo || e.addr >= hi) {
            gone++;
            continue;
        }
        /* memcheck: a piece across an end keeps only its part inside */
        if (e.addr < lo)
            e.addr = lo;
        if (end > hi)
            end = hi;
        e.size = end - e.addr;
        p->pieces[k++] = e;
    }
    p->n = k;
    return gone;
}

size_t custom_pools_pieces(const struct custom_pools *ps)
{
    size_t n = 0;
    for (size_t i = 0; i < ps->n; i++)
        n += ps->v[i].n;
    return n;
}

void custom_pools_copy(struct custom_pools *dst, const struct custom_pools *src)
{
    custom_pools_free(dst);
    *dst = *src;
    dst->v = src->n ? xreallocarray(NULL, src->n, sizeof(*dst->v)) : NULL;
    dst->cap = src->n;
    for (size_t i = 0; i < src->n; i++) {
        dst->v[i] = src->v[i];
        dst->v[i].cap = src->v[i].n;
        dst->v[i].pieces = src->v[i].n ? xreallocarray(NULL, src->v[i].n, sizeof(struct pool_piece))
                                       : NULL;
        if (src->v[i].n)
            memcpy(dst->v[i].pieces, src->v[i].pieces, src->v[i].n * sizeof(struct pool_piece));
    }
}

void custom_pools_free(struct custom_pools *ps)
{
    for (size_t i = 0; i < ps->n; i++)
        free(ps->v[i].pieces);
    free(ps->v);
    memset(ps, 0, sizeof(*ps));
}
