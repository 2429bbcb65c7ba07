/* memtrace-fs: serves the files of one or more sysroots to memtrace targets,
 * read-only and by range, and publishes itself with DNS-SD. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "arch/arch.h"
#include "host-fs/allow.h"
#include "host-fs/clients.h"
#include "host-fs/http.h"
#include "host-fs/listeners.h"
#include "host-fs/lookup.h"
#include "shared/wire_net.h"
#include "host-fs/publish.h"
#include "host-fs/refusal_log.h"
#include "host-fs/session.h"
#include "host-fs/upstream.h"
#include "shared/log.h"
#include "shared/version.h"
#include "shared/wire.h"
#include "shared/wire_tls.h"
#include "shared/xalloc.h"

/* Written by the signal handler, read by every loop. */
static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
}

struct options {
    const char *binds[LISTENERS_MAX];
    int nbinds;
    const char *key_file;
    const char *port;
    const char *connect;
    const char *name;
    bool no_mdns;
    bool quiet;
    const char *http_port; /* --http; NULL: the default */
    bool no_http;
    struct allow_list allow;
    const char *upstream[16]; /* --upstream URL... */
    int nupstream;
    const char *cache_dir;
    uint64_t cache_size;
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: memtrace-fs [OPTIONS] SYSROOT...\n"
            "Serves the files of SYSROOTs to memtrace targets (read-only, by range).\n"
            "  -p, --port PORT             listen port (default %d; 0 picks one)\n"
            "  -c, --connect HOST[:PORT]   reversed roles: connect to a memtrace -l\n"
            "  -n, --no-mdns               do not publish with DNS-SD\n"
            "  -N, --name NAME             DNS-SD instance name\n"
            "                              (default \"memtrace-fs on HOSTNAME\")\n"
            "  -a, --allow CIDR            serve only clients in CIDR (repeatable;\n"
            "                              e.g. 169.254.0.0/16, fe80::/10)\n"
            "  -b, --bind ADDR             listen on ADDR only (repeatable; default:\n"
            "                              every address)\n"
            "  -k, --key FILE              require the pre-shared key in FILE: both sides\n"
            "                              authenticated, the connection encrypted\n"
            "                              (TLS 1.3 PSK; memtrace --key FILE too)\n"
            "      --http PORT             debuginfod web API on PORT (default %d;\n"
            "                              0 picks one); same --bind, --allow, limits;\n"
            "                              not with --connect or --key\n"
            "      --no-http               no debuginfod endpoint\n"
            "      --upstream URL          fetch the debug files and executables the\n"
            "                              sysroots lack by build-id from this debuginfod\n"
            "                              server (repeatable; default $DEBUGINFOD_URLS)\n"
            "      --cache-dir DIR         where fetched files are kept (default\n"
            "                              ~/.cache/memtrace-fs)\n"
            "      --cache-size BYTES      at most this much there, least recently used\n"
            "                              evicted first (K, M, G; default 1G)\n"
            "  -q, --quiet                 only warnings and errors\n"
            "  -h, --help                  this text\n"
            "  -V, --version               version\n",
            WIRE_DEFAULT_PORT, HTTP_DEFAULT_PORT);
}

/* -V: the release, the git description, the wire protocol, and the CPU
 * this server runs on (it serves the files of programs of every CPU). */
static void print_version(void)
{
    char detail[32];
    snprintf(detail, sizeof(detail), "protocol %d", WIRE_VERSION);
    version_print(stdout, "memtrace-fs", detail);
    printf("engines: none (a file server)\n");
    printf("cpus: %s host; serves the files of every CPU\n", ARCH_NAME);
}

