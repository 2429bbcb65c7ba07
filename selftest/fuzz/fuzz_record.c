/* libFuzzer harness for the --record file reader and replay: the input is
 * a recording; when it parses, the report at its end, at a middle time and
 * the difference between two times are written in every format --replay
 * writes (text, JSON, folded, HTML, massif, heaptrack and, where built,
 * pprof) to a memory stream: every stack's frames resolved, every figure
 * summed, every writer's arithmetic and loops run on the file's counts;
 * the RSS records ('M') reach the MEMORY section, --diff's RSS line and the
 * page's RSS series (seeds: rss.rec recorded, rss-huge.rec crafted).
 * heaptrack writes an event per allocation counted: its bound is lowered
 * (the same code path refuses past it) so that one input stays quick. */
#include "target/record/record.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct recording r;
    char why[256];
    if (recording_parse(data, size, &r, why, sizeof(why)) < 0)
        return 0;
    double end = r.nsamples ? (double)r.samples[r.nsamples - 1].us / 1e6 : 0;
    static const enum report_format formats[] = {
        REPORT_TEXT, REPORT_JSON, REPORT_FOLDED, REPORT_HTML, REPORT_MASSIF, REPORT_HEAPTRACK,
#ifndef MT_NO_PPROF
        REPORT_PPROF,
#endif
    };
    for (size_t f = 0; f < sizeof(formats) / sizeof(formats[0]); f++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&buf, &len);
        if (!out)
            abort();
        struct replay_options o = { .report = { .format = formats[f], .max_events = 1u << 16 } };
        replay_report(out, &r, &o);
        o.at_given = true;
        o.at = end / 2;
        o.report.top = 3;
        replay_report(out, &r, &o);
        o.at_given = false;
        o.diff = true;
        o.from = end / 3;
        o.to = end;
        o.depth = 3;
        replay_report(out, &r, &o);
        fclose(out);
        free(buf);
    }
    recording_free(&r);
    return 0;
}
