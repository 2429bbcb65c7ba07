/* Debug files from a debuginfod server (elfutils' web API), read by HTTP
 * range with memtrace's own small client (target/net/http_client.c):
 *
 *   memtrace --debuginfod http://HOST:PORT   (repeatable)
 *   DEBUGINFOD_URLS="http://a http://b"      (when neither --debuginfod nor
 *                                             -c/-l, nor a memtrace-fs -m found)
 *
 * The provider answers build-id lookups only (GET /buildid/ID/debuginfo),
 * after the target's own files: nothing is sent for what the target has.
 * A server that honours Range (memtrace-fs) is read in 64 KiB blocks as the
 * ELF and DWARF readers need them; one that ignores it (elfutils' debuginfod
 * 0.188 answers 200 with the whole file) is downloaded once into an unlinked
 * temporary file, at most DEBUGINFOD_SPOOL_MAX bytes.  After a failure of the
 * server itself (a timeout, a reset, a bad response) memtrace stops asking it
 * for the rest of the run: one warning, no repeated waits. */
#ifndef MT_NET_DEBUGINFOD_H
#define MT_NET_DEBUGINFOD_H

#include <stddef.h>

#include "target/files/provider.h"
#include "target/net/remote.h"

#define DEBUGINFOD_SPOOL_MAX (512ull << 20)

/* NULL with a one-line err for a URL memtrace cannot use (https...).  Sends
 * nothing yet: the first request goes with the first lookup. */
struct file_provider *debuginfod_provider_new(const char *url, int timeout_ms, char *err,
                                              size_t errlen);
/* Requests and bytes of this process so far; -1 when p is not one. */
int debuginfod_provider_stats(struct file_provider *p, struct remote_stats *out);

#endif
