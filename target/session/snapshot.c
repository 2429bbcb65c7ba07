/* Snapshots: a full report written while the process is alive, when its
 * RSS first crosses --snapshot-rss MIB and each further 10%, at a new heap
 * peak (--snapshot-peak, at most one a second), or on the console's
 * `snapshot`.  Meant for memory that is about to run out: the report is in
 * its file before the OOM killer gets to the process. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shared/log.h"
#include "target/report/report_file.h"
#include "target/session/session.h"
#include "target/tracer/tracee.h"

#define CHECK_MS 20             /* how often RSS is read while armed */
#define PEAK_SPACING_S 1.0      /* --snapshot-peak: at most one a second */

static double monotonic_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *extension(enum report_format f)
{
    switch (f) {
    case REPORT_TEXT: return "txt";
    case REPORT_HEAPTRACK: return "heaptrack.gz";
    case REPORT_PPROF: return "pb.gz";
    default: return report_format_name(f);
    }
}

/* DIR/memtrace-snapshot-PID-YYYYmmddTHHMMSS.mmmZ.EXT, DIR that of -o (or
 * the current directory). */
static void auto_name(struct session *s, char *out, size_t len)
{
    char dir[1024] = ".";
    const char *slash = s->output_path ? strrchr(s->output_path, '/') : NULL;
    if (slash)
        snprintf(dir, sizeof(dir), "%.*s", (int)(slash - s->output_path), s->output_path);
    if (slash == s->output_path && slash)
        snprintf(dir, sizeof(dir), "/");
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    char stamp[32] = "unknown";
    if (gmtime_r(&ts.tv_sec, &tm))
        strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
    snprintf(out, len, "%s/memtrace-snapshot-%d-%s.%03ldZ.%s", dir, (int)s->tracee->pid, stamp,
             ts.tv_nsec / 1000000, extension(s->report.format));
}

int session_snapshot(struct session *s, const char *path, char *written, size_t len)
{
    char name[1400];
    if (!path) {
        auto_name(s, name, sizeof(name));
        path = name;
    }
    if (written && len)
        snprintf(written, len, "%s", path);
    char why[512];
    FILE *out = report_file_open(path, why, sizeof(why));
    if (!out) {
        mt_error("snapshot: cannot open %s", why);
        return -1;
    }
    struct rss_parts *mem = session_memory_of(s->tracee); /* drains the agent's ring first */
    session_sample(s, true);
    struct report_source src = session_report_source(s);
    src.errors = &s->tracee->errors;
    src.memory = mem;
    int rc = report_write(out, &src, &s->report);
    rc |= fclose(out);
    session_memory_free(mem);
    return rc ? -1 : 0;
}

/* The resident bytes of pid from /proc/PID/statm (its second figure, in
 * pages); 0 when unreadable. */
static uint64_t statm_rss(int pid)
{
    char path[64], text[256];
    snprintf(path, sizeof(path), "/proc/%d/statm", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    text[n] = '\0';
    unsigned long long size, resident;
    if (sscanf(text, "%llu %llu", &size, &resident) != 2)
        return 0;
    return (uint64_t)resident * heap_page_size();
}

static void announce(const char *why, const char *path, double began)
{
    mt_info("snapshot (%s) written to %s in %.2f s", why, path, monotonic_now() - began);
}

int session_snapshot_poll(struct session *s)
{
    if ((!s->snapshot_rss && !s->snapshot_rss_percent && !s->snapshot_peak) || !s->tracee ||
        s->tracee->exited)
        return -1;
    double now = monotonic_now();
    if (now - s->snapshot_checked < CHECK_MS / 1000.0)
        return CHECK_MS;
    s->snapshot_checked = now;
    char path[1400], why[700];   /* a memory event names its cgroup's path */
    if (s->snapshot_rss || s->snapshot_rss_percent) {
        bool fire;
        uint64_t base = session_snapshot_cgroup(s, now, &fire, why, sizeof(why));
        if (fire && session_snapshot(s, NULL, path, sizeof(path)) == 0)
            announce(why, path, now);
        if (base != s->snapshot_base) {     /* a limit now, or another one */
            s->snapshot_base = base;
            s->snapshot_next = base;
        }
        uint64_t rss = base ? statm_rss(s->tracee->pid) : 0;
        if (rss && rss >= s->snapshot_next) {
            snprintf(why, sizeof(why), "RSS %llu MiB", (unsigned long long)(rss >> 20));
            while (s->snapshot_next <= rss)   /* the next 10% above what is reached */
                s->snapshot_next += s->snapshot_next / 10 ? s->snapshot_next / 10 : 1;
            if (session_snapshot(s, NULL, path, sizeof(path)) == 0)
                announce(why, path, now);
        }
    }
    if (s->snapshot_peak && now - s->snapshot_peak_time >= PEAK_SPACING_S) {
        struct heap_peak peak;
        heap_get_peak(s->tracee->books, &peak);
        if (peak.bytes > s->snapshot_peak_bytes) {
            s->snapshot_peak_bytes = peak.bytes;
            s->snapshot_peak_time = now;
            snprintf(why, sizeof(why), "heap peak %llu bytes", (unsigned long long)peak.bytes);
            if (session_snapshot(s, NULL, path, sizeof(path)) == 0)
                announce(why, path, now);
        }
    }
    return CHECK_MS;
}
