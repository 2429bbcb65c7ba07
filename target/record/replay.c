/* memtrace --replay FILE: any report at a recorded time (--at), or the
 * difference between two (--diff), from the file alone. */
#include "target/record/record.h"

#include "shared/log.h"
#include "shared/text_escape.h"
#include "shared/xalloc.h"
#include "target/heap/timeline.h"
#include "target/report/report_file.h"
#include "target/report/report_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The books' figures at one time, per stack index. */
struct state {
    uint64_t totals[RECORD_TOTALS];
    uint64_t (*now)[RECORD_STACK_FIELDS];
    uint64_t (*peak)[2];
    uint64_t peak_bytes, peak_blocks, peak_us;
    uint64_t us;            /* of the last sample applied */
    size_t applied;         /* samples applied */
    bool has_rss;           /* an 'M' at or before us: where the RSS went then */
    uint64_t rss[RECORD_RSS_FIELDS];
    uint64_t rss_us;
    uint64_t rss_live[2];   /* the books' bytes and blocks in use then */
};

static void state_init(struct state *s, const struct recording *r)
{
    memset(s, 0, sizeof(*s));
    s->now = xcalloc(r->nstacks, sizeof(*s->now));
    s->peak = xcalloc(r->nstacks, sizeof(*s->peak));
}

static void state_free(struct state *s)
{
    free(s->now);
    free(s->peak);
}

/* Every sample at or before us. */
static void state_at(struct state *s, const struct recording *r, uint64_t us)
{
    for (size_t i = 0; i < r->nsamples && r->samples[i].us <= us; i++) {
        const struct rec_sample *smp = &r->samples[i];
        for (int k = 0; k < RECORD_TOTALS; k++)
            s->totals[k] += smp->d[k];
        for (size_t j = 0; j < smp->ndelta; j++) {
            const struct rec_delta *d = &r->deltas[smp->delta0 + j];
            for (int k = 0; k < RECORD_STACK_FIELDS; k++)
                s->now[d->stack][k] += d->d[k];
        }
        if (smp->has_peak) {
            s->peak_bytes = smp->peak_bytes;
            s->peak_blocks = smp->peak_blocks;
            s->peak_us = smp->peak_us;
            for (size_t j = 0; j < smp->npdelta; j++) {
                const struct rec_pdelta *d = &r->pdeltas[smp->pdelta0 + j];
                s->peak[d->stack][0] += d->bytes;
                s->peak[d->stack][1] += d->blocks;
            }
        }
        if (smp->has_rss) {
            memcpy(s->rss, smp->rss, sizeof(s->rss));
            s->rss_live[0] = s->totals[0];
            s->rss_live[1] = s->totals[1];
            s->has_rss = true;
            s->rss_us = smp->us;
        }
        s->us = smp->us;
        s->applied = i + 1;
    }
}

/* The MEMORY section of a replay: the last RSS recorded at or before the
 * state's time (the parts alone: modules are not recorded). */
static void state_memory(const struct state *s, struct rss_parts *m)
{
    memset(m, 0, sizeof(*m));
    m->rss = s->rss[0];
    for (int p = 0; p < RSS_PARTS; p++)
        m->part[p] = s->rss[1 + p];
    m->mappings = (unsigned)s->rss[1 + RSS_PARTS];
    m->pagemap = (s->rss[2 + RSS_PARTS] & RECORD_RSS_PAGEMAP) != 0;
    m->memtrace = s->rss[3 + RSS_PARTS];
    m->live_bytes = s->rss_live[0];
    m->live_blocks = s->rss_live[1];
    m->recorded = true;
    m->seconds = (double)s->rss_us / 1e6;
}

/* Frames for reports: a stack of the replay's table holds synthetic pcs,
 * (stack index + 1) << 24 | position. */
struct replay {
    const struct recording *r;
    uint32_t *table_id;     /* stack index -> id in the replay's stack table */
};

