#include "host-fs/http.h"

#include <errno.h>
#include <limits.h>
#include <linux/tcp.h> /* tcp_info with tcpi_bytes_acked */
#include <netinet/in.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "host-fs/build_id_index.h"
#include "host-fs/upstream.h"
#include "host-fs/clients.h"
#include "host-fs/elf_build_id.h"
#include "host-fs/http_request.h"
#include "host-fs/listeners.h"
#include "host-fs/refusal_log.h"
#include "shared/build_id.h"
#include "shared/log.h"
#include "shared/xalloc.h"

/* Header bytes a request may use (MHD answers 431/414 above). */
#define HTTP_MEMORY_LIMIT (32 * 1024)
/* MHD's own idle timeout; a reply stuck on a peer that reads nothing is
 * cut by sweep() after the clients' io_timeout_ms. */
#define HTTP_IO_TIMEOUT_S 30
/* Connections MHD may hold: the clients table's slots, plus the evicted
 * ones MHD has not closed yet. */
#define HTTP_CONNS (2 * CLIENTS_MAX)

/* One admitted connection, from accept until MHD closes it. */
struct http_conn {
    bool used, started, in_request;
    int fd;
    int ticket;
    long long since_ms; /* admitted, or last request done */
    long long progress_ms; /* in a request: when the peer last acknowledged bytes */
    unsigned long long acked;
    char peer[96];
};

struct http_server {
    struct MHD_Daemon *daemon;
    struct listener_set ls;
    const struct allow_list *allow;
    const struct sysroot_set *sysroots;
    pthread_t accept_thread;
    volatile int stop;
};

static pthread_mutex_t conns_lock = PTHREAD_MUTEX_INITIALIZER;
static struct http_conn conns[HTTP_CONNS];

/* /metrics (Prometheus text format). */
enum { M_DEBUGINFO, M_EXECUTABLE, M_SOURCE, M_SECTION, M_METRICS, M_OTHER, M_KINDS };
static const char *kind_names[M_KINDS] = { "debuginfo", "executable", "source",
                                           "section",   "metrics",    "other" };
static unsigned long long m_requests[M_KINDS];
static unsigned long long m_status[6]; /* 2xx 206 404 416 429 other-4xx/5xx */
static unsigned long long m_bytes, m_connections, m_refused_timeout;

static void count(unsigned long long *c, unsigned long long n)
{
    __atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct http_conn *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    (void)cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        pthread_mutex_lock(&conns_lock);
        for (int i = 0; ci && i < HTTP_CONNS; i++) {
            if (conns[i].used && !conns[i].started && conns[i].fd == ci->connect_fd) {
                conns[i].started = true;
                *socket_context = &conns[i];
                break;
            }
        }
        pthread_mutex_unlock(&conns_lock);
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
        struct http_conn *e = *socket_context;
        pthread_mutex_lock(&conns_lock);
        clients_leave(e->ticket);
        e->used = false;
        pthread_mutex_unlock(&conns_lock);
        *socket_context = NULL;
    }
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)req_cls;
    (void)toe;
    struct http_conn *e = conn_of(c);
    if (!e)
        return;
    pthread_mutex_lock(&conns_lock);
    e->in_request = false;
    e->since_ms = now_ms();
    pthread_mutex_unlock(&conns_lock);
}

static void count_status(unsigned status)
{
    int i = status / 100 == 2 ? (status == 206 ? 1 : 0)
            : status == 404  ? 2
            : status == 416  ? 3
            : status == 429  ? 4
                             : 5;
    count(&m_status[i], 1);
}

static enum MHD_Result queue(struct MHD_Connection *c, unsigned status, struct MHD_Response *r)
{
    if (!r)
        return MHD_NO;
    count_status(status);
    struct http_conn *e = conn_of(c);
    if (e && (status == MHD_HTTP_OK || status == MHD_HTTP_PARTIAL_CONTENT))
        clients_set_rank(e->ticket, CLIENT_SERVED); /* protected from eviction while busy */
    enum MHD_Result ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status, const char *text,
                                  bool close_after)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain");
    if (close_after)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    return queue(c, status, r);
}

