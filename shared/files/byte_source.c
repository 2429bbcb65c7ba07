#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "shared/files/byte_source.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

/* path, opened for reading only if it is a regular file.  The paths come
 * from the traced program (its maps, /proc/PID/root/..., map_files), which
 * may have put a FIFO there (an open for reading would wait for a writer
 * for ever) or a device whose open does something: the file is looked at
 * through an O_PATH descriptor first, which opens nothing, and the very
 * same file is then opened through that descriptor. */
static int reopen_regular(int pfd, struct stat *st)
{
    if (fstat(pfd, st) < 0 || !S_ISREG(st->st_mode)) {
        close(pfd);
        return -EINVAL;
    }
    char self[64];
    snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
    int fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    int err = errno;
    close(pfd);
    if (fd < 0)
        return -err;
    if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
        close(fd);
        return -EINVAL;
    }
    return fd;
}

static int open_regular(const char *path, struct stat *st)
{
    int pfd = open(path, O_PATH | O_CLOEXEC);
    return pfd < 0 ? -errno : reopen_regular(pfd, st);
}

/* path resolved as the traced program sees it: inside root (its
 * /proc/PID/root), where an absolute symbolic link or ".." never leads
 * out into the tracer's own file system; -ENOSYS before Linux 5.6. */
static int open_regular_in_root(const char *root, const char *path, struct stat *st)
{
    int dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    struct open_how how = {
        .flags = O_PATH | O_CLOEXEC,
        .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
    };
    int pfd = (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));
    int err = errno;
    close(dfd);
    return pfd < 0 ? -err : reopen_regular(pfd, st);
}

static struct byte_source *source_of(int fd, const struct stat *st, const char *name, char *err,
                                     size_t errlen)
{
    if (fd == -EINVAL) {
        snprintf(err, errlen, "%s: not a regular file", name);
        return NULL;
    }
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", name, strerror(-fd));
        return NULL;
    }
    return byte_source_open_fd(fd, (uint64_t)st->st_size, name);
}

struct byte_source *byte_source_open_in_root(const char *root, const char *path, char *err,
                                             size_t errlen)
{
    char *name = NULL;
    if (asprintf(&name, "%s%s", root, path) < 0)
        return NULL;
    struct stat st = {0};
    int fd = open_regular_in_root(root, path, &st);
    if (fd == -ENOSYS) /* before openat2: resolved as a path of the tracer's */
        fd = open_regular(name, &st);
    struct byte_source *src = source_of(fd, &st, name, err, errlen);
    free(name);
    return src;
}

struct byte_source *byte_source_open_file(const char *path, char *err, size_t errlen)
{
    struct stat st = {0};
    int fd = open_regular(path, &st);
    return source_of(fd, &st, path, err, errlen);
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
