#include "host-fs/lookup.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "host-fs/build_id_index.h"
#include "host-fs/safe_path.h"
#include "host-fs/upstream.h"
#include "shared/build_id.h"

/* An escape or a loop says more than "not found": report it over ENOENT. */
static int worse(int a, int b)
{
    if (a == -ENOENT || a == -EISDIR || a == -ENOTDIR)
        return b;
    return a;
}

int lookup_path(const struct sysroot_set *s, const char *abs_path)
{
    int err = -ENOENT;
    if (abs_path[0] != '/')
        return -EINVAL;
    for (int i = 0; i < s->count; i++) {
        int fd = safe_open_in_root(s->items[i].fd, abs_path);
        if (fd >= 0)
            return fd;
        err = worse(err, fd);
    }
    return err;
}

int lookup_build_id(const struct sysroot_set *s, const uint8_t *id, size_t len)
{
    if (len < 2 || len > 64)
        return -EINVAL;
    char path[64 + 2 * 64 + 16];
    build_id_link_path(path, sizeof(path), id, len, ".debug");
    int fd = lookup_path(s, path);
    if (fd == -ENOENT)
        fd = build_id_index_open(s, id, len); /* the object itself, unstripped */
    return fd;
}

int lookup_build_id_or_upstream(const struct sysroot_set *s, const uint8_t *id, size_t len)
{
    int fd = lookup_build_id(s, id, len);
    if (fd == -ENOENT && upstream_enabled())
        fd = upstream_open(id, len, true);
    return fd;
}

int file_crc32(int fd, uint32_t *crc)
{
    static __thread unsigned char buf[64 * 1024];
    uLong c = crc32(0L, Z_NULL, 0);
    off_t off = 0;
    for (;;) {
        ssize_t n = pread(fd, buf, sizeof(buf), off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            break;
        c = crc32(c, buf, (uInt)n);
        off += n;
    }
    *crc = (uint32_t)c;
    return 0;
}

int lookup_debuglink(const struct sysroot_set *s, const char *obj_path, const char *name,
                     uint32_t crc)
{
    if (obj_path[0] != '/' || name[0] == 0 || strchr(name, '/') || strcmp(name, "..") == 0 ||
        strcmp(name, ".") == 0)
        return -EINVAL;
    char dir[PATH_MAX];
    const char *slash = strrchr(obj_path, '/');
    size_t dlen = (size_t)(slash - obj_path);
    if (dlen >= sizeof(dir))
        return -ENAMETOOLONG;
    memcpy(dir, obj_path, dlen);
    dir[dlen] = 0;
    /* gdb's order: next to the object, in its .debug/, under /usr/lib/debug. */
    const char *formats[] = { "%s/%s", "%s/.debug/%s", "/usr/lib/debug%s/%s" };
    int err = -ENOENT;
    for (size_t f = 0; f < sizeof(formats) / sizeof(formats[0]); f++) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof(path), formats[f], dir, name) >= (int)sizeof(path))
            return -ENAMETOOLONG;
        for (int i = 0; i < s->count; i++) {
            int fd = safe_open_in_root(s->items[i].fd, path);
            if (fd < 0) {
                err = worse(err, fd);
                continue;
            }
            uint32_t got = ~crc; /* only a computed CRC may match */
            if (file_crc32(fd, &got) == 0 && got == crc)
                return fd;
            close(fd);
        }
    }
    return err;
}
