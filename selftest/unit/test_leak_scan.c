/* The leak scan's core on a fake memory image: hand-built cases with the
 * kinds memcheck's documented rules give (start/interior pointers, chains,
 * cycles, registers, hidden pointers, unaligned words, zero-size and huge
 * blocks, 32-bit words, forgotten blocks), a long list that needs many
 * batches, then random graphs against a naive recursive model of the same
 * rules written here without batching. */
#include "arch/arch.h"
#include "target/leak/leak_scan.h"
#include "target/leak/leak_tracee.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "selftest/unit/test.h"

/* ---- fake memory: a few segments of bytes ---- */

struct segment {
    uint64_t addr;
    uint8_t *bytes;
    size_t len;
};

struct image {
    struct segment seg[8];
    unsigned nseg;
    unsigned reads;
};

static struct segment *image_add(struct image *im, uint64_t addr, size_t len)
{
    struct segment *s = &im->seg[im->nseg++];
    s->addr = addr;
    s->len = len;
    s->bytes = calloc(len ? len : 1, 1);
    return s;
}

static void image_free(struct image *im)
{
    for (unsigned i = 0; i < im->nseg; i++)
        free(im->seg[i].bytes);
    memset(im, 0, sizeof(*im));
}

static void put_word(struct image *im, uint64_t at, uint64_t value, unsigned ws)
{
    for (unsigned i = 0; i < im->nseg; i++) {
        struct segment *s = &im->seg[i];
        if (at >= s->addr && at + ws <= s->addr + s->len) {
            if (ws == 8)
                memcpy(s->bytes + (at - s->addr), &value, 8);
            else {
                uint32_t v = (uint32_t)value;
                memcpy(s->bytes + (at - s->addr), &v, 4);
            }
            return;
        }
    }
    fprintf(stderr, "test bug: no segment at 0x%" PRIx64 "\n", at);
    exit(2);
}

static void image_read(void *ctx, const struct leak_range *r, size_t n, uint8_t *dst)
{
    struct image *im = ctx;
    im->reads++;
    for (size_t k = 0; k < n; k++) {
        for (uint64_t off = 0; off < r[k].len; off++) {
            uint64_t a = r[k].addr + off;
            for (unsigned i = 0; i < im->nseg; i++)
                if (a >= im->seg[i].addr && a < im->seg[i].addr + im->seg[i].len)
                    dst[off] = im->seg[i].bytes[a - im->seg[i].addr];
        }
        dst += r[k].len;
    }
}

/* ---- hand-built cases ---- */

#define ROOT 0x10000ull
#define HEAP 0x500000ull

enum { A, B, C, D, E, F, G, H, I, J, K, Z, U, X, Y, NB };

