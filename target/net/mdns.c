/* One-shot mDNS discovery of memtrace-fs (RFC 6762 section 5.1): queries go
 * from an ephemeral port (never 5353: no avahi-daemon or dbus needed on the
 * target, and no clash with a responder there) to 224.0.0.251:5353 on every
 * multicast IPv4 interface; responders answer by unicast to that port. */
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

/* Sends the query out of each multicast interface; returns how many took it. */
static int send_everywhere(int fd, const uint8_t *q, size_t len)
{
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) < 0)
        return 0;
    struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(MDNS_PORT) };
    inet_pton(AF_INET, "224.0.0.251", &to.sin_addr);
    int sent = 0;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
            continue;
        if (!(i->ifa_flags & IFF_UP) || !(i->ifa_flags & IFF_MULTICAST) ||
            (i->ifa_flags & IFF_LOOPBACK))
            continue;
        struct ip_mreqn m = { .imr_address = ((struct sockaddr_in *)i->ifa_addr)->sin_addr,
                              .imr_ifindex = (int)if_nametoindex(i->ifa_name) };
        if (setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &m, sizeof(m)) < 0)
            continue;
        if (sendto(fd, q, len, 0, (struct sockaddr *)&to, sizeof(to)) == (ssize_t)len)
            sent++;
    }
    freeifaddrs(ifs);
    return sent;
}

/* RFC 6762 section 11: answers come from the link, so a reply whose source
 * is on none of our IPv4 subnets is not from a neighbour and is ignored. */
static bool on_link(struct in_addr from)
{
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) < 0)
        return true; /* cannot tell: do not refuse everything */
    bool ok = false;
    for (struct ifaddrs *i = ifs; i && !ok; i = i->ifa_next) {
        if (!i->ifa_addr || !i->ifa_netmask || i->ifa_addr->sa_family != AF_INET)
            continue;
        uint32_t a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
        uint32_t m = ((struct sockaddr_in *)i->ifa_netmask)->sin_addr.s_addr;
        ok = (a & m) == (from.s_addr & m);
    }
    freeifaddrs(ifs);
    return ok;
}

static int send_query(int fd, uint16_t id, const char *name, const uint16_t *types, int n)
{
    uint8_t q[512];
    int len = mdns_build_query(q, sizeof(q), id, name, types, n);
    if (len < 0)
        return 0;
    return send_everywhere(fd, q, (size_t)len);
}

int mdns_discover(int timeout_ms, char *host_port, size_t len, char *err, size_t errlen)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "mDNS: socket: %s", strerror(errno));
        return -1;
    }
    /* Ephemeral port: bind to port 0 (explicitly, for clarity). */
    struct sockaddr_in any = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
    int ttl = 255; /* RFC 6762 section 11 */
    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof(ttl));
    if (bind(fd, (struct sockaddr *)&any, sizeof(any)) < 0) {
        snprintf(err, errlen, "mDNS: bind: %s", strerror(errno));
        close(fd);
        return -1;
    }
    uint16_t id;
    {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        id = (uint16_t)((ts.tv_nsec ^ getpid() ^ (ts.tv_sec << 7)) | 1);
    }
    static const uint16_t ptr_q[] = { MDNS_TYPE_PTR };
    static const uint16_t srv_q[] = { MDNS_TYPE_SRV, MDNS_TYPE_TXT };
    static const uint16_t a_q[] = { MDNS_TYPE_A };
    if (send_query(fd, id, SERVICE, ptr_q, 1) == 0) {
        snprintf(err, errlen, "mDNS: no multicast-capable network interface is up");
        close(fd);
        return -1;
    }
    struct mdns_table *t = xcalloc(1, sizeof(*t));
    long long start = now_ms(), deadline = start + timeout_ms, next_send = start + RESEND_MS;
    long long addr_wait_until = 0;
    char found[64] = "";
    int rc = -1;
    uint8_t pkt[9000];
    for (;;) {
        long long now = now_ms();
        if (found[0] && now >= addr_wait_until)
            break; /* have a fallback address and waited a little for an A record */
        if (now >= deadline)
            break;
        long long wake = next_send < deadline ? next_send : deadline;
        if (found[0] && addr_wait_until < wake)
            wake = addr_wait_until;
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        int n = poll(&pfd, 1, (int)(wake - now > 0 ? wake - now : 0));
        if (n < 0 && errno != EINTR)
            break;
        if (n <= 0) {
            if (now_ms() >= next_send) {
                send_query(fd, id, SERVICE, ptr_q, 1);
                next_send = now_ms() + RESEND_MS;
            }
            continue;
        }
        struct sockaddr_in from;
        socklen_t fl = sizeof(from);
        ssize_t got = recvfrom(fd, pkt, sizeof(pkt), 0, (struct sockaddr *)&from, &fl);
        if (got <= 0 || fl < sizeof(from) || from.sin_family != AF_INET ||
            ntohs(from.sin_port) != MDNS_PORT)
            continue; /* responders answer from 5353 only */
        if (!on_link(from.sin_addr))
            continue;
        if (mdns_parse_response(pkt, (size_t)got, id, from.sin_addr.s_addr, t) <= 0)
            continue;
        char hp[64];
        const char *need_srv, *need_addr;
        if (mdns_resolve(t, SERVICE, hp, sizeof(hp), &need_srv, &need_addr)) {
            if (!need_addr) {
                snprintf(host_port, len, "%s", hp);
                rc = 0;
                break;
            }
            if (!found[0]) {
                /* Only the sender's address so far: ask for the A record briefly. */
                snprintf(found, sizeof(found), "%s", hp);
                send_query(fd, id, need_addr, a_q, 1);
                addr_wait_until = now_ms() + 300;
            }
        } else if (need_srv) {
            char inst[MDNS_NAME_MAX];
            snprintf(inst, sizeof(inst), "%s", need_srv);
            send_query(fd, id, inst, srv_q, 2);
        }
    }
    if (rc < 0 && found[0]) {
        snprintf(host_port, len, "%s", found);
        rc = 0;
    }
    if (rc < 0)
        snprintf(err, errlen, "mDNS: no memtrace-fs answered within %d ms", timeout_ms);
    free(t);
    close(fd);
    return rc;
}
