/* Reports from the books: text (valgrind's HEAP SUMMARY wording, grouped
 * by stack), JSON ("heap", "stacks", "mapped", "leaks", "errors" and, under
 * -f, "children"; report_json.c), Brendan Gregg's folded stacks and one
 * self-contained HTML page with a chart and a flame graph (report_html.c).
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
#include "target/heap/allocators.h"
#include "target/heap/misuse.h"
#include "target/heap/rss_parts.h"
#include "target/heap/stacks.h"
#include "target/heap/timeline.h"

struct report_frame {
    uint64_t pc;            /* prefilled with the stored pc minus its flag bit 63 */
    const char *module;     /* NULL if unknown */
    uint64_t offset;        /* pc's offset in module */
    const char *function;   /* NULL if unknown */
    const char *file;       /* NULL if unknown */
    unsigned line;          /* 0 if unknown */
    /* One stored pc may stand for several frames the user sees: functions
     * inlined at it, and functions that tail-called the next one.  The
     * resolver is asked for sub = 0, 1, ... of the same pc while it sets
     * more; sub 0 always comes first. */
    unsigned sub;           /* prefilled: which frame of this pc */
    uint64_t caller_pc;     /* prefilled: the next stored pc (flags kept), 0 if none */
    bool inlined;           /* an inlined call: shares pc with the next frame */
    bool tail_call;         /* restored from call-site info: it tail-called the previous frame */
    bool more;              /* another frame of this pc follows */
    /* The mapped object of the pc, for exports that name mappings (pprof):
     * asked for when want_mapping is prefilled true. */
    bool want_mapping;      /* prefilled from report_frames.want_mapping */
    uint64_t map_start, map_end;    /* its runtime extent; 0 if unknown */
    const char *build_id;   /* its GNU build-id in lowercase hex; NULL if none */
};

/* Fill *out for the stored pc (flag bits included) of frame frame_index
 * (0 = the intercepted function).  *out arrives prefilled (pc, sub,
 * caller_pc set, the rest NULL/0); fields left alone stay unknown.  Strings
 * must stay valid until the next call of the resolver. */
typedef void (*report_resolve_fn)(void *ctx, uint64_t pc, unsigned frame_index,
                                  struct report_frame *out);

enum report_format { REPORT_TEXT, REPORT_JSON, REPORT_FOLDED,
                     REPORT_MASSIF,  /* massif's out-file format (ms_print) */
                     REPORT_HTML,    /* one self-contained page (report_html.c) */
                     REPORT_HEAPTRACK,  /* heaptrack's trace format, gzipped (report_heaptrack.c) */
                     REPORT_PPROF };    /* pprof's profile.proto, gzipped (report_pprof.c) */
enum report_sort { REPORT_SORT_BYTES, REPORT_SORT_BLOCKS, REPORT_SORT_ALLOCS };

/* What a leak scan found, grouped as memcheck's loss records: one group per
 * (stack, kind).  The kinds are target/leak's enum leak_kind, in its order
 * (leak_groups.c checks). */
enum report_leak_kind {
    REPORT_LEAK_DEFINITE,   /* definitely lost */
    REPORT_LEAK_INDIRECT,   /* indirectly lost */
    REPORT_LEAK_POSSIBLE,   /* possibly lost */
    REPORT_LEAK_REACHABLE,  /* still reachable */
    REPORT_LEAK_KINDS
};
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
    unsigned max_frames;            /* frames shown per stack (--depth); 0: all */
    const char *engine;             /* "ptrace" / "agent"; NULL: not said */
    const struct timeline *timeline; /* heap totals over time; NULL: none */
    /* The modules whose allocation functions were intercepted, with the
     * calls each took (text header, JSON "allocators"); NULL: not said. */
    const struct allocators *allocators;
    /* The process's RSS split into parts (text "MEMORY", JSON "memory");
     * NULL: not read (the process is gone, or a replay). */
    const struct rss_parts *memory;
    /* Where the RSS went over time (the HTML chart's RSS line): the
     * recording's 'M' records, oldest first; NULL: none. */
    const struct report_rss_point *rss_points;
    size_t nrss_points;
};

struct report_rss_point {
    double seconds;                 /* on the timeline's clock */
    uint64_t rss;
    uint64_t part[RSS_PARTS];       /* rss_parts.h's order, adding up to rss */
};

/* The allocators line of the text report and of status:
 * "PATH (N calls), ...", most calls first; nothing when there are none. */
void report_write_allocators(FILE *out, const struct allocators *a);

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
    /* The text report's stacks in use, when top is 0: at most this many,
     * then one line on the rest (how many, their bytes and blocks, and how
     * to see them); 0: all.  Other formats keep every stack. */
    size_t text_limit;
    /* heaptrack writes an event per allocation the books count: an export
     * that would write more is refused (0: 2^30; a fuzzer sets fewer) */
    uint64_t max_events;
};

/* The frames of a stack as the user sees them (inlined and tail-call
 * frames included, at most src->max_frames): begin, then next until it
 * returns false.  *f's strings stay valid until the next call. */
struct report_frames {
    const struct report_source *src;
    const uint64_t *pcs;
    unsigned depth, i, sub, shown;
    bool more;
    bool want_mapping;      /* set after begin: frames carry map_* and build_id */
};
void report_frames_begin(struct report_frames *it, const struct report_source *src, uint32_t stack_id);
bool report_frames_next(struct report_frames *it, struct report_frame *f);

/* Writes one report; returns 0, or -1 when the stream reported an error. */
int report_write(FILE *out, const struct report_source *src, const struct report_options *opt);

/* The HEAP SUMMARY block (three lines, plus "mapped:" once any mmap was
 * recorded), exactly as ending the text report. */
void report_write_summary(FILE *out, const struct heap_totals *t);

/* The MEMORY section (rss_parts.h) as the text report and status print it. */
void report_write_memory_text(FILE *out, const struct rss_parts *m);

/* The leak scan's part of a text report: one line on the scan, the loss
 * records (definitely, indirectly and possibly lost, unsuppressed) with
 * their stacks, then the LEAK SUMMARY. */
void report_write_leaks_text(FILE *out, const struct report_source *src,
                             const struct report_leaks *leaks);
/* One misuse error as valgrind prints it ("==PID== Invalid free() ...",
 * the stacks, the block), frames resolved through src. */
void report_write_misuse(FILE *out, const struct report_source *src, const struct misuse_error *e);

/* "text"|"json"|"folded"|"html"|"massif"|"heaptrack"|"pprof" ("pprof" only in
 * builds with protobuf-c), "bytes"|"blocks"|"allocs"; false if unknown. */
bool report_parse_format(const char *s, enum report_format *out);
/* The name report_parse_format takes for f. */
const char *report_format_name(enum report_format f);
bool report_parse_sort(const char *s, enum report_sort *out);
/* A format whose output is binary (compressed): not for a terminal. */
bool report_format_binary(enum report_format f);

#endif
