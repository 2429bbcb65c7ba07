/* The first process's heap totals over time: the in-memory timeline that
 * reports draw (target/heap/timeline.h). */
#include "target/session/session.h"

#include "target/heap/timeline.h"
#include "target/record/record.h"

#include <string.h>
#include <time.h>

#include "shared/xalloc.h"

/* Reading the RSS walks smaps and pagemap: for a big process that takes
 * long, so a recording reads it at most 1/RSS_SHARE of the time. */
#define RSS_SHARE 10

static double monotonic_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Where the RSS went now, for the recording; NULL when not due. */
static struct rss_parts *recorded_memory(struct session *s, double now, bool force)
{
    if (!recorder_due(s->recorder, now, force))
        return NULL;
    double began = monotonic_now();
    if (began < s->rss_read_next)
        return NULL;
    struct rss_parts *m = session_memory_of(s->tracee);
    double done = monotonic_now();
    s->rss_read_next = done + (RSS_SHARE - 1) * (done - began);
    return m;
}

/* The timeline's clock now; follows the books across an exec. */
static double sample_clock(struct session *s)
{
    if (!s->timeline)
        s->timeline = timeline_new(s->sample_ms, 0);
    if (s->sampled_epoch != s->tracee->books_epoch) {
        /* an exec restarted the books and their clock: the timeline and
         * the recording go on from where they were */
        s->sample_offset = s->sample_last;
        recorder_rebase(s->recorder, s->sample_offset);
        s->sampled_epoch = s->tracee->books_epoch;
    }
    s->sample_last = s->sample_offset + heap_seconds(s->tracee->books);
    return s->sample_last;
}

/* The page's RSS line of a live report: what the recording holds, in
 * memory too, at most RSS_POINTS_MAX points (when full, every other one
 * goes, as the timeline's samples do). */
#define RSS_POINTS_MAX 4096

static void keep_rss_point(struct session *s, double now, const struct rss_parts *m)
{
    if (s->nrss_points) {
        const struct report_rss_point *last = &s->rss_points[s->nrss_points - 1];
        if (last->rss == m->rss && !memcmp(last->part, m->part, sizeof(last->part)))
            return;     /* the recording wrote no 'M' either */
    }
    if (!s->rss_points)
        s->rss_points = xcalloc(RSS_POINTS_MAX, sizeof(*s->rss_points));
    if (s->nrss_points == RSS_POINTS_MAX) {
        size_t n = 0;
        for (size_t i = 0; i < s->nrss_points; i += 2)
            s->rss_points[n++] = s->rss_points[i];
        s->nrss_points = n;
    }
    struct report_rss_point *p = &s->rss_points[s->nrss_points++];
    p->seconds = now;
    p->rss = m->rss;
    memcpy(p->part, m->part, sizeof(p->part));
}

void session_sample(struct session *s, bool force)
{
    if (!s->tracee || !s->tracee->books)
        return;
    double now = sample_clock(s);
    struct heap_totals t;
    heap_get_totals(s->tracee->books, &t);
    if (force)
        timeline_force(s->timeline, now, t.in_use_bytes, t.in_use_blocks);
    else
        timeline_offer(s->timeline, now, t.in_use_bytes, t.in_use_blocks);
    if (s->recorder) {
        /* read before the source: it brings the books up to date */
        struct rss_parts *mem = recorded_memory(s, now, force);
        struct report_source src = session_report_source(s);
        src.memory = mem;
        recorder_engine(s->recorder, src.engine);
        recorder_sample(s->recorder, &src, now, force);
        if (mem)
            keep_rss_point(s, now, mem);
        session_memory_free(mem);
    }
}

const struct timeline *session_timeline_now(struct session *s)
{
    if (!s->tracee || !s->tracee->books)
        return s->timeline;
    if (s->recorder && s->sampled_epoch != s->tracee->books_epoch)
        return s->timeline;     /* the loop rebases the recording first */
    double now = sample_clock(s);
    struct heap_totals t;
    heap_get_totals(s->tracee->books, &t);
    timeline_force(s->timeline, now, t.in_use_bytes, t.in_use_blocks);
    return s->timeline;
}