static enum MHD_Result reply_errno(struct MHD_Connection *c, int neg_errno, const char *peer,
                                   const char *what)
{
    switch (-neg_errno) {
    case EACCES:
    case ELOOP:
        refusal_log("%s: refused %s: %s", peer, what, strerror(-neg_errno));
        return reply_text(c, MHD_HTTP_FORBIDDEN, "refused\n", false);
    case EINVAL:
    case ENAMETOOLONG:
        return reply_text(c, MHD_HTTP_BAD_REQUEST, "bad path\n", false);
    default:
        return reply_text(c, MHD_HTTP_NOT_FOUND, "not found\n", false);
    }
}

/* The path of fd inside its sysroot, for X-DEBUGINFOD-FILE; control
 * characters are replaced (a header value holds none). */
static void sysroot_path_of(const struct sysroot_set *s, int fd, char *out, size_t outlen)
{
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof(path) - 1);
    path[n > 0 ? n : 0] = 0;
    const char *rel = path;
    for (int i = 0; i < s->count; i++) {
        size_t l = strlen(s->items[i].path);
        if (strncmp(path, s->items[i].path, l) == 0 && path[l] == '/') {
            rel = path + l;
            break;
        }
    }
    snprintf(out, outlen, "%s", rel);
    for (char *p = out; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
}

/* Serves [base, base + size) of fd (taken over), by Range. */
static enum MHD_Result serve_fd(struct MHD_Connection *c, const struct sysroot_set *s, int fd,
                                uint64_t base, uint64_t size)
{
    uint64_t off = 0, len = size;
    const char *range = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_RANGE);
    int r = http_parse_range(range, size, &off, &len);
    char num[64];
    if (r == HTTP_RANGE_BAD) {
        close(fd);
        struct MHD_Response *resp =
            MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
        if (!resp)
            return MHD_NO;
        snprintf(num, sizeof(num), "bytes */%llu", (unsigned long long)size);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_RANGE, num);
        return queue(c, MHD_HTTP_RANGE_NOT_SATISFIABLE, resp);
    }
    char file[PATH_MAX];
    sysroot_path_of(s, fd, file, sizeof(file));
    struct MHD_Response *resp;
    if (len == 0) {
        close(fd);
        resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    } else {
        resp = MHD_create_response_from_fd_at_offset64(len, fd, (int64_t)(base + off));
        if (!resp)
            close(fd);
    }
    if (!resp)
        return MHD_NO;
    snprintf(num, sizeof(num), "%llu", (unsigned long long)size);
    MHD_add_response_header(resp, "X-DEBUGINFOD-SIZE", num);
    MHD_add_response_header(resp, "X-DEBUGINFOD-FILE", file);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_ACCEPT_RANGES, "bytes");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
    unsigned status = MHD_HTTP_OK;
    if (r == HTTP_RANGE_PART) {
        snprintf(num, sizeof(num), "bytes %llu-%llu/%llu", (unsigned long long)off,
                 (unsigned long long)(off + len - 1), (unsigned long long)size);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_RANGE, num);
        status = MHD_HTTP_PARTIAL_CONTENT;
    }
    count(&m_bytes, len);
    return queue(c, status, resp);
}

static int has_section(int fd, uint64_t size, const char *name)
{
    uint64_t off, len;
    uint32_t type;
    return elf_section_of_fd(fd, size, name, &off, &len, &type) == 0 && type != 8 /* NOBITS */;
}

/* A debug file holds DWARF; an executable holds code (its .debug twin has
 * a NOBITS .text). */
static int want_debuginfo(int fd, uint64_t size) { return has_section(fd, size, ".debug_info"); }
static int want_executable(int fd, uint64_t size) { return has_section(fd, size, ".text"); }

