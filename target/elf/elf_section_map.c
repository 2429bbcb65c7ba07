#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "target/elf/elf_section_map.h"

#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "shared/xalloc.h"
#include "shared/elf/elf_compress.h"
#include "shared/files/cursor.h"

/* Bytes made resident (and given back) at a time.  Small enough that a
 * lookup touching one line program holds little more than it; a multiple of
 * the page size so that madvise can give a chunk back. */
#define CHUNK_BYTES (16u * 1024)
/* Compressed input read per file read. */
#define INPUT_BYTES (4u * 1024)
/* Checkpoints: at most MAX_CHECKPOINTS, at least CHECKPOINT_SPAN output
 * bytes apart, each with deflate's 32 KiB window kept deflated itself. */
#define MAX_CHECKPOINTS 16u
#define CHECKPOINT_SPAN (128u * 1024)
#define WINDOW_BYTES 32768u
/* A map only reserves addresses, so it may be bigger than a section that
 * is loaded whole; 32-bit address spaces keep the same limit. */
#define MAP_MAX_BYTES (sizeof(size_t) > 4 ? (uint64_t)16 << 30 : (uint64_t)ELF_SECTION_MAX_BYTES)

/* Where inflating can resume without starting over: at a deflate block
 * boundary, in bits bits into the byte before file offset in, with the
 * last 32 KiB of output as its dictionary. */
struct checkpoint {
    uint64_t out, in;
    int bits;
    uint8_t *window;               /* deflated */
    size_t window_len, dict_len;
};

struct section_map {
    struct elf_file *f;
    uint64_t file_off, file_len;   /* the raw or zlib bytes in the file */
    bool compressed;
    size_t size;                   /* decompressed bytes */
    uint8_t *base;                 /* mapping of map_len bytes */
    size_t map_len;
    size_t chunk;                  /* CHUNK_BYTES or the page size */
    size_t nchunks;
    uint32_t *stamp;               /* 0: not resident; else last use */
    uint32_t clock;
    size_t resident, budget;       /* in chunks */
    size_t *res, res_cap;          /* the resident chunks, in no order */
    bool broken;                   /* the stream failed once: stays zeros */

    /* The inflate stream and where it stands. */
    z_stream z;
    bool z_live;
    uint64_t z_out;                /* decompressed bytes produced */
    uint64_t z_in;                 /* next file byte to feed */
    uint8_t *in;

    /* Taken only once a read went backwards (random access): a map read
     * front to back never pays for them. */
    bool started, random;
    struct checkpoint cps[MAX_CHECKPOINTS];
    size_t cp_count;
    uint64_t cp_span;
};

/* Chunks given back but not yet returned to the kernel.  Each madvise
 * costs a TLB shootdown on every CPU the tracer last ran on, which in a VM
 * is an IPI through the hypervisor: 630 calls, over a third of a short
 * trace's time (a leak_corpus program, 2026-11-27).  Queued, a map read
 * front to back returns its chunks in one call per run of neighbours.  One
 * queue for every map (the tracer reads maps from one thread) bounds what
 * is held back at RELEASE_BATCH chunks in all, however many maps are open. */
#define RELEASE_BATCH 256u
struct pending_release {
    struct section_map *m;
    size_t k;
};
static struct pending_release release_queue[RELEASE_BATCH];
static size_t release_count;

struct release_range {
    uint8_t *lo, *hi;
};

