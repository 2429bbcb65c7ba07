/* A byte_source is a file read by range: a local file (pread), or a file on a
 * memtrace-fs host fetched on demand.  ELF and DWARF readers see only this, so
 * memtrace never needs a whole debug file in memory or on the wire. */
#ifndef MT_FILES_BYTE_SOURCE_H
#define MT_FILES_BYTE_SOURCE_H

#include <stddef.h>
#include <stdint.h>

struct byte_source;

struct byte_source_ops {
    /* Reads exactly len bytes at off.  Returns 0, or a negative errno
     * (-EIO for a short file, -ERANGE when off+len is beyond size). */
    int (*read)(struct byte_source *src, uint64_t off, void *buf, size_t len);
    void (*close)(struct byte_source *src);
};

struct byte_source {
    const struct byte_source_ops *ops;
    uint64_t size;   /* bytes in the file */
    char *name;      /* for messages: a path, or "build-id:abcd..." */
};

/* Bounds-checked read: refuses ranges past size without calling the backend. */
int byte_source_read(struct byte_source *src, uint64_t off, void *buf, size_t len);
void byte_source_close(struct byte_source *src);

/* A local file.  Returns NULL and fills err (one line) on failure.  Only a
 * regular file is opened (for reading; a FIFO or a device never is). */
struct byte_source *byte_source_open_file(const char *path, char *err, size_t errlen);

/* path as a process whose root is root (/proc/PID/root) sees it: no
 * symbolic link or ".." leads out of root (openat2 RESOLVE_IN_ROOT; before
 * Linux 5.6, root and path joined).  Only a regular file is opened, for
 * reading, as byte_source_open_file does. */
struct byte_source *byte_source_open_in_root(const char *root, const char *path, char *err,
                                             size_t errlen);

/* A local file already open: the source owns fd (closed with it). */
struct byte_source *byte_source_open_fd(int fd, uint64_t size, const char *name);

/* A source over memory the caller keeps alive (tests, fuzzers). */
struct byte_source *byte_source_open_memory(const void *data, size_t size, const char *name);

#endif
