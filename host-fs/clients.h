/* The table of connected targets: a fixed number of slots, so memory stays
 * bounded however many peers connect. */
#ifndef MTFS_CLIENTS_H
#define MTFS_CLIENTS_H

#define CLIENTS_MAX 64
/* A full table makes room by closing the connection that has received
 * nothing for the longest time, if that is at least this long: an idle or
 * slow-loris peer cannot lock real targets out (a real target reconnects
 * by itself when it needs a file again). */
#define CLIENTS_EVICT_IDLE_MS 5000

/* Takes a slot for the connected socket fd; returns a ticket for
 * clients_leave, or -1 when every slot is busy with a recently active peer. */
int clients_admit(int fd, const char *peer);
/* The session of ticket is over (a no-op if it was evicted meanwhile). */
void clients_leave(int ticket);
/* Shuts every client's socket so that each session ends at once, even in
 * the middle of a frame (used when the server stops). */
void clients_shutdown_all(void);
/* How many slots are taken. */
int clients_live(void);

#endif
