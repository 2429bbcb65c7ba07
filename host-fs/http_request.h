/* The parts of a debuginfod request that memtrace-fs parses itself (the
 * HTTP framing is libmicrohttpd's): the request path and the Range header.
 * Pure functions of their input, fuzzed by selftest/fuzz/fuzz_http.c. */
#ifndef MTFS_HTTP_REQUEST_H
#define MTFS_HTTP_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#define HTTP_BUILD_ID_MAX 64

enum http_kind {
    HTTP_NONE = 0, /* not a path we serve: 404 */
    HTTP_DEBUGINFO,
    HTTP_EXECUTABLE,
    HTTP_SOURCE,   /* rest: the absolute source path ("/usr/src/a.c") */
    HTTP_SECTION,  /* rest: the section name (".debug_line") */
    HTTP_METRICS,
};

struct http_target {
    enum http_kind kind;
    uint8_t build_id[HTTP_BUILD_ID_MAX];
    size_t build_id_len;
    const char *rest; /* points into the url */
};

/* Parses "/buildid/HEX/debuginfo", ".../executable", ".../source/ABS/PATH",
 * ".../section/NAME" and "/metrics" (url already %-decoded).  HEX is 2..64
 * bytes, upper or lower case.  Returns t->kind (HTTP_NONE when not ours). */
enum http_kind http_parse_target(const char *url, struct http_target *t);

/* The Range header (NULL: none) of a request for size bytes:
 *   HTTP_RANGE_FULL  serve the whole file (no header, or one we ignore as
 *                    RFC 9110 allows: bad syntax, several ranges, other units);
 *   HTTP_RANGE_PART  serve [*off, *off + *len), len >= 1, inside size;
 *   HTTP_RANGE_BAD   416: no byte of the range is in the file. */
enum { HTTP_RANGE_BAD = -1, HTTP_RANGE_FULL = 0, HTTP_RANGE_PART = 1 };
int http_parse_range(const char *hdr, uint64_t size, uint64_t *off, uint64_t *len);

#endif
