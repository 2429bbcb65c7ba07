/* memtrace-fs reads build-ids with the target's own ELF reader
 * (shared/elf): one set of rules for notes in both programs. */
#include "host-fs/elf_build_id.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "shared/elf/elf_file.h"
#include "shared/files/byte_source.h"

static struct elf_file *open_fd(int fd, uint64_t file_size)
{
    /* The source owns its descriptor; the caller keeps fd. */
    int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0)
        return NULL;
    char err[256];
    return elf_file_open(byte_source_open_fd(own, file_size, "memtrace-fs file"), err, sizeof(err));
}

size_t elf_build_id_of_fd(int fd, uint64_t file_size, uint8_t *id, size_t max)
{
    struct elf_file *f = open_fd(fd, file_size);
    if (!f)
        return 0;
    size_t n = elf_file_build_id(f, id, max);
    elf_file_close(f);
    return n;
}

int elf_section_of_fd(int fd, uint64_t file_size, const char *name, uint64_t *off,
                      uint64_t *size, uint32_t *type)
{
    struct elf_file *f = open_fd(fd, file_size);
    if (!f)
        return -1;
    int rc = -1;
    for (size_t i = 0; i < elf_file_section_count(f); i++) {
        const struct elf_section *sec = elf_file_section(f, i);
        if (!sec->name || strcmp(sec->name, name) != 0)
            continue;
        *type = sec->type;
        *off = sec->offset;
        *size = sec->size;
        if (sec->type == 8 /* SHT_NOBITS */ ||
            (sec->offset <= file_size && sec->size <= file_size - sec->offset))
            rc = 0;
        break;
    }
    elf_file_close(f);
    return rc;
}
