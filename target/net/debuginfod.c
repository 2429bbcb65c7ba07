/* The debuginfod file_provider and its byte_sources (see debuginfod.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "target/net/debuginfod.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/build_id.h"
#include "shared/log.h"
#include "shared/xalloc.h"
#include "target/files/block_cache.h"
#include "target/net/http_client.h"

#define BLOCK_SIZE BLOCK_CACHE_BLOCK
#define CACHE_BLOCKS 16 /* per file, within CACHE_BUDGET per server */
#define CACHE_BUDGET 32 /* 2 MiB, except that each open file may keep one */
#define DIRECT_MAX (1024u * 1024u) /* one ranged request of a big read */
#define MISSES_MAX 256
#define ID_MAX 64

/* Shared by the provider and its sources (which may outlive it). */
struct dconn {
    int refs;
    bool broken; /* the server failed: no more requests this run */
    bool said_whole; /* told that it ignores ranges */
    char url[sizeof("http://") + 272 + HTTP_URL_MAX];
    struct http_client http;
    uint64_t file_bytes;
    unsigned blocks; /* cache blocks of all its sources */
};

struct dsource {
    struct byte_source base;
    struct dconn *conn;
    char path[32 + 2 * ID_MAX];
    struct block_cache cache;
};

struct dprovider {
    struct file_provider base;
    struct file_provider_ops ops;
    char name[sizeof("debuginfod ") + sizeof(((struct dconn *)0)->url)];
    struct dconn *conn;
    uint8_t misses[MISSES_MAX][ID_MAX + 1]; /* [0] is the length */
    unsigned nmisses;
};

static void conn_unref(struct dconn *c)
{
    if (--c->refs > 0)
        return;
    http_client_close(&c->http);
    free(c);
}

/* The server failed: say so once, and ask it nothing more. */
static int broken(struct dconn *c, int e, const char *err)
{
    if (!c->broken)
        mt_warn("debuginfod %s: %s; not asking it again", c->url, err);
    c->broken = true;
    http_client_close(&c->http);
    return e < 0 ? e : -EIO;
}

/* GET path bytes [off, off+len) of a file of size bytes, into out. */
static int fetch_range(struct dsource *s, uint64_t off, void *out, size_t len)
{
    struct dconn *c = s->conn;
    if (c->broken)
        return -EIO;
    struct http_response r;
    char err[1280];
    int rc = http_client_get(&c->http, s->path, true, off, off + len - 1, &r, err, sizeof(err));
    if (rc < 0)
        return broken(c, rc, err);
    if (r.status != 206 || !r.has_range || !r.has_total || r.range_first != off ||
        r.range_last != off + len - 1 || r.range_total != s->base.size ||
        r.content_length != len) {
        snprintf(err, sizeof(err), "%s: asked bytes %llu-%llu of %llu, got status %d%s", s->path,
                 (unsigned long long)off, (unsigned long long)(off + len - 1),
                 (unsigned long long)s->base.size, r.status,
                 r.has_range ? " with another Content-Range" : "");
        return broken(c, -EPROTO, err);
    }
    rc = http_client_body(&c->http, out, len, err, sizeof(err));
    if (rc < 0)
        return broken(c, rc, err);
    c->file_bytes += len;
    return 0;
}

static int fetch_block(void *ctx, uint64_t off, void *buf, uint32_t len)
{
    return fetch_range(ctx, off, buf, len);
}

static int dsource_read(struct byte_source *src, uint64_t off, void *buf, size_t len)
{
    struct dsource *s = (struct dsource *)src;
    return block_cache_read(&s->cache, s->base.size, off, buf, len);
}

static void dsource_close(struct byte_source *src)
{
    struct dsource *s = (struct dsource *)src;
    block_cache_free(&s->cache);
    conn_unref(s->conn);
    free(s->base.name);
    free(s);
}

static const struct byte_source_ops dsource_ops = {
    .read = dsource_read,
    .close = dsource_close,
};

/* A server that ignored the Range: the whole body into an unlinked file. */
static struct byte_source *spool(struct dconn *c, uint64_t size, const char *name)
{
    char err[1280];
    if (size > DEBUGINFOD_SPOOL_MAX) {
        snprintf(err, sizeof(err), "%s: %llu bytes without ranges, more than the %llu MiB memtrace "
                 "downloads whole", name, (unsigned long long)size, DEBUGINFOD_SPOOL_MAX >> 20);
        http_client_close(&c->http);
        mt_warn("debuginfod %s: %s", c->url, err);
        return NULL;
    }
    if (!c->said_whole) /* once: the server does not do ranges */
        mt_info("debuginfod %s: no Range support: downloading %s whole (%llu bytes)", c->url,
                name, (unsigned long long)size);
    c->said_whole = true;
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR)) {
        /* A file system without O_TMPFILE: a named file, unlinked at once. */
        char tmpl[PATH_MAX];
        if ((size_t)snprintf(tmpl, sizeof(tmpl), "%s/memtrace-debuginfod.XXXXXX", dir) < sizeof(tmpl) &&
            (fd = mkostemp(tmpl, O_CLOEXEC)) >= 0)
            unlink(tmpl);
    }
    if (fd < 0) {
        mt_warn("debuginfod %s: cannot keep %s: %s: %s", c->url, name, dir, strerror(errno));
        http_client_close(&c->http);
        return NULL;
    }
    uint8_t *buf = xmalloc(BLOCK_SIZE);
    int rc = 0;
    for (uint64_t done = 0; done < size && rc == 0;) {
        size_t n = size - done < BLOCK_SIZE ? (size_t)(size - done) : BLOCK_SIZE;
        http_client_extend(&c->http);
        rc = http_client_body(&c->http, buf, n, err, sizeof(err));
        if (rc < 0) {
            broken(c, rc, err);
            break;
        }
        if (pwrite(fd, buf, n, (off_t)done) != (ssize_t)n) {
            mt_warn("debuginfod %s: cannot keep %s: %s", c->url, name, strerror(errno));
            http_client_close(&c->http);
            rc = -EIO;
            break;
        }
        done += n;
    }
    free(buf);
    if (rc < 0) {
        close(fd);
        return NULL;
    }
    c->file_bytes += size;
    return byte_source_open_fd(fd, size, name);
}

