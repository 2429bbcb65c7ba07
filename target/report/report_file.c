#include "target/report/report_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static FILE *refuse(int fd, int e, char *err, size_t errlen, const char *path, const char *why)
{
    if (fd >= 0)
        close(fd);
    snprintf(err, errlen, "%s: %s", path, why ? why : strerror(e));
    errno = e;
    return NULL;
}

FILE *report_file_open(const char *path, char *err, size_t errlen)
{
    const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY;
    int fd = open(path, flags | O_NOFOLLOW, 0666);
    if (fd < 0 && errno == ELOOP) {
        /* A symlink: followed only when it is ours or root's, as the
         * kernel's protected_symlinks rule does in sticky directories. */
        struct stat lst;
        if (lstat(path, &lst) < 0 || !S_ISLNK(lst.st_mode))
            return refuse(-1, ELOOP, err, errlen, path, NULL);
        if (lst.st_uid != geteuid() && lst.st_uid != 0)
            return refuse(-1, EPERM, err, errlen, path,
                          "a symlink of another user; not followed");
        fd = open(path, flags, 0666);
    }
    if (fd < 0)
        return refuse(-1, errno, err, errlen, path, NULL);
    struct stat st;
    if (fstat(fd, &st) < 0)
        return refuse(fd, errno, err, errlen, path, NULL);
    if (S_ISREG(st.st_mode)) {
        if (st.st_uid != geteuid())
            return refuse(fd, EPERM, err, errlen, path,
                          "the file belongs to another user; not replaced");
        if (st.st_nlink > 1)
            return refuse(fd, EMLINK, err, errlen, path,
                          "the file has other hard links; not replaced");
        if (ftruncate(fd, 0) < 0)
            return refuse(fd, errno, err, errlen, path, NULL);
    } else if (S_ISDIR(st.st_mode)) {
        return refuse(fd, EISDIR, err, errlen, path, NULL);
    }
    FILE *f = fdopen(fd, "w");
    if (!f)
        return refuse(fd, errno, err, errlen, path, NULL);
    return f;
}