static void hand_built(unsigned ws)
{
    struct image im = {0};
    image_add(&im, ROOT, 256);              /* a data section */
    image_add(&im, HEAP, 0x10000);          /* the heap */
    struct heap_block blk[NB];
    uint64_t size[NB] = {64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 0, 64, 64, 64};
    for (unsigned i = 0; i < NB; i++)
        blk[i] = (struct heap_block){HEAP + 0x100 * (i + 1), size[i], i + 1, ALLOC_MALLOC, 0, 0};
#define AT(b) blk[b].addr
    put_word(&im, ROOT + 0 * ws, AT(A), ws);          /* root -> A -> B */
    put_word(&im, AT(A) + 2 * ws, AT(B), ws);
    put_word(&im, ROOT + 1 * ws, AT(C) + 16, ws);     /* root -> C+16 (interior) -> D */
    put_word(&im, AT(C), AT(D), ws);
    put_word(&im, AT(E) + 8, AT(F), ws);              /* lost E -> F -> G */
    put_word(&im, AT(F), AT(G) + 4 * ws, ws);         /* interior claims too */
    put_word(&im, AT(H), AT(I), ws);                  /* lost cycle H <-> I */
    put_word(&im, AT(I), AT(H), ws);
    put_word(&im, ROOT + 2 * ws, AT(K) ^ 0x5a5a5a5aull, ws);   /* hidden: lost */
    put_word(&im, ROOT + 3 * ws, AT(Z), ws);          /* zero-size block, start ptr */
    put_word(&im, ROOT + 4 * ws + 1, AT(U), ws);      /* unaligned: does not count */
    put_word(&im, ROOT + 6 * ws, AT(X) + 64, ws);     /* one past the end: not X */
    put_word(&im, AT(Y) + 8, AT(B), ws);              /* forgotten Y (lost) -> B */
    uint64_t regs[3] = {0, AT(J), 12345};             /* J only in a register */
    bool uncounted[NB] = {0};
    uncounted[Y] = true;
    struct leak_range roots[] = {{ROOT, 256}, {ROOT + 256, 64} /* unreadable */};
    struct leak_scan_input in = {
        .blocks = blk, .nblocks = NB, .uncounted = uncounted, .roots = roots, .nroots = 2,
        .root_words = regs, .nroot_words = 3, .word_size = ws, .read = image_read, .read_ctx = &im};
    struct leak_scan_result r;
    leak_scan_run(&in, &r);
    static const enum leak_kind want[NB] = {
        [A] = LEAK_REACHABLE, [B] = LEAK_REACHABLE, [C] = LEAK_POSSIBLE, [D] = LEAK_POSSIBLE,
        [E] = LEAK_DEFINITE,  [F] = LEAK_INDIRECT,  [G] = LEAK_INDIRECT, [H] = LEAK_DEFINITE,
        [I] = LEAK_INDIRECT,  [J] = LEAK_REACHABLE, [K] = LEAK_DEFINITE, [Z] = LEAK_REACHABLE,
        [U] = LEAK_DEFINITE,  [X] = LEAK_DEFINITE,  [Y] = LEAK_DEFINITE,
    };
    for (unsigned i = 0; i < NB; i++)
        CHECK(r.kind[i] == want[i], "ws %u block %u: %s, want %s", ws, i,
              leak_kind_phrase(r.kind[i]), leak_kind_phrase(want[i]));
    /* Totals leave the forgotten Y out: E H K U X definite. */
    CHECK(r.blocks[LEAK_DEFINITE] == 5 && r.bytes[LEAK_DEFINITE] == 5 * 64,
          "ws %u definite %" PRIu64 " blocks %" PRIu64 " bytes", ws, r.blocks[LEAK_DEFINITE],
          r.bytes[LEAK_DEFINITE]);
    CHECK(r.blocks[LEAK_REACHABLE] == 4 && r.bytes[LEAK_REACHABLE] == 3 * 64,
          "ws %u reachable %" PRIu64 " blocks", ws, r.blocks[LEAK_REACHABLE]);
    CHECK(r.blocks[LEAK_INDIRECT] == 3 && r.blocks[LEAK_POSSIBLE] == 2, "ws %u indirect/possible", ws);
    leak_scan_result_free(&r);
    image_free(&im);
#undef AT
}

/* Lost cliques are led in allocation order; words of the allocator's own
 * memory at a two-word-aligned offset inside a block are chunk headers. */
