/* The memory map of a process, from /proc/PID/maps. */
#ifndef MT_TRACER_MAPS_H
#define MT_TRACER_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct map_entry {
    uint64_t start, end, offset;
    bool readable, writable, executable, shared;
    uint64_t inode;
    char *path;        /* NULL for anonymous memory; "[stack]" etc. as given */
};

struct proc_maps {
    struct map_entry *entries;
    size_t count;
};

int proc_maps_read(pid_t pid, struct proc_maps *out);
void proc_maps_free(struct proc_maps *m);
/* Parses the text of a maps file (exposed for tests and fuzzing). */
int proc_maps_parse(const char *text, size_t len, struct proc_maps *out);
const struct map_entry *proc_maps_find(const struct proc_maps *m, uint64_t addr);

#endif
