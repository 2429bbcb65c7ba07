/* A minimal HTTP/1.1 client for debuginfod servers: GET with a Range, one
 * request at a time on a kept-alive connection, every operation bounded by a
 * deadline.  No TLS, no redirects, no chunked bodies: what a board needs to
 * read debug files by range (target/net/debuginfod.c), and nothing more.
 * Links nothing but libc. */
#ifndef MT_NET_HTTP_CLIENT_H
#define MT_NET_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "target/net/http_response.h"

#define HTTP_URL_MAX 512

struct http_url {
    char host_port[272]; /* for wire_connect and the Host header */
    char prefix[HTTP_URL_MAX]; /* path before /buildid, no trailing slash */
};

/* "http://HOST[:PORT][/PREFIX]".  0, or -1 with a one-line err (https and
 * user names are refused). */
int http_parse_url(const char *url, struct http_url *out, char *err, size_t errlen);

struct http_client {
    struct http_url url;
    int fd;            /* -1 while disconnected */
    pid_t owner;       /* the process that opened fd (a forked child reconnects) */
    int timeout_ms;    /* connect, and each request's head and body */
    uint64_t body_left; /* of the current response: bytes not read yet */
    long long deadline; /* of the current response */
    bool close_after;  /* the current response ends the connection */
    char head[HTTP_HEAD_MAX];
    size_t have, used; /* head[used..have): body bytes read with the head */
    uint64_t requests, bytes_sent, bytes_received;
};

void http_client_init(struct http_client *c, const struct http_url *url, int timeout_ms);
void http_client_close(struct http_client *c);

/* Sends GET prefix+path (with "Range: bytes=first-last" when ranged) and
 * reads the response head into r.  0, or a negative errno with a one-line
 * err.  The body is then read with http_client_body. */
int http_client_get(struct http_client *c, const char *path, bool ranged, uint64_t first,
                     uint64_t last, struct http_response *r, char *err, size_t errlen);
/* Reads exactly len bytes of the body; 0 or a negative errno with err. */
int http_client_body(struct http_client *c, void *buf, size_t len, char *err, size_t errlen);
/* Ends the current response: the rest of a short body is read and dropped
 * (up to 64 KiB), else the connection is closed. */
void http_client_finish(struct http_client *c);
/* Gives the current response timeout_ms more from now: for a long body
 * read in pieces (a whole file from a server without ranges), so that only
 * a server silent for timeout_ms fails it. */
void http_client_extend(struct http_client *c);

#endif
