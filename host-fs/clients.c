/* Client slots, per-address limits, request rates and eviction. */
#include "host-fs/clients.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "host-fs/refusal_log.h"
#include "shared/log.h"

struct slot {
    int fd;               /* our own dup of the socket; -1: free */
    unsigned gen;         /* tells an evicted session from the slot's new one */
    unsigned char key[8]; /* address group: IPv4 address, or IPv6 /64 */
    enum client_rank rank;
    long long since_ms;   /* admitted */
    double tokens;        /* request bucket */
    long long refill_ms;
};

/* Shared by the accepting threads and the session threads; the lock is
 * held only for table updates. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot slots[CLIENTS_MAX];
static bool initialized;
static int live;
static struct client_limits limits = {
    .per_addr = CLIENTS_PER_ADDR,
    .req_rate = CLIENTS_REQ_RATE,
    .req_burst = CLIENTS_REQ_BURST,
    .lifetime_s = CLIENTS_LIFETIME_S,
    .evict_idle_ms = CLIENTS_EVICT_IDLE_MS,
    .io_timeout_ms = CLIENTS_IO_TIMEOUT_MS,
};

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const struct client_limits *clients_limits(void) { return &limits; }

const struct client_limits *clients_configure(void)
{
    const char *knob = getenv("MEMTRACE_FS_TEST_LIMITS");
    if (!knob || !*knob)
        return &limits;
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", knob);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq)
            continue;
        *eq = 0;
        int v = atoi(eq + 1);
        if (strcmp(item, "per_addr") == 0) limits.per_addr = v;
        else if (strcmp(item, "rate") == 0) limits.req_rate = v;
        else if (strcmp(item, "burst") == 0) limits.req_burst = v;
        else if (strcmp(item, "lifetime") == 0) limits.lifetime_s = v;
        else if (strcmp(item, "evict_idle") == 0) limits.evict_idle_ms = v;
        else if (strcmp(item, "io_timeout") == 0) limits.io_timeout_ms = v;
    }
    mt_warn("test limits in force (MEMTRACE_FS_TEST_LIMITS=%s)", knob);
    return &limits;
}

/* Milliseconds since the peer last sent data, from the kernel's TCP state. */
static long idle_ms(int fd)
{
    struct tcp_info ti;
    socklen_t len = sizeof(ti);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0)
        return 0;
    return (long)ti.tcpi_last_data_recv;
}

