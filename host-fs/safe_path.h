/* Opening a file of a sysroot by the target's absolute path without ever
 * leaving the sysroot: the path is walked one component at a time with
 * O_NOFOLLOW, symlinks are read and followed by hand (absolute ones from the
 * sysroot's root, as a chroot would), and ".." above the root is refused. */
#ifndef MTFS_SAFE_PATH_H
#define MTFS_SAFE_PATH_H

/* Opens path (absolute or relative to the root) read-only inside the directory
 * root_fd.  Returns an fd of a regular file, or a negative errno: -EACCES for
 * an escape, -ENOENT, -ELOOP, -ENAMETOOLONG, -EINVAL (NUL, empty). */
int safe_open_in_root(int root_fd, const char *path);

#endif
