/* Reports from the books: text (issue 2's format), JSON (issue 2's schema,
 * plus a "mapped" object) and Brendan Gregg's folded stacks.
 *
 * Only pcs are stored; names come from a resolver the engine provides, called
 * once per printed frame at report time. */
#ifndef MT_REPORT_REPORT_H
#define MT_REPORT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "target/heap/heap.h"
#include "target/heap/misuse.h"
#include "target/heap/stacks.h"

struct report_frame {
    uint64_t pc;            /* prefilled with the stored pc minus its flag bit 63 */
    const char *module;     /* NULL if unknown */
    uint64_t offset;        /* pc's offset in module */
    const char *function;   /* NULL if unknown */
    const char *file;       /* NULL if unknown */
    unsigned line;          /* 0 if unknown */
};

/* Fill *out for the stored pc (flag bits included) of frame frame_index
 * (0 = the intercepted function).  *out arrives prefilled (pc set, the rest
 * NULL/0); fields left alone stay unknown.  Strings must stay valid until the
 * next call of the resolver. */
typedef void (*report_resolve_fn)(void *ctx, uint64_t pc, unsigned frame_index,
                                  struct report_frame *out);

enum report_format { REPORT_TEXT, REPORT_JSON, REPORT_FOLDED };
enum report_sort { REPORT_SORT_BYTES, REPORT_SORT_BLOCKS, REPORT_SORT_ALLOCS };

/* What a leak scan found, grouped as memcheck's loss records: one group per
 * (stack, kind).  Kinds index 0..3 as target/leak's enum leak_kind:
 * definitely lost, indirectly lost, possibly lost, still reachable. */
#define REPORT_LEAK_KINDS 4
struct report_leak_group {
    uint32_t stack_id;
    unsigned kind;
    bool suppressed;        /* by a --suppressions pattern (never reachable ones) */
    uint64_t bytes, blocks;
};
struct report_leaks {
    uint64_t bytes[REPORT_LEAK_KINDS], blocks[REPORT_LEAK_KINDS];   /* unsuppressed */
    uint64_t suppressed_bytes, suppressed_blocks;
    struct report_leak_group *groups;   /* by kind, then bytes descending */
    size_t ngroups;
    unsigned threads;                   /* threads whose stacks and registers were roots */
    uint64_t root_bytes, bytes_scanned, blocks_checked;
    double seconds;
};

struct report_source {
    const struct heap_books *books;
    const struct stack_table *stacks;
    report_resolve_fn resolve;      /* NULL: every frame unresolved */
    void *resolve_ctx;
    int pid;                        /* for JSON */
    const char *program;            /* for JSON; NULL -> "" */
    const struct report_leaks *leaks;   /* a leak scan's result, or NULL */
    const struct misuse_log *errors; /* JSON "errors"; NULL: none */
    const struct report_family *family; /* -f; NULL: a process alone */
    const char *engine;             /* "ptrace" / "agent"; NULL: not said */
};

/* What a report of one of several traced processes adds (JSON only): the
 * parent's pid for a child, and the children's reports in the first
 * process's object. */
struct report_family {
    int ppid;                       /* > 0: a child, "ppid" member */
    /* Writes ',\n "children": [...]' (or nothing); NULL: none. */
    void (*write_children)(FILE *out, void *ctx);
    void *ctx;
};

struct report_options {
    enum report_format format;
    enum report_sort sort;  /* key, descending; ties: bytes, blocks, stack id */
    size_t top;             /* 0 = every stack with blocks in use */
};

/* Writes one report; returns 0, or -1 when the stream reported an error. */
int report_write(FILE *out, const struct report_source *src, const struct report_options *opt);

/* The HEAP SUMMARY block (three lines, plus "mapped:" once any mmap was
 * recorded), exactly as ending the text report. */
void report_write_summary(FILE *out, const struct heap_totals *t);

/* The leak scan's part of a text report: one line on the scan, the loss
 * records (definitely, indirectly and possibly lost, unsuppressed) with
 * their stacks, then the LEAK SUMMARY. */
void report_write_leaks_text(FILE *out, const struct report_source *src,
                             const struct report_leaks *leaks);
/* One misuse error as valgrind prints it ("==PID== Invalid free() ...",
 * the stacks, the block), frames resolved through src. */
void report_write_misuse(FILE *out, const struct report_source *src, const struct misuse_error *e);

/* "text"|"json"|"folded", "bytes"|"blocks"|"allocs"; false if unknown. */
bool report_parse_format(const char *s, enum report_format *out);
bool report_parse_sort(const char *s, enum report_sort *out);

#endif
