#include "target/net/remote_conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shared/log.h"
#include "shared/wire_net.h"
#include "shared/wire_tls.h"
#include "shared/xalloc.h"

/* Do not make every symbol lookup wait for a host that is gone: after a
 * failure requests fail at once for a while, 1 s doubling up to 30 s. */
#define RETRY_FIRST_MS 1000
#define RETRY_MAX_MS 30000
#define IO_TIMEOUT_MAX_MS 10000
/* memtrace-fs -c tries again every second: a reconnect waits this long. */
#define REACCEPT_MS 2500

static void back_off(struct remote_conn *c);

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Every live connection, for lending them to a report child (see remote.h). */
#define MAX_CONNS 8
static struct remote_conn *all_conns[MAX_CONNS];
static uint64_t requests_total;

static void register_conn(struct remote_conn *c, bool add)
{
    for (int i = 0; i < MAX_CONNS; i++) {
        if (add ? all_conns[i] == NULL : all_conns[i] == c) {
            all_conns[i] = add ? c : NULL;
            return;
        }
    }
}

bool remote_conns_any(void)
{
    for (int i = 0; i < MAX_CONNS; i++)
        if (all_conns[i])
            return true;
    return false;
}

uint64_t remote_conns_requests(void) { return requests_total; }

void remote_conns_lend(bool lent)
{
    for (int i = 0; i < MAX_CONNS; i++)
        if (all_conns[i])
            all_conns[i]->lent = lent;
}

void remote_conns_forget(void)
{
    for (int i = 0; i < MAX_CONNS; i++) {
        struct remote_conn *c = all_conns[i];
        if (!c || c->fd < 0)
            continue;
        wire_forget(c->fd);
        c->fd = -1;
        c->next_try_ms = 0; /* not a failure: reconnect at the next need */
    }
}

struct remote_conn *remote_conn_new(const char *spec, int listen_fd, int timeout_ms)
{
    struct remote_conn *c = xcalloc(1, sizeof(*c));
    register_conn(c, true);
    c->refs = 1;
    c->fd = -1;
    c->listen_fd = listen_fd;
    snprintf(c->spec, sizeof(c->spec), "%s", spec);
    c->timeout_ms = timeout_ms > 0 ? timeout_ms : 5000;
    c->first_accept_ms = c->timeout_ms;
    /* Listening, the caller's timeout is how long to wait for memtrace-fs to
     * come; a request must not wait that long for a reply. */
    if (listen_fd >= 0 && c->timeout_ms > IO_TIMEOUT_MAX_MS)
        c->timeout_ms = IO_TIMEOUT_MAX_MS;
    c->payload_cap = REMOTE_MAX_CHUNK + 1024;
    c->payload = xmalloc(c->payload_cap);
    return c;
}

void remote_conn_ref(struct remote_conn *c) { c->refs++; }

/* --key: set once from the command line, used by every connection. */
static const struct wire_key *conn_key;

void remote_set_key(const struct wire_key *k) { conn_key = k; }

static void drop(struct remote_conn *c)
{
    if (c->fd >= 0)
        wire_close(c->fd);
    c->fd = -1;
    back_off(c);
}

void remote_conn_unref(struct remote_conn *c)
{
    if (!c || --c->refs > 0)
        return;
    register_conn(c, false);
    if (c->fd >= 0)
        wire_close(c->fd);
    if (c->listen_fd >= 0)
        close(c->listen_fd);
    byte_buf_free(&c->out);
    free(c->payload);
    free(c);
}

bool remote_conn_is_up(const struct remote_conn *c) { return c->fd >= 0 && !c->lent; }

static void back_off(struct remote_conn *c)
{
    long long wait = RETRY_FIRST_MS;
    for (unsigned i = 0; i < c->failures && wait < RETRY_MAX_MS; i++)
        wait *= 2;
    if (wait > RETRY_MAX_MS)
        wait = RETRY_MAX_MS;
    c->failures++;
    c->next_try_ms = now_ms() + wait;
}

