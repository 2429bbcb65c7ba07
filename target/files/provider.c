/* The sysroot provider (a local copy of the target's tree, or "/" for the
 * target's own files), the locator that asks providers in turn, and the
 * debuglink CRC. */
#include "target/files/provider.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "shared/build_id.h"
#include "shared/xalloc.h"

/* The CRC is computed by reading the file in pieces of this size: a debug
 * file can be hundreds of MiB. */
#define CRC_CHUNK (256u * 1024)

int byte_source_crc32(struct byte_source *src, uint32_t *crc)
{
    uint8_t *buf = xmalloc(CRC_CHUNK);
    uLong c = crc32(0L, Z_NULL, 0);
    int rc = 0;
    for (uint64_t off = 0; off < src->size;) {
        size_t n = src->size - off < CRC_CHUNK ? (size_t)(src->size - off) : CRC_CHUNK;
        rc = byte_source_read(src, off, buf, n);
        if (rc < 0)
            break;
        c = crc32(c, buf, (uInt)n);
        off += n;
    }
    free(buf);
    if (rc == 0)
        *crc = (uint32_t)c;
    return rc;
}

struct sysroot_provider {
    struct file_provider base;
    struct file_provider_ops ops; /* per instance: name names the dir */
    char *dir;                    /* no trailing slash; "" for "/" */
    char *label;
};

static struct sysroot_provider *as_sysroot(struct file_provider *p)
{
    return (struct sysroot_provider *)p;
}

/* dir + abs_path; NULL when the result does not fit a path. */
static char *join(const struct sysroot_provider *sp, const char *abs_path)
{
    char buf[PATH_MAX];
    const char *sep = abs_path[0] == '/' ? "" : "/";
    if ((size_t)snprintf(buf, sizeof(buf), "%s%s%s", sp->dir, sep, abs_path) >= sizeof(buf))
        return NULL;
    return xstrdup(buf);
}

static struct byte_source *open_joined(const struct sysroot_provider *sp, const char *abs_path)
{
    char *path = join(sp, abs_path);
    if (!path)
        return NULL;
    char err[256];
    struct byte_source *src = byte_source_open_file(path, err, sizeof(err));
    free(path);
    return src;
}

static struct byte_source *sysroot_open_path(struct file_provider *p, const char *abs_path)
{
    return open_joined(as_sysroot(p), abs_path);
}

static struct byte_source *sysroot_open_build_id(struct file_provider *p, const uint8_t *id, size_t len)
{
    /* Real build-ids are 8 to 64 bytes; the first one names the directory. */
    if (len < 2 || len > 64)
        return NULL;
    char rel[64 + 2 * 64 + 16];
    build_id_link_path(rel, sizeof(rel), id, len, ".debug");
    return open_joined(as_sysroot(p), rel);
}

static struct byte_source *open_if_crc(const struct sysroot_provider *sp, const char *rel, uint32_t crc)
{
    struct byte_source *src = open_joined(sp, rel);
    if (!src)
        return NULL;
    uint32_t got;
    if (byte_source_crc32(src, &got) == 0 && got == crc)
        return src;
    byte_source_close(src);
    return NULL;
}

static struct byte_source *sysroot_open_debuglink(struct file_provider *p, const char *obj_path,
                                                  const char *name, uint32_t crc)
{
    struct sysroot_provider *sp = as_sysroot(p);
    /* The link holds a file name, never a path: refuse anything that could
     * climb out of the searched directories. */
    if (!name[0] || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return NULL;
    const char *slash = strrchr(obj_path, '/');
    size_t dir_len = slash ? (size_t)(slash - obj_path) : 0;
    char rel[PATH_MAX];
    static const char *const patterns[] = {"%.*s/%s", "%.*s/.debug/%s", "/usr/lib/debug%.*s/%s"};
    for (size_t i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++) {
        if ((size_t)snprintf(rel, sizeof(rel), patterns[i], (int)dir_len, obj_path, name) >= sizeof(rel))
            continue;
        if (slash && strcmp(rel, obj_path) == 0)
            continue; /* the object names itself: that is not its debug file */
        struct byte_source *src = open_if_crc(sp, rel, crc);
        if (src)
            return src;
    }
    return NULL;
}

static void sysroot_destroy(struct file_provider *p)
{
    struct sysroot_provider *sp = as_sysroot(p);
    free(sp->dir);
    free(sp->label);
    free(sp);
}

struct file_provider *file_provider_sysroot(const char *dir)
{
    struct sysroot_provider *sp = xcalloc(1, sizeof(*sp));
    size_t len = strlen(dir);
    while (len > 0 && dir[len - 1] == '/')
        len--;
    sp->dir = xstrndup(dir, len);
    size_t label_len = strlen(dir) + sizeof("sysroot ");
    sp->label = xmalloc(label_len);
    snprintf(sp->label, label_len, "sysroot %s", dir);
    sp->ops.open_path = sysroot_open_path;
    sp->ops.open_build_id = sysroot_open_build_id;
    sp->ops.open_debuglink = sysroot_open_debuglink;
    sp->ops.destroy = sysroot_destroy;
    sp->ops.name = sp->label;
    sp->base.ops = &sp->ops;
    return &sp->base;
}

void file_locator_init(struct file_locator *loc)
{
    memset(loc, 0, sizeof(*loc));
}

int file_locator_add(struct file_locator *loc, struct file_provider *p)
{
    if (loc->count >= FILE_LOCATOR_MAX)
        return -1;
    loc->providers[loc->count++] = p;
    return 0;
}

void file_locator_destroy(struct file_locator *loc)
{
    for (int i = 0; i < loc->count; i++)
        loc->providers[i]->ops->destroy(loc->providers[i]);
    loc->count = 0;
}

struct byte_source *file_locator_open_path(struct file_locator *loc, const char *abs_path)
{
    for (int i = 0; i < loc->count; i++) {
        struct file_provider *p = loc->providers[i];
        struct byte_source *src = p->ops->open_path ? p->ops->open_path(p, abs_path) : NULL;
        if (src)
            return src;
    }
    return NULL;
}

struct byte_source *file_locator_open_build_id(struct file_locator *loc, const uint8_t *id, size_t len)
{
    for (int i = 0; i < loc->count; i++) {
        struct file_provider *p = loc->providers[i];
        struct byte_source *src = p->ops->open_build_id ? p->ops->open_build_id(p, id, len) : NULL;
        if (src)
            return src;
    }
    return NULL;
}

struct byte_source *file_locator_open_debuglink(struct file_locator *loc, const char *obj_path,
                                                const char *name, uint32_t crc)
{
    for (int i = 0; i < loc->count; i++) {
        struct file_provider *p = loc->providers[i];
        struct byte_source *src =
            p->ops->open_debuglink ? p->ops->open_debuglink(p, obj_path, name, crc) : NULL;
        if (src)
            return src;
    }
    return NULL;
}
