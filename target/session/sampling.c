/* The first process's heap totals over time: the in-memory timeline that
 * reports draw (target/heap/timeline.h). */
#include "target/session/session.h"

#include "target/heap/timeline.h"
#include "target/record/record.h"

void session_sample(struct session *s, bool force)
{
    if (!s->tracee || !s->tracee->books)
        return;
    if (!s->timeline)
        s->timeline = timeline_new(s->sample_ms, 0);
    if (s->sampled_epoch != s->tracee->books_epoch) {
        /* an exec restarted the books and their clock: the timeline and
         * the recording go on from where they were */
        s->sample_offset = s->sample_last;
        recorder_rebase(s->recorder, s->sample_offset);
    }
    s->sampled_epoch = s->tracee->books_epoch;
    struct heap_totals t;
    heap_get_totals(s->tracee->books, &t);
    double now = s->sample_offset + heap_seconds(s->tracee->books);
    s->sample_last = now;
    if (force)
        timeline_force(s->timeline, now, t.in_use_bytes, t.in_use_blocks);
    else
        timeline_offer(s->timeline, now, t.in_use_bytes, t.in_use_blocks);
    if (s->recorder) {
        struct report_source src = session_report_source(s);
        recorder_sample(s->recorder, &src, now, force);
    }
}
