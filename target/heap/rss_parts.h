/* Where the RSS went: a process's resident memory, from /proc/PID/smaps,
 * split into parts the books can explain (the MEMORY section of status and
 * of the text and JSON reports).
 *
 * Each mapping's Rss (the kernel's figure) goes to exactly one part, or is
 * split between parts page by page with /proc/PID/pagemap's present bits,
 * so the parts add up to the Rss of every mapping read:
 *
 *   live heap        resident bytes of live blocks (the books)       counted
 *   allocator holds  the rest of the allocator's mappings ([heap],
 *                    anonymous mappings holding live blocks): free
 *                    chunks, fragmentation, per-block overhead       computed
 *   program mmaps    resident pages of intercepted mmaps (the ledger)
 *                    that hold no live block                         counted
 *   thread stacks    [stack] and mappings holding a thread's stack
 *                    pointer (/proc/PID/task/TID/syscall)            counted
 *   modules          file-backed mappings, per file (clean, dirty)   counted
 *   shared memory    shared mappings (MAP_SHARED, /dev/shm, SysV)    counted
 *   rest             everything else (anonymous mappings nobody
 *                    intercepted, the rest of ledger mappings)       computed
 *
 * Apart from the parts, `memtrace` says how much of the shared memory part
 * is memtrace's own: the shared mappings inside the ranges the engine says
 * are its own (engine_own_ranges: the agent's shared region of rings and
 * unwind rows, the memfd named memtrace-agent).  Its pages turn resident as the agent
 * writes its ring, so a traced program's RSS grows by up to a ring per
 * thread that allocates; the report names that growth rather than leave
 * it to look like the program's.
 *
 * A block allocated before tracing began, or by an allocator that is not
 * intercepted, is not in the books: its bytes show as the allocator's. */
#ifndef MT_HEAP_RSS_PARTS_H
#define MT_HEAP_RSS_PARTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target/heap/heap.h"

enum rss_part {
    RSS_LIVE_HEAP,
    RSS_ALLOCATOR,
    RSS_PROGRAM_MMAPS,
    RSS_THREAD_STACKS,
    RSS_MODULES,
    RSS_SHARED,
    RSS_REST,
    RSS_PARTS
};

struct rss_module {
    char *path;
    uint64_t rss;
    uint64_t clean, dirty;      /* Shared_Clean + Private_Clean, ..._Dirty */
    uint64_t anonymous;         /* of rss: private copies (written data, relocations) */
};

struct rss_parts {
    uint64_t rss;               /* sum of the mappings' Rss */
    uint64_t part[RSS_PARTS];
    uint64_t live_bytes;        /* the books' live bytes, resident or not */
    uint64_t live_blocks;
    uint64_t trimmable;         /* malloc_trim estimate (see rss_parts_read) */
    uint64_t memtrace;          /* of part[RSS_SHARED]: memtrace's own mappings */
    uint64_t page_size;
    unsigned mappings;          /* mappings read */
    unsigned stack_pointers;    /* threads whose stack pointer was found */
    bool pagemap;               /* present bits read (else every page counted present) */
    bool glibc;                 /* the caller says glibc's malloc is in use: the
                                   malloc_trim estimate means something */
    bool recorded;              /* from a recording (--replay): read at `seconds`,
                                   with no modules, stack pointers nor trim estimate */
    double seconds;
    struct rss_module *modules; /* Rss descending */
    size_t nmodules;
};

/* Reads /proc/PID/smaps (and pagemap, task/TID/syscall) now and splits the
 * Rss against the books b.  The malloc_trim estimate: resident pages of
 * the allocator's mappings that no live block touches, nor the 64 bytes
 * after one (where the next chunk's header and free-list links lie: glibc
 * keeps those pages), and not the ledger's.  Returns 0, or -1 with a
 * reason in why (the process is gone, /proc unreadable). */
/* memtrace's own memory in the process (engine_own_ranges' shape). */
struct rss_own {
    uint64_t lo[2], len[2];
    unsigned n;
};

int rss_parts_read(int pid, const struct heap_books *b, const struct rss_own *own,
                   struct rss_parts *out, char *why, size_t whylen);
void rss_parts_free(struct rss_parts *p);

/* "live heap", "allocator holds", ...; the JSON keys "live_heap", ...;
 * "counted" or "computed". */
const char *rss_part_name(enum rss_part p);
const char *rss_part_key(enum rss_part p);
const char *rss_part_how(enum rss_part p);

/* Parses one smaps text (all of it, NUL-terminated) into mappings: the
 * parser behind rss_parts_read, open to unit tests.  fn is called per
 * mapping with its fields; returns the number of mappings, -1 on a
 * malformed header line. */
struct smaps_entry {
    uint64_t start, end, offset, inode;
    char perms[5];
    const char *name;           /* "" for an anonymous mapping */
    uint64_t rss, shared_clean, shared_dirty, private_clean, private_dirty, anonymous;
};
typedef void (*smaps_entry_fn)(void *ctx, const struct smaps_entry *e);
long smaps_parse(char *text, smaps_entry_fn fn, void *ctx);

#endif