static void open_sysroots(int argc, char **argv, struct sysroot_set *set)
{
    set->items = xcalloc((size_t)argc, sizeof(*set->items));
    for (int i = 0; i < argc; i++) {
        char *canon = realpath(argv[i], NULL);
        int fd = canon ? open(canon, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
        if (fd < 0) {
            mt_error("sysroot %s: %s", argv[i], strerror(errno));
            exit(2);
        }
        set->items[set->count].path = canon;
        set->items[set->count].fd = fd;
        set->count++;
    }
}

static void close_sysroots(struct sysroot_set *set)
{
    for (int i = 0; i < set->count; i++) {
        close(set->items[i].fd);
        free(set->items[i].path);
    }
    free(set->items);
}

struct client_thread {
    const struct session_config *cfg;
    int fd;
    int ticket;
    char peer[96];
};

static void *client_main(void *arg)
{
    struct client_thread *ct = arg;
    session_serve(ct->cfg, ct->fd, ct->ticket, ct->peer);
    clients_leave(ct->ticket);
    free(ct);
    return NULL;
}

static void start_client(const struct session_config *cfg, int fd, int ticket,
                         const char *peer)
{
    struct client_thread *ct = xcalloc(1, sizeof(*ct));
    ct->cfg = cfg;
    ct->fd = fd;
    ct->ticket = ticket;
    snprintf(ct->peer, sizeof(ct->peer), "%s", peer);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    /* Sessions use little stack; 64 of them must not reserve 512 MiB. */
    pthread_attr_setstacksize(&attr, 256 * 1024);
    pthread_t t;
    if (pthread_create(&t, &attr, client_main, ct) != 0) {
        mt_warn("%s: cannot start a thread", peer);
        clients_leave(ticket);
        close(fd);
        free(ct);
    }
    pthread_attr_destroy(&attr);
}

static int serve_listening(const struct session_config *cfg, struct listener_set *ls,
                           const struct allow_list *allow)
{
    while (!stopping) {
        char peer[96];
        int ticket;
        int fd = listeners_accept(ls, allow, 500, &ticket, peer, sizeof(peer));
        if (fd >= 0)
            start_client(cfg, fd, ticket, peer);
    }
    return 0;
}

/* Reversed roles: keep a connection to the listening memtrace, reconnecting
 * when it drops, until we are stopped. */
static int serve_connecting(const struct session_config *cfg, const char *spec)
{
    bool said = false;
    while (!stopping) {
        char err[256];
        int fd = wire_connect(spec, WIRE_DEFAULT_PORT, 5000, err, sizeof(err));
        if (fd < 0) {
            if (!said)
                mt_warn("%s; retrying every second", err);
            said = true;
            for (int i = 0; i < 10 && !stopping; i++)
                usleep(100 * 1000);
            continue;
        }
        said = false;
        session_serve(cfg, fd, -1, spec);
    }
    return 0;
}

static int parse_port(const char *s, uint16_t *port)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == 0 || *end || v < 0 || v > 65535) {
        mt_error("bad port: %s", s);
        return -1;
    }
    *port = (uint16_t)v;
    return 0;
}

/* The debuginfod endpoint next to the wire protocol's listeners, or NULL:
 * off (--no-http, --key, reversed roles), or the default port is taken
 * (said once).  An explicit --http that cannot listen is an error (-1). */
static int start_http(const struct options *o, const struct sysroot_set *set, uint16_t port,
                      bool key, struct http_server **out)
{
    *out = NULL;
    if (o->no_http)
        return 0;
    if (key) {
        /* debuginfod clients cannot present the key: HTTP would bypass it. */
        if (o->http_port)
            mt_warn("--http ignored: with --key only keyed memtrace clients are served");
        return 0;
    }
    char err[256];
    uint16_t bound = 0;
    *out = http_start(set, &o->allow, o->binds, o->nbinds, port, &bound, err, sizeof(err));
    if (!*out) {
        if (o->http_port) {
            mt_error("--http: %s", err);
            return -1;
        }
        mt_warn("debuginfod endpoint off: %s (--http PORT, or --no-http)", err);
        return 0;
    }
    mt_info("debuginfod endpoint: http port %u", bound);
    return bound;
}

static char *sysroots_txt(const struct sysroot_set *set)
{
    size_t n = 1;
    for (int i = 0; i < set->count; i++)
        n += strlen(set->items[i].path) + 1;
    char *s = xcalloc(1, n);
    size_t used = 0;
    for (int i = 0; i < set->count; i++) {
        size_t len = strlen(set->items[i].path);
        if (i)
            s[used++] = ',';
        memcpy(s + used, set->items[i].path, len);
        used += len;
    }
    return s;
}