static bool missed(const struct dprovider *p, const uint8_t *id, size_t len)
{
    for (unsigned i = 0; i < p->nmisses && i < MISSES_MAX; i++)
        if (p->misses[i][0] == len && memcmp(p->misses[i] + 1, id, len) == 0)
            return true;
    return false;
}

static void note_miss(struct dprovider *p, const uint8_t *id, size_t len)
{
    uint8_t *m = p->misses[p->nmisses++ % MISSES_MAX];
    m[0] = (uint8_t)len;
    memcpy(m + 1, id, len);
}

static struct byte_source *dp_open_build_id(struct file_provider *fp, const uint8_t *id, size_t len)
{
    struct dprovider *p = (struct dprovider *)fp;
    struct dconn *c = p->conn;
    if (c->broken || len < 2 || len > ID_MAX || missed(p, id, len))
        return NULL;
    struct dsource *s = xcalloc(1, sizeof(*s));
    char hex[2 * ID_MAX + 1];
    build_id_hex(hex, sizeof(hex), id, len);
    snprintf(s->path, sizeof(s->path), "/buildid/%s/debuginfo", hex);
    char name[sizeof(c->url) + sizeof(s->path)];
    snprintf(name, sizeof(name), "%s%s", c->url, s->path);

    /* The first block, and with it the file's size. */
    struct http_response r;
    char err[1280];
    int rc = http_client_get(&c->http, s->path, true, 0, BLOCK_SIZE - 1, &r, err, sizeof(err));
    if (rc < 0) {
        broken(c, rc, err);
        free(s);
        return NULL;
    }
    if (r.status == 206 && r.has_range && r.has_total && r.range_first == 0 &&
        r.range_total > 0 && r.range_last == (r.range_total < BLOCK_SIZE ? r.range_total : BLOCK_SIZE) - 1) {
        uint32_t first = (uint32_t)(r.range_last + 1);
        uint8_t *block = xmalloc(BLOCK_SIZE);
        rc = http_client_body(&c->http, block, first, err, sizeof(err));
        if (rc < 0) {
            broken(c, rc, err);
            free(block);
            free(s);
            return NULL;
        }
        c->file_bytes += first;
        c->refs++;
        s->conn = c;
        s->base.ops = &dsource_ops;
        s->base.size = r.range_total;
        s->base.name = xstrdup(name);
        block_cache_init(&s->cache, CACHE_BLOCKS, &c->blocks, CACHE_BUDGET, DIRECT_MAX,
                         fetch_block, s);
        block_cache_put(&s->cache, 0, block, first);
        free(block);
        return &s->base;
    }
    if (r.status == 200 && r.content_length > 0 &&
        (!r.has_debuginfod_size || r.debuginfod_size == r.content_length)) {
        free(s);
        return spool(c, r.content_length, name);
    }
    free(s);
    if (r.status == 404) {
        note_miss(p, id, len);
        http_client_finish(&c->http);
        return NULL;
    }
    snprintf(err, sizeof(err), "%s: status %d%s", name, r.status,
             r.status == 206 ? " with a Content-Range that is not the one asked" : "");
    broken(c, -EPROTO, err);
    return NULL;
}

static void dp_destroy(struct file_provider *fp)
{
    struct dprovider *p = (struct dprovider *)fp;
    conn_unref(p->conn);
    free(p);
}

int debuginfod_provider_stats(struct file_provider *fp, struct remote_stats *out)
{
    if (!fp || fp->ops->destroy != dp_destroy)
        return -1;
    const struct dconn *c = ((struct dprovider *)fp)->conn;
    memset(out, 0, sizeof(*out));
    out->requests = c->http.requests;
    out->bytes_sent = c->http.bytes_sent;
    out->bytes_received = c->http.bytes_received;
    out->file_bytes = c->file_bytes;
    return 0;
}

struct file_provider *debuginfod_provider_new(const char *url, int timeout_ms, char *err,
                                              size_t errlen)
{
    struct http_url u;
    if (http_parse_url(url, &u, err, errlen) < 0)
        return NULL;
    struct dprovider *p = xcalloc(1, sizeof(*p));
    struct dconn *c = xcalloc(1, sizeof(*c));
    c->refs = 1;
    snprintf(c->url, sizeof(c->url), "http://%s%s", u.host_port, u.prefix);
    http_client_init(&c->http, &u, timeout_ms);
    p->conn = c;
    snprintf(p->name, sizeof(p->name), "debuginfod %s", c->url);
    p->ops = (struct file_provider_ops){
        .open_build_id = dp_open_build_id,
        .destroy = dp_destroy,
        .name = p->name,
    };
    p->base.ops = &p->ops;
    return &p->base;
}
