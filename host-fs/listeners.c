#include "host-fs/listeners.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <unistd.h>

#include "host-fs/clients.h"
#include "host-fs/refusal_log.h"
#include "shared/wire_net.h"

int listeners_open(struct listener_set *ls, const char *const *binds, int nbinds,
                   uint16_t port, char *err, size_t errlen)
{
    ls->count = 0;
    ls->port = port;
    if (nbinds > LISTENERS_MAX) {
        snprintf(err, errlen, "at most %d --bind addresses", LISTENERS_MAX);
        return -1;
    }
    for (int i = 0; i < (nbinds > 0 ? nbinds : 1); i++) {
        int fd = wire_listen(nbinds > 0 ? binds[i] : NULL, ls->port, err, errlen);
        if (fd < 0) {
            listeners_close(ls);
            return -1;
        }
        ls->fds[ls->count++] = fd;
        if (ls->port == 0)
            ls->port = wire_local_port(fd);
    }
    return 0;
}

void listeners_close(struct listener_set *ls)
{
    for (int i = 0; i < ls->count; i++)
        close(ls->fds[i]);
    ls->count = 0;
}

int listeners_accept(struct listener_set *ls, const struct allow_list *allow, int timeout_ms,
                     int *ticket, char *peer, size_t peerlen)
{
    struct pollfd pfd[LISTENERS_MAX];
    for (int i = 0; i < ls->count; i++)
        pfd[i] = (struct pollfd){ .fd = ls->fds[i], .events = POLLIN };
    int n = poll(pfd, (nfds_t)ls->count, timeout_ms);
    if (n <= 0)
        return -1;
    for (int i = 0; i < ls->count; i++) {
        if (!pfd[i].revents)
            continue;
        struct sockaddr_storage ss;
        int fd = wire_accept(ls->fds[i], 0, peer, peerlen, &ss);
        if (fd < 0)
            continue;
        if (!allow_match(allow, &ss)) {
            refusal_log("%s: refused: not in --allow", peer);
            close(fd);
            continue;
        }
        *ticket = clients_admit(fd, &ss, peer);
        if (*ticket < 0) {
            close(fd);
            continue;
        }
        return fd; /* one at a time: the others are still pending next call */
    }
    errno = EAGAIN;
    return -1;
}
