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
    struct heap_totals t;
    heap_get_totals(s->tracee->books, &t);
    double now = heap_seconds(s->tracee->books);
    if (force)
        timeline_force(s->timeline, now, t.in_use_bytes, t.in_use_blocks);
    else
        timeline_offer(s->timeline, now, t.in_use_bytes, t.in_use_blocks);
    if (s->recorder) {
        struct report_source src = session_report_source(s);
        recorder_sample(s->recorder, &src, now, force);
    }
}
