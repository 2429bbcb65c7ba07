/* DNS-SD publishing of _memtrace-fs._tcp through avahi-daemon, kept alive
 * across daemon restarts and name collisions, on a thread of its own. */
#ifndef MTFS_PUBLISH_H
#define MTFS_PUBLISH_H

#include <stdint.h>

#define MTFS_SERVICE_TYPE "_memtrace-fs._tcp"

struct publisher;

/* Never fails for lack of a daemon (that is said once, and retried); returns
 * NULL only when the poll thread cannot start. */
struct publisher *publisher_start(const char *instance_name, uint16_t port,
                                  const char *sysroots_txt);
void publisher_stop(struct publisher *p);

#endif
