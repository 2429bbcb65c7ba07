/* The heap's totals over time, in memory: what a "memory over time" chart
 * (--format html, --format massif) draws.
 *
 * A sample is {seconds since the books were created, bytes in use, blocks
 * in use}.  The session offers the current totals at every turn of its loop
 * (timeline_offer); a sample is kept when at least the interval has passed
 * since the last kept one.  Memory stays bounded: when the array is full,
 * every other sample is dropped and the interval doubles (massif's way), so
 * a day-long trace still holds at most `capacity` samples spread over the
 * whole run.  Runs of equal totals are coalesced: of three equal samples
 * in a row the middle one goes (the chart is a step line).
 *
 * Report writers read it with timeline_samples(): oldest first, times
 * strictly increasing. */
#ifndef MT_HEAP_TIMELINE_H
#define MT_HEAP_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

struct timeline_sample {
    double seconds;          /* since the books were created (heap_seconds) */
    uint64_t bytes, blocks;  /* heap in use then */
};

struct timeline;

/* interval_ms: wanted spacing (0 -> 100); capacity: most samples held
 * (0 -> 4096; at least 8). */
struct timeline *timeline_new(unsigned interval_ms, size_t capacity);
void timeline_free(struct timeline *tl);

/* Offers the totals at time `seconds` (not earlier than the last offer).
 * Returns 1 when a sample was kept, 0 when it was too soon. */
int timeline_offer(struct timeline *tl, double seconds, uint64_t bytes, uint64_t blocks);
/* The same, kept whatever the interval (the last state before a report). */
void timeline_force(struct timeline *tl, double seconds, uint64_t bytes, uint64_t blocks);

/* The samples, oldest first; valid until the next offer.  *count may be 0. */
const struct timeline_sample *timeline_samples(const struct timeline *tl, size_t *count);

/* The spacing now in force, in seconds (grows as resolution halves). */
double timeline_interval(const struct timeline *tl);

#endif
