/* memtrace-fs reads build-ids with the target's own ELF reader
 * (target/elf): one set of rules for notes in both programs. */
#include "host-fs/elf_build_id.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "target/elf/elf_file.h"
#include "target/files/byte_source.h"

size_t elf_build_id_of_fd(int fd, uint64_t file_size, uint8_t *id, size_t max)
{
    /* The source owns its descriptor; the caller keeps fd. */
    int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0)
        return 0;
    char err[256];
    struct elf_file *f = elf_file_open(byte_source_open_fd(own, file_size, "memtrace-fs file"),
                                       err, sizeof(err));
    if (!f)
        return 0;
    size_t n = elf_file_build_id(f, id, max);
    elf_file_close(f);
    return n;
}
