/* Opening the file a report goes to (-o FILE, console `report > FILE`).
 * memtrace often runs as root: a symlink or a file planted by another user
 * in a shared directory must not redirect or let it clobber what it does
 * not own. */
#ifndef MT_REPORT_REPORT_FILE_H
#define MT_REPORT_REPORT_FILE_H

#include <stdio.h>

/* Opens path for writing, created 0666 & ~umask when missing, truncated
 * only once it is known to be ours.  Refused (NULL, errno set, a one-line
 * reason in err):
 *   - a symlink, unless it belongs to us or root (/dev/stdout is fine);
 *   - a regular file owned by another user (EPERM);
 *   - a regular file with more than one link (EMLINK: a hard link planted
 *     to a file we own elsewhere).
 * Devices, pipes and terminals (/dev/null, a FIFO) are written as they are. */
FILE *report_file_open(const char *path, char *err, size_t errlen);

#endif
