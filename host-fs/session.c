#include "host-fs/session.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host-fs/clients.h"
#include "host-fs/elf_build_id.h"
#include "host-fs/log_escape.h"
#include "host-fs/refusal_log.h"
#include "shared/log.h"
#include "shared/wire.h"
#include "shared/wire_tls.h"
#include "shared/xalloc.h"

/* Bounds per connection: a target opens a handful of objects and debug files. */
#define MAX_HANDLES 256
#define IO_TIMEOUT_MS 30000

struct handle {
    int fd; /* -1 when free */
    uint64_t size;
};

struct session {
    const struct session_config *cfg;
    int sock;
    int ticket; /* in the clients table; -1 in reversed roles */
    const char *peer;
    struct handle handles[MAX_HANDLES];
    uint8_t *payload;   /* one received frame */
    uint8_t *readbuf;   /* file bytes of one read */
    struct byte_buf out;
    struct wire_msg msg;
};

static void reply_error(struct session *s, int neg_errno, const char *what)
{
    int e = -neg_errno;
    wire_encode_error(&s->out, (uint32_t)wire_error_from_errno(e), what ? what : strerror(e));
}

static void do_open(struct session *s, int fd_or_err, const char *what)
{
    if (fd_or_err < 0) {
        reply_error(s, fd_or_err, NULL);
        if (fd_or_err == -EACCES || fd_or_err == -ELOOP)
            refusal_log("%s: refused %s: %s", s->peer, what, strerror(-fd_or_err));
        return;
    }
    int slot = -1;
    for (int i = 0; i < MAX_HANDLES; i++) {
        if (s->handles[i].fd < 0) {
            slot = i;
            break;
        }
    }
    struct stat st;
    if (slot < 0 || fstat(fd_or_err, &st) < 0) {
        close(fd_or_err);
        reply_error(s, -ENOMEM, "too many open files on this connection");
        return;
    }
    s->handles[slot].fd = fd_or_err;
    s->handles[slot].size = (uint64_t)st.st_size;
    clients_set_rank(s->ticket, CLIENT_SERVED);
    uint8_t id[WIRE_MAX_BUILD_ID];
    size_t idlen = elf_build_id_of_fd(fd_or_err, (uint64_t)st.st_size, id, sizeof(id));
    wire_encode_opened(&s->out, (uint32_t)slot, (uint64_t)st.st_size, id, idlen);
}

static struct handle *find_handle(struct session *s, uint32_t h)
{
    if (h >= MAX_HANDLES || s->handles[h].fd < 0)
        return NULL;
    return &s->handles[h];
}

static void do_read(struct session *s)
{
    struct handle *h = find_handle(s, s->msg.handle);
    if (!h) {
        reply_error(s, -EBADF, "no such handle");
        return;
    }
    uint64_t off = s->msg.offset;
    uint32_t len = s->msg.length;
    if (off > h->size || len > h->size - off) {
        reply_error(s, -ERANGE, "read beyond the end of the file");
        return;
    }
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(h->fd, s->readbuf + done, len - done, (off_t)(off + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            reply_error(s, n < 0 ? -errno : -EIO, n < 0 ? NULL : "file shrank");
            return;
        }
        done += (size_t)n;
    }
    wire_encode_data(&s->out, s->readbuf, len);
}

static void do_close(struct session *s)
{
    struct handle *h = find_handle(s, s->msg.handle);
    if (!h) {
        reply_error(s, -EBADF, "no such handle");
        return;
    }
    close(h->fd);
    h->fd = -1;
    wire_encode_closed(&s->out);
}

/* Waits for the next request, waking up now and then to notice a stop. */
static int wait_request(struct session *s)
{
    for (;;) {
        if (*s->cfg->stopping)
            return -1;
        void *tls = wire_tls_of(s->sock);
        if (tls && wire_tls_pending(tls))
            return 0;
        struct pollfd pfd = { .fd = s->sock, .events = POLLIN };
        int n = poll(&pfd, 1, 500);
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return -1;
    }
}

/* --key: the peer must prove it has the key before anything else.  A peer
 * that speaks the plain protocol gets a plain one-line error first, so both
 * sides say what is wrong. */
