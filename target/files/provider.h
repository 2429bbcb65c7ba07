/* Where memtrace finds the files of the traced process and their debug files.
 * A file_locator asks its providers in order: each --sysroot directory, then a
 * connected memtrace-fs, then the target's own file system.  Every provider
 * answers with a byte_source or NULL (not found there). */
#ifndef MT_FILES_PROVIDER_H
#define MT_FILES_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

#include "shared/files/byte_source.h"

struct file_provider;

struct file_provider_ops {
    /* The file at the target's absolute path (e.g. "/lib/libc.so.6"). */
    struct byte_source *(*open_path)(struct file_provider *p, const char *abs_path);
    /* The separate debug file for this build-id
     * (…/usr/lib/debug/.build-id/xx/rest.debug).  The caller still checks
     * the build-id of what it gets. */
    struct byte_source *(*open_build_id)(struct file_provider *p, const uint8_t *id, size_t len);
    /* The .gnu_debuglink file NAME for the object at obj_path, searched as gdb
     * does (obj dir, obj dir/.debug, /usr/lib/debug/obj dir); only a file whose
     * CRC32 equals crc is returned (the provider checks it where the file is, so
     * a remote file is not downloaded to check it). */
    struct byte_source *(*open_debuglink)(struct file_provider *p, const char *obj_path,
                                          const char *name, uint32_t crc);
    void (*destroy)(struct file_provider *p);
    const char *name; /* "sysroot /x", "memtrace-fs 169.254.1.1:3002", "local" */
};

struct file_provider {
    const struct file_provider_ops *ops;
};

/* A directory holding a copy of the target's file tree.  "/" is the target's
 * own file system. */
struct file_provider *file_provider_sysroot(const char *dir);

#define FILE_LOCATOR_MAX 16

struct file_locator {
    struct file_provider *providers[FILE_LOCATOR_MAX];
    int count;
};

void file_locator_init(struct file_locator *loc);
/* Takes ownership; returns -1 when full. */
int file_locator_add(struct file_locator *loc, struct file_provider *p);
void file_locator_destroy(struct file_locator *loc);

struct byte_source *file_locator_open_path(struct file_locator *loc, const char *abs_path);
struct byte_source *file_locator_open_build_id(struct file_locator *loc, const uint8_t *id, size_t len);
struct byte_source *file_locator_open_debuglink(struct file_locator *loc, const char *obj_path,
                                                const char *name, uint32_t crc);

/* CRC32 as .gnu_debuglink uses it (the zlib/IEEE polynomial), over a whole source. */
int byte_source_crc32(struct byte_source *src, uint32_t *crc);

#endif
