/* One connected target: answers its requests in order until it goes away. */
#ifndef MTFS_SESSION_H
#define MTFS_SESSION_H

#include <signal.h>

#include "host-fs/lookup.h"

struct session_config {
    const struct sysroot_set *sysroots;
    const char *server_name;          /* sent in our hello */
    volatile sig_atomic_t *stopping;  /* set by the signal handler */
};

/* Serves fd (already connected, either direction) and closes it.  peer is for
 * messages.  Returns when the peer closes, misbehaves, or we are stopping. */
void session_serve(const struct session_config *cfg, int fd, const char *peer);

#endif
