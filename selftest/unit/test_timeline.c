/* The in-memory timeline: bounded, ordered, coalescing.  Oracle: a plain
 * list of every offer, against which each kept sample must be a true
 * state (the totals offered at that time or the latest before it). */
#include "target/heap/timeline.h"

#include <stdlib.h>
#include "selftest/unit/test.h"

struct offer { double t; uint64_t bytes, blocks; };

int main(void)
{
    enum { N = 100000, CAP = 64 };
    struct offer *all = calloc(N, sizeof(*all));
    struct timeline *tl = timeline_new(10, CAP);
    uint64_t bytes = 0;
    for (int i = 0; i < N; i++) {
        double t = i * 0.001;
        if (i % 7 == 0)
            bytes += (uint64_t)(i % 13);
        all[i] = (struct offer){ t, bytes, bytes / 3 };
        timeline_offer(tl, t, bytes, bytes / 3);
    }
    timeline_force(tl, N * 0.001, bytes, bytes / 3);
    size_t n;
    const struct timeline_sample *s = timeline_samples(tl, &n);
    CHECK(n > CAP / 4 && n <= CAP, "n=%zu", n);
    CHECK(s[0].seconds == 0.0);
    CHECK(s[n - 1].seconds == N * 0.001 && s[n - 1].bytes == bytes);
    CHECK(timeline_interval(tl) >= 0.01 * (N * 0.001 / 0.01) / CAP, "interval %g", timeline_interval(tl));
    for (size_t k = 0; k < n; k++) {
        if (k)
            CHECK(s[k].seconds > s[k - 1].seconds);
        long i = (long)(s[k].seconds / 0.001 + 0.5);
        if (i >= N)
            i = N - 1;
        CHECK(all[i].bytes == s[k].bytes && all[i].blocks == s[k].blocks, "sample %zu", k);
    }
    timeline_free(tl);

    /* equal totals: the middle one of three goes */
    tl = timeline_new(1, 0);
    for (int i = 0; i < 10; i++)
        timeline_offer(tl, i, 5, 1);
    timeline_offer(tl, 10, 6, 2);
    s = timeline_samples(tl, &n);
    CHECK(n == 3 && s[0].seconds == 0 && s[1].seconds == 9 && s[2].bytes == 6, "n=%zu", n);
    timeline_free(tl);
    free(all);
    return test_end("timeline");
}
