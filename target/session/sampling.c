/* The first process's heap totals over time: the in-memory timeline that
 * reports draw (target/heap/timeline.h). */
#include "target/session/session.h"

#include "target/heap/timeline.h"
#include "target/record/record.h"

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
        struct report_source src = session_report_source(s);
        recorder_engine(s->recorder, src.engine);
        recorder_sample(s->recorder, &src, now, force);
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
