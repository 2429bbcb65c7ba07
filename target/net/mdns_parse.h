/* DNS messages as mDNS uses them (RFC 1035 wire format, RFC 6762/6763):
 * building a query and parsing a response, every length checked, name
 * compression followed with a bounded number of backward jumps. */
#ifndef MT_NET_MDNS_PARSE_H
#define MT_NET_MDNS_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MDNS_TYPE_A 1
#define MDNS_TYPE_PTR 12
#define MDNS_TYPE_TXT 16
#define MDNS_TYPE_AAAA 28
#define MDNS_TYPE_SRV 33

/* Text form of a name: labels joined by '.', a '.' or '\' inside a label
 * escaped with '\' (instance names are free text: "memtrace-fs on box"). */
#define MDNS_NAME_MAX 1024

/* Who sent a response: the fallback address of a service without A/AAAA, and
 * the interface that scopes a link-local IPv6 address. */
struct mdns_peer {
    int family; /* AF_INET, AF_INET6, or 0 when unknown */
    uint8_t addr[16];
    uint32_t scope_id; /* interface index (IPv6) */
};

struct mdns_record {
    uint16_t type;
    uint32_t ttl;
    char name[MDNS_NAME_MAX];
    char target[MDNS_NAME_MAX]; /* PTR target, SRV target host */
    uint16_t port;               /* SRV */
    uint8_t addr[16];            /* A (4 bytes), AAAA (16) */
    int proto;                   /* TXT: value of "proto=", -1 when absent */
    struct mdns_peer from;       /* who sent it (given by the caller) */
};

#define MDNS_MAX_RECORDS 48

struct mdns_table {
    int count;
    struct mdns_record rec[MDNS_MAX_RECORDS];
};

/* Builds a standard query (id, one question per type, all for name) into buf.
 * Returns its length, or -1 when it does not fit. */
int mdns_build_query(uint8_t *buf, size_t cap, uint16_t id, const char *name,
                     const uint16_t *qtypes, int nq);

/* Parses a response with the given id and appends its PTR/SRV/TXT/A/AAAA
 * records to t (records beyond the table's room are dropped).  Returns the
 * number of records added, or -1 for a malformed or foreign packet. */
int mdns_parse_response(const uint8_t *pkt, size_t len, uint16_t id,
                        const struct mdns_peer *from, struct mdns_table *t);

/* Reads a possibly compressed name at *pos; advances *pos past it.  0 or -1. */
int mdns_read_name(const uint8_t *pkt, size_t len, size_t *pos, char *out, size_t outlen);

/* What the table knows about service (e.g. "_memtrace-fs._tcp.local"): the
 * first instance with an SRV record and an address (its A record, else its
 * AAAA record, else the address that sent the SRV).  Returns 1 and fills
 * host_port "A.B.C.D:PORT" or "[V6%IFNAME]:PORT";
 * 0 when more is needed, with *need_srv / *need_addr naming what to ask next
 * (pointers into t, valid until t changes; NULL when nothing). */
int mdns_resolve(const struct mdns_table *t, const char *service, char *host_port,
                 size_t len, const char **need_srv, const char **need_addr);

#endif