static void replay_resolve(void *ctx, uint64_t pc, unsigned frame_index, struct report_frame *out)
{
    (void)frame_index;
    const struct replay *rp = ctx;
    const struct recording *r = rp->r;
    uint64_t idx = (pc >> 24) - 1, pos = pc & 0xffffff;
    if (idx >= r->nstacks || pos >= r->stacks[idx].nframes)
        return;
    const struct rec_frame *f = &r->frames[r->stack_frames[r->stacks[idx].first + pos]];
    out->pc = f->pc & ~(1ull << 63);
    out->module = recording_string(r, f->module);
    out->offset = f->offset;
    out->function = recording_string(r, f->function);
    out->file = recording_string(r, f->file);
    out->line = f->line;
    out->inlined = f->inlined;
    out->tail_call = f->tail_call;
    out->more = false;
}

static const struct recording *sort_rec;
static int cmp_by_id(const void *a, const void *b)
{
    uint32_t x = sort_rec->stacks[*(const uint32_t *)a].id, y = sort_rec->stacks[*(const uint32_t *)b].id;
    return x < y ? -1 : x > y;
}

/* The replay's stack table: the recorded stacks interned in id order
 * (reports break ties by id, so the order is the live one). */
static struct stack_table *build_stacks(const struct recording *r, struct replay *rp)
{
    struct stack_table *t = stack_table_new();
    rp->r = r;
    rp->table_id = xcalloc(r->nstacks, sizeof(uint32_t));
    uint32_t *order = xcalloc(r->nstacks, sizeof(uint32_t));
    for (size_t i = 0; i < r->nstacks; i++)
        order[i] = (uint32_t)i;
    sort_rec = r;
    qsort(order, r->nstacks, sizeof(*order), cmp_by_id);
    uint64_t *pcs = NULL;
    size_t cap = 0;
    for (size_t k = 0; k < r->nstacks; k++) {
        uint32_t i = order[k];
        if (r->stacks[i].id == 0)
            continue;   /* "no stack" stays 0 */
        uint32_t n = r->stacks[i].nframes;
        if (n > cap) {
            cap = n;
            pcs = xreallocarray(pcs, cap, sizeof(*pcs));
        }
        for (uint32_t j = 0; j < n; j++)
            pcs[j] = ((uint64_t)i + 1) << 24 | j;
        rp->table_id[i] = stack_table_intern(t, pcs, n);
    }
    free(pcs);
    free(order);
    return t;
}

/* Counts of stacks that share a table id are summed: a crafted file's may
 * pass 2^64, never wrap (each is below 2^63, recording_parse saw to it). */
