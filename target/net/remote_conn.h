/* The connection under a remote provider: (re)connecting, one request and its
 * reply at a time, and the traffic counters.  Shared by the provider and the
 * byte_sources it opened (reference counted: sources may outlive it). */
#ifndef MT_NET_REMOTE_CONN_H
#define MT_NET_REMOTE_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/wire.h"
#include "target/net/remote.h"

struct remote_conn {
    int refs;
    int fd;           /* -1 while disconnected */
    int listen_fd;    /* listen mode: where memtrace-fs connects in; else -1 */
    char spec[272];   /* HOST:PORT or ADDR:PORT, for messages and reconnects */
    int timeout_ms;        /* every send and receive; connect */
    int first_accept_ms;   /* listen mode: the first wait for memtrace-fs */
    unsigned generation; /* bumped by every new connection: handles die with it */
    long long next_try_ms;
    unsigned failures; /* in a row: the retry interval grows with them */
    bool said_down;          /* warned that the connection dropped */
    bool said_no_reconnect;  /* warned that reconnecting failed */
    uint8_t *payload;
    uint32_t payload_cap;
    struct byte_buf out;
    struct wire_msg msg; /* the last reply */
    struct remote_stats stats;
    unsigned cache_blocks; /* allocated by all the sources of this connection */
    bool lent;             /* a report child has it: calls fail with -EAGAIN */
};

/* At most this many 32 KiB cache blocks per provider (2 MiB), except that
 * every open file may keep one. */
#define REMOTE_CACHE_BUDGET 64

/* Replies carry at most this many file bytes (and so the buffer is small). */
#define REMOTE_MAX_CHUNK (256u * 1024u)

struct remote_conn *remote_conn_new(const char *spec, int listen_fd, int timeout_ms);
void remote_conn_ref(struct remote_conn *c);
void remote_conn_unref(struct remote_conn *c);
/* Connects (or accepts) now; 0, or -1 with err. */
int remote_conn_open(struct remote_conn *c, char *err, size_t errlen);
/* Sends c->out and reads the reply into c->msg, connecting first when needed.
 * Returns 0 for a reply of type expect, a negative errno for a WIRE_ERROR reply
 * (connection kept), -ENOTCONN / -ETIMEDOUT / -EPROTO... when the connection
 * failed (and was dropped). */
int remote_conn_call(struct remote_conn *c, uint8_t expect);
/* After a call failed because the peer closed the connection (a restarted
 * memtrace-fs): lets the next call reconnect at once instead of backing off.
 * Returns true when that is worth a try (the error was a reset, not a timeout). */
bool remote_conn_retry_now(struct remote_conn *c, int call_result);
bool remote_conn_is_up(const struct remote_conn *c);

#endif