int remote_conn_open(struct remote_conn *c, char *err, size_t errlen)
{
    int fd;
    if (c->listen_fd >= 0) {
        char peer[96];
        int wait = c->generation == 0 ? c->first_accept_ms : REACCEPT_MS;
        fd = wire_accept(c->listen_fd, wait, peer, sizeof(peer), NULL);
        if (fd < 0) {
            snprintf(err, errlen, "no memtrace-fs connected to %s: %s", c->spec,
                     strerror(errno));
            return -1;
        }
    } else {
        fd = wire_connect(c->spec, REMOTE_DEFAULT_PORT, c->timeout_ms, err, errlen);
        if (fd < 0)
            return -1;
    }
    char me[128] = "memtrace";
    char host[64];
    if (gethostname(host, sizeof(host)) == 0) {
        host[sizeof(host) - 1] = 0;
        snprintf(me, sizeof(me), "memtrace on %s", host);
    }
    if (conn_key && wire_tls_start(fd, conn_key, false, c->timeout_ms, err, errlen) < 0) {
        wire_close(fd);
        return -1;
    }
    if (wire_handshake(fd, me, NULL, 0, c->timeout_ms, err, errlen) < 0) {
        wire_close(fd);
        return -1;
    }
    if (c->generation > 0)
        c->stats.reconnects++;
    c->fd = fd;
    c->generation++;
    c->said_down = false;
    c->said_no_reconnect = false;
    c->failures = 0;
    return 0;
}

static int ensure_up(struct remote_conn *c)
{
    if (c->fd >= 0)
        return 0;
    if (now_ms() < c->next_try_ms)
        return -ENOTCONN;
    char err[256];
    if (remote_conn_open(c, err, sizeof(err)) < 0) {
        back_off(c);
        if (!c->said_no_reconnect)
            mt_warn("memtrace-fs %s: cannot reconnect: %s; going on without it, retrying now "
                    "and then", c->spec, err);
        c->said_no_reconnect = true;
        c->said_down = true;
        return -ENOTCONN;
    }
    mt_info("memtrace-fs %s: connected again", c->spec);
    return 0;
}

static int fail(struct remote_conn *c, int e, const char *what)
{
    if (!c->said_down)
        mt_warn("memtrace-fs %s: %s: %s; will reconnect", c->spec, what, strerror(e));
    c->said_down = true;
    drop(c);
    return -e;
}

int remote_conn_call(struct remote_conn *c, uint8_t expect)
{
    if (c->lent)
        return -EAGAIN; /* a report child is using it */
    requests_total++;
    int r = ensure_up(c);
    if (r < 0)
        return r;
    if (wire_send(c->fd, &c->out, c->timeout_ms) < 0)
        return fail(c, errno, "sending");
    c->stats.requests++;
    c->stats.bytes_sent += c->out.len;
    uint32_t len;
    uint8_t type, flags;
    if (wire_recv(c->fd, c->payload, c->payload_cap, &len, &type, &flags, c->timeout_ms) < 0)
        return fail(c, errno, "receiving");
    c->stats.bytes_received += WIRE_HEADER_SIZE + len;
    const char *why = NULL;
    if (wire_decode(type, flags, c->payload, len, &c->msg, &why) < 0) {
        if (!c->said_down)
            mt_warn("memtrace-fs %s: bad reply: %s", c->spec, why);
        return fail(c, EPROTO, "bad reply");
    }
    if (type == WIRE_ERROR)
        return -wire_error_to_errno(c->msg.error);
    if (type != expect)
        return fail(c, EPROTO, "unexpected reply");
    return 0;
}

bool remote_conn_retry_now(struct remote_conn *c, int call_result)
{
    if (call_result != -ECONNRESET && call_result != -EPIPE)
        return false;
    c->next_try_ms = 0;
    return true;
}
