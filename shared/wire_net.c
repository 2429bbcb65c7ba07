#include "shared/wire_net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "shared/wire.h"

/* One request in flight at a time: Nagle would only add latency. */
static void tune(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
}

void wire_format_addr(const struct sockaddr *sa, socklen_t len, char *out, size_t outlen)
{
    char host[NI_MAXHOST], serv[NI_MAXSERV];
    if (getnameinfo(sa, len, host, sizeof(host), serv, sizeof(serv),
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
        snprintf(out, outlen, "?");
        return;
    }
    if (strchr(host, ':'))
        snprintf(out, outlen, "[%s]:%s", host, serv);
    else
        snprintf(out, outlen, "%s:%s", host, serv);
}

static int connect_one(const struct addrinfo *ai, int timeout_ms)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                    ai->ai_protocol);
    if (fd < 0)
        return -1;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
        if (errno != EINPROGRESS) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        struct pollfd pfd = { .fd = fd, .events = POLLOUT };
        int n;
        do
            n = poll(&pfd, 1, timeout_ms);
        while (n < 0 && errno == EINTR);
        int soerr = 0;
        socklen_t sl = sizeof(soerr);
        if (n == 0)
            soerr = ETIMEDOUT;
        else if (n < 0)
            soerr = errno;
        else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
            soerr = errno;
        if (soerr) {
            close(fd);
            errno = soerr;
            return -1;
        }
    }
    tune(fd);
    return fd;
}

int wire_connect(const char *spec, uint16_t default_port, int timeout_ms, char *err,
                 size_t errlen)
{
    char host[256], port_str[8];
    uint16_t port;
    if (wire_split_host_port(spec, host, sizeof(host), &port, default_port) < 0) {
        snprintf(err, errlen, "bad address \"%s\" (HOST[:PORT] expected)", spec);
        return -1;
    }
    snprintf(port_str, sizeof(port_str), "%u", port);
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG };
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(host, port_str, &hints, &res);
    if (gai == EAI_NONAME || gai == EAI_ADDRFAMILY || gai == EAI_NODATA) {
        /* AI_ADDRCONFIG hides addresses when only loopback or link-local exist. */
        hints.ai_flags = 0;
        gai = getaddrinfo(host, port_str, &hints, &res);
    }
    if (gai != 0) {
        snprintf(err, errlen, "%s: %s", host, gai_strerror(gai));
        return -1;
    }
    int fd = -1, last = ECONNREFUSED;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = connect_one(ai, timeout_ms);
        if (fd < 0)
            last = errno;
    }
    freeaddrinfo(res);
    if (fd < 0)
        snprintf(err, errlen, "connecting to %s:%u: %s", host, port, strerror(last));
    return fd;
}

static int listen_on(int family, const struct sockaddr *sa, socklen_t len)
{
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1, zero = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    if (bind(fd, sa, len) < 0 || listen(fd, 16) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int wire_listen(const char *addr, uint16_t port, char *err, size_t errlen)
{
    if (!addr || !*addr || strcmp(addr, "*") == 0) {
        struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(port),
                                   .sin6_addr = IN6ADDR_ANY_INIT };
        int fd = listen_on(AF_INET6, (struct sockaddr *)&s6, sizeof(s6));
        if (fd >= 0)
            return fd;
        struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons(port),
                                  .sin_addr.s_addr = htonl(INADDR_ANY) };
        fd = listen_on(AF_INET, (struct sockaddr *)&s4, sizeof(s4));
        if (fd < 0)
            snprintf(err, errlen, "listening on port %u: %s", port, strerror(errno));
        return fd;
    }
    char port_str[8];
    snprintf(port_str, sizeof(port_str), "%u", port);
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE };
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(addr, port_str, &hints, &res);
    if (gai != 0) {
        snprintf(err, errlen, "%s: %s", addr, gai_strerror(gai));
        return -1;
    }
    int fd = -1, last = EADDRNOTAVAIL;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = listen_on(ai->ai_family, ai->ai_addr, ai->ai_addrlen);
        if (fd < 0)
            last = errno;
    }
    freeaddrinfo(res);
    if (fd < 0)
        snprintf(err, errlen, "listening on %s:%u: %s", addr, port, strerror(last));
    return fd;
}

int wire_accept(int lfd, int timeout_ms, char *peer, size_t peerlen,
                struct sockaddr_storage *addr)
{
    struct pollfd pfd = { .fd = lfd, .events = POLLIN };
    int n;
    do
        n = poll(&pfd, 1, timeout_ms);
    while (n < 0 && errno == EINTR);
    if (n == 0)
        errno = ETIMEDOUT;
    if (n <= 0)
        return -1;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
    if (fd < 0)
        return -1;
    tune(fd);
    if (peer)
        wire_format_addr((struct sockaddr *)&ss, sl, peer, peerlen);
    if (addr)
        *addr = ss;
    return fd;
}

uint16_t wire_local_port(int fd)
{
    union {
        struct sockaddr sa;
        struct sockaddr_in in4;
        struct sockaddr_in6 in6;
        struct sockaddr_storage ss;
    } u;
    memset(&u, 0, sizeof(u)); /* getsockname may fill less */
    socklen_t sl = sizeof(u);
    if (getsockname(fd, &u.sa, &sl) < 0)
        return 0;
    return ntohs(u.sa.sa_family == AF_INET6 ? u.in6.sin6_port : u.in4.sin_port);
}
