/* --record FILE: reading (record.h says the format).  The file is outside
 * input: every length and count is checked against the bytes left, every
 * number against what was defined before, every figure the deltas add up
 * to must stay a count (never below zero), and nothing is allocated beyond
 * a constant times the input's size. */
#include "target/record/record.h"
#include "target/heap/sample_draw.h"

#include "shared/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FRAMES_PER_STACK (1u << 20)

struct cur {
    const uint8_t *p, *end;
    bool bad;
};

static uint64_t get_var(struct cur *c)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (c->p >= c->end) {
            c->bad = true;
            return 0;
        }
        uint8_t b = *c->p++;
        if (shift == 63 && b > 1) {
            c->bad = true;
            return 0;
        }
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    c->bad = true;
    return 0;
}

static uint64_t get_delta(struct cur *c)
{
    uint64_t z = get_var(c);
    return (z >> 1) ^ (0 - (z & 1));
}

/* A count of items that take at least one byte each. */
static size_t get_count(struct cur *c)
{
    uint64_t n = get_var(c);
    if (n > (uint64_t)(c->end - c->p)) {
        c->bad = true;
        return 0;
    }
    return (size_t)n;
}

static void fail(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    /* va_start above: the analyzer's valist check misses it here */
    vsnprintf(why, len, fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized)
    va_end(ap);
}

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return p;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    *cap = c;
    return xreallocarray(p, c, size);
}

static size_t id_home(const struct recording *r, uint32_t id)
{
    return (size_t)(((uint64_t)id * 0x9e3779b97f4a7c15ull) >> 20) & r->index_mask;
}

/* index + 1 of stack id, 0 if undefined (id 0 is index 0: always defined). */
static uint32_t stack_index(const struct recording *r, uint32_t id)
{
    if (id == 0)
        return 1;
    if (!r->index_keys)
        return 0;
    for (size_t h = id_home(r, id);; h = (h + 1) & r->index_mask) {
        if (!r->index_vals[h])
            return 0;
        if (r->index_keys[h] == id)
            return r->index_vals[h];
    }
}

static void index_put(struct recording *r, uint32_t id, uint32_t val)
{
    size_t cap = r->index_mask + 1;
    if (!r->index_keys || (r->nstacks + 1) * 2 > cap) {
        size_t ncap = r->index_keys ? cap * 2 : 256;
        uint32_t *ok = r->index_keys, *ov = r->index_vals;
        r->index_keys = xcalloc(ncap, sizeof(uint32_t));
        r->index_vals = xcalloc(ncap, sizeof(uint32_t));
        r->index_mask = ncap - 1;
        for (size_t i = 0; ok && i < cap; i++)
            if (ov[i]) {
                size_t h = id_home(r, ok[i]);
                while (r->index_vals[h])
                    h = (h + 1) & r->index_mask;
                r->index_keys[h] = ok[i];
                r->index_vals[h] = ov[i];
            }
        free(ok);
        free(ov);
    }
    size_t h = id_home(r, id);
    while (r->index_vals[h])
        h = (h + 1) & r->index_mask;
    r->index_keys[h] = id;
    r->index_vals[h] = val;
}

const char *recording_string(const struct recording *r, uint32_t n)
{
    return n && n <= r->nstrings ? r->strings[n] : NULL;
}

struct caps {
    size_t strings, frames, stacks, stack_frames, samples, deltas, pdeltas;
};

/* The figures the samples read so far add up to, per stack index: each is
 * a count, so a sum at or past 2^63 is a delta that wrapped below zero (a
 * crafted file; the books never hold one), refused before a writer sizes
 * an array or a loop by it. */
struct sums {
    uint64_t totals[RECORD_TOTALS];
    uint64_t (*now)[RECORD_STACK_FIELDS];
    uint64_t (*peak)[2];
    size_t cap;
};

static bool negative(uint64_t v)
{
    return v >> 63 != 0;
}

/* Room for stack index idx in the sums (indices are below r->nstacks). */
static void sums_reach(struct sums *u, size_t idx)
{
    if (idx < u->cap)
        return;
    size_t old = u->cap, c = old ? old : 16;
    while (c <= idx)
        c *= 2;
    u->now = xreallocarray(u->now, c, sizeof(*u->now));
    u->peak = xreallocarray(u->peak, c, sizeof(*u->peak));
    memset(u->now + old, 0, (c - old) * sizeof(*u->now));
    memset(u->peak + old, 0, (c - old) * sizeof(*u->peak));
    u->cap = c;
}

