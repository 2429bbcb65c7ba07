/* The listening sockets of one service (--bind ADDR, repeatable; every
 * address when none), and the admission every accepted peer goes through:
 * --allow, then a slot in the clients table.  A second service (an HTTP
 * endpoint) opens its own listener_set on its own port and shares the same
 * allow list and clients table, so the same rules and limits hold there. */
#ifndef MTFS_LISTENERS_H
#define MTFS_LISTENERS_H

#include <stddef.h>
#include <stdint.h>

#include "host-fs/allow.h"

#define LISTENERS_MAX 16

struct listener_set {
    int fds[LISTENERS_MAX];
    int count;
    uint16_t port; /* the one port every socket listens on */
};

/* Listens on each of binds[0..nbinds) (NULL/0: every address, dual-stack)
 * at port (0: one picked by the first, then used by all).  0, or -1 with a
 * one-line err (nothing left open). */
int listeners_open(struct listener_set *ls, const char *const *binds, int nbinds,
                   uint16_t port, char *err, size_t errlen);
void listeners_close(struct listener_set *ls);

/* Waits at most timeout_ms for a peer on any socket that --allow admits and
 * that gets a slot; returns its fd with *ticket and peer ("ADDR:PORT"), or
 * -1 (timeout, or a peer refused: logged at a bounded rate, closed). */
int listeners_accept(struct listener_set *ls, const struct allow_list *allow, int timeout_ms,
                     int *ticket, char *peer, size_t peerlen);

#endif