static int range_cmp(const void *a, const void *b)
{
    const struct release_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Returns every queued chunk that is still given back (a chunk loaded
 * again since holds data), neighbours in one call. */
static void release_flush(void)
{
    struct release_range r[RELEASE_BATCH];
    size_t n = 0;
    for (size_t i = 0; i < release_count; i++) {
        struct section_map *m = release_queue[i].m;
        size_t k = release_queue[i].k;
        if (m->stamp[k])
            continue;
        r[n].lo = m->base + k * m->chunk;
        r[n].hi = r[n].lo + m->chunk;
        n++;
    }
    release_count = 0;
    if (n == 0)
        return;
    qsort(r, n, sizeof(*r), range_cmp);
    for (size_t i = 0; i < n;) {
        uint8_t *lo = r[i].lo, *hi = r[i].hi;
        for (i++; i < n && r[i].lo <= hi; i++)
            if (r[i].hi > hi)
                hi = r[i].hi;
        madvise(lo, (size_t)(hi - lo), MADV_DONTNEED);
    }
}

static void release_later(struct section_map *m, size_t k)
{
    if (release_count == RELEASE_BATCH)
        release_flush();
    release_queue[release_count].m = m;
    release_queue[release_count].k = k;
    release_count++;
}

/* A map being closed: its chunks go with its mapping. */
static void release_forget(const struct section_map *m)
{
    size_t kept = 0;
    for (size_t i = 0; i < release_count; i++)
        if (release_queue[i].m != m)
            release_queue[kept++] = release_queue[i];
    release_count = kept;
}

static size_t release_pending_chunks(const struct section_map *m)
{
    size_t n = 0;
    for (size_t i = 0; i < release_count; i++)
        if (release_queue[i].m == m && !m->stamp[release_queue[i].k])
            n++;
    return n;
}

static bool read_header(struct section_map *m, const struct elf_section *s, uint64_t *size, int *rc)
{
    struct elf_file *f = m->f;
    if (s->flags & SHF_COMPRESSED) {
        bool is64 = elf_file_class(f) == 64;
        size_t hdr = is64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);
        uint8_t buf[sizeof(Elf64_Chdr)];
        if (s->size < hdr) {
            *rc = -EINVAL;
            return false;
        }
        *rc = elf_file_read(f, s->offset, buf, hdr);
        if (*rc < 0)
            return false;
        struct cursor c;
        cursor_init(&c, buf, hdr, elf_file_big_endian(f));
        uint32_t type = cursor_u32(&c);
        if (is64)
            cursor_u32(&c); /* ch_reserved */
        *size = is64 ? cursor_u64(&c) : cursor_u32(&c);
        if (type != ELFCOMPRESS_ZLIB) {
            *rc = -ENOTSUP;
            return false;
        }
        m->compressed = true;
        m->file_off = s->offset + hdr;
        m->file_len = s->size - hdr;
        return true;
    }
    if (strncmp(s->name, ".zdebug", 7) == 0) {
        uint8_t buf[12];
        if (s->size < sizeof(buf)) {
            *rc = -EINVAL;
            return false;
        }
        *rc = elf_file_read(f, s->offset, buf, sizeof(buf));
        if (*rc < 0)
            return false;
        if (memcmp(buf, "ZLIB", 4) != 0) {
            *rc = -EINVAL;
            return false;
        }
        struct cursor c;
        cursor_init(&c, buf + 4, 8, true);
        *size = cursor_u64(&c);
        m->compressed = true;
        m->file_off = s->offset + sizeof(buf);
        m->file_len = s->size - sizeof(buf);
        return true;
    }
    *size = s->size;
    m->file_off = s->offset;
    m->file_len = s->size;
    return true;
}

struct section_map *section_map_open(struct elf_file *f, const struct elf_section *s, size_t budget, int *rc)
{
    int dummy;
    if (!rc)
        rc = &dummy;
    *rc = -ENOENT;
    if (!s || s->type == SHT_NOBITS || s->type == SHT_NULL)
        return NULL;
    if (s->offset > elf_file_size(f) || s->size > elf_file_size(f) - s->offset) {
        *rc = -ERANGE;
        return NULL;
    }
    struct section_map *m = xcalloc(1, sizeof(*m));
    m->f = f;
    uint64_t size;
    if (!read_header(m, s, &size, rc)) {
        free(m);
        return NULL;
    }
    /* The same limits as loading the section whole: deflate cannot expand
     * more than ~1032:1, so a header claiming more is lying. */
    if (size > MAP_MAX_BYTES || (m->compressed && size / 1032 > m->file_len + 64)) {
        *rc = m->compressed && size <= MAP_MAX_BYTES ? -EINVAL : -EFBIG;
        free(m);
        return NULL;
    }
    long page = sysconf(_SC_PAGESIZE);
    m->chunk = page > (long)CHUNK_BYTES ? (size_t)page : CHUNK_BYTES;
    m->size = (size_t)size;
    m->nchunks = (m->size + m->chunk - 1) / m->chunk;
    m->map_len = m->nchunks ? m->nchunks * m->chunk : m->chunk;
    void *p = mmap(NULL, m->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        *rc = -ENOMEM;
        free(m);
        return NULL;
    }
    m->base = p;
    m->stamp = xcalloc(m->nchunks ? m->nchunks : 1, sizeof(*m->stamp));
    section_map_set_budget(m, budget);
    *rc = 0;
    return m;
}

