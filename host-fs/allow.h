/* --allow CIDR: which client addresses memtrace-fs serves (all when none given). */
#ifndef MTFS_ALLOW_H
#define MTFS_ALLOW_H

#include <stdbool.h>
#include <sys/socket.h>

#define ALLOW_MAX 32

struct allow_rule {
    int family; /* AF_INET or AF_INET6 */
    unsigned char addr[16];
    int prefix;
};

struct allow_list {
    struct allow_rule rules[ALLOW_MAX];
    int count;
};

/* "10.0.0.0/8", "fe80::/10", "192.168.1.7" (a host).  0, or -1 when bad or full. */
int allow_add(struct allow_list *l, const char *cidr);
/* True when the list is empty or a rule matches (IPv4-mapped IPv6 addresses
 * match IPv4 rules). */
bool allow_match(const struct allow_list *l, const struct sockaddr_storage *ss);

#endif
