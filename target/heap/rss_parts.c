/* Where the RSS went (rss_parts.h): /proc/PID/smaps split against the books. */
#include "target/heap/rss_parts.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/xalloc.h"

static const char *const part_names[RSS_PARTS] = {
    "live heap", "allocator holds", "program mmaps", "thread stacks",
    "modules", "shared memory", "rest"};
static const char *const part_keys[RSS_PARTS] = {
    "live_heap", "allocator", "program_mmaps", "thread_stacks",
    "modules", "shared", "rest"};
/* How each is known: counted from the kernel's figures page by page (and
 * the books), or computed as what is left of a mapping's Rss. */
static const char *const part_how[RSS_PARTS] = {
    "counted", "computed", "counted", "counted", "counted", "counted", "computed"};

const char *rss_part_name(enum rss_part p) { return p < RSS_PARTS ? part_names[p] : "?"; }
const char *rss_part_key(enum rss_part p) { return p < RSS_PARTS ? part_keys[p] : "?"; }
const char *rss_part_how(enum rss_part p) { return p < RSS_PARTS ? part_how[p] : "?"; }

/* ---- the smaps text ---- */

static bool is_hex_start(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* "Key:   N kB" -> bytes in *v; false when the line is not of that form. */
static bool field_kb(const char *line, const char *key, uint64_t *v)
{
    size_t k = strlen(key);
    if (strncmp(line, key, k) != 0 || line[k] != ':')
        return false;
    const char *p = line + k + 1;
    while (*p == ' ' || *p == '\t')
        p++;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(p, &end, 10);
    if (end == p || errno || strncmp(end, " kB", 3) != 0 || n > UINT64_MAX / 1024)
        return false;
    *v = (uint64_t)n * 1024;
    return true;
}

static bool parse_header(char *line, struct smaps_entry *e)
{
    unsigned long long start, end, offset, inode;
    char perms[5] = "";
    int name_at = -1;
    if (sscanf(line, "%llx-%llx %4s %llx %*x:%*x %llu%n", &start, &end, perms, &offset, &inode,
               &name_at) != 5 ||
        name_at < 0 || end < start || strlen(perms) != 4)
        return false;
    memset(e, 0, sizeof(*e));
    e->start = start;
    e->end = end;
    e->offset = offset;
    e->inode = inode;
    memcpy(e->perms, perms, sizeof(e->perms));
    const char *name = line + name_at;
    while (*name == ' ' || *name == '\t')
        name++;
    e->name = name;
    return true;
}

long smaps_parse(char *text, smaps_entry_fn fn, void *ctx)
{
    struct smaps_entry cur;
    bool have = false;
    long count = 0;
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (is_hex_start(line[0])) {
            if (have)
                fn(ctx, &cur);
            if (!parse_header(line, &cur))
                return -1;
            have = true;
            count++;
        } else if (have) {
            uint64_t v;
            if (field_kb(line, "Rss", &v))
                cur.rss = v;
            else if (field_kb(line, "Shared_Clean", &v))
                cur.shared_clean = v;
            else if (field_kb(line, "Shared_Dirty", &v))
                cur.shared_dirty = v;
            else if (field_kb(line, "Private_Clean", &v))
                cur.private_clean = v;
            else if (field_kb(line, "Private_Dirty", &v))
                cur.private_dirty = v;
            else if (field_kb(line, "Anonymous", &v))
                cur.anonymous = v;
        }
        line = nl ? nl + 1 : NULL;
    }
    if (have)
        fn(ctx, &cur);
    return count;
}

/* ---- reading /proc ---- */

static char *slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 65536, n = 0;
    char *buf = xmalloc(cap);
    for (;;) {
        if (cap - n < 4096) {
            cap *= 2;
            buf = xrealloc(buf, cap);
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(buf);
            close(fd);
            return NULL;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

/* The stack pointers of the process's threads that are blocked (in a system
 * call or stopped): /proc/PID/task/TID/syscall ends "... SP PC"; a running
 * thread says "running". */
static size_t thread_sps(int pid, uint64_t **out)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", pid);
    DIR *d = opendir(path);
    *out = NULL;
    if (!d)
        return 0;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        char *end;
        long tid = strtol(de->d_name, &end, 10);
        if (*end || tid <= 0)
            continue;
        char file[96], text[512];
        snprintf(file, sizeof(file), "/proc/%d/task/%ld/syscall", pid, tid);
        int fd = open(file, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t r = read(fd, text, sizeof(text) - 1);
        close(fd);
        if (r <= 0)
            continue;
        text[r] = '\0';
        /* the last two words: SP, PC */
        char *words[16];
        size_t nw = 0;
        for (char *save = NULL, *w = strtok_r(text, " \n", &save); w && nw < 16;
             w = strtok_r(NULL, " \n", &save))
            words[nw++] = w;
        if (nw < 3)
            continue;
        errno = 0;
        unsigned long long sp = strtoull(words[nw - 2], &end, 16);
        if (errno || *end || !sp)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            *out = xreallocarray(*out, cap, sizeof(**out));
        }
        (*out)[n++] = sp;
    }
    closedir(d);
    return n;
}