static void sums_free(struct sums *u)
{
    free(u->now);
    free(u->peak);
}

static bool get_string_no(struct cur *c, const struct recording *r, uint32_t *out)
{
    uint64_t n = get_var(c);
    if (n > r->nstrings)
        return false;
    *out = (uint32_t)n;
    return true;
}

static int parse_record(struct recording *r, struct caps *cap, struct sums *u, uint8_t tag,
                        struct cur *c, bool *have_header, char *why, size_t len)
{
    switch (tag) {
    case 'H': {
        uint64_t version = get_var(c), interval = get_var(c), pid = get_var(c), depth = get_var(c);
        if (c->bad || version != 1 || interval == 0 || interval > 3600000 || pid > 0x7fffffff ||
            depth > 65536 || *have_header) {
            fail(why, len, "bad header");
            return -1;
        }
        r->interval_ms = (unsigned)interval;
        r->pid = (int)pid;
        r->depth = (unsigned)depth;
        for (int k = 0; k < 2; k++) {
            size_t n = get_count(c);
            if (c->bad) {
                fail(why, len, "bad header");
                return -1;
            }
            char *str = xstrndup((const char *)c->p, n);
            c->p += n;
            if (k == 0)
                r->program = str;
            else
                r->engine = str;
        }
        *have_header = true;
        return 0;
    }
    case 'T': {
        size_t n = (size_t)(c->end - c->p);
        if (memchr(c->p, 0, n)) {
            fail(why, len, "string %zu holds a NUL byte", r->nstrings + 1);
            return -1;
        }
        r->strings = grow(r->strings, &cap->strings, r->nstrings + 2, sizeof(char *));
        r->strings[++r->nstrings] = xstrndup((const char *)c->p, n);
        c->p = c->end;
        return 0;
    }
    case 'E': {
        if (!*have_header) {
            fail(why, len, "an engine before the header");
            return -1;
        }
        size_t n = (size_t)(c->end - c->p);
        if (memchr(c->p, 0, n)) {
            fail(why, len, "engine name holds a NUL byte");
            return -1;
        }
        free(r->engine);
        r->engine = xstrndup((const char *)c->p, n);
        c->p = c->end;
        return 0;
    }
    case 'R': {
        uint64_t bytes = get_var(c);
        if (c->bad || !*have_header || bytes == 0 || bytes > SAMPLE_BYTES_MAX) {
            fail(why, len, "bad sample rate");
            return -1;
        }
        r->sample_bytes = bytes;
        return 0;
    }
    case 'F': {
        struct rec_frame f = { 0 };
        f.pc = get_var(c);
        bool ok = get_string_no(c, r, &f.module);
        f.offset = get_var(c);
        ok = ok && get_string_no(c, r, &f.function) && get_string_no(c, r, &f.file);
        uint64_t line = get_var(c), flags = get_var(c);
        if (c->bad || !ok || line > UINT32_MAX || flags > 3) {
            fail(why, len, "bad frame %zu", r->nframes + 1);
            return -1;
        }
        f.line = (uint32_t)line;
        f.inlined = flags & 1;
        f.tail_call = (flags & 2) != 0;
        r->frames = grow(r->frames, &cap->frames, r->nframes + 1, sizeof(*r->frames));
        r->frames[r->nframes++] = f;
        return 0;
    }
    case 'K': {
        uint64_t id = get_var(c);
        size_t n = get_count(c);
        if (c->bad || id == 0 || id > UINT32_MAX || n > MAX_FRAMES_PER_STACK ||
            stack_index(r, (uint32_t)id)) {
            fail(why, len, "bad stack definition (id %llu)", (unsigned long long)id);
            return -1;
        }
        r->stack_frames = grow(r->stack_frames, &cap->stack_frames, r->nstack_frames + n,
                               sizeof(uint32_t));
        for (size_t i = 0; i < n; i++) {
            uint64_t fno = get_var(c);
            if (c->bad || fno == 0 || fno > r->nframes) {
                fail(why, len, "stack %llu: bad frame number", (unsigned long long)id);
                return -1;
            }
            r->stack_frames[r->nstack_frames + i] = (uint32_t)(fno - 1);
        }
        r->stacks = grow(r->stacks, &cap->stacks, r->nstacks + 1, sizeof(*r->stacks));
        r->stacks[r->nstacks] = (struct rec_stack){ (uint32_t)id, (uint32_t)n, r->nstack_frames };
        r->nstack_frames += n;
        index_put(r, (uint32_t)id, (uint32_t)r->nstacks + 1);
        r->nstacks++;
        return 0;
    }
    case 'M': {
        /* where the RSS went at the last sample: whole figures, the parts
         * adding up to the RSS (a later version may append fields) */
        if (!r->nsamples || r->samples[r->nsamples - 1].has_rss) {
            fail(why, len, "an RSS record without its sample");
            return -1;
        }
        struct rec_sample *s = &r->samples[r->nsamples - 1];
        uint64_t n = get_var(c), v[RECORD_RSS_FIELDS] = { 0 };
        if (n < RECORD_RSS_FIELDS_MIN || n > 64)
            c->bad = true;
        for (uint64_t i = 0; i < n && !c->bad; i++) {
            uint64_t x = get_var(c);
            if (i < RECORD_RSS_FIELDS)
                v[i] = x;
        }
        uint64_t sum = 0;
        bool over = false;
        for (int p = 0; p < RSS_PARTS; p++) {
            over |= negative(v[1 + p]);
            sum += v[1 + p];    /* below 2^63 both: no wrap, and past 2^63 is refused */
            over |= negative(sum);
        }
        if (c->bad || over || negative(v[0]) || sum != v[0] || v[1 + RSS_PARTS] > UINT32_MAX ||
            v[2 + RSS_PARTS] > RECORD_RSS_PAGEMAP || v[3 + RSS_PARTS] > v[1 + RSS_SHARED]) {
            fail(why, len, "bad RSS record (its parts must add up to the RSS)");
            return -1;
        }
        memcpy(s->rss, v, sizeof(v));
        s->has_rss = true;
        return 0;
    }
    case 'S':
    case 'P': {
        bool peak = tag == 'P';
        struct rec_sample s = { 0 };
        if (peak) {
            if (!r->nsamples || r->samples[r->nsamples - 1].has_peak) {
                fail(why, len, "a peak without its sample");
                return -1;
            }
            s = r->samples[r->nsamples - 1];
            s.has_peak = true;
            s.peak_bytes = get_var(c);
            s.peak_blocks = get_var(c);
            s.peak_us = get_var(c);
            s.pdelta0 = r->npdeltas;
            if (negative(s.peak_bytes) || negative(s.peak_blocks) || negative(s.peak_us))
                c->bad = true;
        } else {
            uint64_t dt = get_var(c);
            uint64_t before = r->nsamples ? r->samples[r->nsamples - 1].us : 0;
            if (dt > UINT64_MAX / 2 - before) {
                c->bad = true;
            }
            s.us = before + dt;
            uint64_t nt = get_var(c);
            if (nt < RECORD_TOTALS || nt > 64)
                c->bad = true;
            for (uint64_t i = 0; i < nt && !c->bad; i++) {
                uint64_t d = get_delta(c);
                if (i < RECORD_TOTALS) {
                    s.d[i] = d;
                    u->totals[i] += d;
                    if (negative(u->totals[i])) {
                        fail(why, len, "sample at %llu us: a total goes below zero",
                             (unsigned long long)s.us);
                        return -1;
                    }
                }
            }
            s.delta0 = r->ndeltas;
        }
        size_t n = get_count(c);
        if (c->bad) {
            fail(why, len, "bad %s record", peak ? "peak" : "sample");
            return -1;
        }
        uint64_t id = 0;
        bool below = false;
        for (size_t i = 0; i < n; i++) {
            uint64_t step = get_var(c);
            id += step;
            uint32_t idx = (c->bad || (i && !step) || id > UINT32_MAX) ? 0 : stack_index(r, (uint32_t)id);
            if (!idx) {
                fail(why, len, "%s record: stack id %llu not defined", peak ? "peak" : "sample",
                     (unsigned long long)id);
                return -1;
            }
            if (peak) {
                r->pdeltas = grow(r->pdeltas, &cap->pdeltas, r->npdeltas + 1, sizeof(*r->pdeltas));
                struct rec_pdelta *d = &r->pdeltas[r->npdeltas++];
                d->stack = idx - 1;
                d->bytes = get_delta(c);
                d->blocks = get_delta(c);
                sums_reach(u, d->stack);
                u->peak[d->stack][0] += d->bytes;
                u->peak[d->stack][1] += d->blocks;
                below |= negative(u->peak[d->stack][0]) || negative(u->peak[d->stack][1]);
            } else {
                r->deltas = grow(r->deltas, &cap->deltas, r->ndeltas + 1, sizeof(*r->deltas));
                struct rec_delta *d = &r->deltas[r->ndeltas++];
                d->stack = idx - 1;
                sums_reach(u, d->stack);
                for (int k = 0; k < RECORD_STACK_FIELDS; k++) {
                    d->d[k] = get_delta(c);
                    u->now[d->stack][k] += d->d[k];
                    below |= negative(u->now[d->stack][k]);
                }
            }
            if (c->bad) {
                fail(why, len, "truncated %s record", peak ? "peak" : "sample");
                return -1;
            }
            if (below) {
                fail(why, len, "%s record: stack id %llu: a figure goes below zero",
                     peak ? "peak" : "sample", (unsigned long long)id);
                return -1;
            }
        }
        if (peak) {
            s.npdelta = n;
            r->samples[r->nsamples - 1] = s;
        } else {
            s.ndelta = n;
            r->samples = grow(r->samples, &cap->samples, r->nsamples + 1, sizeof(*r->samples));
            r->samples[r->nsamples++] = s;
        }
        return 0;
    }
    default:
        c->p = c->end;   /* a later version's record: skipped */
        return 0;
    }
}

