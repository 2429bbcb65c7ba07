/* Finding a requested file in the sysroots: by the target's path, by
 * build-id, and by .gnu_debuglink name with the CRC checked here. */
#ifndef MTFS_LOOKUP_H
#define MTFS_LOOKUP_H

#include <stddef.h>
#include <stdint.h>

struct sysroot {
    char *path; /* canonical, for messages and TXT records */
    int fd;     /* O_PATH directory */
};

struct sysroot_set {
    struct sysroot *items;
    int count;
};

/* Each returns an fd of a regular file inside one sysroot, or a negative errno. */
int lookup_path(const struct sysroot_set *s, const char *abs_path);
int lookup_build_id(const struct sysroot_set *s, const uint8_t *id, size_t len);
/* lookup_build_id, then the upstream debuginfod servers (host-fs/upstream.h)
 * for a debug file the sysroots lack. */
int lookup_build_id_or_upstream(const struct sysroot_set *s, const uint8_t *id, size_t len);
int lookup_debuglink(const struct sysroot_set *s, const char *obj_path, const char *name,
                     uint32_t crc);

/* CRC32 (zlib's, as .gnu_debuglink uses) of a whole file; 0 or -errno. */
int file_crc32(int fd, uint32_t *crc);

#endif
