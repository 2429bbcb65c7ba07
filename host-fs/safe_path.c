#include "host-fs/safe_path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEPTH 256
#define MAX_LINKS 40

struct walk {
    int dirs[MAX_DEPTH]; /* dirs[0] is the root (not ours to close) */
    int depth;
    char rest[PATH_MAX * 2]; /* what is still to be walked */
    size_t pos;
};

static void pop_to_root(struct walk *w)
{
    while (w->depth > 0)
        close(w->dirs[w->depth--]);
}

/* rest := link + "/" + the unwalked part of rest. */
static int splice_link(struct walk *w, const char *link, size_t link_len)
{
    const char *tail = w->rest + w->pos;
    size_t tail_len = strlen(tail);
    /* No slash is added after the link's text when nothing follows it: a
     * trailing slash there would ask for a directory. */
    size_t sep = tail_len > 0;
    if (link_len + sep + tail_len + 1 > sizeof(w->rest))
        return -ENAMETOOLONG;
    memmove(w->rest + link_len + sep, tail, tail_len + 1);
    memcpy(w->rest, link, link_len);
    if (sep)
        w->rest[link_len] = '/';
    w->pos = 0;
    return 0;
}

/* Next component into name; false at the end of the path.  *slash: a slash
 * follows it (so it must be a directory, as the kernel's lookup says). */
static int next_component(struct walk *w, char name[NAME_MAX + 1], bool *last, bool *slash)
{
    while (w->rest[w->pos] == '/')
        w->pos++;
    if (w->rest[w->pos] == 0)
        return 0;
    size_t start = w->pos;
    while (w->rest[w->pos] && w->rest[w->pos] != '/')
        w->pos++;
    size_t n = w->pos - start;
    if (n > NAME_MAX)
        return -ENAMETOOLONG;
    memcpy(name, w->rest + start, n);
    name[n] = 0;
    *slash = w->rest[w->pos] == '/';
    size_t q = w->pos;
    while (w->rest[q] == '/')
        q++;
    *last = w->rest[q] == 0;
    return 1;
}

static int walk(struct walk *w)
{
    char name[NAME_MAX + 1];
    char link[PATH_MAX];
    int links = 0;
    for (;;) {
        bool last = false, slash = false;
        int r = next_component(w, name, &last, &slash);
        if (r < 0)
            return r;
        if (r == 0)
            return -EISDIR; /* the path named a directory */
        if (strcmp(name, ".") == 0) {
            if (last)
                return -EISDIR;
            continue;
        }
        if (strcmp(name, "..") == 0) {
            if (w->depth == 0)
                return -EACCES; /* would leave the sysroot */
            close(w->dirs[w->depth--]);
            if (last)
                return -EISDIR;
            continue;
        }
        int fd = openat(w->dirs[w->depth], name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            return -errno;
        struct stat st;
        if (fstat(fd, &st) < 0) {
            int e = errno;
            close(fd);
            return -e;
        }
        if (S_ISLNK(st.st_mode)) {
            ssize_t n = readlinkat(fd, "", link, sizeof(link));
            close(fd);
            if (n < 0)
                return -errno;
            if ((size_t)n >= sizeof(link))
                return -ENAMETOOLONG;
            if (++links > MAX_LINKS)
                return -ELOOP;
            if (n > 0 && link[0] == '/')
                pop_to_root(w); /* absolute links mean the sysroot's root */
            r = splice_link(w, link, (size_t)n);
            if (r < 0)
                return r;
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            if (last) {
                close(fd);
                return -EISDIR;
            }
            if (w->depth + 1 >= MAX_DEPTH) {
                close(fd);
                return -ENAMETOOLONG;
            }
            w->dirs[++w->depth] = fd;
            continue;
        }
        close(fd);
        if (!S_ISREG(st.st_mode))
            return -EACCES; /* devices, fifos, sockets: never */
        if (!last || slash)
            return -ENOTDIR; /* "file/" names no directory either */
        int file = openat(w->dirs[w->depth], name,
                          O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (file < 0)
            return -errno;
        struct stat st2;
        if (fstat(file, &st2) < 0 || !S_ISREG(st2.st_mode) || st2.st_ino != st.st_ino ||
            st2.st_dev != st.st_dev) {
            close(file);
            return -EACCES; /* swapped under us */
        }
        return file;
    }
}

int safe_open_in_root(int root_fd, const char *path)
{
    size_t len = strnlen(path, PATH_MAX);
    if (len == 0)
        return -EINVAL;
    if (len >= PATH_MAX)
        return -ENAMETOOLONG;
    struct walk *w = malloc(sizeof(*w));
    if (!w)
        return -ENOMEM;
    w->dirs[0] = root_fd;
    w->depth = 0;
    memcpy(w->rest, path, len + 1);
    w->pos = 0;
    int r = walk(w);
    pop_to_root(w);
    free(w);
    return r;
}
