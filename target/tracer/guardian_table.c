/* The shared table of breakpoints and displaced return addresses. */
#include "target/tracer/guardian_table.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct guard_table *guard_table_map(void)
{
    void *p = mmap(NULL, sizeof(struct guard_table), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* The key is stored last: a reader never sees a key with stale contents. */
static void publish(volatile uint64_t *key, uint64_t value)
{
    __atomic_store_n(key, value, __ATOMIC_RELEASE);
}

void guard_table_add_bp(struct guard_table *g, uint64_t addr, const uint8_t *orig,
                        const uint8_t *insn, size_t len)
{
    if (!addr || len > GUARD_INSN_MAX)
        return;
    struct guard_bp *free_slot = NULL;
    for (unsigned i = 0; i < GUARD_BPS; i++) {
        if (g->bp[i].addr == addr)
            return;
        if (!g->bp[i].addr && !free_slot)
            free_slot = &g->bp[i];
    }
    if (!free_slot)
        return; /* full: that breakpoint stays unguarded */
    memcpy(free_slot->orig, orig, len);
    memcpy(free_slot->insn, insn, len);
    free_slot->len = (uint32_t)len;
    publish(&free_slot->addr, addr);
}

void guard_table_del_bp(struct guard_table *g, uint64_t addr)
{
    for (unsigned i = 0; i < GUARD_BPS; i++)
        if (g->bp[i].addr == addr)
            publish(&g->bp[i].addr, 0);
}

static unsigned ret_hash(uint64_t slot)
{
    return (unsigned)((slot * 0x9e3779b97f4a7c15ull) >> 40) & (GUARD_RETS - 1);
}

void guard_table_add_ret(struct guard_table *g, uint64_t slot, uint64_t orig, uint64_t tramp,
                         unsigned size)
{
    if (!slot)
        return;
    unsigned i = ret_hash(slot);
    for (unsigned n = 0; n < GUARD_RETS; n++, i = (i + 1) & (GUARD_RETS - 1)) {
        struct guard_ret *r = &g->ret[i];
        if (r->slot && r->slot != slot)
            continue;
        if (r->slot == slot)
            publish(&r->slot, 0); /* a reused stack slot: refill it */
        r->orig = orig;
        r->tramp = tramp;
        r->size = size;
        publish(&r->slot, slot);
        return;
    }
}

void guard_table_del_ret(struct guard_table *g, uint64_t slot)
{
    if (!slot)
        return;
    unsigned i = ret_hash(slot);
    unsigned n = 0;
    while (g->ret[i].slot != slot) {
        if (!g->ret[i].slot || ++n == GUARD_RETS)
            return;
        i = (i + 1) & (GUARD_RETS - 1);
    }
    /* Backward-shift deletion keeps probe chains whole without tombstones:
     * each later entry of the chain moves up if its home allows. */
    unsigned hole = i;
    for (unsigned j = (i + 1) & (GUARD_RETS - 1); g->ret[j].slot; j = (j + 1) & (GUARD_RETS - 1)) {
        unsigned home = ret_hash(g->ret[j].slot);
        bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
        if (!movable)
            continue;
        struct guard_ret moved = g->ret[j];
        g->ret[hole].orig = moved.orig;
        g->ret[hole].tramp = moved.tramp;
        g->ret[hole].size = moved.size;
        publish(&g->ret[hole].slot, moved.slot);
        hole = j;
    }
    publish(&g->ret[hole].slot, 0);
}

void guard_table_clear(struct guard_table *g)
{
    for (unsigned i = 0; i < GUARD_BPS; i++)
        publish(&g->bp[i].addr, 0);
    for (unsigned i = 0; i < GUARD_RETS; i++)
        publish(&g->ret[i].slot, 0);
}

void guard_table_restore(const struct guard_table *g, int mem_fd, unsigned *bps, unsigned *rets)
{
    *bps = *rets = 0;
    for (unsigned i = 0; i < GUARD_BPS; i++) {
        const struct guard_bp *b = &g->bp[i];
        uint8_t now[GUARD_INSN_MAX];
        if (!b->addr || b->len == 0 || b->len > GUARD_INSN_MAX)
            continue;
        if (pread(mem_fd, now, b->len, (off_t)b->addr) == (ssize_t)b->len &&
            memcmp(now, b->insn, b->len) == 0 &&
            pwrite(mem_fd, b->orig, b->len, (off_t)b->addr) == (ssize_t)b->len)
            ++*bps;
    }
    for (unsigned i = 0; i < GUARD_RETS; i++) {
        const struct guard_ret *r = &g->ret[i];
        if (!r->slot)
            continue;
        if (r->size == 4) {
            uint32_t now = 0, orig = (uint32_t)r->orig;
            if (pread(mem_fd, &now, 4, (off_t)r->slot) == 4 && now == (uint32_t)r->tramp &&
                pwrite(mem_fd, &orig, 4, (off_t)r->slot) == 4)
                ++*rets;
        } else if (r->size == 8) {
            uint64_t now = 0, orig = r->orig;
            if (pread(mem_fd, &now, 8, (off_t)r->slot) == 8 && now == r->tramp &&
                pwrite(mem_fd, &orig, 8, (off_t)r->slot) == 8)
                ++*rets;
        }
    }
}