int main(int argc, char **argv)
{
    log_set_program("memtrace-fs");
    struct options o = { .port = NULL };
    static const struct option longopts[] = {
        { "port", required_argument, NULL, 'p' },
        { "connect", required_argument, NULL, 'c' },
        { "no-mdns", no_argument, NULL, 'n' },
        { "name", required_argument, NULL, 'N' },
        { "allow", required_argument, NULL, 'a' },
        { "bind", required_argument, NULL, 'b' },
        { "key", required_argument, NULL, 'k' },
        { "quiet", no_argument, NULL, 'q' },
        { "http", required_argument, NULL, 0x100 },
        { "no-http", no_argument, NULL, 0x101 },
        { "upstream", required_argument, NULL, 0x102 },
        { "cache-dir", required_argument, NULL, 0x103 },
        { "cache-size", required_argument, NULL, 0x104 },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    int c;
    while ((c = getopt_long(argc, argv, "+p:c:nN:a:b:k:qhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'p': o.port = optarg; break;
        case 'c': o.connect = optarg; break;
        case 'n': o.no_mdns = true; break;
        case 'N': o.name = optarg; break;
        case 'a':
            if (allow_add(&o.allow, optarg) < 0) {
                mt_error("bad --allow: %s (CIDR expected, at most %d)", optarg, ALLOW_MAX);
                return 2;
            }
            break;
        case 'b':
            if (o.nbinds >= LISTENERS_MAX) {
                mt_error("at most %d --bind addresses", LISTENERS_MAX);
                return 2;
            }
            o.binds[o.nbinds++] = optarg;
            break;
        case 'k': o.key_file = optarg; break;
        case 'q': o.quiet = true; break;
        case 0x100: o.http_port = optarg; break;
        case 0x101: o.no_http = true; break;
        case 0x102:
            if (o.nupstream == (int)(sizeof(o.upstream) / sizeof(o.upstream[0]))) {
                mt_error("--upstream: at most %d", o.nupstream);
                return 2;
            }
            o.upstream[o.nupstream++] = optarg;
            break;
        case 0x103: o.cache_dir = optarg; break;
        case 0x104:
            if (upstream_parse_size(optarg, &o.cache_size) < 0) {
                mt_error("--cache-size: a size in bytes (K, M or G suffix), not %s", optarg);
                return 2;
            }
            break;
        case 'h': usage(stdout); return 0;
        case 'V': print_version(); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind >= argc) {
        mt_error("no SYSROOT given");
        usage(stderr);
        return 2;
    }
    log_set_quiet(o.quiet);
    uint16_t port = WIRE_DEFAULT_PORT;
    uint16_t http_port = HTTP_DEFAULT_PORT;
    if ((o.port && parse_port(o.port, &port) < 0) ||
        (o.http_port && parse_port(o.http_port, &http_port) < 0))
        return 2;
    struct wire_key *key = NULL;
    if (o.key_file) {
        char kerr[512];
        key = wire_key_load(o.key_file, kerr, sizeof(kerr));
        if (!key) {
            mt_error("%s", kerr);
            return 2;
        }
    }
    char uerr[512];
    if (upstream_configure(o.upstream, o.nupstream, o.cache_dir, o.cache_size, uerr,
                           sizeof(uerr)) < 0) {
        mt_error("%s", uerr);
        wire_key_free(key);
        return 2;
    }
    clients_configure();
    struct sysroot_set set = { 0 };
    open_sysroots(argc - optind, argv + optind, &set);

    char host[256] = "localhost";
    gethostname(host, sizeof(host) - 1);
    char name[300];
    snprintf(name, sizeof(name), "memtrace-fs on %s", host);
    if (o.name)
        snprintf(name, sizeof(name), "%s", o.name);

    struct sigaction sa = { .sa_handler = on_signal };
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    struct session_config cfg = { .sysroots = &set, .server_name = name, .stopping = &stopping,
                                  .key = key };
    int rc = 0;
    if (o.connect) {
        mt_info("serving %d sysroot(s) to %s", set.count, o.connect);
        rc = serve_connecting(&cfg, o.connect);
    } else {
        char err[256];
        struct listener_set ls;
        if (listeners_open(&ls, o.binds, o.nbinds, port, err, sizeof(err)) < 0) {
            mt_error("%s", err);
            close_sysroots(&set);
            return 1;
        }
        port = ls.port;
        struct http_server *http = NULL;
        int http_bound = start_http(&o, &set, http_port, key != NULL, &http);
        if (http_bound < 0) {
            listeners_close(&ls);
            close_sysroots(&set);
            return 1;
        }
        if (!key && o.allow.count == 0)
            mt_warn("no --allow and no --key: anyone who can reach %s may read every "
                    "sysroot file (README: running memtrace-fs on a shared network)",
                    o.nbinds ? "the --bind addresses" : "this host");
        mt_info("serving %d sysroot(s) on port %u%s", set.count, port,
                key ? " (key required)" : "");
        struct publisher *pub = NULL;
        if (!o.no_mdns) {
            char *txt = sysroots_txt(&set);
            pub = publisher_start2(name, port, txt, (uint16_t)http_bound);
            free(txt);
            if (!pub)
                mt_warn("cannot start the DNS-SD publisher; serving anyway");
        }
        rc = serve_listening(&cfg, &ls, &o.allow);
        publisher_stop(pub);
        http_stop(http);
        listeners_close(&ls);
    }
    /* Sessions notice "stopping" within half a second; one waiting in the
     * middle of a frame notices its socket shut. */
    clients_shutdown_all();
    for (int i = 0; i < 40 && clients_live() > 0; i++)
        usleep(50 * 1000);
    if (clients_live() == 0) {
        close_sysroots(&set);
        wire_key_free(key);
    }
    refusal_log_flush();
    return rc;
}
