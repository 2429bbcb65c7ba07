/* The heap's totals over time (timeline.h). */
#include "target/heap/timeline.h"

#include "shared/xalloc.h"

#include <stdlib.h>

struct timeline {
    struct timeline_sample *s;
    size_t n, cap;
    double interval;         /* seconds */
};

struct timeline *timeline_new(unsigned interval_ms, size_t capacity)
{
    struct timeline *tl = xcalloc(1, sizeof(*tl));
    tl->interval = (interval_ms ? interval_ms : 100) / 1000.0;
    tl->cap = capacity ? capacity : 4096;
    if (tl->cap < 8)
        tl->cap = 8;
    tl->s = xreallocarray(NULL, tl->cap, sizeof(*tl->s));
    return tl;
}

void timeline_free(struct timeline *tl)
{
    if (!tl)
        return;
    free(tl->s);
    free(tl);
}

/* Full: keep every other sample (the first and the newest always), and
 * double the spacing. */
static void halve(struct timeline *tl)
{
    size_t j = 0;
    for (size_t i = 0; i < tl->n; i += 2)
        tl->s[j++] = tl->s[i];
    if (tl->n % 2 == 0)
        tl->s[j - 1] = tl->s[tl->n - 1];
    tl->n = j;
    tl->interval *= 2;
}

void timeline_force(struct timeline *tl, double seconds, uint64_t bytes, uint64_t blocks)
{
    if (tl->n && seconds <= tl->s[tl->n - 1].seconds) {
        /* same instant: the newer totals win */
        tl->s[tl->n - 1].bytes = bytes;
        tl->s[tl->n - 1].blocks = blocks;
        return;
    }
    /* a run of equal totals: the middle sample says nothing */
    if (tl->n >= 2) {
        const struct timeline_sample *a = &tl->s[tl->n - 2], *b = &tl->s[tl->n - 1];
        if (a->bytes == bytes && b->bytes == bytes && a->blocks == blocks && b->blocks == blocks) {
            tl->s[tl->n - 1].seconds = seconds;
            return;
        }
    }
    if (tl->n == tl->cap)
        halve(tl);
    tl->s[tl->n++] = (struct timeline_sample){ seconds, bytes, blocks };
}

int timeline_offer(struct timeline *tl, double seconds, uint64_t bytes, uint64_t blocks)
{
    if (tl->n && seconds - tl->s[tl->n - 1].seconds < tl->interval)
        return 0;
    timeline_force(tl, seconds, bytes, blocks);
    return 1;
}

const struct timeline_sample *timeline_samples(const struct timeline *tl, size_t *count)
{
    *count = tl ? tl->n : 0;
    return tl ? tl->s : NULL;
}

double timeline_interval(const struct timeline *tl)
{
    return tl->interval;
}
