/* The table of connected peers, shared by every listener (the wire protocol
 * today, an HTTP endpoint tomorrow): a fixed number of slots, so memory
 * stays bounded however many peers connect, and limits that keep any one
 * peer or address from holding the server.
 *
 *   admit:  at most CLIENTS_PER_ADDR slots per address (per /64 for IPv6);
 *           a full table makes room by evicting the least deserving peer
 *           (see clients_admit);
 *   serve:  clients_note_request per request enforces the request rate and
 *           the session lifetime; clients_set_rank records progress (hello
 *           done, a file served, key verified), which protects from eviction.
 *
 * The limits are far above what an honest target does (docs/reliability.md
 * has the figures); a peer over one is told why and hung up on. */
#ifndef MTFS_CLIENTS_H
#define MTFS_CLIENTS_H

#include <stdbool.h>
#include <sys/socket.h>

#define CLIENTS_MAX 64
/* Connections from one address (one /64 for IPv6). */
#define CLIENTS_PER_ADDR 8
/* A peer that has been served and then idles is evicted only after this
 * long without sending anything: a real target keeps its connection across
 * quiet phases, and reconnects by itself when it needs a file again. */
#define CLIENTS_EVICT_IDLE_MS 5000
/* Requests: a bucket of CLIENTS_REQ_BURST refilled at CLIENTS_REQ_RATE per
 * second.  A real target symbolizing a large program asks a few hundred per
 * second at most, in bursts of a few thousand. */
#define CLIENTS_REQ_RATE 2000
#define CLIENTS_REQ_BURST 20000
/* A session is closed after this long (a real target reconnects and reopens
 * its files by itself, so even a days-long trace goes on). */
#define CLIENTS_LIFETIME_S (6 * 3600)
/* A reply that makes no progress (nothing acknowledged by the peer) for
 * this long is cut: the wire protocol's deadline per frame, for HTTP. */
#define CLIENTS_IO_TIMEOUT_MS 30000
/* From connect to a verified hello (and key, with --key). */
#define CLIENTS_HELLO_TIMEOUT_MS 5000

/* How far a peer got; a higher rank is evicted last. */
enum client_rank {
    CLIENT_CONNECTED = 0, /* nothing verified yet */
    CLIENT_HELLO = 1,     /* protocol hello (and with --key: the key) verified */
    CLIENT_SERVED = 2,    /* a file opened: a target tracing for real */
};

/* The limits in force (the constants above, or the test knob
 * MEMTRACE_FS_TEST_LIMITS, read once by clients_configure). */
struct client_limits {
    int per_addr;
    int req_rate;
    int req_burst;
    int lifetime_s;
    int evict_idle_ms;
    int io_timeout_ms; /* HTTP: a reply that makes no progress this long is cut */
};
/* Reads MEMTRACE_FS_TEST_LIMITS="per_addr=N,rate=N,burst=N,lifetime=S,
 * evict_idle=MS,io_timeout=MS" (tests only); returns the limits. */
const struct client_limits *clients_configure(void);
const struct client_limits *clients_limits(void);

/* Takes a slot for the connected socket fd from addr; returns a ticket for
 * the calls below, or -1 (the refusal is logged) when the address has its
 * share already or every slot is held by a peer more deserving than a
 * newcomer.  Victim order: lowest rank first; among equals the address
 * with the most slots, then the longest idle, then the oldest.  A peer of
 * rank CLIENT_SERVED is evicted only after CLIENTS_EVICT_IDLE_MS idle. */
int clients_admit(int fd, const struct sockaddr_storage *addr, const char *peer);
/* Raises the ticket's rank (never lowers it). */
void clients_set_rank(int ticket, enum client_rank rank);
/* One request of ticket: 0, or -1 with a reason when it is over the rate
 * or the session is past its lifetime (the caller hangs up). */
int clients_note_request(int ticket, const char **why);
/* The session of ticket is over (a no-op if it was evicted meanwhile). */
void clients_leave(int ticket);
/* Shuts every client's socket so that each session ends at once, even in
 * the middle of a frame (used when the server stops). */
void clients_shutdown_all(void);
/* How many slots are taken. */
int clients_live(void);

#endif