static int start_tls(struct session *s)
{
    uint8_t first = 0;
    struct pollfd pfd = { .fd = s->sock, .events = POLLIN };
    if (poll(&pfd, 1, CLIENTS_HELLO_TIMEOUT_MS) <= 0 ||
        recv(s->sock, &first, 1, MSG_PEEK) != 1) {
        refusal_log("%s: refused: no key check within %d ms", s->peer, CLIENTS_HELLO_TIMEOUT_MS);
        return -1;
    }
    char err[256];
    if (first != 0x16) { /* not a TLS handshake record */
        refusal_log("%s: refused: the peer has no key (this server requires --key)", s->peer);
        wire_encode_error(&s->out, WIRE_E_ACCES, "this memtrace-fs requires a key (--key FILE)");
        wire_send(s->sock, &s->out, 1000);
        return -1;
    }
    if (wire_tls_start(s->sock, s->cfg->key, true, CLIENTS_HELLO_TIMEOUT_MS, err,
                       sizeof(err)) < 0) {
        refusal_log("%s: refused: %s", s->peer, err);
        return -1;
    }
    return 0;
}

static void serve_loop(struct session *s)
{
    char err[256];
    char peer_name[WIRE_MAX_NAME + 1];
    if (s->cfg->key && start_tls(s) < 0)
        return;
    if (wire_handshake(s->sock, s->cfg->server_name, peer_name, sizeof(peer_name),
                       CLIENTS_HELLO_TIMEOUT_MS, err, sizeof(err)) < 0) {
        refusal_log("%s: %s", s->peer, err);
        return;
    }
    clients_set_rank(s->ticket, CLIENT_HELLO);
    char safe_name[LOG_ESCAPE_MAX + 1];
    mt_info("%s: connected (%s)", s->peer, log_escape(safe_name, sizeof(safe_name), peer_name));
    for (;;) {
        if (wait_request(s) < 0)
            return;
        uint32_t len;
        uint8_t type, flags;
        if (wire_recv(s->sock, s->payload, WIRE_MAX_PAYLOAD, &len, &type, &flags,
                      IO_TIMEOUT_MS) < 0) {
            if (errno == EPROTO) {
                /* Reserved header bits set, or a length over the limit. */
                refusal_log("%s: bad request: bad frame header", s->peer);
                wire_encode_error(&s->out, WIRE_E_PROTO, "bad frame header");
                wire_send(s->sock, &s->out, IO_TIMEOUT_MS);
            } else if (errno != ECONNRESET) {
                mt_warn("%s: %s", s->peer, strerror(errno));
            }
            return;
        }
        const char *why = NULL;
        if (clients_note_request(s->ticket, &why) < 0) {
            refusal_log("%s: closing: %s", s->peer, why);
            wire_encode_error(&s->out, WIRE_E_NOMEM, why);
            wire_send(s->sock, &s->out, IO_TIMEOUT_MS);
            return;
        }
        if (wire_decode(type, flags, s->payload, len, &s->msg, &why) < 0) {
            /* The stream may be out of step now: answer once and hang up. */
            refusal_log("%s: bad request: %s", s->peer, why);
            wire_encode_error(&s->out, WIRE_E_PROTO, why);
            wire_send(s->sock, &s->out, IO_TIMEOUT_MS);
            return;
        }
        switch (type) {
        case WIRE_OPEN_PATH:
            do_open(s, lookup_path(s->cfg->sysroots, s->msg.path), s->msg.path);
            break;
        case WIRE_OPEN_BUILD_ID:
            do_open(s, lookup_build_id_or_upstream(s->cfg->sysroots, s->msg.build_id,
                                                   s->msg.build_id_len), "build-id");
            break;
        case WIRE_OPEN_DEBUGLINK:
            do_open(s, lookup_debuglink(s->cfg->sysroots, s->msg.path, s->msg.name,
                                        s->msg.crc), s->msg.name);
            break;
        case WIRE_READ:
            do_read(s);
            break;
        case WIRE_CLOSE:
            do_close(s);
            break;
        default:
            wire_encode_error(&s->out, WIRE_E_PROTO, "not a request");
            break;
        }
        if (wire_send(s->sock, &s->out, IO_TIMEOUT_MS) < 0) {
            mt_warn("%s: %s", s->peer, strerror(errno));
            return;
        }
    }
}

void session_serve(const struct session_config *cfg, int fd, int ticket, const char *peer)
{
    struct session *s = xcalloc(1, sizeof(*s));
    s->cfg = cfg;
    s->sock = fd;
    s->ticket = ticket;
    s->peer = peer;
    for (int i = 0; i < MAX_HANDLES; i++)
        s->handles[i].fd = -1;
    s->payload = xmalloc(WIRE_MAX_PAYLOAD);
    s->readbuf = xmalloc(WIRE_MAX_READ);
    serve_loop(s);
    for (int i = 0; i < MAX_HANDLES; i++)
        if (s->handles[i].fd >= 0)
            close(s->handles[i].fd);
    mt_info("%s: disconnected", peer);
    wire_close(fd);
    byte_buf_free(&s->out);
    free(s->payload);
    free(s->readbuf);
    free(s);
}
