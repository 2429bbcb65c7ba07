/* A process's memory cgroup v2 (cgroup_mem.h). */
#include "target/heap/cgroup_mem.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A small file's text, NUL-terminated; -1 when unreadable. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return n;
}

/* Where cgroup2 is mounted (v1: the hierarchy holding the memory
 * controller), from /proc/self/mounts; false when it is not. */
static bool cgroup_mount(bool v1, char *out, size_t len)
{
    FILE *f = fopen("/proc/self/mounts", "re");
    if (!f)
        return false;
    char line[1024], dev[256], dir[512], type[64], opts[512];
    bool found = false;
    while (!found && fgets(line, sizeof(line), f)) {
        if (sscanf(line, "%255s %511s %63s %511s", dev, dir, type, opts) != 4)
            continue;
        if (v1 ? !strcmp(type, "cgroup") && strstr(opts, "memory") : !strcmp(type, "cgroup2")) {
            snprintf(out, len, "%s", dir);
            found = true;
        }
    }
    fclose(f);
    return found;
}

/* The path of /proc/PID/cgroup's line that ends in `tail` ("0::" for v2,
 * ":memory:" for v1's memory hierarchy); false when there is none. */
static bool cgroup_path(const char *text, const char *tail, char *out, size_t len)
{
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        const char *at = strstr(p, tail), *eol = strchr(p, '\n');
        if (!at || (eol && at > eol) || (tail[0] == '0' && at != p))
            continue;
        at += strlen(tail);
        size_t n = eol ? (size_t)(eol - at) : strlen(at);
        if (n >= len || !n || at[0] != '/')
            return false;
        snprintf(out, len, "%.*s", (int)n, at);
        return !strstr(out, "/..");
    }
    return false;
}

/* The figure after "key " in memory.events text; 0 when absent. */
static uint64_t event_count(const char *text, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (!strncmp(p, key, n) && p[n] == ' ')
            return strtoull(p + n + 1, NULL, 10);
    return 0;
}

/* The smallest limit in `file` from dir up to the mount's root, and with
 * events, memory.events' high and oom summed on the way.  False when no
 * cgroup on the way has the file. */
static bool walk_up(const char *mnt, const char *cg, const char *file, bool events,
                    struct cgroup_mem *out)
{
    char dir[1100], path[1200], text[4096];
    snprintf(dir, sizeof(dir), "%s%s", mnt, strcmp(cg, "/") ? cg : "");
    size_t root = strlen(mnt);
    bool any = false;
    for (;;) {
        snprintf(path, sizeof(path), "%s/%s", dir, file);
        if (read_small(path, text, sizeof(text)) > 0) {
            any = true;
            /* v2 says "max"; v1's "no limit" is a figure near 2^63 */
            uint64_t v = strncmp(text, "max", 3) ? strtoull(text, NULL, 10) : 0;
            if (v && v < (1ull << 62) && (!out->limit || v < out->limit))
                out->limit = v;
        }
        snprintf(path, sizeof(path), "%s/memory.events", dir);
        if (events && read_small(path, text, sizeof(text)) > 0)
            out->events += event_count(text, "high") + event_count(text, "oom");
        /* up to the mount's root (v2's has neither file) */
        char *slash = strrchr(dir, '/');
        if (!slash || (size_t)(slash - dir) < root)
            break;
        *slash = '\0';
    }
    return any;
}

int cgroup_mem_parse(const char *cgroup_text, const char *v2_mount, const char *v1_mount,
                     struct cgroup_mem *out)
{
    memset(out, 0, sizeof(*out));
    if (v2_mount && cgroup_path(cgroup_text, "0::", out->path, sizeof(out->path)) &&
        walk_up(v2_mount, out->path, "memory.max", true, out))
        return 0;
    /* cgroup v1's memory controller (a hybrid host): its limit, no events */
    memset(out, 0, sizeof(*out));
    out->v1 = true;
    if (v1_mount && cgroup_path(cgroup_text, ":memory:", out->path, sizeof(out->path)) &&
        walk_up(v1_mount, out->path, "memory.limit_in_bytes", false, out))
        return 0;
    return -1;
}

int cgroup_mem_read(int pid, struct cgroup_mem *out)
{
    char path[64], text[4096];
    snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
    if (read_small(path, text, sizeof(text)) < 0) {
        memset(out, 0, sizeof(*out));
        return -1;
    }
    /* the mounts, read once: this runs every few ms, and they stay put */
    static bool looked, has2, has1;
    static char v2[512], v1[512];
    if (!looked) {
        has2 = cgroup_mount(false, v2, sizeof(v2));
        has1 = cgroup_mount(true, v1, sizeof(v1));
        looked = true;
    }
    return cgroup_mem_parse(text, has2 ? v2 : NULL, has1 ? v1 : NULL, out);
}
