/* The remote file_provider and its byte_sources (see remote.h). */
#include "target/net/remote.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/build_id.h"
#include "shared/wire.h"
#include "shared/wire_net.h"
#include "shared/xalloc.h"
#include "target/files/block_cache.h"
#include "target/net/remote_conn.h"

/* Each source caches 8 blocks of 64 KiB (target/files/block_cache.h), and
 * REMOTE_CACHE_BUDGET blocks per provider (past it, one block per open file).
 * Indexing a debug file reads five or six compressed sections of it at once,
 * and lookups restart inflating from checkpoints: with 4 blocks they evicted
 * each other and one trace of live_blocks fetched 5054 KiB (3589 KiB when
 * sections were inflated whole); 8 x 64 KiB fetched 4010 KiB. */
#define CACHE_BLOCKS 8

enum open_kind { OPEN_PATH, OPEN_BUILD_ID, OPEN_DEBUGLINK };

struct remote_source {
    struct byte_source base;
    struct remote_conn *conn;
    uint32_t handle;
    unsigned generation; /* of conn when handle was given */
    enum open_kind kind; /* how to open it again after a reconnect */
    char *path;          /* path, or debuglink object path */
    char *link_name;
    uint32_t crc;
    uint8_t id[WIRE_MAX_BUILD_ID]; /* asked build-id */
    size_t id_len;
    uint8_t file_id[WIRE_MAX_BUILD_ID]; /* build-id memtrace-fs reported */
    size_t file_id_len;
    struct block_cache cache;
};

struct remote_provider {
    struct file_provider base;
    struct file_provider_ops ops; /* a copy per provider, for its name */
    char name[300];
    struct remote_conn *conn;
};

static const struct byte_source_ops remote_source_ops;

static void encode_open(struct remote_conn *c, const struct remote_source *s)
{
    switch (s->kind) {
    case OPEN_PATH:
        wire_encode_open_path(&c->out, s->path);
        break;
    case OPEN_BUILD_ID:
        wire_encode_open_build_id(&c->out, s->id, s->id_len);
        break;
    case OPEN_DEBUGLINK:
        wire_encode_open_debuglink(&c->out, s->path, s->link_name, s->crc);
        break;
    }
}

/* Gets a handle valid on the current connection, reopening after a reconnect
 * and refusing a file that changed meanwhile. */
static int ensure_handle(struct remote_source *s)
{
    struct remote_conn *c = s->conn;
    if (remote_conn_is_up(c) && s->generation == c->generation)
        return 0;
    encode_open(c, s);
    int r = remote_conn_call(c, WIRE_OPENED);
    if (r < 0)
        return r;
    s->handle = c->msg.handle;
    s->generation = c->generation;
    if (c->msg.size != s->base.size || c->msg.build_id_len != s->file_id_len ||
        memcmp(c->msg.build_id, s->file_id, s->file_id_len) != 0)
        return -ESTALE; /* a different file now: nothing read from it may be mixed in */
    return 0;
}

/* Reads [off, off+len) straight from the server, len <= REMOTE_MAX_CHUNK. */
static int fetch(struct remote_source *s, uint64_t off, void *buf, uint32_t len)
{
    struct remote_conn *c = s->conn;
    int r;
    /* A reset connection is most likely a restarted memtrace-fs: reconnect,
     * reopen (a new handle) and ask again, once. */
    for (int attempt = 0;; attempt++) {
        r = ensure_handle(s);
        if (r < 0)
            return r;
        wire_encode_read(&c->out, s->handle, off, len);
        r = remote_conn_call(c, WIRE_DATA);
        if (r < 0 && attempt == 0 && remote_conn_retry_now(c, r))
            continue;
        break;
    }
    if (r < 0)
        return r;
    if (c->msg.length != len || wire_data_unpack(&c->msg, buf, len) < 0)
        return -EPROTO;
    c->stats.file_bytes += len;
    return 0;
}

static int fetch_block(void *ctx, uint64_t off, void *buf, uint32_t len)
{
    return fetch(ctx, off, buf, len);
}

static int remote_source_read(struct byte_source *src, uint64_t off, void *buf, size_t len)
{
    struct remote_source *s = (struct remote_source *)src;
    return block_cache_read(&s->cache, s->base.size, off, buf, len);
}

static void remote_source_close(struct byte_source *src)
{
    struct remote_source *s = (struct remote_source *)src;
    struct remote_conn *c = s->conn;
    /* Only on the connection that gave the handle; never reconnect to close. */
    if (remote_conn_is_up(c) && s->generation == c->generation) {
        wire_encode_close(&c->out, s->handle);
        remote_conn_call(c, WIRE_CLOSED);
    }
    block_cache_free(&s->cache);
    remote_conn_unref(c);
    free(s->path);
    free(s->link_name);
    free(s->base.name);
    free(s);
}

static const struct byte_source_ops remote_source_ops = {
    .read = remote_source_read,
    .close = remote_source_close,
};

size_t remote_source_build_id(const struct byte_source *src, uint8_t *id, size_t max)
{
    if (!src || src->ops != &remote_source_ops)
        return 0;
    const struct remote_source *s = (const struct remote_source *)src;
    if (s->file_id_len == 0 || s->file_id_len > max)
        return 0;
    memcpy(id, s->file_id, s->file_id_len);
    return s->file_id_len;
}

