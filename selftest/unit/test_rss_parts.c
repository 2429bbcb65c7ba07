/* The RSS split (target/heap/rss_parts.c) on this very process.  Oracles:
 * the kernel's /proc/self/smaps_rollup for the sum of the mappings' Rss,
 * and pages this test writes itself (so it knows which are resident) for
 * the live/allocator/program-mmap split; plus malformed smaps text. */
#include "target/heap/rss_parts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "selftest/unit/test.h"

static uint64_t rollup_rss(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "Rss: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb * 1024;
}

struct seen {
    long n;
    uint64_t rss, heap_rss;
    char names[4][64];
};

static void note(void *ctx, const struct smaps_entry *e)
{
    struct seen *s = ctx;
    if (s->n < 4)
        snprintf(s->names[s->n], sizeof(s->names[0]), "%s|%s|%llu", e->name, e->perms,
                 (unsigned long long)e->rss);
    s->n++;
    s->rss += e->rss;
    if (!strcmp(e->name, "[heap]"))
        s->heap_rss += e->rss;
}

/* The Rss of this process's own [heap] (its malloc's, not in the books:
 * the allocator's part, all of it "trimmable"). */
static uint64_t own_heap_rss(void)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    static char text[1 << 20];
    size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
    if (f)
        fclose(f);
    text[n] = '\0';
    struct seen s = {0};
    smaps_parse(text, note, &s);
    return s.heap_rss;
}

static void test_parse(void)
{
    char text[] = "00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/a b\n"
                  "Rss:                 8 kB\n"
                  "Private_Dirty:  99999999999999999999 kB\n"
                  "VmFlags: rd ex\n"
                  "7fff0000-7fff1000 rw-p 00000000 00:00 0 \n"
                  "Rss: 4 kB\n"
                  "Anonymous: 4 kB\n";
    struct seen s = {0};
    CHECK(smaps_parse(text, note, &s) == 2, "%ld", s.n);
    CHECK(!strcmp(s.names[0], "/usr/bin/a b|r-xp|8192"), "%s", s.names[0]);
    CHECK(!strcmp(s.names[1], "|rw-p|4096"), "%s", s.names[1]);

    char bad[] = "00400000 r-xp 00000000 08:02 1 /x\nRss: 4 kB\n";
    struct seen b = {0};
    CHECK(smaps_parse(bad, note, &b) == -1);
    char backwards[] = "00500000-00400000 r-xp 00000000 08:02 1 /x\n";
    CHECK(smaps_parse(backwards, note, &b) == -1);
    char longperms[] = "00400000-00500000 r-xpzz 00000000 08:02 1 /x\n";
    CHECK(smaps_parse(longperms, note, &b) == -1);
}

