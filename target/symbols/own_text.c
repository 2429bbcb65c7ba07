#include "target/symbols/own_text.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

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
            m.candidate = inode != 0 && perms[0] == 'r' && perms[1] == '-';
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