static void allocator_rules(unsigned ws)
{
    struct image im = {0};
    uint64_t alloc_data = ROOT + 0x1000;
    image_add(&im, ROOT, 64);
    image_add(&im, alloc_data, 64);
    image_add(&im, HEAP, 0x1000);
    /* 0 <-> 1 a cycle, 1 allocated first; 2..6 blocks of 55 bytes. */
    struct heap_block blk[7];
    for (unsigned i = 0; i < 7; i++)
        blk[i] = (struct heap_block){HEAP + 0x100 * i, i < 2 ? 41 : 55, 1, ALLOC_MALLOC, 10 - i, 0};
    blk[0].size = 23;
    put_word(&im, blk[0].addr, blk[1].addr, ws);
    put_word(&im, blk[1].addr, blk[0].addr, ws);
    uint64_t hdr = 4ull * ws;      /* 16 or 32 bytes, aligned to two words */
    put_word(&im, alloc_data, blk[2].addr + hdr + 16 * (ws == 4), ws);  /* a header: lost */
    put_word(&im, alloc_data + ws, blk[3].addr, ws);                    /* a start: reachable */
    put_word(&im, alloc_data + 2 * ws, blk[4].addr + ws, ws);           /* odd word: possible */
    put_word(&im, ROOT, blk[5].addr + hdr, ws);                         /* program data: possible */
    struct leak_range roots[] = {{ROOT, 64}};
    struct leak_range aroots[] = {{alloc_data, 64}};
    struct leak_scan_input in = {.blocks = blk, .nblocks = 7, .roots = roots, .nroots = 1,
                                 .alloc_roots = aroots, .nalloc_roots = 1, .word_size = ws,
                                 .read = image_read, .read_ctx = &im};
    struct leak_scan_result r;
    leak_scan_run(&in, &r);
    static const enum leak_kind want[7] = {LEAK_INDIRECT, LEAK_DEFINITE, LEAK_DEFINITE,
                                           LEAK_REACHABLE, LEAK_POSSIBLE, LEAK_POSSIBLE,
                                           LEAK_DEFINITE};
    for (unsigned i = 0; i < 7; i++)
        CHECK(r.kind[i] == want[i], "allocator rules ws %u block %u: %s, want %s", ws, i,
              leak_kind_phrase(r.kind[i]), leak_kind_phrase(want[i]));
    leak_scan_result_free(&r);
    image_free(&im);
}

/* A block bigger than the read buffer, whose last word is the only pointer
 * to another block. */
static void huge_block(void)
{
    struct image im = {0};
    image_add(&im, ROOT, 64);
    uint64_t big = 0x1000000, bigsize = (uint64_t)LEAK_BATCH_BYTES * 2 + 4096;
    image_add(&im, big, bigsize + 64);
    struct heap_block blk[2] = {{big, bigsize, 1, ALLOC_MALLOC, 0, 0}, {big + bigsize + 16, 32, 2, ALLOC_MALLOC, 0, 0}};
    put_word(&im, ROOT, big, 8);
    put_word(&im, big + bigsize - 8, blk[1].addr, 8);
    struct leak_range roots[] = {{ROOT, 64}};
    struct leak_scan_input in = {.blocks = blk, .nblocks = 2, .roots = roots, .nroots = 1,
                                 .word_size = 8, .read = image_read, .read_ctx = &im};
    struct leak_scan_result r;
    leak_scan_run(&in, &r);
    CHECK(r.kind[0] == LEAK_REACHABLE && r.kind[1] == LEAK_REACHABLE, "huge block: %s %s",
          leak_kind_phrase(r.kind[0]), leak_kind_phrase(r.kind[1]));
    CHECK(r.bytes_scanned >= bigsize + 64, "huge block scanned %" PRIu64, r.bytes_scanned);
    leak_scan_result_free(&r);
    image_free(&im);
}

/* A block booked with an absurd size (a wrong --alloc-fn argument): the
 * scan reads it only as far as its readable run goes, so it ends at once,
 * and a pointer in that readable part still counts. */
static void absurd_block(void)
{
    struct image im = {0};
    image_add(&im, ROOT, 64);
    uint64_t at = 0x1000000, mapped = 64 << 10;
    image_add(&im, at, mapped);
    struct heap_block blk[2] = {{at, 1ull << 44, 1, ALLOC_MALLOC, 0, 0},
                                {at + (1ull << 45), 32, 2, ALLOC_MALLOC, 0, 0}};
    image_add(&im, blk[1].addr, 64);
    put_word(&im, ROOT, at, 8);
    put_word(&im, at + mapped - 8, blk[1].addr, 8);
    struct leak_range roots[] = {{ROOT, 64}};
    struct leak_range readable[] = {{ROOT, 64}, {at, mapped}, {blk[1].addr, 4096}};
    struct leak_scan_input in = {.blocks = blk, .nblocks = 2, .roots = roots, .nroots = 1,
                                 .word_size = 8, .readable = readable, .nreadable = 3,
                                 .read = image_read, .read_ctx = &im};
    struct leak_scan_result r;
    leak_scan_run(&in, &r);
    CHECK(r.kind[0] == LEAK_REACHABLE && r.kind[1] == LEAK_REACHABLE, "absurd block: %s %s",
          leak_kind_phrase(r.kind[0]), leak_kind_phrase(r.kind[1]));
    /* the mapped part, and a read-ahead window around the small block */
    CHECK(r.bytes_scanned <= 64 + mapped + (1 << 20), "absurd block scanned %" PRIu64, r.bytes_scanned);
    leak_scan_result_free(&r);
    image_free(&im);
}

