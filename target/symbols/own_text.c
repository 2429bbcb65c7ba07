#include "target/symbols/own_text.h"

#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

/* The RELRO regions of the loaded objects: written by the dynamic linker,
 * then made read-only.  Told by the program headers, not by smaps' counts,
 * which qemu-user (the cross tests) reports as 0 whatever was written. */
enum { MAX_RELRO = 64 };
struct relro_set {
    uintptr_t start[MAX_RELRO], end[MAX_RELRO];
    unsigned n;
    bool overflow;
};

static int add_relro(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct relro_set *r = arg;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_GNU_RELRO)
            continue;
        if (r->n == MAX_RELRO) {
            r->overflow = true;
            return 0;
        }
        r->start[r->n] = info->dlpi_addr + ph->p_vaddr;
        r->end[r->n++] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
    }
    return 0;
}

static bool overlaps_relro(const struct relro_set *r, uintptr_t start, uintptr_t end)
{
    if (r->overflow)
        return true;
    for (unsigned i = 0; i < r->n; i++)
        if (start < r->end[i] && r->start[i] < end)
            return true;
    return false;
}

struct text_map {
    uintptr_t start, end;
    bool candidate;     /* r-x or r--, not writable, backed by a file */
    bool dirty;         /* some page is a private copy (Anonymous > 0) */
};

static void release(const struct text_map *m)
{
    if (m->candidate && !m->dirty && m->end > m->start)
        (void)madvise((void *)m->start, m->end - m->start, MADV_DONTNEED);
}

void own_text_release(void)
{
    struct relro_set relro = {0};
    dl_iterate_phdr(add_relro, &relro);
    FILE *f = fopen("/proc/self/smaps", "re");
    if (!f)
        return;
    char line[512];
    struct text_map m = {0};
    bool whole_line = true;
    while (fgets(line, sizeof(line), f)) {
        bool at_start = whole_line;
        whole_line = strchr(line, '\n') != NULL;
        if (!at_start)
            continue; /* the rest of a long path */
        unsigned long start, end, inode;
        char perms[5];
        if (sscanf(line, "%lx-%lx %4s %*s %*s %lu", &start, &end, perms, &inode) == 4) {
            release(&m);
            m.start = start;
            m.end = end;
            m.candidate = inode != 0 && perms[0] == 'r' && perms[1] == '-' &&
                          (perms[2] == 'x' || !overlaps_relro(&relro, start, end));
            m.dirty = false;
            continue;
        }
        unsigned long kib;
        if (sscanf(line, "Anonymous: %lu", &kib) == 1 && kib > 0)
            m.dirty = true;
    }
    release(&m);
    fclose(f);
}
