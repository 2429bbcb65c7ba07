/* See http_client.h. */
#include "target/net/http_client.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "shared/version.h"
#include "shared/wire_net.h"

#define DRAIN_MAX (64u * 1024u)

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int http_parse_url(const char *url, struct http_url *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (strncmp(url, "https://", 8) == 0) {
        snprintf(err, errlen, "%s: https is not supported by memtrace (use http://, or "
                 "memtrace-fs --upstream on a host)", url);
        return -1;
    }
    if (strncmp(url, "http://", 7) != 0) {
        snprintf(err, errlen, "%s: not an http:// URL", url);
        return -1;
    }
    const char *h = url + 7;
    size_t hl = strcspn(h, "/?#");
    if (hl == 0 || hl >= sizeof(out->host_port) || memchr(h, '@', hl)) {
        snprintf(err, errlen, "%s: bad host in the URL", url);
        return -1;
    }
    for (size_t i = 0; i < hl; i++) {
        unsigned char ch = (unsigned char)h[i];
        if (ch <= ' ' || ch >= 127) {
            snprintf(err, errlen, "%s: bad host in the URL", url);
            return -1;
        }
    }
    memcpy(out->host_port, h, hl);
    const char *p = h + hl;
    if (strpbrk(p, "?#")) {
        snprintf(err, errlen, "%s: a query or fragment has no place in a debuginfod URL", url);
        return -1;
    }
    size_t pl = strlen(p);
    while (pl > 0 && p[pl - 1] == '/')
        pl--;
    if (pl >= sizeof(out->prefix) - 128) {
        snprintf(err, errlen, "%s: URL too long", url);
        return -1;
    }
    for (size_t i = 0; i < pl; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (ch <= ' ' || ch >= 127) {
            snprintf(err, errlen, "%s: bad character in the URL's path", url);
            return -1;
        }
    }
    memcpy(out->prefix, p, pl);
    return 0;
}

void http_client_init(struct http_client *c, const struct http_url *url, int timeout_ms)
{
    memset(c, 0, sizeof(*c));
    c->url = *url;
    c->fd = -1;
    c->timeout_ms = timeout_ms;
}

void http_client_close(struct http_client *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->body_left = 0;
    c->have = c->used = 0;
}

static int wait_fd(int fd, short events, long long deadline)
{
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0)
            return -ETIMEDOUT;
        struct pollfd pfd = {.fd = fd, .events = events};
        int n = poll(&pfd, 1, (int)(left > 60000 ? 60000 : left));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n > 0)
            return 0;
    }
}

