/* One-shot mDNS discovery of memtrace-fs (RFC 6762 section 5.1): queries go
 * from an ephemeral port (never 5353: no avahi-daemon or dbus needed on the
 * target, and no clash with a responder there) to 224.0.0.251:5353 and
 * [ff02::fb]:5353 on every multicast interface; responders answer by unicast
 * to that port. */
#include "target/net/remote.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "shared/xalloc.h"
#include "target/net/mdns_parse.h"

#define SERVICE "_memtrace-fs._tcp.local"
#define MDNS_PORT 5353
#define RESEND_MS 1000

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool usable(const struct ifaddrs *i, int family)
{
    return i->ifa_addr && i->ifa_addr->sa_family == family && (i->ifa_flags & IFF_UP) &&
           (i->ifa_flags & IFF_MULTICAST) && !(i->ifa_flags & IFF_LOOPBACK);
}

/* Sends the query out of each multicast interface of the socket's family;
 * returns how many took it. */
static int send_everywhere(int fd, int family, const uint8_t *q, size_t len)
{
    if (fd < 0)
        return 0;
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) < 0)
        return 0;
    int sent = 0;
    unsigned done[64];
    int ndone = 0;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!usable(i, family))
            continue;
        unsigned index = if_nametoindex(i->ifa_name);
        bool seen = false;
        for (int k = 0; k < ndone; k++)
            seen |= done[k] == index;
        if (seen || index == 0)
            continue; /* once per interface, not per address */
        if (ndone < 64)
            done[ndone++] = index;
        if (family == AF_INET) {
            struct ip_mreqn m = { .imr_address = ((struct sockaddr_in *)i->ifa_addr)->sin_addr,
                                  .imr_ifindex = (int)index };
            struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(MDNS_PORT) };
            inet_pton(AF_INET, "224.0.0.251", &to.sin_addr);
            if (setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &m, sizeof(m)) == 0 &&
                sendto(fd, q, len, 0, (struct sockaddr *)&to, sizeof(to)) == (ssize_t)len)
                sent++;
        } else {
            struct sockaddr_in6 to = { .sin6_family = AF_INET6, .sin6_port = htons(MDNS_PORT),
                                       .sin6_scope_id = index };
            inet_pton(AF_INET6, "ff02::fb", &to.sin6_addr);
            if (setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &index, sizeof(index)) == 0 &&
                sendto(fd, q, len, 0, (struct sockaddr *)&to, sizeof(to)) == (ssize_t)len)
                sent++;
        }
    }
    freeifaddrs(ifs);
    return sent;
}

static bool same_prefix(const uint8_t *a, const uint8_t *b, const uint8_t *mask, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if ((a[k] & mask[k]) != (b[k] & mask[k]))
            return false;
    return true;
}

/* RFC 6762 section 11: answers come from the link, so a reply whose source
 * is on none of our subnets (or, in IPv6, not link-local) is ignored. */
static bool on_link(const struct mdns_peer *from)
{
    if (from->family == AF_INET6 && from->addr[0] == 0xfe && (from->addr[1] & 0xc0) == 0x80)
        return true;
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) < 0)
        return true; /* cannot tell: do not refuse everything */
    bool ok = false;
    for (struct ifaddrs *i = ifs; i && !ok; i = i->ifa_next) {
        if (!i->ifa_addr || !i->ifa_netmask || i->ifa_addr->sa_family != from->family)
            continue;
        if (from->family == AF_INET)
            ok = same_prefix((const uint8_t *)&((struct sockaddr_in *)i->ifa_addr)->sin_addr,
                             from->addr,
                             (const uint8_t *)&((struct sockaddr_in *)i->ifa_netmask)->sin_addr,
                             4);
        else
            ok = same_prefix((const uint8_t *)&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr,
                             from->addr,
                             (const uint8_t *)&((struct sockaddr_in6 *)i->ifa_netmask)->sin6_addr,
                             16);
    }
    freeifaddrs(ifs);
    return ok;
}

struct query_socks {
    int fd4, fd6;
    uint16_t id;
};

static int send_query(const struct query_socks *qs, const char *name, const uint16_t *types,
                      int n)
{
    uint8_t q[512];
    int len = mdns_build_query(q, sizeof(q), qs->id, name, types, n);
    if (len < 0)
        return 0;
    return send_everywhere(qs->fd4, AF_INET, q, (size_t)len) +
           send_everywhere(qs->fd6, AF_INET6, q, (size_t)len);
}

