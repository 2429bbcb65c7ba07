#include "target/tracer/maps.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/xalloc.h"

static bool parse_hex(const char **p, const char *end, uint64_t *out)
{
    uint64_t v = 0;
    const char *s = *p;
    int digits = 0;
    while (s < end && digits < 17) {
        char c = *s;
        int d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else break;
        v = (v << 4) | (uint64_t)d;
        s++;
        digits++;
    }
    if (digits == 0 || digits > 16)
        return false;
    *p = s;
    *out = v;
    return true;
}

static bool expect(const char **p, const char *end, char c)
{
    if (*p >= end || **p != c)
        return false;
    (*p)++;
    return true;
}

static void skip_spaces(const char **p, const char *end)
{
    while (*p < end && **p == ' ')
        (*p)++;
}

/* One line: "start-end perms offset dev:dev inode   path". */
static bool parse_line(const char *s, const char *end, struct map_entry *e)
{
    uint64_t dev;
    memset(e, 0, sizeof(*e));
    if (!parse_hex(&s, end, &e->start) || !expect(&s, end, '-') || !parse_hex(&s, end, &e->end) ||
        !expect(&s, end, ' ') || end - s < 4)
        return false;
    e->readable = s[0] == 'r';
    e->writable = s[1] == 'w';
    e->executable = s[2] == 'x';
    e->shared = s[3] == 's';
    s += 4;
    if (!expect(&s, end, ' ') || !parse_hex(&s, end, &e->offset) || !expect(&s, end, ' ') ||
        !parse_hex(&s, end, &dev) || !expect(&s, end, ':') || !parse_hex(&s, end, &dev) ||
        !expect(&s, end, ' '))
        return false;
    uint64_t inode = 0;
    while (s < end && *s >= '0' && *s <= '9')
        inode = inode * 10 + (uint64_t)(*s++ - '0');
    e->inode = inode;
    skip_spaces(&s, end);
    if (e->end <= e->start)
        return false; /* (before the path is copied: nothing to free) */
    if (s < end)
        e->path = xstrndup(s, (size_t)(end - s));
    return true;
}

int proc_maps_parse(const char *text, size_t len, struct proc_maps *out)
{
    size_t cap = 64;
    out->entries = xcalloc(cap, sizeof(*out->entries));
    out->count = 0;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        struct map_entry e;
        if (line_end > p && parse_line(p, line_end, &e)) {
            if (out->count == cap) {
                cap *= 2;
                out->entries = xreallocarray(out->entries, cap, sizeof(*out->entries));
            }
            out->entries[out->count++] = e;
        }
        p = nl ? nl + 1 : end;
    }
    return 0;
}

int proc_maps_read(pid_t pid, struct proc_maps *out)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t cap = 65536, len = 0;
    char *buf = xmalloc(cap);
    for (;;) {
        if (len == cap) {
            cap *= 2;
            buf = xrealloc(buf, cap);
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int err = -errno;
            close(fd);
            free(buf);
            return err;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    int rc = proc_maps_parse(buf, len, out);
    free(buf);
    return rc;
}

void proc_maps_free(struct proc_maps *m)
{
    for (size_t i = 0; i < m->count; i++)
        free(m->entries[i].path);
    free(m->entries);
    m->entries = NULL;
    m->count = 0;
}

const struct map_entry *proc_maps_find(const struct proc_maps *m, uint64_t addr)
{
    size_t lo = 0, hi = m->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct map_entry *e = &m->entries[mid];
        if (addr < e->start)
            hi = mid;
        else if (addr >= e->end)
            lo = mid + 1;
        else
            return e;
    }
    return NULL;
}