static void test_self(void)
{
    long ps = sysconf(_SC_PAGESIZE);
    /* Two regions between PROT_NONE guards, so that the kernel keeps each
     * a mapping of its own: one the allocator's (a live block in it), one
     * the program's (in the ledger, no live block). */
    char *a = mmap(NULL, (size_t)ps * 18, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *m = mmap(NULL, (size_t)ps * 18, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(a != MAP_FAILED && m != MAP_FAILED);
    if (a == MAP_FAILED || m == MAP_FAILED)
        return;
    a += ps;
    m += ps;
    CHECK(mprotect(a, (size_t)ps * 16, PROT_READ | PROT_WRITE) == 0);
    CHECK(mprotect(m, (size_t)ps * 16, PROT_READ | PROT_WRITE) == 0);
    memset(a, 1, (size_t)ps * 10);              /* 10 pages resident */
    for (int i = 0; i < 3; i++)
        m[(size_t)(i * 5) * (size_t)ps] = 1;    /* 3 pages resident */

    struct heap_books *books = heap_books_new();
    heap_record_alloc(books, (uint64_t)(uintptr_t)a + 100, 5000, 1, ALLOC_MALLOC);
    /* a block on pages never written: live, not resident */
    heap_record_alloc(books, (uint64_t)(uintptr_t)a + (uint64_t)ps * 12, 100, 1, ALLOC_MALLOC);
    heap_record_map(books, (uint64_t)(uintptr_t)m, (uint64_t)ps * 16, 2);

    struct rss_parts p;
    char why[256] = "";
    /* [heap] (this process's malloc, not in the books) may grow while
     * rss_parts_read reads: its Rss before and after bound it. */
    uint64_t heap = own_heap_rss();
    uint64_t before = rollup_rss();
    int rc = rss_parts_read(getpid(), books, NULL, &p, why, sizeof(why));
    uint64_t after = rollup_rss();
    uint64_t heap_after = own_heap_rss();
    CHECK(rc == 0, "%s", why);
    if (rc == 0) {
        uint64_t sum = 0;
        for (int i = 0; i < RSS_PARTS; i++)
            sum += p.part[i];
        CHECK(sum == p.rss, "%llu %llu", (unsigned long long)sum, (unsigned long long)p.rss);
        /* this process allocates while it reads: a few pages either way */
        uint64_t lo = before < after ? before : after, hi = before < after ? after : before;
        CHECK(p.rss + 64 * (uint64_t)ps >= lo && p.rss <= hi + 64 * (uint64_t)ps,
              "rss %llu, smaps_rollup %llu..%llu", (unsigned long long)p.rss,
              (unsigned long long)lo, (unsigned long long)hi);
        CHECK(p.live_bytes == 5100 && p.live_blocks == 2);
        if (p.pagemap) {
            CHECK(p.part[RSS_LIVE_HEAP] == 5000, "%llu", (unsigned long long)p.part[RSS_LIVE_HEAP]);
            uint64_t ours = p.part[RSS_ALLOCATOR] - (10 * (uint64_t)ps - 5000);
            CHECK(ours >= heap && ours <= heap_after, "%llu, heap %llu..%llu",
                  (unsigned long long)p.part[RSS_ALLOCATOR], (unsigned long long)heap,
                  (unsigned long long)heap_after);
            CHECK(p.part[RSS_PROGRAM_MMAPS] == 3 * (uint64_t)ps, "%llu",
                  (unsigned long long)p.part[RSS_PROGRAM_MMAPS]);
            /* pages 2..9 are free of the block and its neighbourhood */
            uint64_t trim = p.trimmable - 8 * (uint64_t)ps;
            CHECK(trim >= heap && trim <= heap_after, "%llu", (unsigned long long)p.trimmable);
        }
        CHECK(p.part[RSS_THREAD_STACKS] > 0);
        CHECK(p.nmodules > 0 && p.part[RSS_MODULES] > 0);
        rss_parts_free(&p);
    }
    CHECK(rss_parts_read(0x7ffffff0, books, NULL, &p, why, sizeof(why)) == -1 && why[0]);
    heap_books_free(books);
    munmap(a - ps, (size_t)ps * 18);
    munmap(m - ps, (size_t)ps * 18);
}

/* memtrace's own part of the shared memory: the shared mappings inside
 * the ranges given, and only those (pages written here: 3 of one shared
 * mapping passed as own, 2 of another that is not). */
static void test_own(void)
{
    long ps = sysconf(_SC_PAGESIZE);
    char *own = mmap(NULL, (size_t)ps * 8, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char *other = mmap(NULL, (size_t)ps * 8, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(own != MAP_FAILED && other != MAP_FAILED);
    if (own == MAP_FAILED || other == MAP_FAILED)
        return;
    for (int i = 0; i < 3; i++)
        own[(size_t)i * (size_t)ps * 2] = 1;
    other[0] = other[(size_t)ps * 4] = 1;
    struct heap_books *books = heap_books_new();
    struct rss_own mine = {{(uint64_t)(uintptr_t)own}, {(uint64_t)ps * 8}, 1};
    struct rss_parts p;
    char why[256] = "";
    int rc = rss_parts_read(getpid(), books, &mine, &p, why, sizeof(why));
    CHECK(rc == 0, "%s", why);
    if (rc == 0) {
        CHECK(p.memtrace == 3 * (uint64_t)ps, "memtrace's own %llu", (unsigned long long)p.memtrace);
        CHECK(p.part[RSS_SHARED] >= 5 * (uint64_t)ps, "shared %llu",
              (unsigned long long)p.part[RSS_SHARED]);
        rss_parts_free(&p);
    }
    CHECK(rss_parts_read(getpid(), books, NULL, &p, why, sizeof(why)) == 0 && p.memtrace == 0);
    rss_parts_free(&p);
    heap_books_free(books);
    munmap(own, (size_t)ps * 8);
    munmap(other, (size_t)ps * 8);
}

int main(void)
{
    test_parse();
    test_self();
    test_own();
    return test_end("test_rss_parts");
}
