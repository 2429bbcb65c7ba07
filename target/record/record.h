/* --record FILE: the heap over time, on disk, and memtrace --replay.
 *
 * The file is a magic line then records, each `tag (1 byte), payload
 * length (varint), payload`; a reader skips tags it does not know.
 * Integers are LEB128 varints; signed ones zigzag-coded.
 *
 *   'H' header    version, interval ms, pid, depth (frames per report
 *                 stack), program, engine (strings: length + bytes)
 *   'T' string    its bytes; strings are numbered 1, 2, ... in file order
 *                 (0 = none)
 *   'F' frame     pc, module string, offset, function string, file
 *                 string, line, flags (1 inlined, 2 tail call); frames
 *                 are numbered 1, 2, ... in file order
 *   'K' stack     stack id, frame count, frame numbers: the frames a
 *                 report prints for it, resolved at record time, so that
 *                 replay needs neither the target nor its files
 *   'S' sample    microseconds since the previous sample, count (10) and
 *                 the deltas of the totals (in use bytes, blocks, allocs,
 *                 frees, bytes allocated, mapped bytes, mapped regions,
 *                 maps recorded, replaced blocks, temporary), then the
 *                 stacks that changed: count, then per stack the stack id's
 *                 delta from the previous one listed and the deltas of its
 *                 bytes in use, blocks in use, allocs, bytes allocated,
 *                 temporary
 *   'E' engine    the engine in use from then on (its name's bytes): the
 *                 agent takes over after the header was written
 *   'R' sampled   --sample's mean bytes (varint), before the first 'S': the
 *                 stacks' figures are estimates (an older reader skips it)
 *   'P' peak      after an 'S' whose time it has: the books' peak (bytes,
 *                 blocks, microseconds since start) and the stacks whose
 *                 figures at the peak changed: count, id delta, deltas of
 *                 bytes and blocks
 *   'M' memory    after an 'S' whose time it has: where the RSS went
 *                 (target/heap/rss_parts.h), read from /proc/PID/smaps
 *                 then: count (10 or more), then the RSS, its parts in
 *                 rss_parts.h's order (live heap, allocator holds, program
 *                 mmaps, thread stacks, modules, shared memory, rest; they
 *                 add up to the RSS), the mappings read, flags (1: pagemap
 *                 read), then (since 0.3; 0 when absent) the bytes of the
 *                 shared memory part that are memtrace's own (its agent's
 *                 rings).  Figures whole, not deltas: written only when they
 *                 changed, and a reader that skips one loses nothing after
 *                 it.  The RSS is the process's, not the books': an exec
 *                 leaves it as it was.  An older reader skips it.
 *
 * Each stack, frame and string is written once, before its first use.
 * A sample in which nothing changed is not written.  Size is bounded by
 * max_bytes: each time the file fills half of the room left, the interval
 * grows fourfold (samples of a busy program cost about the same whatever
 * the interval, so each stage lasts about twice as long as the one before:
 * with the room of the first half-hour, a day fits in five stages), and a
 * sample that would pass max_bytes ends the recording. */
#ifndef MT_RECORD_RECORD_H
#define MT_RECORD_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "target/report/report.h"

#define RECORD_MAGIC "MTREC1\r\n"
#define RECORD_MAGIC_LEN 8
#define RECORD_TOTALS 10
#define RECORD_STACK_FIELDS 5
/* 'M': RSS, the RSS_PARTS parts, mappings, flags, memtrace's own bytes;
 * an older writer wrote the first RECORD_RSS_FIELDS_MIN only */
#define RECORD_RSS_FIELDS 11
#define RECORD_RSS_FIELDS_MIN 10
#define RECORD_RSS_PAGEMAP 1

/* ---- writing ---- */

struct recorder;

/* Creates (truncates) path.  interval_ms: 0 -> 100; max_bytes: 0 -> 64 MiB.
 * NULL with a reason in why on failure. */
struct recorder *recorder_open(const char *path, unsigned interval_ms, uint64_t max_bytes,
                               char *why, size_t whylen);
/* Writes the header, once the traced process is known (before any sample). */
void recorder_start(struct recorder *r, int pid, unsigned depth, const char *program,
                    const char *engine);
