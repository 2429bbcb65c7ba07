#include "host-fs/allow.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

int allow_add(struct allow_list *l, const char *cidr)
{
    if (l->count >= ALLOW_MAX)
        return -1;
    char addr[INET6_ADDRSTRLEN + 8];
    const char *slash = strchr(cidr, '/');
    size_t n = slash ? (size_t)(slash - cidr) : strlen(cidr);
    if (n == 0 || n >= sizeof(addr))
        return -1;
    memcpy(addr, cidr, n);
    addr[n] = 0;
    struct allow_rule r = { 0 };
    int max;
    if (inet_pton(AF_INET, addr, r.addr) == 1) {
        r.family = AF_INET;
        max = 32;
    } else if (inet_pton(AF_INET6, addr, r.addr) == 1) {
        r.family = AF_INET6;
        max = 128;
    } else {
        return -1;
    }
    r.prefix = max;
    if (slash) {
        char *end;
        long p = strtol(slash + 1, &end, 10);
        if (slash[1] == 0 || *end || p < 0 || p > max)
            return -1;
        r.prefix = (int)p;
    }
    l->rules[l->count++] = r;
    return 0;
}

static bool prefix_equal(const unsigned char *a, const unsigned char *b, int bits)
{
    int bytes = bits / 8, rest = bits % 8;
    if (memcmp(a, b, (size_t)bytes) != 0)
        return false;
    if (rest == 0)
        return true;
    unsigned char mask = (unsigned char)(0xff << (8 - rest));
    return (a[bytes] & mask) == (b[bytes] & mask);
}

bool allow_match(const struct allow_list *l, const struct sockaddr_storage *ss)
{
    if (l->count == 0)
        return true;
    unsigned char v4[4], v6[16];
    bool has4 = false, has6 = false;
    if (ss->ss_family == AF_INET) {
        memcpy(v4, &((const struct sockaddr_in *)ss)->sin_addr, 4);
        has4 = true;
    } else if (ss->ss_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
        memcpy(v6, a, 16);
        has6 = true;
        if (IN6_IS_ADDR_V4MAPPED(a)) {
            memcpy(v4, v6 + 12, 4);
            has4 = true;
        }
    }
    for (int i = 0; i < l->count; i++) {
        const struct allow_rule *r = &l->rules[i];
        if (r->family == AF_INET && has4 && prefix_equal(r->addr, v4, r->prefix))
            return true;
        if (r->family == AF_INET6 && has6 && prefix_equal(r->addr, v6, r->prefix))
            return true;
    }
    return false;
}
