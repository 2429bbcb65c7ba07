/* --snapshot-rss under a memory cgroup (v2): N% of the limit the process
 * runs under, and a snapshot when the kernel counts a memory event (the
 * cgroup reached memory.high, or the OOM killer was called for): the
 * moments just before memory runs out, when a report still can be
 * written.  The cgroup is read at each check (the process may move into
 * one after it started, and a limit may change). */
#include <stdio.h>

#include "shared/log.h"
#include "target/heap/cgroup_mem.h"
#include "target/session/session.h"
#include "target/tracer/tracee.h"

#define EVENT_SPACING_S 1.0     /* at most one event snapshot a second */

uint64_t session_snapshot_cgroup(struct session *s, double now, bool *fire, char *why, size_t len)
{
    *fire = false;
    struct cgroup_mem cg;
    bool have = cgroup_mem_read(s->tracee->pid, &cg) == 0;
    if (have) {
        if (!s->snapshot_events_known) {
            s->snapshot_events = cg.events;     /* those before the trace are not news */
            s->snapshot_events_known = true;
        } else if (cg.events > s->snapshot_events &&
                   now - s->snapshot_events_time >= EVENT_SPACING_S) {
            /* counted once written: events during the spacing fire after it */
            snprintf(why, len, "memory.events of %s: %llu high or oom events, %llu before",
                     cg.path, (unsigned long long)cg.events, (unsigned long long)s->snapshot_events);
            s->snapshot_events = cg.events;
            s->snapshot_events_time = now;
            *fire = true;
        } else if (cg.events < s->snapshot_events) {
            s->snapshot_events = cg.events;     /* another cgroup now */
        }
    }
    if (!s->snapshot_rss_percent)
        return s->snapshot_rss;
    if (!have || !cg.limit) {
        if (!s->snapshot_nolimit_said)
            mt_warn("--snapshot-rss %u%%: process %d has no cgroup memory.max (yet): no snapshot "
                    "by RSS until it has one", s->snapshot_rss_percent, (int)s->tracee->pid);
        s->snapshot_nolimit_said = true;
        return 0;
    }
    return cg.limit / 100 * s->snapshot_rss_percent + cg.limit % 100 * s->snapshot_rss_percent / 100;
}
