/* TCP plumbing both programs share: connect with a timeout, listen, accept
 * with a timeout.  Every socket is close-on-exec (the tracer forks programs). */
#ifndef MT_SHARED_WIRE_NET_H
#define MT_SHARED_WIRE_NET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* HOST[:PORT]; fd or -1 with a one-line err. */
int wire_connect(const char *spec, uint16_t default_port, int timeout_ms, char *err,
                 size_t errlen);
/* Listens on addr (NULL: every address, IPv6 dual-stack or IPv4) and port. */
int wire_listen(const char *addr, uint16_t port, char *err, size_t errlen);
/* Waits at most timeout_ms for a connection; fd, or -1 (errno ETIMEDOUT...).
 * peer gets "ADDR:PORT" and addr (when not NULL) the address itself. */
int wire_accept(int lfd, int timeout_ms, char *peer, size_t peerlen,
                struct sockaddr_storage *addr);
uint16_t wire_local_port(int fd);
void wire_format_addr(const struct sockaddr *sa, socklen_t len, char *out, size_t outlen);

#endif