static void group_key(const struct sockaddr_storage *ss, unsigned char key[8])
{
    memset(key, 0, 8);
    if (!ss)
        return;
    if (ss->ss_family == AF_INET) {
        memcpy(key, &((const struct sockaddr_in *)ss)->sin_addr, 4);
    } else if (ss->ss_family == AF_INET6) {
        const unsigned char *a = ((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr;
        static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
        if (memcmp(a, mapped, 12) == 0)
            memcpy(key, a + 12, 4); /* an IPv4 peer on the dual-stack socket */
        else
            memcpy(key, a, 8);      /* one /64: what one host gets */
    }
}

static int same_group(const unsigned char key[8])
{
    int n = 0;
    for (int i = 0; i < CLIENTS_MAX; i++)
        if (slots[i].fd >= 0 && memcmp(slots[i].key, key, 8) == 0)
            n++;
    return n;
}

/* Is a worse victim than b (lower rank, more crowded address, longer
 * idle, older)? */
static bool worse(int a, long idle_a, int crowd_a, int b, long idle_b, int crowd_b)
{
    if (slots[a].rank != slots[b].rank)
        return slots[a].rank < slots[b].rank;
    if (crowd_a != crowd_b)
        return crowd_a > crowd_b;
    if (idle_a != idle_b)
        return idle_a > idle_b;
    return slots[a].since_ms < slots[b].since_ms;
}

static int pick_victim(long *victim_idle)
{
    int victim = -1, victim_crowd = 0;
    for (int i = 0; i < CLIENTS_MAX; i++) {
        if (slots[i].fd < 0)
            continue;
        long idle = idle_ms(slots[i].fd);
        if (slots[i].rank >= CLIENT_SERVED && idle < limits.evict_idle_ms)
            continue; /* a target at work */
        int crowd = same_group(slots[i].key);
        if (victim < 0 || worse(i, idle, crowd, victim, *victim_idle, victim_crowd)) {
            victim = i;
            *victim_idle = idle;
            victim_crowd = crowd;
        }
    }
    return victim;
}

int clients_admit(int fd, const struct sockaddr_storage *addr, const char *peer)
{
    static const char *rank_name[] = { "unverified", "idle", "served" };
    pthread_mutex_lock(&lock);
    if (!initialized) {
        for (int i = 0; i < CLIENTS_MAX; i++)
            slots[i].fd = -1;
        initialized = true;
    }
    unsigned char key[8];
    group_key(addr, key);
    if (same_group(key) >= limits.per_addr) {
        pthread_mutex_unlock(&lock);
        refusal_log("%s: refused: %d connections from this address already", peer,
                    limits.per_addr);
        return -1;
    }
    int free_slot = -1;
    for (int i = 0; i < CLIENTS_MAX && free_slot < 0; i++)
        if (slots[i].fd < 0)
            free_slot = i;
    if (free_slot < 0) {
        long idle = 0;
        int victim = pick_victim(&idle);
        if (victim < 0) {
            pthread_mutex_unlock(&lock);
            refusal_log("%s: refused: all %d slots serve active targets", peer, CLIENTS_MAX);
            return -1;
        }
        /* The session thread sees its socket shut and leaves; the slot is
         * ours now, and its dup is closed here, so the number cannot be
         * reused under the old session. */
        refusal_log("%s: all %d slots busy: closing a connection (%s, idle for %ld ms)", peer,
                    CLIENTS_MAX, rank_name[slots[victim].rank], idle);
        shutdown(slots[victim].fd, SHUT_RDWR);
        close(slots[victim].fd);
        slots[victim].fd = -1;
        live--;
        free_slot = victim;
    }
    int ticket = -1;
    struct slot *s = &slots[free_slot];
    s->fd = dup(fd);
    if (s->fd >= 0) {
        live++;
        s->gen = (s->gen + 1) % 0x100000;
        memcpy(s->key, key, 8);
        s->rank = CLIENT_CONNECTED;
        s->since_ms = now_ms();
        s->tokens = limits.req_burst;
        s->refill_ms = s->since_ms;
        ticket = (int)s->gen * CLIENTS_MAX + free_slot;
    }
    pthread_mutex_unlock(&lock);
    return ticket;
}

/* The slot of ticket while it is still that session's; lock held. */
static struct slot *slot_of(int ticket)
{
    if (ticket < 0)
        return NULL;
    struct slot *s = &slots[ticket % CLIENTS_MAX];
    return s->fd >= 0 && (int)s->gen == ticket / CLIENTS_MAX ? s : NULL;
}

void clients_set_rank(int ticket, enum client_rank rank)
{
    pthread_mutex_lock(&lock);
    struct slot *s = slot_of(ticket);
    if (s && rank > s->rank)
        s->rank = rank;
    pthread_mutex_unlock(&lock);
}

int clients_note_request(int ticket, const char **why)
{
    if (ticket < 0)
        return 0; /* reversed roles: we chose the peer */
    int rc = 0;
    pthread_mutex_lock(&lock);
    struct slot *s = slot_of(ticket);
    if (s) {
        long long now = now_ms();
        s->tokens += (double)(now - s->refill_ms) * limits.req_rate / 1000.0;
        if (s->tokens > limits.req_burst)
            s->tokens = limits.req_burst;
        s->refill_ms = now;
        if (now - s->since_ms > (long long)limits.lifetime_s * 1000) {
            *why = "session lifetime over; reconnect";
            rc = -1;
        } else if (s->tokens < 1) {
            *why = "request rate over the limit";
            rc = -1;
        } else {
            s->tokens -= 1;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

void clients_leave(int ticket)
{
    pthread_mutex_lock(&lock);
    struct slot *s = slot_of(ticket);
    if (s) {
        close(s->fd);
        s->fd = -1;
        live--;
    }
    pthread_mutex_unlock(&lock);
}

void clients_shutdown_all(void)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; initialized && i < CLIENTS_MAX; i++)
        if (slots[i].fd >= 0)
            shutdown(slots[i].fd, SHUT_RDWR);
    pthread_mutex_unlock(&lock);
}

int clients_live(void)
{
    pthread_mutex_lock(&lock);
    int n = live;
    pthread_mutex_unlock(&lock);
    return n;
}
