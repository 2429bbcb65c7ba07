/* A stream that gzips what is written to it into another stream: the
 * exports that viewers read compressed (heaptrack's trace, pprof). */
#ifndef MT_REPORT_REPORT_GZIP_H
#define MT_REPORT_REPORT_GZIP_H

#include <stdio.h>

/* A new stream over under (which it neither closes nor owns); NULL on
 * failure.  report_gzip_close ends the gzip member and flushes under. */
FILE *report_gzip_open(FILE *under);
/* 0, or -1 if compressing or writing under failed at any point. */
int report_gzip_close(FILE *z);

#endif