static int open_kind_local(const struct sysroot_set *s, const struct http_target *t, bool debuginfo)
{
    /* The distribution's links first: NN/REST.debug (debug file) and
     * NN/REST (the object, where a distribution ships that link). */
    char path[64 + 2 * HTTP_BUILD_ID_MAX + 16];
    build_id_link_path(path, sizeof(path), t->build_id, t->build_id_len, debuginfo ? ".debug" : "");
    int (*want)(int, uint64_t) = debuginfo ? want_debuginfo : want_executable;
    int fd = lookup_path(s, path);
    if (fd >= 0) {
        struct stat st;
        if (fstat(fd, &st) == 0 && want(fd, (uint64_t)st.st_size))
            return fd;
        close(fd);
        fd = -ENOENT;
    }
    if (fd != -ENOENT && fd != -ENOTDIR && fd != -EISDIR)
        return fd;
    return build_id_index_open_if(s, t->build_id, t->build_id_len, want);
}

/* The sysroots, then (unless the request comes from a memtrace-fs fetching
 * upstream itself) the upstream servers. */
static int open_kind(struct MHD_Connection *c, const struct sysroot_set *s,
                     const struct http_target *t, bool debuginfo)
{
    int fd = open_kind_local(s, t, debuginfo);
    if (fd == -ENOENT && upstream_enabled() &&
        !MHD_lookup_connection_value(c, MHD_HEADER_KIND, UPSTREAM_HOP_HEADER))
        fd = upstream_open(t->build_id, t->build_id_len, debuginfo);
    return fd;
}

static enum MHD_Result serve_file(struct MHD_Connection *c, const struct sysroot_set *s, int fd,
                                  const char *peer, const char *what)
{
    if (fd < 0)
        return reply_errno(c, fd, peer, what);
    struct stat st;
    if (fstat(fd, &st) < 0) {
        close(fd);
        return reply_errno(c, -EIO, peer, what);
    }
    return serve_fd(c, s, fd, 0, (uint64_t)st.st_size);
}

static enum MHD_Result serve_section(struct MHD_Connection *c, const struct sysroot_set *s,
                                     const struct http_target *t, const char *peer)
{
    /* debuginfod's order: the debug file, then the executable. */
    for (int pass = 0; pass < 2; pass++) {
        int fd = open_kind(c, s, t, pass == 0);
        if (fd < 0)
            continue;
        struct stat st;
        uint64_t off, len;
        uint32_t type;
        if (fstat(fd, &st) == 0 &&
            elf_section_of_fd(fd, (uint64_t)st.st_size, t->rest, &off, &len, &type) == 0 &&
            type != 8 /* NOBITS */)
            return serve_fd(c, s, fd, off, len);
        close(fd);
    }
    return reply_errno(c, -ENOENT, peer, t->rest);
}