static int send_all(struct http_client *c, const char *p, size_t len, long long deadline)
{
    while (len > 0) {
        int r = wait_fd(c->fd, POLLOUT, deadline);
        if (r < 0)
            return r;
        ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            return -errno;
        }
        c->bytes_sent += (uint64_t)n;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Some bytes (at most len), before the deadline; 0 at end of stream. */
static ssize_t recv_some(struct http_client *c, void *buf, size_t len, long long deadline)
{
    for (;;) {
        int r = wait_fd(c->fd, POLLIN, deadline);
        if (r < 0)
            return r;
        ssize_t n = recv(c->fd, buf, len, MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            return -errno;
        }
        c->bytes_received += (uint64_t)n;
        return n;
    }
}

static int fail(struct http_client *c, int e, const char *what, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: %s", what, e == -EPROTO ? "bad response" : strerror(-e));
    http_client_close(c);
    return e;
}

static int ensure_connected(struct http_client *c, char *err, size_t errlen)
{
    if (c->fd >= 0 && c->owner != getpid()) {
        /* A report child: the parent's stream is not ours to use. */
        close(c->fd);
        c->fd = -1;
    }
    if (c->fd >= 0)
        return 0;
    c->fd = wire_connect(c->url.host_port, 80, c->timeout_ms, err, errlen);
    if (c->fd < 0)
        return -ECONNREFUSED;
    c->owner = getpid();
    return 0;
}

static int request(struct http_client *c, const char *path, bool ranged, uint64_t first,
                   uint64_t last, struct http_response *r, char *err, size_t errlen)
{
    int rc = ensure_connected(c, err, errlen);
    if (rc < 0)
        return rc;
    char req[HTTP_URL_MAX + 512];
    int n = snprintf(req, sizeof(req), "GET %s%s HTTP/1.1\r\nHost: %s\r\nUser-Agent: memtrace/%s\r\n",
                     c->url.prefix, path, c->url.host_port, version_release());
    if (ranged)
        n += snprintf(req + n, sizeof(req) - (size_t)n, "Range: bytes=%llu-%llu\r\n",
                      (unsigned long long)first, (unsigned long long)last);
    n += snprintf(req + n, sizeof(req) - (size_t)n, "\r\n");
    if ((size_t)n >= sizeof(req)) {
        snprintf(err, errlen, "request too long");
        return -ENAMETOOLONG;
    }
    c->deadline = now_ms() + c->timeout_ms;
    c->requests++;
    rc = send_all(c, req, (size_t)n, c->deadline);
    if (rc < 0)
        return fail(c, rc, "sending the request", err, errlen);
    c->have = c->used = 0;
    size_t end = 0;
    while ((end = http_head_end(c->head, c->have)) == 0) {
        if (c->have == sizeof(c->head)) {
            snprintf(err, errlen, "bad response: header over %u bytes", (unsigned)HTTP_HEAD_MAX);
            http_client_close(c);
            return -EMSGSIZE;
        }
        ssize_t got = recv_some(c, c->head + c->have, sizeof(c->head) - c->have, c->deadline);
        if (got < 0)
            return fail(c, (int)got, "reading the response header", err, errlen);
        if (got == 0)
            return fail(c, -ECONNRESET, "reading the response header", err, errlen);
        c->have += (size_t)got;
    }
    const char *why = NULL;
    if (http_parse_response(c->head, end, r, &why) < 0) {
        snprintf(err, errlen, "bad response: %s", why);
        http_client_close(c);
        return -EPROTO;
    }
    if (r->chunked) {
        snprintf(err, errlen, "bad response: chunked transfer coding (not supported)");
        http_client_close(c);
        return -EPROTO;
    }
    if (!r->has_length) {
        snprintf(err, errlen, "bad response: no Content-Length");
        http_client_close(c);
        return -EPROTO;
    }
    c->used = end;
    c->body_left = r->content_length;
    c->close_after = r->close || r->http10;
    if (c->have - c->used > c->body_left) {
        /* More than the body: a server that talks past its response. */
        snprintf(err, errlen, "bad response: bytes after the body");
        http_client_close(c);
        return -EPROTO;
    }
    return 0;
}

int http_client_get(struct http_client *c, const char *path, bool ranged, uint64_t first,
                    uint64_t last, struct http_response *r, char *err, size_t errlen)
{
    if (c->body_left > 0 || c->close_after)
        http_client_close(c);
    bool fresh = c->fd < 0 || c->owner != getpid();
    int rc = request(c, path, ranged, first, last, r, err, errlen);
    /* A kept-alive connection the server closed meanwhile: once more, anew. */
    if (rc == -ECONNRESET && !fresh)
        rc = request(c, path, ranged, first, last, r, err, errlen);
    return rc;
}

int http_client_body(struct http_client *c, void *buf, size_t len, char *err, size_t errlen)
{
    if (len > c->body_left) {
        snprintf(err, errlen, "response body shorter than needed");
        return -EPROTO;
    }
    unsigned char *out = buf;
    size_t from_head = c->have - c->used;
    if (from_head > len)
        from_head = len;
    memcpy(out, c->head + c->used, from_head);
    c->used += from_head;
    c->body_left -= from_head;
    out += from_head;
    len -= from_head;
    while (len > 0) {
        ssize_t got = recv_some(c, out, len, c->deadline);
        if (got < 0)
            return fail(c, (int)got, "reading the response body", err, errlen);
        if (got == 0)
            return fail(c, -ECONNRESET, "response body cut short", err, errlen);
        out += got;
        len -= (size_t)got;
        c->body_left -= (uint64_t)got;
    }
    if (c->body_left == 0 && c->close_after)
        http_client_close(c);
    return 0;
}

void http_client_finish(struct http_client *c)
{
    if (c->fd < 0)
        return;
    if (c->body_left > DRAIN_MAX || c->close_after) {
        http_client_close(c);
        return;
    }
    char sink[4096];
    char err[128];
    while (c->body_left > 0) {
        size_t n = c->body_left < sizeof(sink) ? (size_t)c->body_left : sizeof(sink);
        if (http_client_body(c, sink, n, err, sizeof(err)) < 0)
            return; /* closed */
    }
}

void http_client_extend(struct http_client *c)
{
    c->deadline = now_ms() + c->timeout_ms;
}
