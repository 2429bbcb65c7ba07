/* Frames over a socket, every operation bounded by a deadline so that a
 * silent or vanished peer gives an error instead of a hang. */
#include "shared/wire.h"
#include "shared/wire_tls.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int wait_fd(int fd, short events, long long deadline)
{
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct pollfd pfd = { .fd = fd, .events = events };
        int n = poll(&pfd, 1, (int)(left > 60000 ? 60000 : left));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n > 0)
            return 0;
    }
}

/* Through TLS (--key): the record layer may need to read to write and
 * write to read, and holds decrypted bytes poll cannot see. */
static int tls_io(int fd, void *t, uint8_t *p, size_t len, bool writing, long long deadline)
{
    short want = writing ? POLLOUT : POLLIN;
    while (len > 0) {
        if (!(!writing && wire_tls_pending(t)) && wait_fd(fd, want, deadline) < 0)
            return -1;
        long n = writing ? wire_tls_write(t, p, len, &want) : wire_tls_read(t, p, len, &want);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0) {
            errno = ECONNRESET;
            return -1;
        }
        want = writing ? POLLOUT : POLLIN;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int write_all(int fd, const uint8_t *p, size_t len, long long deadline)
{
    void *t = wire_tls_of(fd);
    if (t)
        return tls_io(fd, t, (uint8_t *)p, len, true, deadline);
    while (len > 0) {
        if (wait_fd(fd, POLLOUT, deadline) < 0)
            return -1;
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int read_all(int fd, uint8_t *p, size_t len, long long deadline)
{
    void *t = wire_tls_of(fd);
    if (t)
        return tls_io(fd, t, p, len, false, deadline);
    while (len > 0) {
        if (wait_fd(fd, POLLIN, deadline) < 0)
            return -1;
        ssize_t n = recv(fd, p, len, MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
                continue;
            return -1;
        }
        if (n == 0) {
            errno = ECONNRESET;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int wire_send(int fd, const struct byte_buf *b, int timeout_ms)
{
    return write_all(fd, b->data, b->len, now_ms() + timeout_ms);
}

int wire_recv(int fd, uint8_t *payload, uint32_t cap, uint32_t *len, uint8_t *type,
              uint8_t *flags, int timeout_ms)
{
    long long deadline = now_ms() + timeout_ms;
    uint8_t hdr[WIRE_HEADER_SIZE];
    if (read_all(fd, hdr, sizeof(hdr), deadline) < 0)
        return -1;
    if (wire_decode_header(hdr, len, type, flags) < 0) {
        errno = EPROTO;
        return -1;
    }
    if (*len > cap) {
        errno = EMSGSIZE;
        return -1;
    }
    return read_all(fd, payload, *len, deadline);
}

static bool type_is(const uint8_t hdr[WIRE_HEADER_SIZE], uint8_t type) { return hdr[4] == type; }

int wire_handshake(int fd, const char *my_name, char *peer_name, size_t peer_len,
                   int timeout_ms, char *err, size_t errlen)
{
    struct byte_buf b = { 0 };
    wire_encode_hello(&b, my_name);
    int rc = wire_send(fd, &b, timeout_ms);
    byte_buf_free(&b);
    if (rc < 0) {
        snprintf(err, errlen, "sending hello: %s", strerror(errno));
        return -1;
    }
    /* A hello is small: do not let the peer make us receive a megabyte first. */
    uint8_t payload[WIRE_MAX_NAME + 16];
    uint8_t hdr[WIRE_HEADER_SIZE];
    uint32_t len;
    uint8_t type, flags;
    long long deadline = now_ms() + timeout_ms;
    if (read_all(fd, hdr, sizeof(hdr), deadline) < 0) {
        snprintf(err, errlen, "waiting for hello: %s", strerror(errno));
        return -1;
    }
    if (!wire_tls_of(fd) && hdr[0] == 0x16 && hdr[1] == 0x03) {
        snprintf(err, errlen, "the peer uses a key (--key) and this side has none");
        return -1;
    }
    bool refused = type_is(hdr, WIRE_ERROR);
    if (wire_decode_header(hdr, &len, &type, &flags) < 0 ||
        (type != WIRE_HELLO && !refused) || len > sizeof(payload)) {
        snprintf(err, errlen, "peer does not speak the memtrace-fs protocol");
        return -1;
    }
    if (read_all(fd, payload, len, deadline) < 0) {
        snprintf(err, errlen, "reading hello: %s", strerror(errno));
        return -1;
    }
    static __thread struct wire_msg msg; /* large; one per thread is enough */
    const char *why = NULL;
    if (wire_decode(type, flags, payload, len, &msg, &why) < 0) {
        snprintf(err, errlen, "bad hello: %s", why);
        return -1;
    }
    if (refused) {
        snprintf(err, errlen, "refused by the peer: %s", msg.message);
        return -1;
    }
    if (msg.magic != WIRE_MAGIC) {
        snprintf(err, errlen, "peer does not speak the memtrace-fs protocol (bad magic)");
        return -1;
    }
    if (msg.version != WIRE_VERSION) {
        snprintf(err, errlen, "peer speaks protocol version %u, we speak %d", msg.version,
                 WIRE_VERSION);
        return -1;
    }
    if (peer_name && peer_len)
        snprintf(peer_name, peer_len, "%s", msg.name);
    return 0;
}

int wire_split_host_port(const char *spec, char *host, size_t hostlen, uint16_t *port,
                         uint16_t default_port)
{
    const char *end;
    const char *port_str = NULL;
    if (spec[0] == '[') {
        const char *close = strchr(spec, ']');
        if (!close)
            return -1;
        spec++;
        end = close;
        if (close[1] == ':')
            port_str = close + 2;
        else if (close[1] != 0)
            return -1;
    } else {
        const char *colon = strrchr(spec, ':');
        /* More than one colon and no brackets: a bare IPv6 address. */
        if (colon && strchr(spec, ':') == colon) {
            end = colon;
            port_str = colon + 1;
        } else {
            end = spec + strlen(spec);
        }
    }
    size_t n = (size_t)(end - spec);
    if (n == 0 || n >= hostlen)
        return -1;
    memcpy(host, spec, n);
    host[n] = 0;
    *port = default_port;
    if (port_str) {
        char *tail;
        unsigned long v = strtoul(port_str, &tail, 10);
        if (*port_str == 0 || *tail != 0 || v == 0 || v > 65535)
            return -1;
        *port = (uint16_t)v;
    }
    return 0;
}
