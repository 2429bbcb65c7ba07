#include "target/leak/leak_scan.h"

#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"

/* States while scanning; they only ever go up.  UNREACHED left at the end
 * means definitely lost. */
enum { ST_UNREACHED = 0, ST_INDIRECT, ST_POSSIBLE, ST_REACHABLE };

#define CACHE_WINDOW 16384u
#define CACHE_WINDOWS 256u
/* Batches smaller than this go through the window cache. */
#define CACHE_BATCH_MAX 16u

/* Where to look a word up: a hash of the pages that small blocks cover
 * (each page -> the run of blocks that overlap it, found by a short binary
 * search), and the few big blocks in their own sorted list.  One or two
 * cache misses per word instead of twenty steps of a binary search over a
 * million blocks. */
#define BIG_BLOCK (64u << 10)
#define INDEX_PAGE_SHIFT 12

struct page_entry {
    uint64_t page_plus1;        /* 0: empty */
    uint32_t first, count;      /* blocks [first, first+count) overlap the page */
};

struct scan {
    const struct leak_scan_input *in;
    struct page_entry *pages;
    size_t pages_mask;
    uint32_t *big;              /* indices of big blocks, ascending address */
    size_t nbig;
    size_t n;
    uint64_t *starts, *ends;    /* ends: a zero-size block counts as one byte */
    uint64_t lo, hi;            /* [lowest start, highest end) */
    uint8_t *state;
    uint32_t *todo;             /* blocks whose contents must be (re)scanned */
    size_t ntodo, todo_cap;
    size_t leader;              /* clique pass: the lost block being expanded */
    bool clique;
    bool allocator_words;       /* scanning the allocator's own memory */
    uint8_t *buf;
    struct leak_range *ranges;
    /* Windows of memory around recently read blocks: a list walked node by
     * node gives batches of one block, and its nodes usually sit close
     * together. */
    uint8_t *cache;
    uint64_t cache_tag[CACHE_WINDOWS];   /* window address + 1; 0 = empty */
    struct leak_scan_result *res;
};

const char *leak_kind_phrase(enum leak_kind k)
{
    static const char *const phrases[LEAK_KIND_COUNT] = {
        "definitely lost", "indirectly lost", "possibly lost", "still reachable"};
    return (unsigned)k < LEAK_KIND_COUNT ? phrases[k] : "?";
}

const char *leak_kind_name(enum leak_kind k)
{
    static const char *const names[LEAK_KIND_COUNT] = {"definite", "indirect", "possible",
                                                       "reachable"};
    return (unsigned)k < LEAK_KIND_COUNT ? names[k] : "?";
}

static void todo_push(struct scan *s, size_t i)
{
    if (s->ntodo == s->todo_cap) {
        s->todo_cap = s->todo_cap ? s->todo_cap * 2 : 1024;
        s->todo = xreallocarray(s->todo, s->todo_cap, sizeof(*s->todo));
    }
    s->todo[s->ntodo++] = (uint32_t)i;
}

static size_t page_slot(const struct scan *s, uint64_t page)
{
    return (size_t)((page * 0x9e3779b97f4a7c15ull) >> 20) & s->pages_mask;
}

static void index_page(struct scan *s, uint64_t page, uint32_t block)
{
    size_t i = page_slot(s, page);
    while (s->pages[i].page_plus1 && s->pages[i].page_plus1 != page + 1)
        i = (i + 1) & s->pages_mask;
    struct page_entry *e = &s->pages[i];
    if (!e->page_plus1) {
        *e = (struct page_entry){page + 1, block, 1};
    } else {
        /* Blocks come in address order: the run just grows. */
        e->count = block - e->first + 1;
    }
}

static void build_index(struct scan *s)
{
    size_t npages = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (s->ends[i] - s->starts[i] > BIG_BLOCK)
            s->nbig++;
        else
            npages += ((s->ends[i] - 1) >> INDEX_PAGE_SHIFT) - (s->starts[i] >> INDEX_PAGE_SHIFT) + 1;
    }
    size_t cap = 16;
    while (cap < npages * 2)
        cap *= 2;
    s->pages = xcalloc(cap, sizeof(*s->pages));
    s->pages_mask = cap - 1;
    s->big = xreallocarray(NULL, s->nbig ? s->nbig : 1, sizeof(*s->big));
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (s->ends[i] - s->starts[i] > BIG_BLOCK) {
            s->big[k++] = (uint32_t)i;
            continue;
        }
        for (uint64_t p = s->starts[i] >> INDEX_PAGE_SHIFT; p <= (s->ends[i] - 1) >> INDEX_PAGE_SHIFT; p++)
            index_page(s, p, (uint32_t)i);
    }
}

