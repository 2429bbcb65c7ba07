#include "target/net/mdns_parse.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define HEADER_SIZE 12
#define MAX_JUMPS 32

static uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int mdns_read_name(const uint8_t *pkt, size_t len, size_t *pos, char *out, size_t outlen)
{
    size_t p = *pos, o = 0, wire_len = 0;
    size_t end = 0; /* where the name ends in the stream: after the first pointer */
    bool jumped = false;
    int jumps = 0;
    if (outlen == 0)
        return -1;
    out[0] = 0;
    for (;;) {
        if (p >= len)
            return -1;
        uint8_t l = pkt[p];
        if (l == 0) {
            p++;
            break;
        }
        if ((l & 0xc0) == 0xc0) {
            if (p + 1 >= len)
                return -1;
            size_t target = (size_t)(l & 0x3f) << 8 | pkt[p + 1];
            /* Only backwards, and not forever. */
            if (target >= p || ++jumps > MAX_JUMPS)
                return -1;
            if (!jumped)
                end = p + 2;
            jumped = true;
            p = target;
            continue;
        }
        if (l & 0xc0)
            return -1; /* 0x40 and 0x80 label types are obsolete */
        if (p + 1 + l > len)
            return -1;
        wire_len += (size_t)l + 1;
        if (wire_len > 255)
            return -1;
        if (o > 0) {
            if (o + 1 >= outlen)
                return -1;
            out[o++] = '.';
        }
        for (size_t i = 0; i < l; i++) {
            char c = (char)pkt[p + 1 + i];
            if (c == '.' || c == '\\') {
                if (o + 1 >= outlen)
                    return -1;
                out[o++] = '\\';
            }
            if (o + 1 >= outlen)
                return -1;
            out[o++] = c ? c : '?';
        }
        out[o] = 0;
        p += 1 + (size_t)l;
    }
    *pos = jumped ? end : p;
    return 0;
}

/* Writes a text-form name as labels (undoing the escapes). */
static int put_name(uint8_t *buf, size_t cap, size_t *pos, const char *name)
{
    size_t p = *pos;
    const char *s = name;
    while (*s) {
        size_t len_at = p++;
        size_t l = 0;
        while (*s && *s != '.') {
            if (*s == '\\' && s[1])
                s++;
            if (p >= cap || l >= 63)
                return -1;
            buf[p++] = (uint8_t)*s++;
            l++;
        }
        if (len_at >= cap || l == 0)
            return -1;
        buf[len_at] = (uint8_t)l;
        if (*s == '.')
            s++;
    }
    if (p >= cap)
        return -1;
    buf[p++] = 0;
    *pos = p;
    return 0;
}

int mdns_build_query(uint8_t *buf, size_t cap, uint16_t id, const char *name,
                     const uint16_t *qtypes, int nq)
{
    if (cap < HEADER_SIZE || nq <= 0 || nq > 8)
        return -1;
    memset(buf, 0, HEADER_SIZE);
    buf[0] = (uint8_t)(id >> 8);
    buf[1] = (uint8_t)id;
    buf[5] = (uint8_t)nq;
    size_t p = HEADER_SIZE;
    for (int i = 0; i < nq; i++) {
        if (put_name(buf, cap, &p, name) < 0 || cap - p < 4)
            return -1;
        buf[p++] = (uint8_t)(qtypes[i] >> 8);
        buf[p++] = (uint8_t)qtypes[i];
        buf[p++] = 0;
        buf[p++] = 1; /* IN; QU bit clear: one-shot queries get unicast replies anyway */
    }
    return (int)p;
}

/* "proto=N" among the TXT strings, -1 when absent. */
static int txt_proto(const uint8_t *d, size_t n)
{
    size_t p = 0;
    while (p < n) {
        size_t l = d[p++];
        if (l > n - p)
            return -1;
        if (l > 6 && strncasecmp((const char *)d + p, "proto=", 6) == 0) {
            int v = 0;
            for (size_t i = 6; i < l && i < 12; i++) {
                if (d[p + i] < '0' || d[p + i] > '9')
                    return 0;
                v = v * 10 + (d[p + i] - '0');
            }
            return v;
        }
        p += l;
    }
    return -1;
}

