/* Client slots and the eviction of the longest-idle peer. */
#include "host-fs/clients.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>

#include "shared/log.h"

/* Shared by the accepting thread and the session threads; the lock is
 * held only for table updates. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int slot_fd[CLIENTS_MAX];    /* our own dup of the socket; -1: free */
static unsigned slot_gen[CLIENTS_MAX]; /* tells an evicted session from the slot's new one */
static bool initialized;
static int live;

/* Milliseconds since the peer last sent data, from the kernel's TCP state. */
static long idle_ms(int fd)
{
    struct tcp_info ti;
    socklen_t len = sizeof(ti);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0)
        return -1;
    return (long)ti.tcpi_last_data_recv;
}

int clients_admit(int fd, const char *peer)
{
    pthread_mutex_lock(&lock);
    if (!initialized) {
        for (int i = 0; i < CLIENTS_MAX; i++)
            slot_fd[i] = -1;
        initialized = true;
    }
    int free_slot = -1, oldest = -1;
    long oldest_idle = CLIENTS_EVICT_IDLE_MS - 1;
    for (int i = 0; i < CLIENTS_MAX; i++) {
        if (slot_fd[i] < 0) {
            if (free_slot < 0)
                free_slot = i;
            continue;
        }
        long idle = idle_ms(slot_fd[i]);
        if (idle > oldest_idle) {
            oldest_idle = idle;
            oldest = i;
        }
    }
    if (free_slot < 0 && oldest >= 0) {
        /* The session thread sees its socket shut and leaves; the slot is
         * ours now, and its dup is closed here, so the number cannot be
         * reused under the old session. */
        mt_warn("%s: all %d slots busy: closing the connection idle for %ld ms", peer,
                CLIENTS_MAX, oldest_idle);
        shutdown(slot_fd[oldest], SHUT_RDWR);
        close(slot_fd[oldest]);
        slot_fd[oldest] = -1;
        live--;
        free_slot = oldest;
    }
    int ticket = -1;
    if (free_slot >= 0) {
        slot_fd[free_slot] = dup(fd);
        if (slot_fd[free_slot] >= 0) {
            live++;
            slot_gen[free_slot] = (slot_gen[free_slot] + 1) % 0x100000;
            ticket = (int)slot_gen[free_slot] * CLIENTS_MAX + free_slot;
        }
    }
    pthread_mutex_unlock(&lock);
    return ticket;
}

void clients_leave(int ticket)
{
    if (ticket < 0)
        return;
    int slot = ticket % CLIENTS_MAX;
    pthread_mutex_lock(&lock);
    if (slot_fd[slot] >= 0 && (int)slot_gen[slot] == ticket / CLIENTS_MAX) {
        close(slot_fd[slot]);
        slot_fd[slot] = -1;
        live--;
    }
    pthread_mutex_unlock(&lock);
}

void clients_shutdown_all(void)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; initialized && i < CLIENTS_MAX; i++)
        if (slot_fd[i] >= 0)
            shutdown(slot_fd[i], SHUT_RDWR);
    pthread_mutex_unlock(&lock);
}

int clients_live(void)
{
    pthread_mutex_lock(&lock);
    int n = live;
    pthread_mutex_unlock(&lock);
    return n;
}
