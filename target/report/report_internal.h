/* Shared by the report writers; not part of the public API. */
#ifndef MT_REPORT_INTERNAL_H
#define MT_REPORT_INTERNAL_H

#include "target/report/report.h"

struct report_stack {
    uint32_t id;
    struct stack_totals t;
};

/* Stacks with blocks in use, sorted for opt, cut to opt->top; caller frees. */
struct report_stack *report_collect(const struct report_source *src,
                                    const struct report_options *opt, size_t *count);

/* The frames of one stack, one per line ("    #0 ..."), as the text report
 * prints them. */
void report_write_frames_text(FILE *out, const struct report_source *src, uint32_t stack_id);

/* The stacks st[0..n) (sorted), of which the first limit (0: all) are
 * listed and the rest summed up in one line. */
void report_write_text(FILE *out, const struct report_source *src,
                       const struct report_stack *st, size_t n, size_t limit);
void report_write_json(FILE *out, const struct report_source *src,
                       const struct report_stack *st, size_t n);
void report_write_folded(FILE *out, const struct report_source *src,
                         const struct report_stack *st, size_t n);

/* The exports (gzip-compressed); 0, or -1 when writing failed. */
/* -1 on a stream error, or (after a one-line error) when the books ask for
 * more than max_events events (0: HEAPTRACK_MAX_EVENTS). */
int report_write_heaptrack(FILE *out, const struct report_source *src, uint64_t max_events);
int report_write_pprof(FILE *out, const struct report_source *src);

/* {"pc": ..., "module": ..., ...} of one frame. */
void report_json_frame(FILE *out, const struct report_frame *f);
/* The frames of a stack as JSON objects separated by commas, each after
 * indent (the caller writes the brackets). */
void report_json_frames(FILE *out, const struct report_source *src, uint32_t stack_id,
                        const char *indent);
/* ' "errors": [...]' (and "errors_not_listed" when the log overflowed),
 * without a trailing comma or newline. */
void report_write_misuse_json(FILE *out, const struct report_source *src);

/* The PEAK and TEMPORARY ALLOCATIONS sections of the text report (lists
 * cut to top, 10 when 0), and the JSON's "peak" and "temporary_allocations"
 * members (each followed by ",\n"). */
void report_write_peak_text(FILE *out, const struct report_source *src, size_t top);
void report_write_peak_json(FILE *out, const struct report_source *src);
/* ' "memory": {...},\n' when src->memory is set. */
void report_write_memory_json(FILE *out, const struct report_source *src);
/* Stacks with blocks at the peak, their figures then (bytes descending),
 * at most top (0: all); caller frees. */
struct report_stack *report_collect_peak(const struct report_source *src, size_t top, size_t *count);

/* The HTML page (report_html.c): one self-contained file. */
void report_write_html(FILE *out, const struct report_source *src,
                       const struct report_stack *st, size_t n, size_t top);

/* massif's out-file format (report_massif.c). */
void report_write_massif(FILE *out, const struct report_source *src);

/* s as a JSON string literal (quotes included); NULL as null.  Control
 * characters (C0, DEL, C1) as \u escapes, invalid UTF-8 bytes as U+FFFD:
 * valid JSON that drives no terminal it is printed on. */
void report_json_string(FILE *out, const char *s);

#endif