/* Two lists of N nodes: one rooted, one not; the scan needs many batches. */
static void long_lists(void)
{
    enum { N = 200000, NODE = 32 };
    struct image im = {0};
    image_add(&im, ROOT, 64);
    image_add(&im, HEAP, (size_t)2 * N * NODE);
    struct heap_block *blk = calloc(2 * N, sizeof(*blk));
    for (unsigned i = 0; i < 2 * N; i++)
        blk[i] = (struct heap_block){HEAP + (uint64_t)i * NODE, NODE, 1 + i % 7, ALLOC_MALLOC, 0, 0};
    /* Links run from high addresses down, so the lost list's head is its
     * highest block: the clique pass must re-claim earlier leaders. */
    for (unsigned l = 0; l < 2; l++)
        for (unsigned k = 1; k < N; k++)
            put_word(&im, blk[l * N + k].addr + 8, blk[l * N + k - 1].addr, 8);
    put_word(&im, ROOT, blk[N - 1].addr, 8);
    struct leak_range roots[] = {{ROOT, 64}};
    struct leak_scan_input in = {.blocks = blk, .nblocks = 2 * N, .roots = roots, .nroots = 1,
                                 .word_size = 8, .read = image_read, .read_ctx = &im};
    struct leak_scan_result r;
    clock_t t0 = clock();
    leak_scan_run(&in, &r);
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    CHECK(r.blocks[LEAK_REACHABLE] == N && r.blocks[LEAK_DEFINITE] == 1 &&
              r.blocks[LEAK_INDIRECT] == N - 1,
          "lists: reachable %" PRIu64 " definite %" PRIu64 " indirect %" PRIu64,
          r.blocks[LEAK_REACHABLE], r.blocks[LEAK_DEFINITE], r.blocks[LEAK_INDIRECT]);
    CHECK(r.kind[2 * N - 1] == LEAK_DEFINITE, "lost list head not definite");
    CHECK(im.reads < 2 * N / 100, "lists: %u read calls for %u blocks", im.reads, 2 * N);
    printf("lists: %u blocks, %u read calls, %.3f s\n", 2 * N, im.reads, secs);
    leak_scan_result_free(&r);
    free(blk);
    image_free(&im);
}

/* ---- random graphs against a naive model ---- */

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

enum { MAXB = 60, SLOTS = 6 };
struct model {
    unsigned n;
    uint64_t addr[MAXB], size[MAXB];
    /* Pointers held by each block's slots and by the roots: -1 none, else
     * target block and whether it is an interior pointer. */
    int tgt[MAXB][SLOTS];
    bool interior[MAXB][SLOTS];
    int root_tgt[SLOTS];
    bool root_interior[SLOTS];
    int state[MAXB];   /* 0 unreached 1 indirect 2 possible 3 reachable */
};

static void model_reach(struct model *m, int b, bool definite)
{
    int want = definite ? 3 : 2;
    if (m->state[b] >= want)
        return;
    m->state[b] = want;
    for (int s = 0; s < SLOTS; s++)
        if (m->tgt[b][s] >= 0)
            model_reach(m, m->tgt[b][s], definite && !m->interior[b][s]);
}

static void model_claim(struct model *m, int b, int leader)
{
    for (int s = 0; s < SLOTS; s++) {
        int t = m->tgt[b][s];
        if (t >= 0 && t != leader && m->state[t] == 0) {
            m->state[t] = 1;
            model_claim(m, t, leader);
        }
    }
}

