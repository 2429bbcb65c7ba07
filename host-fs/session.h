/* One connected target: answers its requests in order until it goes away. */
#ifndef MTFS_SESSION_H
#define MTFS_SESSION_H

#include <signal.h>

#include "host-fs/lookup.h"

struct wire_key;

struct session_config {
    const struct sysroot_set *sysroots;
    const char *server_name;          /* sent in our hello */
    volatile sig_atomic_t *stopping;  /* set by the signal handler */
    const struct wire_key *key;       /* --key: TLS PSK required; NULL: none */
};

/* Serves fd (already connected, either direction) and closes it.  ticket is
 * its slot in the clients table (-1: reversed roles, no limits); peer is for
 * messages.  Returns when the peer closes, misbehaves, goes over a limit, or
 * we are stopping. */
void session_serve(const struct session_config *cfg, int fd, int ticket, const char *peer);

#endif