/* ---- the split ---- */

#define WINDOW_PAGES 32768u
#define PAGEMAP_MAX_PAGES (1u << 20)   /* larger mappings: not read page by page */
#define CHUNK_TAIL 64                  /* bytes after a live block glibc keeps (next header, links) */
#define CHUNK_HEAD 16                  /* its own header before it */

enum { PG_PRESENT = 1, PG_PROGRAM = 2, PG_TOUCHED = 4 };

struct split {
    struct rss_parts *out;
    const struct heap_block *blocks;
    size_t nblocks;
    const struct heap_region *regions;
    size_t nregions;
    bool *region_live;          /* per region: holds a live block (the allocator's mmap) */
    const uint64_t *sps;
    size_t nsps;
    const struct rss_own *own;  /* NULL: none */
    int pagemap_fd;
    uint64_t ps;
    struct smaps_entry prev;    /* the mapping before (for .bss) */
    char *prev_name;
    uint8_t *flags;             /* WINDOW_PAGES */
    uint64_t *pm;               /* WINDOW_PAGES */
};

/* First block ending after addr (blocks are sorted and disjoint). */
static size_t first_block_after(const struct split *s, uint64_t addr)
{
    size_t lo = 0, hi = s->nblocks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->blocks[mid].addr + s->blocks[mid].size <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static size_t first_region_after(const struct split *s, uint64_t addr)
{
    size_t lo = 0, hi = s->nregions;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->regions[mid].end <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool has_block_in(const struct split *s, uint64_t start, uint64_t end)
{
    size_t i = first_block_after(s, start);
    return i < s->nblocks && s->blocks[i].addr < end;
}

static void add_module(struct rss_parts *p, const char *name, const struct smaps_entry *e,
                       bool bss)
{
    struct rss_module *m = NULL;
    for (size_t i = 0; i < p->nmodules; i++)
        if (!strcmp(p->modules[i].path, name)) {
            m = &p->modules[i];
            break;
        }
    if (!m) {
        p->modules = xreallocarray(p->modules, p->nmodules + 1, sizeof(*p->modules));
        m = &p->modules[p->nmodules++];
        memset(m, 0, sizeof(*m));
        m->path = xstrdup(name);
    }
    m->rss += e->rss;
    m->anonymous += bss ? e->rss : e->anonymous;
    m->clean += e->shared_clean + e->private_clean;
    m->dirty += e->shared_dirty + e->private_dirty;
    p->part[RSS_MODULES] += e->rss;
}

/* Reads the present bits of pages [first, first + n); false when pagemap
 * cannot be read (every page then counts as present). */
static bool read_present(struct split *s, uint64_t first, size_t n)
{
    if (s->pagemap_fd < 0)
        return false;
    size_t want = n * sizeof(uint64_t), got = 0;
    while (got < want) {
        ssize_t r = pread(s->pagemap_fd, (char *)s->pm + got, want - got,
                          (off_t)((first * sizeof(uint64_t)) + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        got += (size_t)r;
    }
    for (size_t i = 0; i < n; i++)
        if (s->pm[i] & (1ull << 63))
            s->flags[i] |= PG_PRESENT;
    return true;
}

static void mark_range(struct split *s, uint64_t ws, uint64_t we, uint64_t lo, uint64_t hi,
                       uint8_t flag)
{
    if (lo < ws)
        lo = ws;
    if (hi > we)
        hi = we;
    if (lo >= hi)
        return;
    for (uint64_t pg = (lo - ws) / s->ps; pg <= (hi - 1 - ws) / s->ps; pg++)
        s->flags[pg] |= flag;
}

/* An anonymous mapping: live blocks, the allocator's remainder, the
 * program's mmaps (the ledger's regions with no live block), the rest. */
static void split_anonymous(struct split *s, const struct smaps_entry *e, bool allocator)
{
    struct rss_parts *p = s->out;
    uint64_t live = 0, program = 0, trim = 0;
    uint64_t npages = (e->end - e->start) / s->ps;
    bool by_page = npages <= PAGEMAP_MAX_PAGES && s->pagemap_fd >= 0;
    for (uint64_t ws = e->start; ws < e->end; ws += (uint64_t)WINDOW_PAGES * s->ps) {
        uint64_t we = e->end - ws > (uint64_t)WINDOW_PAGES * s->ps ? ws + (uint64_t)WINDOW_PAGES * s->ps
                                                                   : e->end;
        size_t n = (size_t)((we - ws) / s->ps);
        memset(s->flags, 0, n);
        if (!by_page || !read_present(s, ws / s->ps, n)) {
            if (by_page)
                p->pagemap = false;
            memset(s->flags, PG_PRESENT, n);
        }
        for (size_t r = first_region_after(s, ws); r < s->nregions && s->regions[r].start < we; r++)
            if (!s->region_live[r])
                mark_range(s, ws, we, s->regions[r].start, s->regions[r].end, PG_PROGRAM);
        for (size_t b = first_block_after(s, ws > CHUNK_TAIL ? ws - CHUNK_TAIL : 0);
             b < s->nblocks && s->blocks[b].addr < we + CHUNK_HEAD; b++) {
            uint64_t lo = s->blocks[b].addr, hi = lo + s->blocks[b].size;
            mark_range(s, ws, we, lo > CHUNK_HEAD ? lo - CHUNK_HEAD : 0, hi + CHUNK_TAIL, PG_TOUCHED);
            if (lo < ws)
                lo = ws;
            if (hi > we)
                hi = we;
            while (lo < hi) {
                uint64_t page_end = (lo / s->ps + 1) * s->ps;
                uint64_t stop = page_end < hi ? page_end : hi;
                if (s->flags[(lo - ws) / s->ps] & PG_PRESENT)
                    live += stop - lo;
                lo = stop;
            }
        }
        for (size_t i = 0; i < n; i++) {
            if (!(s->flags[i] & PG_PRESENT))
                continue;
            if (s->flags[i] & PG_PROGRAM)
                program += s->ps;
            else if (!(s->flags[i] & PG_TOUCHED))
                trim += s->ps;
        }
    }
    /* The kernel's Rss is the truth; the page bits only divide it. */
    uint64_t rss = e->rss;
    if (program > rss)
        program = rss;
    if (!allocator)
        live = 0;
    if (live > rss - program)
        live = rss - program;
    uint64_t left = rss - program - live;
    p->part[RSS_PROGRAM_MMAPS] += program;
    p->part[RSS_LIVE_HEAP] += live;
    if (allocator) {
        p->part[RSS_ALLOCATOR] += left;
        p->trimmable += trim < left ? trim : left;
    } else {
        p->part[RSS_REST] += left;
    }
}

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool holds_sp(const struct split *s, const struct smaps_entry *e)
{
    for (size_t i = 0; i < s->nsps; i++)
        if (s->sps[i] >= e->start && s->sps[i] < e->end)
            return true;
    return false;
}

/* The mapping lies inside one of memtrace's own ranges. */
static bool is_own(const struct split *s, const struct smaps_entry *e)
{
    for (unsigned k = 0; s->own && k < s->own->n; k++)
        if (e->start >= s->own->lo[k] && e->end - s->own->lo[k] <= s->own->len[k])
            return true;
    return false;
}

static bool file_backed(const struct smaps_entry *e)
{
    return e->name[0] == '/' || e->inode != 0;
}

static void classify(void *ctx, const struct smaps_entry *e)
{
    struct split *s = ctx;
    struct rss_parts *p = s->out;
    p->mappings++;
    p->rss += e->rss;
    bool anonymous = !file_backed(e) && (!e->name[0] || !strcmp(e->name, "[heap]") ||
                                         starts_with(e->name, "[anon"));
    bool live = anonymous && has_block_in(s, e->start, e->end);
    size_t r = first_region_after(s, e->start);
    bool ledger = r < s->nregions && s->regions[r].start < e->end;
    if (e->rss == 0) {
        /* nothing resident */
    } else if (e->perms[3] == 's' || starts_with(e->name, "/SYSV") ||
               starts_with(e->name, "/dev/shm/")) {
        p->part[RSS_SHARED] += e->rss;
        if (is_own(s, e))
            p->memtrace += e->rss;
    } else if (starts_with(e->name, "[stack") || (!live && holds_sp(s, e))) {
        p->part[RSS_THREAD_STACKS] += e->rss;
    } else if (file_backed(e) || !strcmp(e->name, "[vdso]") || !strcmp(e->name, "[vsyscall]") ||
               !strcmp(e->name, "[vvar]")) {
        add_module(p, e->name, e, false);
    } else if (anonymous && (live || ledger || !strcmp(e->name, "[heap]"))) {
        split_anonymous(s, e, live || !strcmp(e->name, "[heap]"));
    } else if (anonymous && !e->name[0] && s->prev_name && s->prev.end == e->start &&
               file_backed(&s->prev) && s->prev.perms[1] == 'w') {
        /* right after a module's writable data: its .bss */
        add_module(p, s->prev_name, e, true);
    } else {
        p->part[RSS_REST] += e->rss;
    }
    free(s->prev_name);
    s->prev = *e;
    s->prev_name = xstrdup(e->name);
    s->prev.name = s->prev_name;
}

static int by_rss_desc(const void *a, const void *b)
{
    const struct rss_module *x = a, *y = b;
    if (x->rss != y->rss)
        return x->rss > y->rss ? -1 : 1;
    return strcmp(x->path, y->path);
}

static int fail(char *why, size_t whylen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    /* va_start above: the analyzer's valist check misses it here */
    if (why && whylen)
        vsnprintf(why, whylen, fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized)
    va_end(ap);
    return -1;
}

int rss_parts_read(int pid, const struct heap_books *b, const struct rss_own *own,
                   struct rss_parts *out, char *why, size_t whylen)
{
    memset(out, 0, sizeof(*out));
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/smaps", pid);
    char *text = slurp(path, NULL);
    if (!text)
        return fail(why, whylen, "cannot read %s: %s", path, strerror(errno));
    if (!text[0]) {
        free(text);
        return fail(why, whylen, "%s is empty (the process is gone)", path);
    }
    struct split s = {.out = out, .ps = heap_page_size(), .own = own, .pagemap_fd = -1};
    out->page_size = s.ps;
    out->pagemap = true;
    struct heap_block *blocks = heap_export_blocks(b, &s.nblocks);
    s.blocks = blocks;
    s.regions = heap_regions(b, &s.nregions);
    s.region_live = xcalloc(s.nregions ? s.nregions : 1, sizeof(*s.region_live));
    for (size_t r = 0; r < s.nregions; r++)
        s.region_live[r] = has_block_in(&s, s.regions[r].start, s.regions[r].end);
    uint64_t *sps = NULL;
    s.nsps = thread_sps(pid, &sps);
    s.sps = sps;
    out->stack_pointers = (unsigned)s.nsps;
    snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
    s.pagemap_fd = open(path, O_RDONLY | O_CLOEXEC);
    if (s.pagemap_fd < 0)
        out->pagemap = false;
    s.flags = xmalloc(WINDOW_PAGES);
    s.pm = xmalloc(WINDOW_PAGES * sizeof(*s.pm));
    struct heap_totals t;
    heap_get_totals(b, &t);
    out->live_bytes = t.in_use_bytes;
    out->live_blocks = t.in_use_blocks;
    long n = smaps_parse(text, classify, &s);
    if (s.pagemap_fd >= 0)
        close(s.pagemap_fd);
    free(s.prev_name);
    free(s.flags);
    free(s.pm);
    free(sps);
    free(s.region_live);
    free(blocks);
    free(text);
    if (n < 0) {
        rss_parts_free(out);
        return fail(why, whylen, "/proc/%d/smaps: a line not understood", pid);
    }
    if (out->nmodules)
        qsort(out->modules, out->nmodules, sizeof(*out->modules), by_rss_desc);
    return 0;
}

void rss_parts_free(struct rss_parts *p)
{
    for (size_t i = 0; i < p->nmodules; i++)
        free(p->modules[i].path);
    free(p->modules);
    p->modules = NULL;
    p->nmodules = 0;
}
