/* A process's memory cgroup (v2): the limit it runs under and the
 * kernel's count of memory events, for --snapshot-rss N% and the snapshots
 * taken when memory.events says the cgroup hit its high or max mark.
 *
 * The cgroup is the one /proc/PID/cgroup names ("0::PATH") under the
 * cgroup2 mount; the limit is the smallest memory.max on the way from it
 * up to the mount's root (an ancestor's limit holds too); the events are
 * memory.events' "high" and "oom" summed over the same cgroups (each
 * counts its own subtree: the limit hit may be an ancestor's).  Where
 * the memory controller is v1's (a hybrid host), the limit is the smallest
 * memory.limit_in_bytes on the way up, and there are no events (v1 has no
 * counter of its high mark, and its failcnt counts page cache reclaim). */
#ifndef MT_HEAP_CGROUP_MEM_H
#define MT_HEAP_CGROUP_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cgroup_mem {
    uint64_t limit;             /* bytes; 0: no limit on the way up */
    uint64_t events;            /* high + oom, summed */
    bool v1;                    /* from cgroup v1's memory controller: no events */
    char path[512];             /* the process's cgroup, under the mount */
};

/* Reads pid's memory cgroup now.  0, or -1 when there is none to read
 * (not mounted, the process gone, no memory controller). */
int cgroup_mem_read(int pid, struct cgroup_mem *out);
/* The same from /proc/PID/cgroup's text and the mount points (NULL: not
 * mounted): the part a unit test can give a tree of its own. */
int cgroup_mem_parse(const char *cgroup_text, const char *v2_mount, const char *v1_mount,
                     struct cgroup_mem *out);

#endif