/* A UDP socket of family on an ephemeral port (bound to port 0 explicitly). */
static int open_socket(int family)
{
    int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int hops = 255; /* RFC 6762 section 11 */
    int r;
    if (family == AF_INET) {
        setsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &hops, sizeof(hops));
        struct sockaddr_in any = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
        r = bind(fd, (struct sockaddr *)&any, sizeof(any));
    } else {
        int one = 1;
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
        setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &hops, sizeof(hops));
        struct sockaddr_in6 any = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT };
        r = bind(fd, (struct sockaddr *)&any, sizeof(any));
    }
    if (r < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Receives one datagram from fd into t when it is a response from port 5353
 * on our link.  Returns what mdns_parse_response returned, or -1. */
static int receive(int fd, uint16_t id, uint8_t *pkt, size_t cap, struct mdns_table *t)
{
    struct sockaddr_storage ss = { 0 }; /* recvfrom may fill less */
    socklen_t sl = sizeof(ss);
    ssize_t got = recvfrom(fd, pkt, cap, 0, (struct sockaddr *)&ss, &sl);
    if (got <= 0)
        return -1;
    struct mdns_peer from = { 0 };
    if (ss.ss_family == AF_INET && sl >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;
        if (ntohs(s4->sin_port) != MDNS_PORT)
            return -1; /* responders answer from 5353 only */
        from.family = AF_INET;
        memcpy(from.addr, &s4->sin_addr, 4);
    } else if (ss.ss_family == AF_INET6 && sl >= sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;
        if (ntohs(s6->sin6_port) != MDNS_PORT)
            return -1;
        from.family = AF_INET6;
        memcpy(from.addr, &s6->sin6_addr, 16);
        from.scope_id = s6->sin6_scope_id;
    } else {
        return -1;
    }
    if (!on_link(&from))
        return -1;
    return mdns_parse_response(pkt, (size_t)got, id, &from, t);
}

int mdns_discover(int timeout_ms, char *host_port, size_t len, char *err, size_t errlen)
{
    struct query_socks qs = { .fd4 = open_socket(AF_INET), .fd6 = open_socket(AF_INET6) };
    if (qs.fd4 < 0 && qs.fd6 < 0) {
        snprintf(err, errlen, "mDNS: cannot open a UDP socket: %s", strerror(errno));
        return -1;
    }
    {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        /* Unsigned: time_t is 32 bits on i386 and the shift would overflow. */
        qs.id = (uint16_t)(((uint64_t)ts.tv_nsec ^ (uint64_t)getpid() ^ ((uint64_t)ts.tv_sec << 7)) | 1);
    }
    static const uint16_t ptr_q[] = { MDNS_TYPE_PTR };
    static const uint16_t srv_q[] = { MDNS_TYPE_SRV, MDNS_TYPE_TXT };
    static const uint16_t addr_q[] = { MDNS_TYPE_A, MDNS_TYPE_AAAA };
    int rc = -1;
    if (send_query(&qs, SERVICE, ptr_q, 1) == 0) {
        snprintf(err, errlen, "mDNS: no multicast-capable network interface is up");
        goto out;
    }
    struct mdns_table *t = xcalloc(1, sizeof(*t));
    long long start = now_ms(), deadline = start + timeout_ms, next_send = start + RESEND_MS;
    long long addr_wait_until = 0;
    char found[128] = "";
    uint8_t pkt[9000];
    for (;;) {
        long long now = now_ms();
        if (found[0] && now >= addr_wait_until)
            break; /* have a fallback address and waited a little for a record */
        if (now >= deadline)
            break;
        long long wake = next_send < deadline ? next_send : deadline;
        if (found[0] && addr_wait_until < wake)
            wake = addr_wait_until;
        struct pollfd pfd[2] = { { .fd = qs.fd4, .events = POLLIN },
                                 { .fd = qs.fd6, .events = POLLIN } };
        int n = poll(pfd, 2, (int)(wake - now > 0 ? wake - now : 0));
        if (n < 0 && errno != EINTR)
            break;
        if (n <= 0) {
            if (now_ms() >= next_send) {
                send_query(&qs, SERVICE, ptr_q, 1);
                next_send = now_ms() + RESEND_MS;
            }
            continue;
        }
        int added = 0;
        for (int k = 0; k < 2; k++)
            if (pfd[k].revents & POLLIN)
                added += receive(pfd[k].fd, qs.id, pkt, sizeof(pkt), t) > 0;
        if (!added)
            continue;
        char hp[128];
        const char *need_srv, *need_addr;
        if (mdns_resolve(t, SERVICE, hp, sizeof(hp), &need_srv, &need_addr)) {
            if (!need_addr) {
                snprintf(host_port, len, "%s", hp);
                rc = 0;
                break;
            }
            if (!found[0]) {
                /* Only the sender's address so far: ask for the records briefly. */
                snprintf(found, sizeof(found), "%s", hp);
                send_query(&qs, need_addr, addr_q, 2);
                addr_wait_until = now_ms() + 300;
            }
        } else if (need_srv) {
            char inst[MDNS_NAME_MAX];
            snprintf(inst, sizeof(inst), "%s", need_srv);
            send_query(&qs, inst, srv_q, 2);
        }
    }
    if (rc < 0 && found[0]) {
        snprintf(host_port, len, "%s", found);
        rc = 0;
    }
    if (rc < 0)
        snprintf(err, errlen, "mDNS: no memtrace-fs answered within %d ms", timeout_ms);
    free(t);
out:
    if (qs.fd4 >= 0)
        close(qs.fd4);
    if (qs.fd6 >= 0)
        close(qs.fd6);
    return rc;
}