/* The last of blocks idx[0..n) (indices, or 0..n-1 from base when idx is
 * NULL) starting at or below w, if it contains w; else -1. */
static inline ptrdiff_t search_run(const struct scan *s, const uint32_t *idx, size_t base, size_t n,
                                   uint64_t w)
{
    size_t lo = 0, hi = n;   /* answer in [lo, hi) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        size_t b = idx ? idx[mid] : base + mid;
        if (s->starts[b] <= w)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo)
        return -1;
    size_t b = idx ? idx[lo - 1] : base + lo - 1;
    return w < s->ends[b] ? (ptrdiff_t)b : -1;
}

/* The block containing w, or -1.  Most words of real memory are small
 * numbers or zero and fail the first test. */
static inline ptrdiff_t find_block(const struct scan *s, uint64_t w)
{
    if (w < s->lo || w >= s->hi)
        return -1;
    uint64_t page = w >> INDEX_PAGE_SHIFT;
    for (size_t i = page_slot(s, page); s->pages[i].page_plus1; i = (i + 1) & s->pages_mask) {
        if (s->pages[i].page_plus1 == page + 1) {
            ptrdiff_t b = search_run(s, NULL, s->pages[i].first, s->pages[i].count, w);
            if (b >= 0)
                return b;
            break;
        }
    }
    return s->nbig ? search_run(s, s->big, 0, s->nbig, w) : -1;
}

/* w, inside block i but not at its start, is aligned like the block to
 * two words: where the allocator's header of a chunk is or was (the chunk
 * after i, or one that i has since grown over). */
static bool is_chunk_header(const struct scan *s, size_t i, uint64_t w)
{
    uint64_t two = 2ull * s->in->word_size;
    return w != s->starts[i] && (w - s->starts[i]) % two == 0;
}

/* A word found in the root set (prior_definite) or in a block being
 * expanded from the roots. */
static void reach(struct scan *s, uint64_t w, bool prior_definite)
{
    ptrdiff_t i = find_block(s, w);
    if (i < 0)
        return;
    if (s->allocator_words && is_chunk_header(s, (size_t)i, w))
        return;
    uint8_t st = s->state[i];
    if (st == ST_REACHABLE)
        return;
    if (prior_definite && w == s->starts[i]) {
        s->state[i] = ST_REACHABLE;
        todo_push(s, (size_t)i);
    } else if (st == ST_UNREACHED) {
        s->state[i] = ST_POSSIBLE;
        todo_push(s, (size_t)i);
    }
}

/* A word found in a lost block: start and interior pointers alike claim an
 * unclaimed block for the current leader. */
static void claim(struct scan *s, uint64_t w)
{
    ptrdiff_t i = find_block(s, w);
    if (i < 0 || (size_t)i == s->leader || s->state[i] != ST_UNREACHED)
        return;
    s->state[i] = ST_INDIRECT;
    todo_push(s, (size_t)i);
}

static void scan_words(struct scan *s, const uint8_t *p, size_t len, bool prior_definite)
{
    unsigned ws = s->in->word_size;
    size_t nwords = len / ws;
    s->res->words_checked += nwords;
    for (size_t k = 0; k < nwords; k++, p += ws) {
        uint64_t w;
        if (ws == 8) {
            memcpy(&w, p, 8);
        } else {
            uint32_t w32;
            memcpy(&w32, p, 4);
            w = w32;
        }
        if (w < s->lo || w >= s->hi)
            continue;
        if (s->clique)
            claim(s, w);
        else
            reach(s, w, prior_definite);
    }
}

/* The aligned words of [addr, addr+len) as a range (len 0 if none). */
static struct leak_range aligned(uint64_t addr, uint64_t len, unsigned ws)
{
    uint64_t start = (addr + ws - 1) & ~(uint64_t)(ws - 1);
    uint64_t end = (addr + len) & ~(uint64_t)(ws - 1);
    if (addr + len < addr || end <= start)
        return (struct leak_range){start, 0};
    return (struct leak_range){start, end - start};
}

/* a cut to the readable run a.addr lies in (leak_scan_input.readable) */
static struct leak_range clip_readable(const struct scan *s, struct leak_range a)
{
    const struct leak_range *r = s->in->readable;
    if (!r || !a.len)
        return a;
    size_t lo = 0, hi = s->in->nreadable;   /* the first run ending after a.addr */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r[mid].addr + r[mid].len <= a.addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == s->in->nreadable || r[lo].addr > a.addr)
        return (struct leak_range){a.addr, 0};
    uint64_t room = r[lo].addr + r[lo].len - a.addr;
    if (a.len > room)
        a.len = room;
    return a;
}