int mdns_parse_response(const uint8_t *pkt, size_t len, uint16_t id,
                        const struct mdns_peer *from, struct mdns_table *t)
{
    if (len < HEADER_SIZE)
        return -1;
    uint16_t flags = be16(pkt + 2);
    if (be16(pkt) != id || !(flags & 0x8000) || (flags & 0x7800) || (flags & 0x000f))
        return -1; /* not our answer, not a response, other opcode, or an error */
    unsigned qd = be16(pkt + 4);
    unsigned rr = (unsigned)be16(pkt + 6) + be16(pkt + 8) + be16(pkt + 10);
    size_t p = HEADER_SIZE;
    char scratch[MDNS_NAME_MAX];
    for (unsigned i = 0; i < qd; i++) {
        if (mdns_read_name(pkt, len, &p, scratch, sizeof(scratch)) < 0 || len - p < 4)
            return -1;
        p += 4;
    }
    int added = 0;
    for (unsigned i = 0; i < rr; i++) {
        struct mdns_record r;
        if (mdns_read_name(pkt, len, &p, r.name, sizeof(r.name)) < 0 || len - p < 10)
            return -1;
        r.type = be16(pkt + p);
        r.ttl = be32(pkt + p + 4);
        size_t rdlen = be16(pkt + p + 8);
        p += 10;
        if (rdlen > len - p)
            return -1;
        size_t rd = p, rd_end = p + rdlen;
        p = rd_end;
        r.target[0] = 0;
        r.port = 0;
        r.proto = -1;
        if (from)
            r.from = *from;
        else
            memset(&r.from, 0, sizeof(r.from));
        memset(r.addr, 0, sizeof(r.addr));
        size_t q = rd;
        switch (r.type) {
        case MDNS_TYPE_PTR:
            if (mdns_read_name(pkt, rd_end, &q, r.target, sizeof(r.target)) < 0)
                return -1;
            break;
        case MDNS_TYPE_SRV:
            if (rdlen < 7)
                return -1;
            r.port = be16(pkt + rd + 4);
            q = rd + 6;
            if (mdns_read_name(pkt, rd_end, &q, r.target, sizeof(r.target)) < 0)
                return -1;
            break;
        case MDNS_TYPE_TXT:
            r.proto = txt_proto(pkt + rd, rdlen);
            break;
        case MDNS_TYPE_A:
            if (rdlen != 4)
                return -1;
            memcpy(r.addr, pkt + rd, 4);
            break;
        case MDNS_TYPE_AAAA:
            if (rdlen != 16)
                return -1;
            memcpy(r.addr, pkt + rd, 16);
            break;
        default:
            continue;
        }
        if (r.ttl == 0)
            continue; /* a goodbye: the record is going away */
        if (t->count < MDNS_MAX_RECORDS) {
            t->rec[t->count++] = r;
            added++;
        }
    }
    return added;
}

static const struct mdns_record *find(const struct mdns_table *t, uint16_t type,
                                      const char *name)
{
    for (int i = 0; i < t->count; i++)
        if (t->rec[i].type == type && strcasecmp(t->rec[i].name, name) == 0)
            return &t->rec[i];
    return NULL;
}

/* "[addr%ifname]" for a link-local IPv6 address, "[addr]" for another. */
static void format_v6(const uint8_t addr[16], uint32_t scope, char *out, size_t len)
{
    char a[INET6_ADDRSTRLEN], ifname[IF_NAMESIZE];
    inet_ntop(AF_INET6, addr, a, sizeof(a));
    bool link_local = addr[0] == 0xfe && (addr[1] & 0xc0) == 0x80;
    if (link_local && scope && if_indextoname(scope, ifname))
        snprintf(out, len, "[%s%%%s]", a, ifname);
    else if (link_local && scope)
        snprintf(out, len, "[%s%%%u]", a, scope);
    else
        snprintf(out, len, "[%s]", a);
}

static bool format_peer(const struct mdns_peer *p, char *out, size_t len)
{
    if (p->family == AF_INET) {
        inet_ntop(AF_INET, p->addr, out, (socklen_t)len);
        return true;
    }
    if (p->family == AF_INET6) {
        format_v6(p->addr, p->scope_id, out, len);
        return true;
    }
    return false;
}

int mdns_resolve(const struct mdns_table *t, const char *service, char *host_port,
                 size_t len, const char **need_srv, const char **need_addr)
{
    *need_srv = *need_addr = NULL;
    for (int i = 0; i < t->count; i++) {
        const struct mdns_record *ptr = &t->rec[i];
        if (ptr->type != MDNS_TYPE_PTR || strcasecmp(ptr->name, service) != 0)
            continue;
        const struct mdns_record *txt = find(t, MDNS_TYPE_TXT, ptr->target);
        if (txt && txt->proto > 0 && txt->proto != 1)
            continue; /* speaks a protocol we do not */
        const struct mdns_record *srv = find(t, MDNS_TYPE_SRV, ptr->target);
        if (!srv) {
            if (!*need_srv)
                *need_srv = ptr->target;
            continue;
        }
        const struct mdns_record *a = find(t, MDNS_TYPE_A, srv->target);
        const struct mdns_record *aaaa = find(t, MDNS_TYPE_AAAA, srv->target);
        char addr[INET6_ADDRSTRLEN + IF_NAMESIZE + 8];
        if (a) {
            inet_ntop(AF_INET, a->addr, addr, sizeof(addr));
        } else if (aaaa) {
            /* A link-local address means the interface the answer came in on. */
            format_v6(aaaa->addr, aaaa->from.family == AF_INET6 ? aaaa->from.scope_id : 0,
                      addr, sizeof(addr));
        } else {
            if (!*need_addr)
                *need_addr = srv->target;
            /* No address record (yet): the responder that sent the SRV is the host. */
            if (!format_peer(&srv->from, addr, sizeof(addr)))
                continue;
        }
        snprintf(host_port, len, "%s:%u", addr, srv->port);
        return 1;
    }
    return 0;
}