/* Whether recorder_sample at `seconds` would look at the books: the
 * caller reads the RSS (src->memory) only then, it costs a walk of smaps. */
bool recorder_due(const struct recorder *r, double seconds, bool force);
/* Offers the books of src at `seconds` (heap_seconds): written when the
 * interval has passed (or force) and something changed.  src->resolve
 * names the frames of stacks met for the first time.  src->memory, when
 * set, is the RSS now: an 'M' when it changed. */
void recorder_sample(struct recorder *r, const struct report_source *src, double seconds, bool force);
/* The books were replaced (an exec) at time_offset: the stacks of the old
 * ones go to zero in the file then (at least a microsecond after the last
 * sample), the new ones' stack ids are numbered after them, and their clock
 * starts at time_offset of the recording's. */
void recorder_rebase(struct recorder *r, double time_offset);
/* The engine in use now ("ptrace", "agent"): written when it changed. */
void recorder_engine(struct recorder *r, const char *engine);
/* Bytes written so far, samples written so far. */
uint64_t recorder_bytes(const struct recorder *r);
uint64_t recorder_samples(const struct recorder *r);
/* Closes the file; -1 when writing it failed at some point. */
int recorder_close(struct recorder *r);

/* ---- reading ---- */

struct rec_frame {
    uint64_t pc, offset;
    uint32_t module, function, file;   /* string numbers, 0 = none */
    uint32_t line;
    bool inlined, tail_call;
};

struct rec_stack {
    uint32_t id;
    uint32_t nframes;
    size_t first;           /* in recording.stack_frames (frame numbers - 1) */
};

struct rec_delta {
    uint32_t stack;         /* index in recording.stacks */
    uint64_t d[RECORD_STACK_FIELDS];   /* wrapping deltas */
};

struct rec_pdelta {
    uint32_t stack;
    uint64_t bytes, blocks;
};

struct rec_sample {
    uint64_t us;            /* since start */
    uint64_t d[RECORD_TOTALS];
    size_t delta0, ndelta;
    bool has_peak;
    uint64_t peak_bytes, peak_blocks, peak_us;
    size_t pdelta0, npdelta;
    bool has_rss;           /* an 'M' followed it */
    uint64_t rss[RECORD_RSS_FIELDS];
};

struct recording {
    unsigned interval_ms, depth;
    int pid;
    char *program, *engine;            /* from the header */
    uint64_t sample_bytes;             /* 'R': --sample's mean (0: exact) */
    char **strings;                    /* [0] = NULL, then 1..nstrings */
    size_t nstrings;
    struct rec_frame *frames;
    size_t nframes;
    struct rec_stack *stacks;          /* [0]: stack id 0, no frames */
    size_t nstacks;
    uint32_t *stack_frames;
    size_t nstack_frames;
    struct rec_sample *samples;
    size_t nsamples;
    struct rec_delta *deltas;
    size_t ndeltas;
    struct rec_pdelta *pdeltas;
    size_t npdeltas;
    /* stack id -> index + 1, open addressing */
    uint32_t *index_keys, *index_vals;
    size_t index_mask;
};

/* Parses a whole file's bytes.  0, or -1 with a one-line reason in why. */
int recording_parse(const uint8_t *data, size_t len, struct recording *out, char *why, size_t whylen);
void recording_free(struct recording *r);
const char *recording_string(const struct recording *r, uint32_t n);

/* ---- replay (memtrace --replay) ---- */

struct replay_options {
    const char *path;
    const char *output;     /* NULL: stdout */
    struct report_options report;
    bool at_given, diff;
    double at, from, to;    /* seconds */
    unsigned depth;         /* 0: the recording's */
};

/* The report at a recorded time, or the difference between two: memtrace's
 * exit status (0, or 1 after a one-line error). */
int replay_main(const struct replay_options *o);
/* The same from a parsed recording to out (o->path, o->output unused);
 * -1 when out reported an error, -2 when the writer refused the figures
 * (it said why, in one line). */
int replay_report(FILE *out, const struct recording *r, const struct replay_options *o);

#endif
