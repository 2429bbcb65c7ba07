/* The head of an HTTP/1.x response, as memtrace's small debuginfod client
 * reads it (target/net/http_client.c).  The server is outside input: every
 * number is checked, a head longer than HTTP_HEAD_MAX is refused, and only
 * what the client needs is kept (status, Content-Length, Content-Range,
 * Connection, Transfer-Encoding, X-DEBUGINFOD-SIZE). */
#ifndef MT_NET_HTTP_RESPONSE_H
#define MT_NET_HTTP_RESPONSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_HEAD_MAX 8192  /* status line and headers, blank line included */
#define HTTP_HEADERS_MAX 64 /* header lines */

struct http_response {
    int status;              /* 100..599 */
    bool http10;             /* HTTP/1.0: the connection closes after the body */
    bool close;              /* Connection: close */
    bool chunked;            /* Transfer-Encoding other than identity */
    bool has_length;
    uint64_t content_length;
    bool has_range;          /* Content-Range: bytes FIRST-LAST/TOTAL */
    uint64_t range_first, range_last;
    bool has_total;          /* TOTAL was a number, not "*" */
    uint64_t range_total;
    bool has_debuginfod_size;
    uint64_t debuginfod_size;
};

/* The length of the head (through the blank line) when buf[0..len) holds a
 * whole one; 0 when more bytes are needed.  Bare LF line ends count too. */
size_t http_head_end(const char *buf, size_t len);

/* Parses the head buf[0..len) (as http_head_end measured it).  0, or -1 with
 * *why naming the fault (a static string). */
int http_parse_response(const char *buf, size_t len, struct http_response *r, const char **why);

#endif
