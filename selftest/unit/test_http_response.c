/* The debuginfod client's response head and URL parsers
 * (target/net/http_response.c, http_client.c): what they keep of real
 * heads (elfutils' debuginfod and libmicrohttpd send these), and each kind
 * of malformed head refused with its reason. */
#include <string.h>

#include "selftest/unit/test.h"
#include "target/net/http_client.h"
#include "target/net/http_response.h"

static int parse(const char *head, struct http_response *r, const char **why)
{
    size_t len = strlen(head);
    size_t end = http_head_end(head, len);
    *why = NULL;
    return http_parse_response(head, end ? end : len, r, why);
}

static void refused(const char *head, const char *reason)
{
    struct http_response r;
    const char *why;
    CHECK(parse(head, &r, &why) < 0, "accepted: %s", head);
    CHECK(why && strstr(why, reason), "'%s': reason '%s', not '%s'", head, why ? why : "", reason);
}

int main(void)
{
    struct http_response r;
    const char *why;
    /* elfutils' debuginfod 0.188, a whole file. */
    CHECK(parse("HTTP/1.1 200 OK\r\nDate: Tue, 24 Nov 2026 20:22:30 GMT\r\n"
                "Content-Type: application/octet-stream\r\nX-DEBUGINFOD-SIZE: 17280\r\n"
                "X-DEBUGINFOD-FILE: p\r\nContent-Length: 17280\r\n\r\nBODY", &r, &why) == 0, "%s", why);
    CHECK(r.status == 200 && r.has_length && r.content_length == 17280 && !r.has_range);
    CHECK(r.has_debuginfod_size && r.debuginfod_size == 17280 && !r.close && !r.http10);
    CHECK(http_head_end("HTTP/1.1 200 OK\r\n\r\nBODY", 23) == 19);
    CHECK(http_head_end("HTTP/1.1 200 OK\r\nX: y\r\n", 24) == 0, "an unfinished head");
    CHECK(http_head_end("HTTP/1.1 200 OK\n\nBODY", 21) == 17, "bare LF");

    /* A range, names in any case, Connection: close among other tokens. */
    CHECK(parse("HTTP/1.0 206 Partial Content\r\ncontent-RANGE: bytes 65536-131071/1811024\r\n"
                "CONTENT-LENGTH:65536\r\nConnection: keep-alive, Close\r\n\r\n", &r, &why) == 0, "%s", why);
    CHECK(r.status == 206 && r.has_range && r.has_total && r.range_first == 65536 &&
          r.range_last == 131071 && r.range_total == 1811024 && r.content_length == 65536);
    CHECK(r.close && r.http10);
    CHECK(parse("HTTP/1.1 206 x\r\nContent-Range: bytes 0-9/*\r\nContent-Length: 10\r\n\r\n", &r,
                &why) == 0 && r.has_range && !r.has_total);
    CHECK(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", &r, &why) == 0 && r.chunked);
    CHECK(parse("HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n", &r, &why) == 0 && r.status == 404,
          "a status line without a reason");

    refused("HTTP/1.1 206 x\r\nContent-Range: bytes 10-9/100\r\n\r\n", "Content-Range");
    refused("HTTP/1.1 206 x\r\nContent-Range: bytes 0-100/100\r\n\r\n", "Content-Range");
    refused("HTTP/1.1 206 x\r\nContent-Range: bytes */100\r\n\r\n", "Content-Range");
    refused("HTTP/1.1 206 x\r\nContent-Range: bytes 0-9/100\r\nContent-Length: 11\r\n\r\n",
            "disagrees");
    refused("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", "two different");
    refused("HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n", "Content-Length");
    refused("HTTP/1.1 200 OK\r\nContent-Length: 1234567890123456789\r\n\r\n", "Content-Length");
    refused("HTTP/1.1 200 OK\r\nX-A: b\r\n folded\r\n\r\n", "folded");
    refused("HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "without a name");
    refused("HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", "header name");
    refused("HTTP/2 200\r\n\r\n", "status line");
    refused("HTTP/1.1 600 Odd\r\n\r\n", "status line");
    refused("HTTP/1.1 20 OK\r\n\r\n", "status line");
    refused("SSH-2.0-OpenSSH_9.2\r\n\r\n", "status line");
    char big[HTTP_HEAD_MAX + 64];
    memset(big, 'a', sizeof(big));
    memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
    memcpy(big + sizeof(big) - 5, "\r\n\r\n", 5);
    refused(big, "too long");
    char many[HTTP_HEADERS_MAX * 8 + 64] = "HTTP/1.1 200 OK\r\n";
    for (int i = 0; i <= HTTP_HEADERS_MAX; i++)
        strcat(many, "X: y\r\n");
    strcat(many, "\r\n");
    refused(many, "too many");

    struct http_url u;
    char err[256];
    CHECK(http_parse_url("http://127.0.0.1:8002/", &u, err, sizeof(err)) == 0, "%s", err);
    CHECK(strcmp(u.host_port, "127.0.0.1:8002") == 0 && u.prefix[0] == 0);
    CHECK(http_parse_url("http://[fe80::1%eth0]:8002/debuginfod//", &u, err, sizeof(err)) == 0);
    CHECK(strcmp(u.host_port, "[fe80::1%eth0]:8002") == 0 && strcmp(u.prefix, "/debuginfod") == 0,
          "%s %s", u.host_port, u.prefix);
    CHECK(http_parse_url("https://debuginfod.debian.net", &u, err, sizeof(err)) < 0 &&
          strstr(err, "https is not supported"));
    CHECK(http_parse_url("http://user@host/", &u, err, sizeof(err)) < 0);
    CHECK(http_parse_url("http:///x", &u, err, sizeof(err)) < 0);
    CHECK(http_parse_url("http://host/a b", &u, err, sizeof(err)) < 0);
    CHECK(http_parse_url("http://host/?q=1", &u, err, sizeof(err)) < 0);
    CHECK(http_parse_url("ftp://host/", &u, err, sizeof(err)) < 0);
    return test_end("test_http_response");
}