/* Whether the scan is to end now (leak_scan_input.stop), remembered. */
static bool interrupted(struct scan *s)
{
    if (!s->res->interrupted && s->in->stop && s->in->stop(s->in->stop_ctx))
        s->res->interrupted = true;
    return s->res->interrupted;
}

static void read_batch(struct scan *s, size_t n, uint64_t bytes)
{
    memset(s->buf, 0, bytes);
    if (interrupted(s))
        return;
    s->in->read(s->in->read_ctx, s->ranges, n, s->buf);
    s->res->bytes_scanned += bytes;
}

static void scan_root_ranges(struct scan *s, const struct leak_range *roots, size_t nroots)
{
    unsigned ws = s->in->word_size;
    size_t n = 0;
    uint64_t bytes = 0;
    for (size_t r = 0; r < nroots && !s->res->interrupted; r++) {
        struct leak_range a = aligned(roots[r].addr, roots[r].len, ws);
        while (a.len && !s->res->interrupted) {
            uint64_t piece = a.len < LEAK_BATCH_BYTES ? a.len : LEAK_BATCH_BYTES;
            if (n == LEAK_BATCH_RANGES || bytes + piece > LEAK_BATCH_BYTES) {
                read_batch(s, n, bytes);
                scan_words(s, s->buf, bytes, true);
                n = 0;
                bytes = 0;
            }
            s->ranges[n++] = (struct leak_range){a.addr, piece};
            bytes += piece;
            a.addr += piece;
            a.len -= piece;
        }
    }
    if (n) {
        read_batch(s, n, bytes);
        scan_words(s, s->buf, bytes, true);
    }
}

static void scan_roots(struct scan *s)
{
    scan_root_ranges(s, s->in->roots, s->in->nroots);
    s->allocator_words = true;
    scan_root_ranges(s, s->in->alloc_roots, s->in->nalloc_roots);
    s->allocator_words = false;
    for (size_t k = 0; k < s->in->nroot_words; k++)
        reach(s, s->in->root_words[k], true);
}

/* Scans one small block through the window cache. */
static void scan_cached(struct scan *s, struct leak_range a, bool prior_definite)
{
    while (a.len && !interrupted(s)) {
        uint64_t win = a.addr & ~(uint64_t)(CACHE_WINDOW - 1);
        size_t slot = (size_t)((win / CACHE_WINDOW) % CACHE_WINDOWS);
        uint8_t *w = s->cache + slot * CACHE_WINDOW;
        if (s->cache_tag[slot] != win + 1) {
            struct leak_range r = {win, CACHE_WINDOW};
            memset(w, 0, CACHE_WINDOW);
            s->in->read(s->in->read_ctx, &r, 1, w);
            s->cache_tag[slot] = win + 1;
            s->res->bytes_scanned += CACHE_WINDOW;
        }
        uint64_t off = a.addr - win;
        uint64_t piece = CACHE_WINDOW - off < a.len ? CACHE_WINDOW - off : a.len;
        scan_words(s, w + off, piece, prior_definite);
        a.addr += piece;
        a.len -= piece;
    }
}

/* Expands the blocks on the todo list until it is empty: their contents are
 * read in batches of many blocks per read call. */
static void drain(struct scan *s)
{
    unsigned ws = s->in->word_size;
    uint32_t batch[LEAK_BATCH_RANGES];
    while (s->ntodo && !s->res->interrupted) {
        size_t n = 0;
        uint64_t bytes = 0;
        while (s->ntodo && n < LEAK_BATCH_RANGES) {
            uint32_t i = s->todo[s->ntodo - 1];
            struct leak_range a =
                clip_readable(s, aligned(s->starts[i], s->in->blocks[i].size, ws));
            if (a.len > LEAK_BATCH_BYTES) {
                if (n)
                    break;
                /* A block bigger than the buffer: alone, piece by piece. */
                s->ntodo--;
                for (uint64_t off = 0; off < a.len && !s->res->interrupted; off += LEAK_BATCH_BYTES) {
                    uint64_t piece = a.len - off < LEAK_BATCH_BYTES ? a.len - off : LEAK_BATCH_BYTES;
                    s->ranges[0] = (struct leak_range){a.addr + off, piece};
                    read_batch(s, 1, piece);
                    scan_words(s, s->buf, piece, s->state[i] == ST_REACHABLE);
                }
                continue;
            }
            if (bytes + a.len > LEAK_BATCH_BYTES)
                break;
            s->ntodo--;
            batch[n] = i;
            s->ranges[n++] = a;
            bytes += a.len;
        }
        if (!n)
            continue;
        if (n < CACHE_BATCH_MAX) {
            for (size_t k = 0; k < n; k++)
                scan_cached(s, s->ranges[k], s->state[batch[k]] == ST_REACHABLE);
            continue;
        }
        read_batch(s, n, bytes);
        const uint8_t *p = s->buf;
        for (size_t k = 0; k < n; k++) {
            scan_words(s, p, s->ranges[k].len, s->state[batch[k]] == ST_REACHABLE);
            p += s->ranges[k].len;
        }
    }
}

