/* mDNS message tests.
 *
 *   test_mdns                 builds responses (with name compression) byte by
 *                             byte and checks what the parser makes of them,
 *                             and that every truncation and bad pointer is refused
 *   test_mdns discover MS     runs mdns_discover and prints "found HOST:PORT"
 *                             (used by net_mdns.sh inside a network namespace)
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/net/mdns_parse.h"
#include "target/net/remote.h"
#include "selftest/unit/test.h"

struct pkt {
    uint8_t b[1500];
    size_t n;
};

static void u8(struct pkt *p, unsigned v) { p->b[p->n++] = (uint8_t)v; }
static void u16(struct pkt *p, unsigned v) { u8(p, v >> 8); u8(p, v & 0xff); }
static void u32(struct pkt *p, unsigned v) { u16(p, v >> 16); u16(p, v & 0xffff); }
static void label(struct pkt *p, const char *s)
{
    u8(p, (unsigned)strlen(s));
    memcpy(p->b + p->n, s, strlen(s));
    p->n += strlen(s);
}
static void pointer(struct pkt *p, size_t to) { u16(p, 0xc000 | (unsigned)to); }

/* A response as avahi sends to a legacy unicast PTR query: question echoed,
 * PTR answer, SRV/TXT/A in additional records, names compressed. */
static size_t build_response(struct pkt *p, uint16_t id)
{
    p->n = 0;
    u16(p, id); u16(p, 0x8400); u16(p, 1); u16(p, 1); u16(p, 0); u16(p, 3);
    size_t service = p->n; /* _memtrace-fs._tcp.local */
    label(p, "_memtrace-fs"); label(p, "_tcp");
    size_t local = p->n;
    label(p, "local"); u8(p, 0);
    u16(p, 12); u16(p, 1);
    /* answer: PTR */
    pointer(p, service); u16(p, 12); u16(p, 1); u32(p, 10);
    size_t rdlen_at = p->n; u16(p, 0);
    size_t instance = p->n;
    label(p, "memtrace-fs on box.1"); pointer(p, service);
    p->b[rdlen_at + 1] = (uint8_t)(p->n - rdlen_at - 2);
    /* SRV */
    pointer(p, instance); u16(p, 33); u16(p, 0x8001); u32(p, 10);
    rdlen_at = p->n; u16(p, 0);
    u16(p, 0); u16(p, 0); u16(p, 3002);
    size_t host = p->n;
    label(p, "box"); pointer(p, local);
    p->b[rdlen_at + 1] = (uint8_t)(p->n - rdlen_at - 2);
    /* TXT */
    pointer(p, instance); u16(p, 16); u16(p, 0x8001); u32(p, 10);
    u16(p, 8 + 16);
    label(p, "proto=1"); label(p, "sysroots=/srv/a");
    /* A */
    pointer(p, host); u16(p, 1); u16(p, 0x8001); u32(p, 10); u16(p, 4);
    u8(p, 169); u8(p, 254); u8(p, 7); u8(p, 1);
    return p->n;
}

static void test_good_response(void)
{
    struct pkt p;
    size_t n = build_response(&p, 0x1234);
    struct mdns_table *t = calloc(1, sizeof(*t));
    CHECK(mdns_parse_response(p.b, n, 0x1234, NULL, t) == 4);
    CHECK(t->count == 4);
    CHECK(t->rec[0].type == MDNS_TYPE_PTR && strcmp(t->rec[0].name, "_memtrace-fs._tcp.local") == 0);
    CHECK(strcmp(t->rec[0].target, "memtrace-fs on box\\.1._memtrace-fs._tcp.local") == 0);
    CHECK(t->rec[1].type == MDNS_TYPE_SRV && t->rec[1].port == 3002 &&
          strcmp(t->rec[1].target, "box.local") == 0);
    CHECK(t->rec[2].type == MDNS_TYPE_TXT && t->rec[2].proto == 1);
    char hp[64];
    const char *ns, *na;
    CHECK(mdns_resolve(t, "_memtrace-fs._tcp.local", hp, sizeof(hp), &ns, &na) == 1);
    CHECK(strcmp(hp, "169.254.7.1:3002") == 0);
    CHECK(!ns && !na);
    /* Wrong id: not ours. */
    t->count = 0;
    CHECK(mdns_parse_response(p.b, n, 0x1235, NULL, t) < 0);
    /* Every truncation is refused or parsed partially, never read beyond. */
    for (size_t k = 0; k < n; k++) {
        uint8_t *copy = malloc(k ? k : 1);
        memcpy(copy, p.b, k);
        t->count = 0;
        CHECK(mdns_parse_response(copy, k, 0x1234, NULL, t) < 0);
        free(copy);
    }
    free(t);
}