static void random_graphs(void)
{
    for (int round = 0; round < 300; round++) {
        struct model m;
        memset(&m, 0, sizeof(m));
        m.n = 1 + (unsigned)(rnd() % MAXB);
        struct image im = {0};
        image_add(&im, ROOT, SLOTS * 8);
        image_add(&im, HEAP, MAXB * 128);
        struct heap_block blk[MAXB];
        for (unsigned i = 0; i < m.n; i++) {
            m.addr[i] = HEAP + i * 128;
            m.size[i] = SLOTS * 8 + (rnd() % 3) * 8;
            blk[i] = (struct heap_block){m.addr[i], m.size[i], 1, ALLOC_MALLOC, 0, 0};
        }
        int density = 1 + (int)(rnd() % 4);
        for (unsigned i = 0; i <= m.n; i++) {
            for (int s = 0; s < SLOTS; s++) {
                int t = rnd() % 10 < (unsigned)density ? (int)(rnd() % m.n) : -1;
                bool inner = t >= 0 && rnd() % 4 == 0;
                uint64_t at = i < m.n ? m.addr[i] + 8 * (uint64_t)s : ROOT + 8 * (uint64_t)s;
                if (i < m.n) {
                    m.tgt[i][s] = t;
                    m.interior[i][s] = inner;
                } else {
                    m.root_tgt[s] = rnd() % 3 == 0 ? t : -1;
                    m.root_interior[s] = inner;
                    t = m.root_tgt[s];
                }
                if (t >= 0)
                    put_word(&im, at, m.addr[t] + (inner ? 8 * (1 + rnd() % (SLOTS - 1)) : 0), 8);
            }
        }
        for (int s = 0; s < SLOTS; s++)
            if (m.root_tgt[s] >= 0)
                model_reach(&m, m.root_tgt[s], !m.root_interior[s]);
        for (unsigned i = 0; i < m.n; i++)
            if (m.state[i] == 0)
                model_claim(&m, (int)i, (int)i);
        struct leak_range roots[] = {{ROOT, SLOTS * 8}};
        struct leak_scan_input in = {.blocks = blk, .nblocks = m.n, .roots = roots, .nroots = 1,
                                     .word_size = 8, .read = image_read, .read_ctx = &im};
        struct leak_scan_result r;
        leak_scan_run(&in, &r);
        static const enum leak_kind of_state[] = {LEAK_DEFINITE, LEAK_INDIRECT, LEAK_POSSIBLE,
                                                  LEAK_REACHABLE};
        for (unsigned i = 0; i < m.n; i++)
            CHECK(r.kind[i] == of_state[m.state[i]], "round %d block %u: %s, model %s", round, i,
                  leak_kind_phrase(r.kind[i]), leak_kind_phrase(of_state[m.state[i]]));
        leak_scan_result_free(&r);
        image_free(&im);
        if (failures)
            return;
    }
}

static void no_blocks(void)
{
    struct image im = {0};
    image_add(&im, ROOT, 64);
    struct leak_range roots[] = {{ROOT, 64}};
    struct leak_scan_input in = {.roots = roots, .nroots = 1, .word_size = 8,
                                 .read = image_read, .read_ctx = &im};
    struct leak_scan_result r;
    leak_scan_run(&in, &r);
    CHECK(r.blocks[LEAK_DEFINITE] == 0 && r.blocks[LEAK_REACHABLE] == 0, "no blocks");
    leak_scan_result_free(&r);
    image_free(&im);
}