void section_map_set_budget(struct section_map *m, size_t budget)
{
    m->budget = budget ? (budget + m->chunk - 1) / m->chunk : SIZE_MAX;
    if (m->budget < 2)
        m->budget = 2;
}

void section_map_park(struct section_map *m)
{
    if (!m)
        return;
    if (m->z_live)
        inflateEnd(&m->z);
    m->z_live = false;
    free(m->in);
    m->in = NULL;
}

void section_map_close(struct section_map *m)
{
    if (!m)
        return;
    section_map_park(m);
    release_forget(m);
    for (size_t i = 0; i < m->cp_count; i++)
        free(m->cps[i].window);
    munmap(m->base, m->map_len);
    free(m->stamp);
    free(m->res);
    free(m);
}

const uint8_t *section_map_data(const struct section_map *m) { return m->base; }
size_t section_map_size(const struct section_map *m) { return m->size; }

size_t section_map_memory(const struct section_map *m)
{
    size_t n = sizeof(*m) + m->nchunks * sizeof(*m->stamp) + m->res_cap * sizeof(*m->res) +
               (m->resident + release_pending_chunks(m)) * m->chunk;
    if (m->z_live)
        n += 7 * 1024 + 32 * 1024; /* inflate's state and window */
    if (m->in)
        n += INPUT_BYTES;
    for (size_t i = 0; i < m->cp_count; i++)
        n += m->cps[i].window_len;
    return n;
}

/* A raw inflate stream (no zlib header or trailer of its own), so that it
 * can also start at a checkpoint. */
static bool stream_init(struct section_map *m)
{
    if (m->z_live)
        inflateEnd(&m->z);
    memset(&m->z, 0, sizeof(m->z));
    m->z_live = inflateInit2(&m->z, -15) == Z_OK;
    if (m->z_live && !m->in)
        m->in = xmalloc(INPUT_BYTES);
    return m->z_live;
}

/* From the start: the zlib header (RFC 1950) is read here. */
static bool restart_at_start(struct section_map *m)
{
    uint8_t h[2];
    if (m->file_len < 2 || elf_file_read(m->f, m->file_off, h, 2) != 0)
        return false;
    /* Deflate, a window of at most 32 KiB, the check bits right, and no
     * preset dictionary. */
    if ((h[0] & 0x0f) != 8 || (h[0] >> 4) > 7 || ((unsigned)h[0] << 8 | h[1]) % 31 != 0 || (h[1] & 0x20))
        return false;
    if (!stream_init(m))
        return false;
    m->z_out = 0;
    m->z_in = m->file_off + 2;
    return true;
}

static bool restart_at(struct section_map *m, const struct checkpoint *cp)
{
    uint8_t *dict = xmalloc(WINDOW_BYTES);
    uLongf dict_len = WINDOW_BYTES;
    bool ok = uncompress(dict, &dict_len, cp->window, (uLong)cp->window_len) == Z_OK &&
              dict_len == cp->dict_len && stream_init(m);
    if (ok && cp->bits) {
        uint8_t byte;
        ok = elf_file_read(m->f, cp->in - 1, &byte, 1) == 0 &&
             inflatePrime(&m->z, cp->bits, byte >> (8 - cp->bits)) == Z_OK;
    }
    if (ok)
        ok = inflateSetDictionary(&m->z, dict, (uInt)dict_len) == Z_OK;
    free(dict);
    if (!ok)
        return false;
    m->z_out = cp->out;
    m->z_in = cp->in;
    return true;
}