static struct byte_source *open_remote(struct remote_provider *p, struct remote_source *s,
                                       const char *display)
{
    s->conn = p->conn;
    int r;
    for (int attempt = 0;; attempt++) {
        encode_open(p->conn, s);
        r = remote_conn_call(p->conn, WIRE_OPENED);
        if (r < 0 && attempt == 0 && remote_conn_retry_now(p->conn, r))
            continue;
        break;
    }
    if (r < 0) {
        free(s->path);
        free(s->link_name);
        free(s);
        return NULL;
    }
    struct remote_conn *c = p->conn;
    remote_conn_ref(c);
    s->base.ops = &remote_source_ops;
    s->base.size = c->msg.size;
    size_t n = strlen(display) + strlen(c->spec) + 8;
    s->base.name = xmalloc(n);
    snprintf(s->base.name, n, "%s:%s", c->spec, display);
    s->handle = c->msg.handle;
    s->generation = c->generation;
    s->file_id_len = c->msg.build_id_len;
    memcpy(s->file_id, c->msg.build_id, s->file_id_len);
    block_cache_init(&s->cache, CACHE_BLOCKS, &c->cache_blocks, REMOTE_CACHE_BUDGET,
                     REMOTE_MAX_CHUNK, fetch_block, s);
    return &s->base;
}

static struct byte_source *rp_open_path(struct file_provider *fp, const char *abs_path)
{
    struct remote_provider *p = (struct remote_provider *)fp;
    struct remote_source *s = xcalloc(1, sizeof(*s));
    s->kind = OPEN_PATH;
    s->path = xstrdup(abs_path);
    return open_remote(p, s, abs_path);
}

static struct byte_source *rp_open_build_id(struct file_provider *fp, const uint8_t *id,
                                            size_t len)
{
    struct remote_provider *p = (struct remote_provider *)fp;
    if (len == 0 || len > WIRE_MAX_BUILD_ID)
        return NULL;
    struct remote_source *s = xcalloc(1, sizeof(*s));
    s->kind = OPEN_BUILD_ID;
    memcpy(s->id, id, len);
    s->id_len = len;
    char display[16 + 2 * WIRE_MAX_BUILD_ID] = "build-id:";
    build_id_hex(display + 9, sizeof(display) - 9, id, len);
    return open_remote(p, s, display);
}

static struct byte_source *rp_open_debuglink(struct file_provider *fp, const char *obj_path,
                                             const char *name, uint32_t crc)
{
    struct remote_provider *p = (struct remote_provider *)fp;
    struct remote_source *s = xcalloc(1, sizeof(*s));
    s->kind = OPEN_DEBUGLINK;
    s->path = xstrdup(obj_path);
    s->link_name = xstrdup(name);
    s->crc = crc;
    return open_remote(p, s, name);
}

static void rp_destroy(struct file_provider *fp)
{
    struct remote_provider *p = (struct remote_provider *)fp;
    remote_conn_unref(p->conn);
    free(p);
}

int remote_provider_stats(struct file_provider *fp, struct remote_stats *out)
{
    if (!fp || fp->ops->destroy != rp_destroy)
        return -1;
    *out = ((struct remote_provider *)fp)->conn->stats;
    return 0;
}

static struct file_provider *provider_new(struct remote_conn *c)
{
    struct remote_provider *p = xcalloc(1, sizeof(*p));
    p->conn = c;
    snprintf(p->name, sizeof(p->name), "memtrace-fs %s", c->spec);
    p->ops = (struct file_provider_ops){
        .open_path = rp_open_path,
        .open_build_id = rp_open_build_id,
        .open_debuglink = rp_open_debuglink,
        .destroy = rp_destroy,
        .name = p->name,
    };
    p->base.ops = &p->ops;
    return &p->base;
}

struct file_provider *remote_provider_connect(const char *host_port, int timeout_ms, char *err,
                                              size_t errlen)
{
    struct remote_conn *c = remote_conn_new(host_port, -1, timeout_ms);
    if (remote_conn_open(c, err, errlen) < 0) {
        remote_conn_unref(c);
        return NULL;
    }
    return provider_new(c);
}

struct file_provider *remote_provider_listen(const char *addr_port, int timeout_ms, char *err,
                                             size_t errlen)
{
    char addr[256] = "";
    uint16_t port = REMOTE_DEFAULT_PORT;
    if (addr_port[0] == ':') {
        /* ":PORT": every address */
        char *end;
        unsigned long v = strtoul(addr_port + 1, &end, 10);
        if (*end || v == 0 || v > 65535) {
            snprintf(err, errlen, "bad listen address \"%s\"", addr_port);
            return NULL;
        }
        port = (uint16_t)v;
    } else if (addr_port[0] &&
               wire_split_host_port(addr_port, addr, sizeof(addr), &port,
                                    REMOTE_DEFAULT_PORT) < 0) {
        snprintf(err, errlen, "bad listen address \"%s\" (ADDR[:PORT] expected)", addr_port);
        return NULL;
    }
    int lfd = wire_listen(addr[0] ? addr : NULL, port, err, errlen);
    if (lfd < 0)
        return NULL;
    char spec[300];
    snprintf(spec, sizeof(spec), "%s:%u", addr[0] ? addr : "*", wire_local_port(lfd));
    struct remote_conn *c = remote_conn_new(spec, lfd, timeout_ms);
    if (remote_conn_open(c, err, errlen) < 0) {
        remote_conn_unref(c);
        return NULL;
    }
    return provider_new(c);
}