int recording_parse(const uint8_t *data, size_t len, struct recording *r, char *why, size_t whylen)
{
    memset(r, 0, sizeof(*r));
    struct caps cap = { 0 };
    struct sums sums = { 0 };
    if (len < RECORD_MAGIC_LEN || memcmp(data, RECORD_MAGIC, RECORD_MAGIC_LEN) != 0) {
        fail(why, whylen, "not a memtrace recording");
        return -1;
    }
    r->strings = grow(NULL, &cap.strings, 1, sizeof(char *));
    r->strings[0] = NULL;
    r->stacks = grow(NULL, &cap.stacks, 1, sizeof(*r->stacks));
    r->stacks[0] = (struct rec_stack){ 0, 0, 0 };
    r->nstacks = 1;
    struct cur c = { data + RECORD_MAGIC_LEN, data + len, false };
    bool have_header = false;
    while (c.p < c.end) {
        size_t at = (size_t)(c.p - data);
        uint8_t tag = *c.p++;
        size_t n = get_count(&c);
        if (c.bad) {
            fail(why, whylen, "truncated record at byte %zu", at);
            goto bad;
        }
        if (tag != 'H' && !have_header) {
            fail(why, whylen, "no header");
            goto bad;
        }
        struct cur rc = { c.p, c.p + n, false };
        c.p += n;
        char sub[200];
        if (parse_record(r, &cap, &sums, tag, &rc, &have_header, sub, sizeof(sub)) < 0) {
            fail(why, whylen, "record at byte %zu: %s", at, sub);
            goto bad;
        }
        if (rc.bad || rc.p != rc.end) {
            fail(why, whylen, "record at byte %zu: its length does not match its contents", at);
            goto bad;
        }
    }
    if (!have_header) {
        fail(why, whylen, "no header");
        goto bad;
    }
    sums_free(&sums);
    return 0;
bad:
    sums_free(&sums);
    recording_free(r);
    return -1;
}

void recording_free(struct recording *r)
{
    for (size_t i = 1; i <= r->nstrings; i++)
        free(r->strings[i]);
    free(r->strings);
    free(r->program);
    free(r->engine);
    free(r->frames);
    free(r->stacks);
    free(r->stack_frames);
    free(r->samples);
    free(r->deltas);
    free(r->pdeltas);
    free(r->index_keys);
    free(r->index_vals);
    memset(r, 0, sizeof(*r));
}
