/* TLS 1.3 PSK over the wire protocol's sockets (see wire_tls.h). */
#include "shared/wire_tls.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shared/log.h"
#include "shared/xalloc.h"

#include "shared/tls_lib.h"

/* TLS state by socket number: each socket belongs to one thread at a time,
 * so entries need no lock; sockets above the table get no TLS. */
#define TLS_MAX_FD 4096

#ifndef MT_NO_TLS
struct wire_key {
    const struct tls_lib *lib;
    unsigned char psk[32];
};

struct tls_conn {
    const struct tls_lib *lib;
    SSL *ssl;
    SSL_CTX *ctx;
};

static struct tls_conn *conns[TLS_MAX_FD];
static const char IDENTITY[] = "memtrace-fs";
/* The key of the handshake in progress on this thread. */
static __thread const struct wire_key *cur_key;

bool wire_tls_available(void) { return true; }

struct wire_key *wire_key_load(const char *path, char *err, size_t errlen)
{
    char why[300];
    const struct tls_lib *lib = tls_lib_get(why, sizeof(why));
    if (!lib) {
        snprintf(err, errlen, "--key %s: %s", path, why);
        return NULL;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        snprintf(err, errlen, "--key %s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    unsigned char buf[WIRE_KEY_MAX + 1];
    ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, buf, sizeof(buf)) : -1;
    close(fd);
    if (n < WIRE_KEY_MIN || n > WIRE_KEY_MAX) {
        snprintf(err, errlen, "--key %s: a regular file of %d to %d bytes expected "
                 "(e.g. head -c 32 /dev/urandom >FILE)", path, WIRE_KEY_MIN, WIRE_KEY_MAX);
        return NULL;
    }
    if (st.st_mode & 077)
        mt_warn("--key %s: others may read the key (chmod 600 it)", path);
    struct wire_key *k = xcalloc(1, sizeof(*k));
    k->lib = lib;
    unsigned int len = sizeof(k->psk);
    if (!lib->EVP_Digest(buf, (size_t)n, k->psk, &len, lib->EVP_sha256(), NULL)) {
        free(k);
        snprintf(err, errlen, "--key %s: SHA-256 failed", path);
        return NULL;
    }
    lib->OPENSSL_cleanse(buf, sizeof(buf));
    return k;
}

void wire_key_free(struct wire_key *k)
{
    if (k)
        k->lib->OPENSSL_cleanse(k->psk, sizeof(k->psk));
    free(k);
}

static unsigned int server_psk(SSL *ssl, const char *identity, unsigned char *psk,
                               unsigned int max)
{
    (void)ssl;
    if (!cur_key || !identity || strcmp(identity, IDENTITY) != 0 || max < sizeof(cur_key->psk))
        return 0;
    memcpy(psk, cur_key->psk, sizeof(cur_key->psk));
    return sizeof(cur_key->psk);
}

static unsigned int client_psk(SSL *ssl, const char *hint, char *identity, unsigned int max_id,
                               unsigned char *psk, unsigned int max)
{
    (void)ssl;
    (void)hint;
    if (!cur_key || max_id < sizeof(IDENTITY) || max < sizeof(cur_key->psk))
        return 0;
    memcpy(identity, IDENTITY, sizeof(IDENTITY));
    memcpy(psk, cur_key->psk, sizeof(cur_key->psk));
    return sizeof(cur_key->psk);
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The first OpenSSL error, as one line. */
static void ssl_reason(const struct tls_lib *lib, char *out, size_t len)
{
    unsigned long e = lib->ERR_get_error();
    const char *r = e ? lib->ERR_reason_error_string(e) : NULL;
    snprintf(out, len, "%s", r ? r : "connection closed");
    lib->ERR_clear_error();
}

int wire_tls_start(int fd, const struct wire_key *k, bool server, int timeout_ms, char *err,
                   size_t errlen)
{
    if (fd < 0 || fd >= TLS_MAX_FD) {
        snprintf(err, errlen, "TLS: socket number %d too high", fd);
        return -1;
    }
    const struct tls_lib *lib = tls_lib_get(err, errlen);
    if (!lib)
        return -1;
    struct tls_conn *c = xcalloc(1, sizeof(*c));
    c->lib = lib;
    c->ctx = lib->SSL_CTX_new(server ? lib->TLS_server_method() : lib->TLS_client_method());
    if (!c->ctx) {
        free(c);
        snprintf(err, errlen, "TLS: cannot set up");
        return -1;
    }
    /* TLS 1.3 only: an offer of anything older is refused (no downgrade),
     * no session tickets (nothing to resume or replay), no early data. */
    /* (SSL_CTX_set_{min,max}_proto_version and _session_cache_mode are
     * OpenSSL's macros over SSL_CTX_ctrl.) */
    lib->SSL_CTX_ctrl(c->ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_3_VERSION, NULL);
    lib->SSL_CTX_ctrl(c->ctx, SSL_CTRL_SET_MAX_PROTO_VERSION, TLS1_3_VERSION, NULL);
    lib->SSL_CTX_set_options(c->ctx, SSL_OP_NO_TICKET);
    lib->SSL_CTX_set_num_tickets(c->ctx, 0);
    lib->SSL_CTX_ctrl(c->ctx, SSL_CTRL_SET_SESS_CACHE_MODE, SSL_SESS_CACHE_OFF, NULL);
    if (server)
        lib->SSL_CTX_set_psk_server_callback(c->ctx, server_psk);
    else
        lib->SSL_CTX_set_psk_client_callback(c->ctx, client_psk);
    c->ssl = lib->SSL_new(c->ctx);
    int flags = fcntl(fd, F_GETFL);
    if (!c->ssl || flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 ||
        !lib->SSL_set_fd(c->ssl, fd)) {
        lib->SSL_free(c->ssl);
        lib->SSL_CTX_free(c->ctx);
        free(c);
        snprintf(err, errlen, "TLS: cannot set up");
        return -1;
    }
    cur_key = k;
    long long deadline = now_ms() + timeout_ms;
    int rc = -1;
    for (;;) {
        lib->ERR_clear_error();
        int r = server ? lib->SSL_accept(c->ssl) : lib->SSL_connect(c->ssl);
        if (r == 1) {
            rc = 0;
            break;
        }
        int e = lib->SSL_get_error(c->ssl, r);
        short want = e == SSL_ERROR_WANT_READ ? POLLIN : e == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
        long long left = deadline - now_ms();
        if (!want) {
            char why[160];
            ssl_reason(lib, why, sizeof(why));
            snprintf(err, errlen, "key check failed (%s): %s", why,
                     server ? "the peer has no key or another key"
                            : "the server has no key or another key");
            break;
        }
        if (left <= 0) {
            snprintf(err, errlen, "key check timed out: the peer speaks no TLS");
            break;
        }
        struct pollfd pfd = { .fd = fd, .events = want };
        poll(&pfd, 1, (int)left);
    }
    cur_key = NULL;
    if (rc < 0) {
        lib->SSL_free(c->ssl);
        lib->SSL_CTX_free(c->ctx);
        free(c);
        return -1;
    }
    conns[fd] = c;
    return 0;
}

void *wire_tls_of(int fd) { return fd >= 0 && fd < TLS_MAX_FD ? conns[fd] : NULL; }

static long io_result(struct tls_conn *c, int r, short *want)
{
    if (r > 0)
        return r;
    int e = c->lib->SSL_get_error(c->ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        *want = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
        errno = EAGAIN;
        return -1;
    }
    if (e == SSL_ERROR_ZERO_RETURN)
        return 0;
    c->lib->ERR_clear_error();
    errno = e == SSL_ERROR_SYSCALL && errno ? errno : ECONNRESET;
    return -1;
}

long wire_tls_read(void *t, void *buf, size_t len, short *want)
{
    struct tls_conn *c = t;
    c->lib->ERR_clear_error();
    int n = len > 1 << 30 ? 1 << 30 : (int)len;
    return io_result(c, c->lib->SSL_read(c->ssl, buf, n), want);
}

long wire_tls_write(void *t, const void *buf, size_t len, short *want)
{
    struct tls_conn *c = t;
    c->lib->ERR_clear_error();
    int n = len > 1 << 30 ? 1 << 30 : (int)len;
    return io_result(c, c->lib->SSL_write(c->ssl, buf, n), want);
}

bool wire_tls_pending(void *t)
{
    const struct tls_conn *c = t;
    return c->lib->SSL_pending(c->ssl) > 0;
}

static void tls_end(int fd, bool notify)
{
    struct tls_conn *c = fd >= 0 && fd < TLS_MAX_FD ? conns[fd] : NULL;
    if (c) {
        conns[fd] = NULL;
        if (notify)
            c->lib->SSL_shutdown(c->ssl); /* one close_notify, not waited for */
        c->lib->SSL_free(c->ssl);
        c->lib->SSL_CTX_free(c->ctx);
        free(c);
    }
    if (fd >= 0)
        close(fd);
}

void wire_close(int fd) { tls_end(fd, true); }
void wire_forget(int fd) { tls_end(fd, false); }

#else /* MT_NO_TLS */

bool wire_tls_available(void) { return false; }

struct wire_key *wire_key_load(const char *path, char *err, size_t errlen)
{
    snprintf(err, errlen, "--key %s: this build has no TLS (built without OpenSSL)", path);
    return NULL;
}

void wire_key_free(struct wire_key *k) { (void)k; }

int wire_tls_start(int fd, const struct wire_key *k, bool server, int timeout_ms, char *err,
                   size_t errlen)
{
    (void)fd, (void)k, (void)server, (void)timeout_ms;
    snprintf(err, errlen, "this build has no TLS");
    return -1;
}

void *wire_tls_of(int fd) { (void)fd; return NULL; }
long wire_tls_read(void *t, void *buf, size_t len, short *want)
{
    (void)t, (void)buf, (void)len, (void)want;
    errno = EBADF;
    return -1;
}
long wire_tls_write(void *t, const void *buf, size_t len, short *want)
{
    (void)t, (void)buf, (void)len, (void)want;
    errno = EBADF;
    return -1;
}
bool wire_tls_pending(void *t) { (void)t; return false; }
void wire_close(int fd)
{
    if (fd >= 0)
        close(fd);
}
void wire_forget(int fd) { wire_close(fd); }
#endif
