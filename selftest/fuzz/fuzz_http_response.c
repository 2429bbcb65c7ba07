/* libFuzzer target for memtrace's own HTTP client (the debuginfod client
 * of target/net/): the response head parser, the URL parser, and the whole
 * client reading a hostile server's bytes from a socket.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. -D_GNU_SOURCE \
 *       selftest/fuzz/fuzz_http_response.c build-fuzz/libmt.a -lz -o fuzz_http_response
 *   ./fuzz_http_response -max_len=9000 selftest/fuzz/seeds/http_response
 *
 * Input: one mode byte (0: a response head, 1: a URL, 2: a server's whole
 * answer to a ranged GET), then the bytes.  The invariants the provider
 * relies on are checked: a parsed range is ordered and inside its total,
 * Content-Length agrees with it, a body read never exceeds Content-Length. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "target/net/http_client.h"
#include "target/net/http_response.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct http_response *r)
{
    if (r->status < 100 || r->status > 599)
        abort();
    if (r->has_range && r->range_first > r->range_last)
        abort();
    if (r->has_range && r->has_total && r->range_last >= r->range_total)
        abort();
    if (r->has_range && r->has_length && r->content_length != r->range_last - r->range_first + 1)
        abort();
}

static void head(const uint8_t *data, size_t size)
{
    char *buf = malloc(size ? size : 1); /* exact size: overreads are caught */
    memcpy(buf, data, size);
    size_t end = http_head_end(buf, size);
    if (end > size)
        abort();
    struct http_response r;
    const char *why = NULL;
    if (http_parse_response(buf, end ? end : size, &r, &why) == 0)
        check(&r);
    else if (!why)
        abort();
    free(buf);
}

static void url(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = 0;
    struct http_url u;
    char err[256];
    if (http_parse_url(s, &u, err, sizeof(err)) == 0) {
        if (!u.host_port[0] || strchr(u.host_port, ' ') || strchr(u.host_port, '/'))
            abort();
    }
    free(s);
}

static void client(const uint8_t *data, size_t size)
{
    int sv[2];
    if (size > 60000 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return;
    /* The request is discarded unread; the answer waits in the socket. */
    if (size && write(sv[1], data, size) != (ssize_t)size) {
        close(sv[0]);
        close(sv[1]);
        return;
    }
    shutdown(sv[1], SHUT_WR);
    struct http_url u = { .host_port = "127.0.0.1:1" }; /* a retry is refused at once */
    struct http_client c;
    http_client_init(&c, &u, 50);
    c.fd = sv[0];
    c.owner = getpid();
    struct http_response r;
    char err[256];
    if (http_client_get(&c, "/buildid/00/debuginfo", true, 0, 99, &r, err, sizeof(err)) == 0) {
        check(&r);
        uint64_t want = r.content_length < 4096 ? r.content_length : 4096;
        uint8_t *body = malloc(want ? want : 1);
        if (http_client_body(&c, body, want, err, sizeof(err)) == 0 && c.body_left != r.content_length - want)
            abort();
        free(body);
        http_client_finish(&c);
    }
    http_client_close(&c);
    close(sv[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    switch (data[0] % 3) {
    case 0: head(data + 1, size - 1); break;
    case 1: url(data + 1, size - 1); break;
    default: client(data + 1, size - 1); break;
    }
    return 0;
}
