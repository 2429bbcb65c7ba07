/* memtrace-fs's debuginfod endpoint: elfutils' web API (GET /buildid/ID/
 * debuginfo|executable|source/PATH|section/NAME, /metrics) over HTTP, on a
 * port of its own, framed by libmicrohttpd.  Peers go through the same
 * admission as the wire protocol (--bind, --allow, a slot in the clients
 * table with its per-address share, request rate and eviction), every file
 * is opened through the sysroot jail, and a peer that sends no complete
 * request header within CLIENTS_HELLO_TIMEOUT_MS is hung up on. */
#ifndef MTFS_HTTP_H
#define MTFS_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "host-fs/allow.h"
#include "host-fs/lookup.h"

#define HTTP_DEFAULT_PORT 8002 /* debuginfod's */

struct http_server;

/* Listens on binds (as listeners_open) at port (0: one picked); returns the
 * server, with its port in *bound, or NULL and a one-line err. */
struct http_server *http_start(const struct sysroot_set *sysroots, const struct allow_list *allow,
                               const char *const *binds, int nbinds, uint16_t port,
                               uint16_t *bound, char *err, size_t errlen);
void http_stop(struct http_server *h);

#endif