/* Resumes at the last checkpoint at or below target, else at the start. */
static bool restart(struct section_map *m, uint64_t target)
{
    /* Any start after the first is random access. */
    m->random = m->started;
    m->started = true;
    if (!m->cp_span) {
        uint64_t span = m->size / MAX_CHECKPOINTS + 1;
        m->cp_span = span > CHECKPOINT_SPAN ? span : CHECKPOINT_SPAN;
    }
    for (size_t i = m->cp_count; i > 0; i--)
        if (m->cps[i - 1].out <= target)
            return restart_at(m, &m->cps[i - 1]) || restart_at_start(m);
    return restart_at_start(m);
}

/* Called at a block boundary: keeps a checkpoint when the last is far
 * enough behind.  in is the file offset of the next byte inflate has not
 * consumed. */
static void maybe_checkpoint(struct section_map *m)
{
    uint64_t last = m->cp_count ? m->cps[m->cp_count - 1].out : 0;
    if (!m->random || m->cp_count == MAX_CHECKPOINTS || m->z_out < last + m->cp_span || m->z_out >= m->size)
        return;
    uint8_t *dict = xmalloc(WINDOW_BYTES);
    uInt dict_len = 0;
    if (inflateGetDictionary(&m->z, dict, &dict_len) != Z_OK || dict_len == 0) {
        free(dict);
        return;
    }
    uLongf packed_len = compressBound(dict_len);
    uint8_t *packed = xmalloc(packed_len);
    if (compress2(packed, &packed_len, dict, dict_len, 1) != Z_OK) {
        free(packed);
        free(dict);
        return;
    }
    free(dict);
    struct checkpoint *cp = &m->cps[m->cp_count++];
    cp->out = m->z_out;
    cp->in = m->z_in - m->z.avail_in;
    cp->bits = m->z.data_type & 7;
    cp->window = xrealloc(packed, packed_len ? packed_len : 1);
    cp->window_len = packed_len;
    cp->dict_len = dict_len;
}

/* Produces exactly n more bytes of the stream into dst. */
static bool inflate_into(struct section_map *m, uint8_t *dst, size_t n)
{
    z_stream *z = &m->z;
    z->next_out = dst;
    z->avail_out = (uInt)n;
    uint64_t end = m->file_off + m->file_len;
    while (z->avail_out > 0) {
        if (z->avail_in == 0) {
            uint64_t left = end - m->z_in;
            size_t take = left < INPUT_BYTES ? (size_t)left : INPUT_BYTES;
            if (take == 0 || elf_file_read(m->f, m->z_in, m->in, take) != 0)
                return false;
            m->z_in += take;
            z->next_in = m->in;
            z->avail_in = (uInt)take;
        }
        uInt before = z->avail_out;
        /* Z_BLOCK stops at each block boundary, where a checkpoint can
         * be taken (bit 7 of data_type: at a boundary; bit 6: the last
         * block ended). */
        int zr = inflate(z, m->random ? Z_BLOCK : Z_NO_FLUSH);
        m->z_out += before - z->avail_out;
        if (zr == Z_STREAM_END && z->avail_out > 0)
            return false; /* shorter than its header says */
        if (zr != Z_OK && zr != Z_STREAM_END && !(zr == Z_BUF_ERROR && z->avail_in == 0))
            return false;
        if (m->random && (z->data_type & 128) && !(z->data_type & 64))
            maybe_checkpoint(m);
    }
    return true;
}

/* Gives back the least recently used chunk outside [keep_lo, keep_hi]. */
static void evict(struct section_map *m, size_t keep_lo, size_t keep_hi)
{
    size_t victim = SIZE_MAX;
    for (size_t r = 0; r < m->resident; r++) {
        size_t i = m->res[r];
        if ((i < keep_lo || i > keep_hi) && (victim == SIZE_MAX || m->stamp[i] < m->stamp[m->res[victim]]))
            victim = r;
    }
    if (victim == SIZE_MAX)
        return;
    size_t k = m->res[victim];
    m->stamp[k] = 0;
    release_later(m, k);
    m->res[victim] = m->res[--m->resident];
}