static int cmp_seq(const void *a, const void *b, void *ctx)
{
    const struct heap_block *blocks = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint32_t sx = blocks[x].seq, sy = blocks[y].seq;
    if (sx != sy)
        return sx < sy ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Indices idx[0..n) by allocation order, then address (the blocks come
 * sorted by address). */
static void sort_by_seq(const struct heap_block *blocks, uint32_t *idx, size_t n)
{
    qsort_r(idx, n, sizeof(*idx), cmp_seq, (void *)(uintptr_t)blocks);
}

void leak_scan_run(const struct leak_scan_input *in, struct leak_scan_result *res)
{
    memset(res, 0, sizeof(*res));
    struct scan s = {.in = in, .n = in->nblocks, .res = res};
    res->kind = xcalloc(in->nblocks ? in->nblocks : 1, 1);
    if (!in->nblocks)
        return;
    s.starts = xreallocarray(NULL, s.n, sizeof(*s.starts));
    s.ends = xreallocarray(NULL, s.n, sizeof(*s.ends));
    s.state = xcalloc(s.n, 1);
    s.hi = 0;
    for (size_t i = 0; i < s.n; i++) {
        s.starts[i] = in->blocks[i].addr;
        s.ends[i] = in->blocks[i].addr + (in->blocks[i].size ? in->blocks[i].size : 1);
        if (s.ends[i] > s.hi)
            s.hi = s.ends[i];
    }
    s.lo = s.starts[0];
    build_index(&s);
    s.buf = xreallocarray(NULL, LEAK_BATCH_BYTES, 1);
    s.ranges = xreallocarray(NULL, LEAK_BATCH_RANGES, sizeof(*s.ranges));
    s.cache = xreallocarray(NULL, CACHE_WINDOWS, CACHE_WINDOW);

    scan_roots(&s);
    drain(&s);

    /* Lost blocks, oldest allocation first (then lowest address): each
     * still unclaimed one leads a clique of what it reaches.  Memcheck goes
     * by address in its own allocator, which hands out fresh memory in
     * allocation order, so in a lost cycle the block allocated first is the
     * definitely lost one. */
    s.clique = true;
    size_t nlost = 0;
    uint32_t *order = xreallocarray(NULL, s.n, sizeof(*order));
    for (size_t i = 0; i < s.n; i++)
        if (s.state[i] == ST_UNREACHED)
            order[nlost++] = (uint32_t)i;
    sort_by_seq(in->blocks, order, nlost);
    for (size_t k = 0; k < nlost && !res->interrupted; k++) {
        size_t i = order[k];
        if (s.state[i] != ST_UNREACHED)
            continue;
        s.leader = i;
        todo_push(&s, i);
        drain(&s);
    }
    free(order);

    static const enum leak_kind final_kind[] = {
        [ST_UNREACHED] = LEAK_DEFINITE, [ST_INDIRECT] = LEAK_INDIRECT,
        [ST_POSSIBLE] = LEAK_POSSIBLE, [ST_REACHABLE] = LEAK_REACHABLE};
    for (size_t i = 0; i < s.n; i++) {
        enum leak_kind k = final_kind[s.state[i]];
        res->kind[i] = (uint8_t)k;
        if (in->uncounted && in->uncounted[i])
            continue;
        res->bytes[k] += in->blocks[i].size;
        res->blocks[k]++;
    }
    free(s.starts);
    free(s.ends);
    free(s.state);
    free(s.todo);
    free(s.buf);
    free(s.ranges);
    free(s.cache);
    free(s.pages);
    free(s.big);
}

void leak_scan_result_free(struct leak_scan_result *r)
{
    free(r->kind);
    r->kind = NULL;
}
