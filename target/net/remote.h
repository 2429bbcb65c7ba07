/* Files of a memtrace-fs host, read by range over the wire protocol.
 *
 *   memtrace -c HOST[:PORT]   remote_provider_connect
 *   memtrace -l ADDR[:PORT]   remote_provider_listen (memtrace-fs -c connects in)
 *   memtrace -m               mdns_discover, then remote_provider_connect
 *
 * Every socket operation has a deadline: a vanished server makes reads fail
 * with an error, never hang.  After a drop the provider reconnects on a later
 * request (at most once a second) and reopens the files it had open, checking
 * that they are still the same (size and build-id). */
#ifndef MT_NET_REMOTE_H
#define MT_NET_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target/files/provider.h"

#define REMOTE_DEFAULT_PORT 3002

struct wire_key;
/* --key: every connection to memtrace-fs from now on runs TLS with this
 * pre-shared key first (shared/wire_tls.h); NULL: none. */
void remote_set_key(const struct wire_key *k);

/* Connects to HOST[:PORT] (default port 3002) and says hello.  NULL with a
 * one-line err when it cannot. */
struct file_provider *remote_provider_connect(const char *host_port, int timeout_ms, char *err,
                                              size_t errlen);
/* Listens on ADDR[:PORT] (ADDR may be "*" or empty for every address) and
 * waits up to timeout_ms for a memtrace-fs -c to connect in. */
struct file_provider *remote_provider_listen(const char *addr_port, int timeout_ms, char *err,
                                             size_t errlen);

/* The build-id memtrace-fs reported for a byte_source of a remote provider
 * (so it can be checked without reading the file); 0 when none or not remote. */
size_t remote_source_build_id(const struct byte_source *src, uint8_t *id, size_t max);

/* Traffic of a remote provider so far, for `make bench` and `status`. */
struct remote_stats {
    uint64_t requests;
    uint64_t bytes_sent;      /* frames, headers included */
    uint64_t bytes_received;
    uint64_t file_bytes;      /* file bytes delivered (after decompression) */
    uint64_t reconnects;
};
/* Returns -1 when p is not a remote provider. */
int remote_provider_stats(struct file_provider *p, struct remote_stats *out);

/* Reports are symbolized in a forked child while the tracer goes on
 * handling the traced program (target/session/apart.c).  The child inherits
 * the connections and uses them as they are; meanwhile they are lent: the
 * parent's calls fail at once with -EAGAIN.  Afterwards, when the child sent
 * requests, the parent forgets its copy of each connection (its stream and
 * TLS state are stale) and reconnects at its next need. */
bool remote_conns_any(void);
uint64_t remote_conns_requests(void);
void remote_conns_lend(bool lent);
void remote_conns_forget(void);

/* One-shot mDNS query (RFC 6762 section 5.1) for _memtrace-fs._tcp.local from
 * an ephemeral port on every multicast interface.  Fills host_port with the
 * first usable "ADDR:PORT" and returns 0; -1 with err when nothing answered
 * within timeout_ms. */
int mdns_discover(int timeout_ms, char *host_port, size_t len, char *err, size_t errlen);

#endif