static uint64_t add_saturated(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

static struct heap_books *build_books(const struct recording *r, const struct replay *rp,
                                      const struct state *s)
{
    struct heap_books *b = heap_books_new();
    const uint64_t *v = s->totals;
    struct heap_totals t = {
        .in_use_bytes = v[0], .in_use_blocks = v[1], .allocs = v[2], .frees = v[3],
        .bytes_allocated = v[4], .mapped_bytes = v[5], .mapped_regions = v[6],
        .maps_recorded = v[7], .replaced_blocks = v[8], .temporary = v[9],
    };
    struct heap_peak p = { s->peak_bytes, s->peak_blocks, (double)s->peak_us / 1e6 };
    heap_load_totals(b, &t, &p, (double)s->us / 1e6);
    heap_set_sample(b, r->sample_bytes, 0); /* the reports say sampled, and at what rate */
    for (size_t i = 0; i < r->nstacks; i++) {
        const uint64_t *f = s->now[i];
        if (!f[0] && !f[1] && !f[2] && !f[3] && !f[4] && !s->peak[i][0] && !s->peak[i][1])
            continue;
        uint32_t id = rp->table_id[i];
        /* two stacks that print alike (no frames) share a table id */
        struct stack_totals have, havep;
        heap_get_stack_totals(b, id, &have);
        heap_get_stack_peak(b, id, &havep);
        struct stack_totals st = {
            add_saturated(have.bytes_in_use, f[0]), add_saturated(have.blocks_in_use, f[1]),
            add_saturated(have.allocs, f[2]), add_saturated(have.bytes_allocated, f[3]),
            add_saturated(have.temporary, f[4]),
        };
        heap_load_stack(b, id, &st, add_saturated(havep.bytes_in_use, s->peak[i][0]),
                        add_saturated(havep.blocks_in_use, s->peak[i][1]));
    }
    return b;
}

static struct timeline *build_timeline(const struct recording *r, size_t upto)
{
    struct timeline *tl = timeline_new(r->interval_ms, 0);
    uint64_t bytes = 0, blocks = 0;
    for (size_t i = 0; i < upto; i++) {
        bytes += r->samples[i].d[0];
        blocks += r->samples[i].d[1];
        timeline_force(tl, (double)r->samples[i].us / 1e6, bytes, blocks);
    }
    return tl;
}

/* The RSS recorded in the first `upto` samples, for the page's chart. */
static struct report_rss_point *build_rss_points(const struct recording *r, size_t upto, size_t *n)
{
    struct report_rss_point *v = NULL;
    size_t count = 0;
    for (size_t i = 0; i < upto; i++)
        count += r->samples[i].has_rss;
    *n = count;
    if (!count)
        return NULL;
    v = xcalloc(count, sizeof(*v));
    count = 0;
    for (size_t i = 0; i < upto; i++) {
        const struct rec_sample *smp = &r->samples[i];
        if (!smp->has_rss)
            continue;
        struct report_rss_point *p = &v[count++];
        p->seconds = (double)smp->us / 1e6;
        p->rss = smp->rss[0];
        memcpy(p->part, smp->rss + 1, sizeof(p->part));
    }
    return v;
}

static uint8_t *slurp(const char *path, size_t *len, char *why, size_t whylen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(why, whylen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = xmalloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            buf = xrealloc(buf, cap);
        }
    }
    bool err = ferror(f);
    fclose(f);
    if (err) {
        snprintf(why, whylen, "%s: read error", path);
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

static uint64_t us_of(double seconds)
{
    return seconds <= 0 ? 0 : (uint64_t)(seconds * 1e6 + 0.5);
}

/* ---- --diff: signed figures ---- */

struct dstack {
    uint32_t idx;
    int64_t d[RECORD_STACK_FIELDS];
};

static int64_t mag(int64_t v)
{
    return v < 0 ? -v : v;
}

static int cmp_dstack(const void *pa, const void *pb)
{
    const struct dstack *a = pa, *b = pb;
    if (mag(a->d[0]) != mag(b->d[0]))
        return mag(a->d[0]) > mag(b->d[0]) ? -1 : 1;
    if (a->d[0] != b->d[0])
        return a->d[0] > b->d[0] ? -1 : 1;
    if (mag(a->d[2]) != mag(b->d[2]))
        return mag(a->d[2]) > mag(b->d[2]) ? -1 : 1;
    return sort_rec->stacks[a->idx].id < sort_rec->stacks[b->idx].id ? -1 : 1;
}

static void write_diff(FILE *out, const struct recording *r, const struct replay *rp,
                       const struct report_source *src, const struct state *a,
                       const struct state *b, double from, double to, const struct replay_options *o)
{
    size_t n = 0;
    struct dstack *ds = xcalloc(r->nstacks ? r->nstacks : 1, sizeof(*ds));
    for (size_t i = 0; i < r->nstacks; i++) {
        struct dstack d = { (uint32_t)i, { 0 } };
        bool any = false;
        for (int k = 0; k < RECORD_STACK_FIELDS; k++) {
            d.d[k] = (int64_t)(b->now[i][k] - a->now[i][k]);
            any |= d.d[k] != 0;
        }
        if (any)
            ds[n++] = d;
    }
    sort_rec = r;
    qsort(ds, n, sizeof(*ds), cmp_dstack);
    if (o->report.top && n > o->report.top)
        n = o->report.top;
    int64_t dt[RECORD_TOTALS];
    for (int k = 0; k < RECORD_TOTALS; k++)
        dt[k] = (int64_t)(b->totals[k] - a->totals[k]);
    struct report_frames it;
    struct report_frame f;
    switch (o->report.format) {
    case REPORT_JSON:
        fprintf(out, "{\"memtrace\": 1, \"pid\": %d, \"program\": ", r->pid);
        report_json_string(out, r->program);
        fprintf(out, ",\n \"diff\": {\"from\": %.6f, \"to\": %.6f},\n", from, to);
        fprintf(out, " \"heap\": {\"in_use_bytes\": %" PRId64 ", \"in_use_blocks\": %" PRId64
                     ", \"allocs\": %" PRId64 ", \"frees\": %" PRId64
                     ", \"bytes_allocated\": %" PRId64 ", \"temporary\": %" PRId64 "},\n",
                dt[0], dt[1], dt[2], dt[3], dt[4], dt[9]);
        if (a->has_rss && b->has_rss) {
            fprintf(out, " \"memory\": {\"rss\": %" PRId64 ", \"parts\": {",
                    (int64_t)(b->rss[0] - a->rss[0]));
            for (int p = 0; p < RSS_PARTS; p++)
                fprintf(out, "%s\"%s\": {\"bytes\": %" PRId64 "}", p ? ", " : "", rss_part_key(p),
                        (int64_t)(b->rss[1 + p] - a->rss[1 + p]));
            fputs("}},\n", out);
        }
        fputs(" \"stacks\": [", out);
        for (size_t i = 0; i < n; i++) {
            fprintf(out, "%s\n  {\"bytes_in_use\": %" PRId64 ", \"blocks_in_use\": %" PRId64
                         ", \"allocs\": %" PRId64 ", \"bytes_allocated\": %" PRId64
                         ", \"temporary\": %" PRId64 ", \"frames\": [",
                    i ? "," : "", ds[i].d[0], ds[i].d[1], ds[i].d[2], ds[i].d[3], ds[i].d[4]);
            report_frames_begin(&it, src, rp->table_id[ds[i].idx]);
            for (unsigned j = 0; report_frames_next(&it, &f); j++) {
                fputs(j ? ",\n    " : "\n    ", out);
                report_json_frame(out, &f);
            }
            fputs("]}", out);
        }
        fputs("\n ]\n}\n", out);
        break;
    case REPORT_FOLDED:
        /* frames root first, then the change of bytes in use (signed) */
        for (size_t i = 0; i < n; i++) {
            char *names[1024];
            unsigned k = 0;
            report_frames_begin(&it, src, rp->table_id[ds[i].idx]);
            while (k < 1024 && report_frames_next(&it, &f)) {
                char pcname[24];
                snprintf(pcname, sizeof(pcname), "0x%" PRIx64, f.pc);
                names[k++] = xstrdup(f.function ? f.function : pcname);
            }
            for (unsigned j = k; j-- > 0;) {
                char *e = text_escape_dup(names[j]);
                for (const char *p = e; *p; p++)
                    fputc(*p == ';' || *p == ' ' ? '_' : *p, out);
                free(e);
                fputc(j ? ';' : ' ', out);
                free(names[j]);
            }
            if (!k)
                fputs("[no stack] ", out);
            fprintf(out, "%" PRId64 "\n", ds[i].d[0]);
        }
        break;
    default:
        fprintf(out, "DIFF from %.3f s to %.3f s (the second minus the first)\n", from, to);
        fprintf(out, "    in use: %+" PRId64 " bytes in %+" PRId64 " blocks\n", dt[0], dt[1]);
        fprintf(out, "    allocs: %+" PRId64 ", frees: %+" PRId64 ", bytes allocated: %+" PRId64
                     "\n", dt[2], dt[3], dt[4]);
        if (a->has_rss && b->has_rss) {
            fprintf(out, "    RSS: %+" PRId64 " bytes", (int64_t)(b->rss[0] - a->rss[0]));
            for (int p = 0; p < RSS_PARTS; p++)
                fprintf(out, "%s%s %+" PRId64, p ? ", " : " (", rss_part_name(p),
                        (int64_t)(b->rss[1 + p] - a->rss[1 + p]));
            fputs(")\n", out);
        } else if (b->has_rss) {
            fputs("    RSS: not recorded yet at the first time\n", out);
        }
        fputc('\n', out);
        for (size_t i = 0; i < n; i++) {
            fprintf(out, "%+" PRId64 " bytes in %+" PRId64 " blocks (%+" PRId64 " allocs, %+" PRId64
                         " bytes allocated)\n",
                    ds[i].d[0], ds[i].d[1], ds[i].d[2], ds[i].d[3]);
            report_frames_begin(&it, src, rp->table_id[ds[i].idx]);
            /* Names from the recording (a traced program's): escaped. */
            for (unsigned j = 0; report_frames_next(&it, &f); j++) {
                fprintf(out, "    #%u 0x%" PRIx64 " ", j, f.pc);
                text_escape_put(out, f.function ? f.function : "??");
                if (f.file) {
                    fputs(" (", out);
                    text_escape_put(out, f.file);
                    fprintf(out, ":%u)", f.line);
                } else if (f.module) {
                    fputs(" (", out);
                    text_escape_put(out, f.module);
                    fputc(')', out);
                }
                fputc('\n', out);
            }
            fputc('\n', out);
        }
        break;
    }
    free(ds);
}

static bool time_ok(double t, const char *what)
{
    if (!(t >= 0) || t > 1e9) {
        mt_error("%s: a time in seconds since the start, not %g", what, t);
        return false;
    }
    return true;
}

int replay_report(FILE *out, const struct recording *rec, const struct replay_options *o)
{
    const struct recording *rp_rec = rec;
    uint64_t end = rp_rec->nsamples ? rp_rec->samples[rp_rec->nsamples - 1].us : 0;
    struct replay rp;
    struct stack_table *stacks = build_stacks(rp_rec, &rp);
    struct report_source src = {
        .stacks = stacks,
        .resolve = replay_resolve,
        .resolve_ctx = &rp,
        .pid = rp_rec->pid,
        .program = rp_rec->program,
        .max_frames = o->depth ? o->depth : rp_rec->depth,
        .engine = rp_rec->engine && *rp_rec->engine ? rp_rec->engine : NULL,
    };
    int rc = 0;
    struct state a, b;
    state_init(&a, rp_rec);
    state_init(&b, rp_rec);
    if (o->diff) {
        state_at(&a, rp_rec, us_of(o->from));
        state_at(&b, rp_rec, us_of(o->to));
        struct heap_books *books = build_books(rp_rec, &rp, &b);
        src.books = books;
        write_diff(out, rp_rec, &rp, &src, &a, &b, o->from, o->to, o);
        heap_books_free(books);
    } else {
        state_at(&b, rp_rec, o->at_given ? us_of(o->at) : end);
        struct heap_books *books = build_books(rp_rec, &rp, &b);
        struct timeline *tl = build_timeline(rp_rec, b.applied);
        struct rss_parts mem;
        src.books = books;
        src.timeline = tl;
        if (b.has_rss) {
            state_memory(&b, &mem);
            src.memory = &mem;
        }
        struct report_rss_point *pts = build_rss_points(rp_rec, b.applied, &src.nrss_points);
        src.rss_points = pts;
        /* a writer that refuses the books (and said why) leaves out intact */
        if (report_write(out, &src, &o->report) < 0)
            rc = ferror(out) ? -1 : -2;
        timeline_free(tl);
        heap_books_free(books);
        free(pts);
    }
    state_free(&a);
    state_free(&b);
    stack_table_free(stacks);
    free(rp.table_id);
    return ferror(out) ? -1 : rc;
}

int replay_main(const struct replay_options *o)
{
    char why[512];
    size_t len = 0;
    uint8_t *data = slurp(o->path, &len, why, sizeof(why));
    if (!data) {
        mt_error("--replay: %s", why);
        return 1;
    }
    struct recording r;
    int prc = recording_parse(data, len, &r, why, sizeof(why));
    free(data);
    if (prc < 0) {
        mt_error("--replay: %s: %s", o->path, why);
        return 1;
    }
    if ((o->at_given && !time_ok(o->at, "--at")) ||
        (o->diff && (!time_ok(o->from, "--diff") || !time_ok(o->to, "--diff")))) {
        recording_free(&r);
        return 1;
    }
    uint64_t end = r.nsamples ? r.samples[r.nsamples - 1].us : 0;
    FILE *out = stdout;
    if (o->output) {
        out = report_file_open(o->output, why, sizeof(why));
        if (!out) {
            mt_error("report: cannot open %s", why);
            recording_free(&r);
            return 1;
        }
    }
    prc = replay_report(out, &r, o);
    int rc = prc < 0 ? 1 : 0;
    if ((o->at_given && us_of(o->at) > end) || (o->diff && us_of(o->to > o->from ? o->to : o->from) > end))
        mt_warn("the recording ends at %.3f s", (double)end / 1e6);
    if (out != stdout) {
        if (fclose(out) != 0)
            rc = 1;
    } else if (fflush(out) != 0) {
        rc = 1;
    }
    if (rc && prc != -2)
        mt_error("--replay: writing the report failed");
    recording_free(&r);
    return rc;
}
