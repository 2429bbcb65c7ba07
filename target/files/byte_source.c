#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "target/files/byte_source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/xalloc.h"

int byte_source_read(struct byte_source *src, uint64_t off, void *buf, size_t len)
{
    if (off > src->size || len > src->size - off)
        return -ERANGE;
    if (len == 0)
        return 0;
    return src->ops->read(src, off, buf, len);
}

void byte_source_close(struct byte_source *src)
{
    if (src)
        src->ops->close(src);
}

struct file_source {
    struct byte_source base;
    int fd;
};

static int file_source_read(struct byte_source *src, uint64_t off, void *buf, size_t len)
{
    struct file_source *fs = (struct file_source *)src;
    char *p = buf;
    while (len > 0) {
        ssize_t n = pread(fs->fd, p, len, (off_t)off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            return -EIO;
        p += n;
        off += (uint64_t)n;
        len -= (size_t)n;
    }
    return 0;
}

static void file_source_close(struct byte_source *src)
{
    struct file_source *fs = (struct file_source *)src;
    close(fs->fd);
    free(fs->base.name);
    free(fs);
}

static const struct byte_source_ops file_source_ops = {
    .read = file_source_read,
    .close = file_source_close,
};

struct byte_source *byte_source_open_fd(int fd, uint64_t size, const char *name)
{
    struct file_source *fs = xcalloc(1, sizeof(*fs));
    fs->base.ops = &file_source_ops;
    fs->base.size = size;
    fs->base.name = xstrdup(name);
    fs->fd = fd;
    return &fs->base;
}

struct byte_source *byte_source_open_file(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        close(fd);
        return NULL;
    }
    struct file_source *fs = xcalloc(1, sizeof(*fs));
    fs->base.ops = &file_source_ops;
    fs->base.size = (uint64_t)st.st_size;
    fs->base.name = xstrdup(path);
    fs->fd = fd;
    return &fs->base;
}

struct memory_source {
    struct byte_source base;
    const unsigned char *data;
};

static int memory_source_read(struct byte_source *src, uint64_t off, void *buf, size_t len)
{
    struct memory_source *ms = (struct memory_source *)src;
    memcpy(buf, ms->data + off, len);
    return 0;
}

static void memory_source_close(struct byte_source *src)
{
    free(src->name);
    free(src);
}

static const struct byte_source_ops memory_source_ops = {
    .read = memory_source_read,
    .close = memory_source_close,
};

struct byte_source *byte_source_open_memory(const void *data, size_t size, const char *name)
{
    struct memory_source *ms = xcalloc(1, sizeof(*ms));
    ms->base.ops = &memory_source_ops;
    ms->base.size = size;
    ms->base.name = xstrdup(name ? name : "<memory>");
    ms->data = data;
    return &ms->base;
}