static enum MHD_Result serve_metrics(struct MHD_Connection *c)
{
    char buf[4096];
    size_t n = 0;
    for (int i = 0; i < M_KINDS; i++)
        n += (size_t)snprintf(buf + n, sizeof(buf) - n,
                              "http_requests_total{type=\"%s\"} %llu\n", kind_names[i],
                              __atomic_load_n(&m_requests[i], __ATOMIC_RELAXED));
    static const char *codes[6] = { "200", "206", "404", "416", "429", "other" };
    for (int i = 0; i < 6; i++)
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "http_responses_total{code=\"%s\"} %llu\n",
                              codes[i], __atomic_load_n(&m_status[i], __ATOMIC_RELAXED));
    n += (size_t)snprintf(buf + n, sizeof(buf) - n,
                          "http_responses_transfer_bytes_sum %llu\n"
                          "http_connections_total %llu\n"
                          "http_timeouts_total %llu\n"
                          "memtrace_fs_clients_live %d\n",
                          __atomic_load_n(&m_bytes, __ATOMIC_RELAXED),
                          __atomic_load_n(&m_connections, __ATOMIC_RELAXED),
                          __atomic_load_n(&m_refused_timeout, __ATOMIC_RELAXED), clients_live());
    struct MHD_Response *r = MHD_create_response_from_buffer(n, buf, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; version=0.0.4");
    return queue(c, MHD_HTTP_OK, r);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **req_cls)
{
    (void)version;
    (void)upload_data;
    struct http_server *h = cls;
    static int marker;
    struct http_conn *e = conn_of(c);
    const char *peer = e ? e->peer : "?";
    if (*req_cls == NULL) { /* the header is complete: one request */
        *req_cls = &marker;
        int ticket = -1;
        if (e) {
            pthread_mutex_lock(&conns_lock);
            e->in_request = true;
            e->progress_ms = now_ms();
            ticket = e->ticket;
            pthread_mutex_unlock(&conns_lock);
        }
        const char *why = NULL;
        if (clients_note_request(ticket, &why) < 0) {
            refusal_log("%s: closing: %s", peer, why);
            return reply_text(c, MHD_HTTP_TOO_MANY_REQUESTS, why, true);
        }
        /* Refused before any body is read (and the connection closed). */
        if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
            strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
            return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET or HEAD only\n", true);
        const char *cl =
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                        MHD_HTTP_HEADER_TRANSFER_ENCODING) ||
            (cl && strcmp(cl, "0") != 0))
            return reply_text(c, MHD_HTTP_CONTENT_TOO_LARGE, "no request body here\n", true);
        /* Answered on the next call, once the request is read whole: a
         * reply queued now would make MHD close the connection after it. */
        return MHD_YES;
    }
    if (*upload_data_size) { /* cannot happen (no body admitted); never read one */
        *upload_data_size = 0;
        return MHD_YES;
    }
    struct http_target t;
    switch (http_parse_target(url, &t)) {
    case HTTP_METRICS:
        count(&m_requests[M_METRICS], 1);
        return serve_metrics(c);
    case HTTP_DEBUGINFO:
        count(&m_requests[M_DEBUGINFO], 1);
        return serve_file(c, h->sysroots, open_kind(c, h->sysroots, &t, true), peer, "debuginfo");
    case HTTP_EXECUTABLE:
        count(&m_requests[M_EXECUTABLE], 1);
        return serve_file(c, h->sysroots, open_kind(c, h->sysroots, &t, false), peer, "executable");
    case HTTP_SOURCE: {
        count(&m_requests[M_SOURCE], 1);
        /* Sources of a build-id this server knows, from the sysroot's jail. */
        int known = lookup_build_id(h->sysroots, t.build_id, t.build_id_len);
        if (known < 0)
            return reply_errno(c, -ENOENT, peer, "source");
        close(known);
        return serve_file(c, h->sysroots, lookup_path(h->sysroots, t.rest), peer, t.rest);
    }
    case HTTP_SECTION:
        count(&m_requests[M_SECTION], 1);
        return serve_section(c, h->sysroots, &t, peer);
    default:
        count(&m_requests[M_OTHER], 1);
        return reply_text(c, MHD_HTTP_NOT_FOUND, "not found\n", false);
    }
}

/* In a request: true when the peer has acknowledged nothing for the
 * io timeout while bytes wait to go (it stopped reading). */