static void test_partial_answers(void)
{
    /* Only the PTR: resolve asks for the SRV of the instance. */
    struct pkt p;
    size_t n = build_response(&p, 7);
    p.b[11] = 0; /* no additional records */
    struct mdns_table *t = calloc(1, sizeof(*t));
    CHECK(mdns_parse_response(p.b, n, 7, NULL, t) == 1);
    char hp[64];
    const char *ns, *na;
    CHECK(mdns_resolve(t, "_memtrace-fs._tcp.local", hp, sizeof(hp), &ns, &na) == 0);
    CHECK(ns && strcmp(ns, "memtrace-fs on box\\.1._memtrace-fs._tcp.local") == 0);
    /* With the SRV but no A: the sender's address is used, and A is wanted. */
    t->count = 0;
    p.b[11] = 1;
    struct mdns_peer from = { .family = AF_INET, .addr = { 169, 254, 2, 2 } };
    CHECK(mdns_parse_response(p.b, n, 7, &from, t) == 2);
    CHECK(mdns_resolve(t, "_memtrace-fs._tcp.local", hp, sizeof(hp), &ns, &na) == 1);
    CHECK(strcmp(hp, "169.254.2.2:3002") == 0 && na && strcmp(na, "box.local") == 0);
    /* The same from an IPv6 responder on interface 1 (lo): scoped address. */
    t->count = 0;
    struct mdns_peer from6 = { .family = AF_INET6, .scope_id = 1 };
    inet_pton(AF_INET6, "fe80::1", from6.addr);
    CHECK(mdns_parse_response(p.b, n, 7, &from6, t) == 2);
    CHECK(mdns_resolve(t, "_memtrace-fs._tcp.local", hp, sizeof(hp), &ns, &na) == 1);
    CHECK(strcmp(hp, "[fe80::1%lo]:3002") == 0);
    free(t);
}

static void test_bad_names(void)
{
    char out[MDNS_NAME_MAX];
    size_t pos;
    /* A pointer to itself. */
    uint8_t self[] = { 0, 0, 0xc0, 2 };
    pos = 2;
    CHECK(mdns_read_name(self, sizeof(self), &pos, out, sizeof(out)) < 0);
    /* A forward pointer. */
    uint8_t fwd[] = { 0xc0, 2, 1, 'a', 0 };
    pos = 0;
    CHECK(mdns_read_name(fwd, sizeof(fwd), &pos, out, sizeof(out)) < 0);
    /* A label running off the end. */
    uint8_t run[] = { 10, 'a', 'b' };
    pos = 0;
    CHECK(mdns_read_name(run, sizeof(run), &pos, out, sizeof(out)) < 0);
    /* Reserved label type. */
    uint8_t res[] = { 0x40, 0 };
    pos = 0;
    CHECK(mdns_read_name(res, sizeof(res), &pos, out, sizeof(out)) < 0);
    /* Longer than 255 bytes on the wire, built from a pointer chain. */
    uint8_t lng[400];
    size_t n = 0;
    for (int i = 0; i < 5; i++) {
        lng[n++] = 63;
        memset(lng + n, 'x', 63);
        n += 63;
    }
    lng[n++] = 0;
    pos = 0;
    CHECK(mdns_read_name(lng, n, &pos, out, sizeof(out)) < 0);
    /* A good one with a pointer: position ends after the pointer. */
    uint8_t ok[] = { 3, 'f', 'o', 'o', 0, 3, 'b', 'a', 'r', 0xc0, 0 };
    pos = 5;
    CHECK(mdns_read_name(ok, sizeof(ok), &pos, out, sizeof(out)) == 0);
    CHECK(strcmp(out, "bar.foo") == 0 && pos == sizeof(ok));
    /* Queries round-trip through the name reader. */
    uint8_t q[512];
    uint16_t types[] = { MDNS_TYPE_SRV, MDNS_TYPE_TXT };
    int ql = mdns_build_query(q, sizeof(q), 9, "a\\.b.c.local", types, 2);
    CHECK(ql > 12);
    pos = 12;
    CHECK(mdns_read_name(q, (size_t)ql, &pos, out, sizeof(out)) == 0 &&
          strcmp(out, "a\\.b.c.local") == 0);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "discover") == 0) {
        char hp[128], err[256];
        if (mdns_discover(argc > 2 ? atoi(argv[2]) : 3000, hp, sizeof(hp), err,
                          sizeof(err)) < 0) {
            printf("not-found %s\n", err);
            return 3;
        }
        printf("found %s\n", hp);
        return 0;
    }
    test_good_response();
    test_partial_answers();
    test_bad_names();
    return test_end("test_mdns");
}