static size_t chunk_len(const struct section_map *m, size_t k)
{
    size_t lo = k * m->chunk;
    return m->size - lo < m->chunk ? m->size - lo : m->chunk;
}

static void mark(struct section_map *m, size_t k)
{
    if (!m->stamp[k]) {
        if (m->resident == m->res_cap) {
            m->res_cap = m->res_cap ? m->res_cap * 2 : 8;
            m->res = xreallocarray(m->res, m->res_cap, sizeof(*m->res));
        }
        m->res[m->resident++] = k;
    }
    if (++m->clock == 0) { /* wrapped: age everything to 1 */
        for (size_t r = 0; r < m->resident; r++)
            m->stamp[m->res[r]] = 1;
        m->clock = 2;
    }
    m->stamp[k] = m->clock;
}

/* Inflates chunk k into place, from wherever the stream stands (forward),
 * or from the start.  Chunks passed on the way are kept while the budget
 * has room for them (one slot stays for chunk k), else inflated into
 * chunk k's place, which its own bytes then overwrite. */
static bool load_compressed(struct section_map *m, size_t k)
{
    uint64_t target = (uint64_t)k * m->chunk;
    /* Backwards, or far forwards past a checkpoint: resume nearer. */
    bool behind = m->z_live && m->z_out > target;
    bool far = m->z_live && m->cp_count && m->cps[m->cp_count - 1].out <= target &&
               m->cps[m->cp_count - 1].out > m->z_out;
    if ((!m->z_live || behind || far) && !restart(m, target))
        return false;
    while (m->z_out < target) {
        size_t j = (size_t)(m->z_out / m->chunk);
        size_t n = (size_t)(target - m->z_out) < m->chunk ? (size_t)(target - m->z_out) : m->chunk;
        bool keep = m->z_out % m->chunk == 0 && !m->stamp[j] && m->resident + 1 < m->budget;
        /* Output nobody asked for goes where chunk k will be written. */
        if (!inflate_into(m, keep ? m->base + m->z_out : m->base + target, n))
            return false;
        if (keep)
            mark(m, j);
        /* Zeros where a chunk was given back mid-way are fine: it is not
         * resident, so nobody reads it as data. */
    }
    return inflate_into(m, m->base + target, chunk_len(m, k));
}

static bool load(struct section_map *m, size_t k, size_t keep_lo, size_t keep_hi)
{
    while (m->resident >= m->budget) {
        size_t before = m->resident;
        evict(m, keep_lo, keep_hi);
        if (m->resident == before)
            break; /* everything resident is in the range being ensured */
    }
    bool ok;
    if (m->compressed) {
        ok = load_compressed(m, k);
        /* At the end the stream has nothing more to give. */
        if (ok && m->z_out >= m->size)
            section_map_park(m);
    }
    else
        ok = elf_file_read(m->f, m->file_off + (uint64_t)k * m->chunk, m->base + k * m->chunk,
                           chunk_len(m, k)) == 0;
    if (!ok) {
        /* Whatever half-chunk was written must not pass for data. */
        memset(m->base + k * m->chunk, 0, chunk_len(m, k));
        if (m->compressed) {
            m->broken = true;
            section_map_park(m);
        }
        return false;
    }
    mark(m, k);
    return true;
}

bool section_map_ensure(struct section_map *m, uint64_t off, uint64_t len)
{
    if (!m || off > m->size || len > m->size - off)
        return false;
    if (len == 0)
        return true;
    if (m->broken)
        return false;
    size_t lo = (size_t)(off / m->chunk), hi = (size_t)((off + len - 1) / m->chunk);
    for (size_t k = lo; k <= hi; k++) {
        if (m->stamp[k]) {
            mark(m, k);
            continue;
        }
        if (!load(m, k, lo, hi))
            return false;
    }
    return true;
}