static bool stalled(struct http_conn *e, long long now)
{
    struct tcp_info ti;
    socklen_t len = sizeof(ti);
    memset(&ti, 0, sizeof(ti));
    if (getsockopt(e->fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0)
        return false;
    if (ti.tcpi_bytes_acked != e->acked) {
        e->acked = ti.tcpi_bytes_acked;
        e->progress_ms = now;
        return false;
    }
    bool waiting = ti.tcpi_unacked > 0 || ti.tcpi_notsent_bytes > 0;
    return waiting && now - e->progress_ms > clients_limits()->io_timeout_ms;
}

/* Connections with no complete request header for CLIENTS_HELLO_TIMEOUT_MS
 * since they came (or since their last request), and replies to a peer
 * that stopped reading, are shut. */
static void sweep(void)
{
    long long now = now_ms();
    pthread_mutex_lock(&conns_lock);
    for (int i = 0; i < HTTP_CONNS; i++) {
        struct http_conn *e = &conns[i];
        if (!e->used || !e->started)
            continue;
        if (e->in_request) {
            if (!stalled(e, now))
                continue;
            refusal_log("%s: closing: the reply made no progress for %d ms", e->peer,
                        clients_limits()->io_timeout_ms);
            count(&m_refused_timeout, 1);
            shutdown(e->fd, SHUT_RDWR);
            e->progress_ms = now;
            continue;
        }
        if (now - e->since_ms <= CLIENTS_HELLO_TIMEOUT_MS)
            continue;
        refusal_log("%s: closing: no complete HTTP request within %d ms", e->peer,
                    CLIENTS_HELLO_TIMEOUT_MS);
        count(&m_refused_timeout, 1);
        shutdown(e->fd, SHUT_RDWR);
        e->since_ms = now; /* MHD closes it soon; say it once */
    }
    pthread_mutex_unlock(&conns_lock);
}

static void add_connection(struct http_server *h, int fd, int ticket, const char *peer)
{
    struct sockaddr_storage ss;
    socklen_t sslen = sizeof(ss);
    struct http_conn *e = NULL;
    pthread_mutex_lock(&conns_lock);
    for (int i = 0; i < HTTP_CONNS && !e; i++)
        if (!conns[i].used)
            e = &conns[i];
    if (e) {
        *e = (struct http_conn){ .used = true, .fd = fd, .ticket = ticket,
                                 .since_ms = now_ms() };
        snprintf(e->peer, sizeof(e->peer), "%s", peer);
    }
    pthread_mutex_unlock(&conns_lock);
    if (!e || getpeername(fd, (struct sockaddr *)&ss, &sslen) < 0) {
        if (e) {
            pthread_mutex_lock(&conns_lock);
            e->used = false;
            pthread_mutex_unlock(&conns_lock);
        }
        refusal_log("%s: refused: no room for another HTTP connection", peer);
        clients_leave(ticket);
        close(fd);
        return;
    }
    count(&m_connections, 1);
    if (MHD_add_connection(h->daemon, fd, (struct sockaddr *)&ss, sslen) != MHD_YES) {
        /* MHD closed the socket; the slot is ours to free unless MHD had
         * started the connection (then its close notification does it). */
        pthread_mutex_lock(&conns_lock);
        if (!e->started) {
            e->used = false;
            clients_leave(ticket);
        }
        pthread_mutex_unlock(&conns_lock);
        mt_warn("%s: HTTP: cannot add the connection: %s", peer, strerror(errno));
    }
}

static void *accept_main(void *arg)
{
    struct http_server *h = arg;
    while (!h->stop) {
        char peer[96];
        int ticket;
        int fd = listeners_accept(&h->ls, h->allow, 500, &ticket, peer, sizeof(peer));
        if (fd >= 0)
            add_connection(h, fd, ticket, peer);
        sweep();
    }
    return NULL;
}

struct http_server *http_start(const struct sysroot_set *sysroots, const struct allow_list *allow,
                               const char *const *binds, int nbinds, uint16_t port,
                               uint16_t *bound, char *err, size_t errlen)
{
    struct http_server *h = xcalloc(1, sizeof(*h));
    h->allow = allow;
    h->sysroots = sysroots;
    if (listeners_open(&h->ls, binds, nbinds, port, err, errlen) < 0) {
        free(h);
        return NULL;
    }
    h->daemon = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
            MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC,
        0, NULL, NULL, on_request, h, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)HTTP_MEMORY_LIMIT, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned int)HTTP_IO_TIMEOUT_S, MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTP_CONNS,
        MHD_OPTION_THREAD_STACK_SIZE, (size_t)(256 * 1024), MHD_OPTION_NOTIFY_CONNECTION,
        on_connection, NULL, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_END);
    if (!h->daemon) {
        snprintf(err, errlen, "cannot start the HTTP server (libmicrohttpd)");
        listeners_close(&h->ls);
        free(h);
        return NULL;
    }
    if (pthread_create(&h->accept_thread, NULL, accept_main, h) != 0) {
        snprintf(err, errlen, "cannot start the HTTP accept thread");
        MHD_stop_daemon(h->daemon);
        listeners_close(&h->ls);
        free(h);
        return NULL;
    }
    *bound = h->ls.port;
    return h;
}

void http_stop(struct http_server *h)
{
    if (!h)
        return;
    h->stop = 1;
    pthread_join(h->accept_thread, NULL);
    MHD_stop_daemon(h->daemon);
    listeners_close(&h->ls);
    free(h);
}
