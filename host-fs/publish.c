#include "host-fs/publish.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <avahi-client/client.h>
#include <avahi-client/publish.h>
#include <avahi-common/alternative.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <avahi-common/thread-watch.h>
#include <avahi-common/timeval.h>

#include "shared/log.h"
#include "shared/xalloc.h"

#define RETRY_MS 2000

/* Everything below runs on the avahi poll thread, except start and stop. */
struct publisher {
    AvahiThreadedPoll *poll;
    AvahiClient *client;
    AvahiEntryGroup *group;
    AvahiTimeout *retry;
    char *name; /* avahi_malloc'd: renamed on collision */
    uint16_t port;
    uint16_t http_port; /* the debuginfod endpoint; 0: none */
    char *txt_sysroots;
    bool said_absent;
    bool published_once;
};

static void client_cb(AvahiClient *c, AvahiClientState state, void *userdata);

static void rename_after_collision(struct publisher *p)
{
    char *n = avahi_alternative_service_name(p->name);
    mt_info("service name \"%s\" is taken, trying \"%s\"", p->name, n);
    avahi_free(p->name);
    p->name = n;
}

static void add_services(struct publisher *p);

static void group_cb(AvahiEntryGroup *g, AvahiEntryGroupState state, void *userdata)
{
    struct publisher *p = userdata;
    p->group = g;
    switch (state) {
    case AVAHI_ENTRY_GROUP_ESTABLISHED:
        mt_info("published \"%s\" (%s) on port %u", p->name, MTFS_SERVICE_TYPE, p->port);
        if (p->http_port)
            mt_info("published \"%s\" (%s) on port %u", p->name, MTFS_DEBUGINFOD_TYPE,
                    p->http_port);
        p->published_once = true;
        p->said_absent = false;
        break;
    case AVAHI_ENTRY_GROUP_COLLISION:
        rename_after_collision(p);
        add_services(p);
        break;
    case AVAHI_ENTRY_GROUP_FAILURE:
        mt_warn("publishing failed: %s",
                avahi_strerror(avahi_client_errno(avahi_entry_group_get_client(g))));
        break;
    default:
        break;
    }
}

static void add_services(struct publisher *p)
{
    if (!p->group) {
        p->group = avahi_entry_group_new(p->client, group_cb, p);
        if (!p->group) {
            mt_warn("avahi: %s", avahi_strerror(avahi_client_errno(p->client)));
            return;
        }
    } else {
        avahi_entry_group_reset(p->group);
    }
    for (int tries = 0; tries < 50; tries++) {
        int r = avahi_entry_group_add_service(p->group, AVAHI_IF_UNSPEC, AVAHI_PROTO_UNSPEC, 0,
                                              p->name, MTFS_SERVICE_TYPE, NULL, NULL, p->port,
                                              "proto=1", p->txt_sysroots, NULL);
        if (r == 0 && p->http_port)
            r = avahi_entry_group_add_service(p->group, AVAHI_IF_UNSPEC, AVAHI_PROTO_UNSPEC, 0,
                                              p->name, MTFS_DEBUGINFOD_TYPE, NULL, NULL,
                                              p->http_port, "path=/", NULL);
        if (r == AVAHI_ERR_COLLISION) {
            rename_after_collision(p);
            avahi_entry_group_reset(p->group);
            continue;
        }
        if (r < 0) {
            mt_warn("avahi: cannot add service: %s", avahi_strerror(r));
            return;
        }
        r = avahi_entry_group_commit(p->group);
        if (r < 0)
            mt_warn("avahi: cannot commit: %s", avahi_strerror(r));
        return;
    }
}

static void say_absent(struct publisher *p, const char *why)
{
    if (p->said_absent)
        return;
    p->said_absent = true;
    mt_warn("no avahi-daemon reachable (%s): serving without publishing; will keep trying", why);
}

static void schedule_retry(struct publisher *p)
{
    struct timeval tv;
    avahi_elapse_time(&tv, RETRY_MS, 0);
    avahi_threaded_poll_get(p->poll)->timeout_update(p->retry, &tv);
}

/* Runs a little after a failure, never inside the failing client's callback. */
static void retry_cb(AvahiTimeout *t, void *userdata)
{
    (void)t;
    struct publisher *p = userdata;
    if (p->client) {
        avahi_client_free(p->client); /* frees its entry group too */
        p->client = NULL;
        p->group = NULL;
    }
    int err = 0;
    p->client = avahi_client_new(avahi_threaded_poll_get(p->poll), AVAHI_CLIENT_NO_FAIL,
                                 client_cb, p, &err);
    if (!p->client) {
        say_absent(p, avahi_strerror(err));
        schedule_retry(p);
    }
}

static void client_cb(AvahiClient *c, AvahiClientState state, void *userdata)
{
    struct publisher *p = userdata;
    p->client = c;
    switch (state) {
    case AVAHI_CLIENT_S_RUNNING:
        if (p->published_once)
            mt_info("avahi-daemon is back: publishing again");
        add_services(p);
        break;
    case AVAHI_CLIENT_S_COLLISION:
    case AVAHI_CLIENT_S_REGISTERING:
        /* The host name changes: withdraw, and add again once running. */
        if (p->group)
            avahi_entry_group_reset(p->group);
        break;
    case AVAHI_CLIENT_CONNECTING:
        say_absent(p, "daemon not running");
        break;
    case AVAHI_CLIENT_FAILURE:
        say_absent(p, avahi_strerror(avahi_client_errno(c)));
        schedule_retry(p);
        break;
    }
}

struct publisher *publisher_start(const char *instance_name, uint16_t port,
                                  const char *sysroots_txt)
{
    return publisher_start2(instance_name, port, sysroots_txt, 0);
}

struct publisher *publisher_start2(const char *instance_name, uint16_t port,
                                   const char *sysroots_txt, uint16_t http_port)
{
    struct publisher *p = xcalloc(1, sizeof(*p));
    p->http_port = http_port;
    p->poll = avahi_threaded_poll_new();
    if (!p->poll) {
        free(p);
        return NULL;
    }
    p->name = avahi_strdup(instance_name);
    p->port = port;
    size_t n = strlen(sysroots_txt) + 16;
    p->txt_sysroots = xmalloc(n);
    /* A TXT string holds at most 255 bytes. */
    snprintf(p->txt_sysroots, n < 256 ? n : 256, "sysroots=%s", sysroots_txt);
    const AvahiPoll *api = avahi_threaded_poll_get(p->poll);
    avahi_threaded_poll_lock(p->poll);
    p->retry = api->timeout_new(api, NULL, retry_cb, p);
    struct timeval now;
    avahi_elapse_time(&now, 0, 0);
    api->timeout_update(p->retry, &now);
    avahi_threaded_poll_unlock(p->poll);
    if (avahi_threaded_poll_start(p->poll) < 0) {
        publisher_stop(p);
        return NULL;
    }
    return p;
}

void publisher_stop(struct publisher *p)
{
    if (!p)
        return;
    avahi_threaded_poll_stop(p->poll);
    if (p->client)
        avahi_client_free(p->client);
    if (p->retry)
        avahi_threaded_poll_get(p->poll)->timeout_free(p->retry);
    avahi_threaded_poll_free(p->poll);
    avahi_free(p->name);
    free(p->txt_sysroots);
    free(p);
}