/* The root set of a process image from its maps: which parts are roots. */
static void roots_from_maps(void)
{
    const char maps[] =
        "555555554000-555555556000 r-xp 00000000 08:01 1 /bin/prog\n"
        "555555556000-555555557000 rw-p 00002000 08:01 1 /bin/prog\n"
        "555555557000-555555578000 rw-p 00000000 00:00 0 [heap]\n"
        "7f0000000000-7f0000100000 rw-p 00000000 00:00 0 \n"          /* mmap chunk merged with program data */
        "7f0000200000-7f0000201000 r-xp 00000000 00:00 0 \n"          /* scratch-like, not writable */
        "7f0000300000-7f0000302000 rw-p 00000000 00:00 0 \n"          /* skipped by address */
        "7f0000400000-7f0000401000 rw-s 00000000 00:05 9 /dev/fb0\n"
        "7f0000500000-7f0000501000 rw-s 00000000 00:05 9 /dev/zero (deleted)\n"
        "7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0 [stack]\n";
    struct heap_block blk[] = {
        {0x555555557010, 32, 1, ALLOC_MALLOC, 0, 0},
        {0x7f0000080010, 0x40000, 2, ALLOC_MALLOC, 0, 0},     /* big block inside the merged mapping */
    };
    uint64_t sp = 0x7fffffffe000;
    struct leak_range skip[] = {{0x7f0000300000, 0x2000}};
    size_t n;
    struct leak_range *r = leak_roots_from_maps(maps, sizeof(maps) - 1, blk, 2, &sp, 1, skip, 1, false, &n);
    const struct leak_range want[] = {
        {0x555555556000, 0x1000},                                /* .data */
        {0x7f0000000000, 0x80000},                               /* program part below the chunk */
        {0x7f00000c1000, 0x3f000},                               /* and above it */
        {0x7f0000500000, 0x1000},                                /* /dev/zero is memory */
        {0x7fffffffe000 - ARCH_STACK_REDZONE, 0x7ffffffff000 - 0x7fffffffe000 + ARCH_STACK_REDZONE}, /* stack from sp - red zone */
    };
    CHECK(n == sizeof(want) / sizeof(want[0]), "roots: %zu ranges", n);
    for (size_t i = 0; i < n && i < sizeof(want) / sizeof(want[0]); i++)
        CHECK(r[i].addr == want[i].addr && r[i].len == want[i].len,
              "root %zu: 0x%" PRIx64 "+0x%" PRIx64 ", want 0x%" PRIx64 "+0x%" PRIx64, i, r[i].addr,
              r[i].len, want[i].addr, want[i].len);
    free(r);
    /* Attached (-p): heap mappings are roots except the known blocks. */
    r = leak_roots_from_maps(maps, sizeof(maps) - 1, blk, 2, &sp, 1, skip, 1, true, &n);
    bool heap_gap = false;
    for (size_t i = 0; i < n; i++) {
        CHECK(!(r[i].addr < blk[0].addr + blk[0].size && blk[0].addr < r[i].addr + r[i].len),
              "attached: block 0 is in root %zu", i);
        heap_gap |= r[i].addr == blk[0].addr + blk[0].size;
    }
    CHECK(heap_gap, "attached: the rest of [heap] is not a root");
    free(r);
}

/* Blocks forgotten by a clear still come out, flagged. */
static void export_all(void)
{
    struct heap_books *b = heap_books_new();
    heap_record_alloc(b, 0x1000, 16, 1, ALLOC_MALLOC);
    heap_record_alloc(b, 0x3000, 16, 1, ALLOC_MALLOC);
    heap_clear(b);
    heap_record_alloc(b, 0x2000, 16, 2, ALLOC_MALLOC);
    size_t n;
    bool *forgotten;
    struct heap_block *all = heap_export_all_blocks(b, &n, &forgotten);
    CHECK(n == 3 && all[0].addr == 0x1000 && all[1].addr == 0x2000 && all[2].addr == 0x3000 &&
              forgotten[0] && !forgotten[1] && forgotten[2],
          "export_all: %zu blocks", n);
    free(all);
    free(forgotten);
    heap_books_free(b);
}

int main(void)
{
    roots_from_maps();
    export_all();
    hand_built(8);
    hand_built(4);
    allocator_rules(8);
    allocator_rules(4);
    huge_block();
    absurd_block();
    no_blocks();
    long_lists();
    random_graphs();
    return test_end("test_leak_scan");
}
