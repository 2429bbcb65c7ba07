/* --record FILE: writing (record.h says the format). */
#include "target/record/record.h"

#include "shared/byte_buf.h"
#include "shared/intern.h"
#include "shared/log.h"
#include "shared/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put_var(struct byte_buf *b, uint64_t v)
{
    byte_buf_reserve(b, 10); /* the longest varint: one check, not one a byte */
    while (v >= 0x80) {
        b->data[b->len++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b->data[b->len++] = (uint8_t)v;
}

/* A wrapping difference, zigzag-coded: small either way. */
static void put_delta(struct byte_buf *b, uint64_t now, uint64_t before)
{
    uint64_t d = now - before;
    put_var(b, (d << 1) ^ (0 - (d >> 63)));
}

static void put_bytes(struct byte_buf *b, const void *p, size_t n)
{
    put_var(b, n);
    byte_buf_put(b, p, n);
}

/* A record: tag, length, payload. */
static void put_record(struct byte_buf *out, uint8_t tag, const struct byte_buf *payload)
{
    byte_buf_put_u8(out, tag);
    put_bytes(out, payload->data, payload->len);
}

struct shadow {
    struct stack_totals t;
    uint64_t peak_bytes, peak_blocks;
    bool defined;
};

struct recorder {
    FILE *f;
    char *path;
    bool failed, full;
    uint64_t written, max, samples;
    uint64_t stage_mark;        /* the interval doubles when written passes it */
    unsigned interval_ms;
    bool started;
    bool rate_written;          /* 'R', once, before the first sample */
    uint32_t id_base;           /* added to the books' stack ids (rebase) */
    char engine[16];            /* the engine the file names last */
    double time_offset;         /* added to the books' clock (rebase) */
    double interval, last_offer;
    bool offered;
    uint64_t last_us;
    uint64_t totals[RECORD_TOTALS];
    uint64_t peak_bytes, peak_blocks, peak_us;
    uint64_t rss[RECORD_RSS_FIELDS];  /* the last 'M' written */
    bool rss_written;
    struct shadow *sh;
    uint32_t nsh;
    struct interner strings, frames;  /* numbered from 1 in the file */
    struct byte_buf out, tmp, list;
};

static void emit(struct recorder *r, const struct byte_buf *b)
{
    if (r->failed || !b->len)
        return;
    if (fwrite(b->data, 1, b->len, r->f) != b->len || fflush(r->f) != 0) {
        mt_warn("--record: writing %s: %s; recording stops", r->path, strerror(errno));
        r->failed = true;
        return;
    }
    r->written += b->len;
}

struct recorder *recorder_open(const char *path, unsigned interval_ms, uint64_t max_bytes,
                               char *why, size_t whylen)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        snprintf(why, whylen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct recorder *r = xcalloc(1, sizeof(*r));
    r->f = f;
    r->path = xstrdup(path);
    r->interval_ms = interval_ms ? interval_ms : 100;
    r->interval = r->interval_ms / 1000.0;
    r->max = max_bytes ? max_bytes : 64ull << 20;
    r->stage_mark = r->max / 2;
    return r;
}

void recorder_start(struct recorder *r, int pid, unsigned depth, const char *program,
                    const char *engine)
{
    struct byte_buf *h = &r->tmp;
    h->len = 0;
    put_var(h, 1);
    put_var(h, r->interval_ms);
    put_var(h, (uint64_t)(pid < 0 ? 0 : pid));
    put_var(h, depth);
    const char *p = program ? program : "";
    const char *e = engine ? engine : "";
    put_bytes(h, p, strlen(p));
    put_bytes(h, e, strlen(e));
    snprintf(r->engine, sizeof(r->engine), "%s", e);
    r->out.len = 0;
    byte_buf_put(&r->out, RECORD_MAGIC, RECORD_MAGIC_LEN);
    put_record(&r->out, 'H', h);
    emit(r, &r->out);
    r->started = true;
}

/* The number of string s, written to r->out first when new; 0 for NULL. */
static uint32_t string_no(struct recorder *r, const char *s)
{
    if (!s)
        return 0;
    bool fresh;
    size_t len = strlen(s);
    uint32_t n = interner_add(&r->strings, s, len, &fresh) + 1;
    if (fresh) {
        /* the record's payload is the bytes themselves */
        byte_buf_put_u8(&r->out, 'T');
        put_bytes(&r->out, s, len);
    }
    return n;
}

static uint32_t frame_no(struct recorder *r, const struct report_frame *f)
{
    struct byte_buf k = { 0 };
    put_var(&k, f->pc);
    put_var(&k, string_no(r, f->module));
    put_var(&k, f->offset);
    put_var(&k, string_no(r, f->function));
    put_var(&k, string_no(r, f->file));
    put_var(&k, f->line);
    put_var(&k, (uint64_t)(f->inlined ? 1 : 0) | (f->tail_call ? 2 : 0));
    bool fresh;
    uint32_t n = interner_add(&r->frames, k.data, k.len, &fresh) + 1;
    if (fresh) {
        put_record(&r->out, 'F', &k);
    }
    byte_buf_free(&k);
    return n;
}

/* Writes the 'K' of a stack (and its new frames and strings) to r->out. */
static void define_stack(struct recorder *r, const struct report_source *src, uint32_t id)
{
    struct report_source all = *src;
    all.max_frames = 0;     /* every frame: --depth applies at replay */
    struct report_frames it;
    struct report_frame f;
    uint32_t nos[1024];
    unsigned n = 0;
    report_frames_begin(&it, &all, id);
    while (n < sizeof(nos) / sizeof(nos[0]) && report_frames_next(&it, &f))
        nos[n++] = frame_no(r, &f);
    struct byte_buf k = { 0 };
    put_var(&k, (uint64_t)id + r->id_base);
    put_var(&k, n);
    for (unsigned i = 0; i < n; i++)
        put_var(&k, nos[i]);
    put_record(&r->out, 'K', &k);
    byte_buf_free(&k);
}

static void grow_shadow(struct recorder *r, uint32_t limit)
{
    if (limit <= r->nsh)
        return;
    uint32_t cap = r->nsh ? r->nsh : 256;
    while (cap < limit)
        cap = cap > UINT32_MAX / 2 ? limit : cap * 2;
    r->sh = xreallocarray(r->sh, cap, sizeof(*r->sh));
    memset(r->sh + r->nsh, 0, (size_t)(cap - r->nsh) * sizeof(*r->sh));
    r->nsh = cap;
}

/* Lists stack id in r->list (its file id's step from *prev), writing its
 * definition first when the file has none yet. */
static void list_stack(struct recorder *r, const struct report_source *src, uint32_t id,
                       uint32_t *prev)
{
    struct shadow *s = &r->sh[id];
    if (!s->defined && id) {
        define_stack(r, src, id);
        s->defined = true;
    }
    uint32_t fid = id ? id + r->id_base : 0;
    put_var(&r->list, fid - *prev);
    *prev = fid;
}

static bool same_totals(const struct stack_totals *a, const struct stack_totals *b)
{
    return a->bytes_in_use == b->bytes_in_use && a->blocks_in_use == b->blocks_in_use &&
           a->allocs == b->allocs && a->bytes_allocated == b->bytes_allocated &&
           a->temporary == b->temporary;
}

static void totals_array(const struct heap_totals *t, uint64_t out[RECORD_TOTALS])
{
    const uint64_t v[RECORD_TOTALS] = {
        t->in_use_bytes, t->in_use_blocks, t->allocs, t->frees, t->bytes_allocated,
        t->mapped_bytes, t->mapped_regions, t->maps_recorded, t->replaced_blocks, t->temporary,
    };
    memcpy(out, v, sizeof(v));
}

_Static_assert(RECORD_RSS_FIELDS == RSS_PARTS + 4,
               "'M' holds the RSS, its parts, mappings, flags, memtrace's own bytes");

static void rss_array(const struct rss_parts *m, uint64_t out[RECORD_RSS_FIELDS])
{
    out[0] = m->rss;
    for (int p = 0; p < RSS_PARTS; p++)
        out[1 + p] = m->part[p];
    out[1 + RSS_PARTS] = m->mappings;
    out[2 + RSS_PARTS] = m->pagemap ? RECORD_RSS_PAGEMAP : 0;
    out[3 + RSS_PARTS] = m->memtrace;
}

static uint64_t to_us(double seconds)
{
    return seconds <= 0 ? 0 : (uint64_t)(seconds * 1e6 + 0.5);
}

bool recorder_due(const struct recorder *r, double seconds, bool force)
{
    if (!r || !r->started || r->failed || r->full)
        return false;
    return force || !r->offered || seconds - r->last_offer >= r->interval;
}

void recorder_sample(struct recorder *r, const struct report_source *src, double seconds, bool force)
{
    if (!src->books || !recorder_due(r, seconds, force))
        return;
    r->offered = true;
    r->last_offer = seconds;

    const struct heap_books *b = src->books;
    struct heap_totals ht;
    heap_get_totals(b, &ht);
    uint64_t tot[RECORD_TOTALS];
    totals_array(&ht, tot);
    uint32_t limit = heap_stack_id_limit(b);
    grow_shadow(r, limit);

    r->out.len = 0;
    r->list.len = 0;
    if (!r->rate_written && heap_sample_bytes(b)) {
        put_var(&r->list, heap_sample_bytes(b));
        put_record(&r->out, 'R', &r->list);
        r->list.len = 0;
    }
    /* the stacks that changed */
    size_t nchanged = 0;
    uint32_t prev_id = 0;
    for (uint32_t id = 0; id < limit; id++) {
        struct stack_totals t;
        heap_get_stack_totals(b, id, &t);
        struct shadow *s = &r->sh[id];
        if (same_totals(&t, &s->t))
            continue;
        list_stack(r, src, id, &prev_id);
        put_delta(&r->list, t.bytes_in_use, s->t.bytes_in_use);
        put_delta(&r->list, t.blocks_in_use, s->t.blocks_in_use);
        put_delta(&r->list, t.allocs, s->t.allocs);
        put_delta(&r->list, t.bytes_allocated, s->t.bytes_allocated);
        put_delta(&r->list, t.temporary, s->t.temporary);
        nchanged++;
    }
    struct heap_peak pk;
    heap_get_peak(b, &pk);
    uint64_t pk_us = pk.bytes ? to_us(pk.seconds + r->time_offset) : 0;
    bool peak_moved = pk.bytes != r->peak_bytes || pk.blocks != r->peak_blocks || pk_us != r->peak_us;
    uint64_t rss[RECORD_RSS_FIELDS];
    bool rss_moved = false;
    if (src->memory) {
        rss_array(src->memory, rss);
        rss_moved = !r->rss_written || memcmp(rss, r->rss, sizeof(rss)) != 0;
    }
    if (!nchanged && !peak_moved && !rss_moved && memcmp(tot, r->totals, sizeof(tot)) == 0)
        return;     /* nothing to say */

    uint64_t us = to_us(seconds);
    if (us < r->last_us)
        us = r->last_us;
    struct byte_buf *pl = &r->tmp;
    pl->len = 0;
    put_var(pl, us - r->last_us);
    put_var(pl, RECORD_TOTALS);
    for (int i = 0; i < RECORD_TOTALS; i++)
        put_delta(pl, tot[i], r->totals[i]);
    put_var(pl, nchanged);
    byte_buf_put(pl, r->list.data, r->list.len);
    put_record(&r->out, 'S', pl);

    if (peak_moved) {
        pl->len = 0;
        r->list.len = 0;
        size_t np = 0;
        prev_id = 0;
        for (uint32_t id = 0; id < limit; id++) {
            struct stack_totals t;
            heap_get_stack_peak(b, id, &t);
            struct shadow *s = &r->sh[id];
            if (t.bytes_in_use == s->peak_bytes && t.blocks_in_use == s->peak_blocks)
                continue;
            list_stack(r, src, id, &prev_id);
            put_delta(&r->list, t.bytes_in_use, s->peak_bytes);
            put_delta(&r->list, t.blocks_in_use, s->peak_blocks);
            np++;
        }
        put_var(pl, pk.bytes);
        put_var(pl, pk.blocks);
        put_var(pl, pk_us);
        put_var(pl, np);
        byte_buf_put(pl, r->list.data, r->list.len);
        put_record(&r->out, 'P', pl);
    }
    if (rss_moved) {
        pl->len = 0;
        put_var(pl, RECORD_RSS_FIELDS);
        for (int i = 0; i < RECORD_RSS_FIELDS; i++)
            put_var(pl, rss[i]);
        put_record(&r->out, 'M', pl);
    }

    if (r->written + r->out.len > r->max) {
        mt_warn("--record: %s reached its %llu bytes: recording stops at %.3f s", r->path,
                (unsigned long long)r->max, seconds);
        r->full = true;
        return;
    }
    emit(r, &r->out);
    if (r->failed)
        return;
    r->rate_written = heap_sample_bytes(b) != 0;
    r->samples++;
    r->last_us = us;
    memcpy(r->totals, tot, sizeof(tot));
    /* the shadows now say what the file says */
    for (uint32_t id = 0; id < limit; id++) {
        struct shadow *s = &r->sh[id];
        struct stack_totals t;
        heap_get_stack_totals(b, id, &t);
        s->t = t;
        if (peak_moved) {
            heap_get_stack_peak(b, id, &t);
            s->peak_bytes = t.bytes_in_use;
            s->peak_blocks = t.blocks_in_use;
        }
    }
    r->peak_bytes = pk.bytes;
    r->peak_blocks = pk.blocks;
    r->peak_us = pk_us;
    if (rss_moved) {
        memcpy(r->rss, rss, sizeof(rss));
        r->rss_written = true;
    }
    /* past half of the room left: a quarter of the resolution, so that
     * each stage lasts about twice as long as the one before */
    if (r->written >= r->stage_mark) {
        r->interval *= 4;
        r->stage_mark = r->written + (r->max - r->written) / 2;
    }
}

void recorder_engine(struct recorder *r, const char *engine)
{
    if (!r || !r->started || r->failed || r->full || !engine ||
        strncmp(engine, r->engine, sizeof(r->engine)) == 0)
        return;
    snprintf(r->engine, sizeof(r->engine), "%s", engine);
    struct byte_buf e = { (uint8_t *)r->engine, strlen(r->engine), 0 };
    r->out.len = 0;
    put_record(&r->out, 'E', &e);
    emit(r, &r->out);
}

void recorder_rebase(struct recorder *r, double time_offset)
{
    if (!r || !r->started || r->failed || r->full)
        return;
    /* a sample at the last time that takes every stack of the old books
     * (and the peak) to zero, from the figures the file holds */
    struct byte_buf *pl = &r->tmp;
    r->out.len = 0;
    r->list.len = 0;
    size_t n = 0;
    uint32_t prev = 0;
    for (uint32_t id = 0; id < r->nsh; id++) {
        const struct shadow *s = &r->sh[id];
        if (!s->t.bytes_in_use && !s->t.blocks_in_use && !s->t.allocs && !s->t.bytes_allocated &&
            !s->t.temporary)
            continue;
        uint32_t fid = id ? id + r->id_base : 0;
        put_var(&r->list, fid - prev);
        prev = fid;
        put_delta(&r->list, 0, s->t.bytes_in_use);
        put_delta(&r->list, 0, s->t.blocks_in_use);
        put_delta(&r->list, 0, s->t.allocs);
        put_delta(&r->list, 0, s->t.bytes_allocated);
        put_delta(&r->list, 0, s->t.temporary);
        n++;
    }
    /* a microsecond after the last sample at least: that one keeps the
     * old program's last state */
    uint64_t us = to_us(time_offset);
    if (us <= r->last_us)
        us = r->last_us + 1;
    pl->len = 0;
    put_var(pl, us - r->last_us);
    put_var(pl, RECORD_TOTALS);
    for (int i = 0; i < RECORD_TOTALS; i++)
        put_delta(pl, 0, r->totals[i]);
    put_var(pl, n);
    byte_buf_put(pl, r->list.data, r->list.len);
    put_record(&r->out, 'S', pl);
    r->list.len = 0;
    n = 0;
    prev = 0;
    for (uint32_t id = 0; id < r->nsh; id++) {
        const struct shadow *s = &r->sh[id];
        if (!s->peak_bytes && !s->peak_blocks)
            continue;
        uint32_t fid = id ? id + r->id_base : 0;
        put_var(&r->list, fid - prev);
        prev = fid;
        put_delta(&r->list, 0, s->peak_bytes);
        put_delta(&r->list, 0, s->peak_blocks);
        n++;
    }
    pl->len = 0;
    put_var(pl, 0);
    put_var(pl, 0);
    put_var(pl, 0);
    put_var(pl, n);
    byte_buf_put(pl, r->list.data, r->list.len);
    put_record(&r->out, 'P', pl);
    if (r->written + r->out.len > r->max) {
        r->full = true;
        return;
    }
    emit(r, &r->out);
    r->last_us = us;
    /* the new books' ids come after every id used so far */
    uint64_t base = (uint64_t)r->id_base + r->nsh;
    r->id_base = base > UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)base;
    if (r->nsh)
        memset(r->sh, 0, (size_t)r->nsh * sizeof(*r->sh));
    memset(r->totals, 0, sizeof(r->totals));
    r->peak_bytes = r->peak_blocks = r->peak_us = 0;
    r->time_offset = time_offset;
}

uint64_t recorder_bytes(const struct recorder *r)
{
    return r ? r->written : 0;
}

uint64_t recorder_samples(const struct recorder *r)
{
    return r ? r->samples : 0;
}

int recorder_close(struct recorder *r)
{
    if (!r)
        return 0;
    int rc = r->failed ? -1 : 0;
    if (fclose(r->f) != 0)
        rc = -1;
    interner_free(&r->strings);
    interner_free(&r->frames);
    free(r->sh);
    byte_buf_free(&r->out);
    byte_buf_free(&r->tmp);
    byte_buf_free(&r->list);
    free(r->path);
    free(r);
    return rc;
}
