/* DNS-SD publishing of _memtrace-fs._tcp through avahi-daemon, kept alive
 * across daemon restarts and name collisions, on a thread of its own. */
#ifndef MTFS_PUBLISH_H
#define MTFS_PUBLISH_H

#include <stdint.h>

#define MTFS_SERVICE_TYPE "_memtrace-fs._tcp"
/* The debuginfod endpoint, under the same instance name. */
#define MTFS_DEBUGINFOD_TYPE "_debuginfod._tcp"

struct publisher;

/* Never fails for lack of a daemon (that is said once, and retried); returns
 * NULL only when the poll thread cannot start. */
struct publisher *publisher_start(const char *instance_name, uint16_t port,
                                  const char *sysroots_txt);
/* The same, also publishing MTFS_DEBUGINFOD_TYPE on http_port (0: none). */
struct publisher *publisher_start2(const char *instance_name, uint16_t port,
                                   const char *sysroots_txt, uint16_t http_port);
void publisher_stop(struct publisher *p);

#endif
