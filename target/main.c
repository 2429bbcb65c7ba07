/* memtrace: trace the memory allocations of a running or new process. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shared/log.h"
#include "shared/wire_tls.h"
#include "shared/version.h"
#include "target/console/console.h"
#include "target/files/provider.h"
#include "target/net/debuginfod.h"
#include "target/net/remote.h"
#include "target/heap/sample_draw.h"
#include "target/heap/timeline.h"
#include "target/record/record.h"
#include "target/session/session.h"
#include "target/symbols/addr2line.h"
#include "target/tracer/guardian.h"
#include "target/tracer/intercept.h"

#define NET_TIMEOUT_MS 5000
#define LISTEN_TIMEOUT_MS 120000
#define MDNS_TIMEOUT_MS 2000
/* Stacks the text report lists by default: a program with many distinct
 * call paths (131,072 in bench/many_paths.c) would otherwise get a report
 * of hundreds of MB.  heaptrack_print lists 10 per section, ms_print its
 * snapshots' biggest. */
#define TEXT_LIMIT_DEFAULT 100

static bool str_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static void usage(FILE *out)
{
    fputs("usage: memtrace [OPTIONS] -p PID\n"
          "       memtrace [OPTIONS] [--] PROGRAM [ARG]...\n"
          "       memtrace --addr2line [-i] [--addresses] ELF ADDR...\n"
          "\n"
          "  -p, --pid PID          attach to a running process (all its threads)\n"
          "  -o, --output FILE      final report to FILE (default stdout)\n"
          "  -j, --json             final report as JSON\n"
          "      --format FMT       final report as text, json, folded (flame graphs),\n"
          "                         html (one page: chart, flame graph, peak, leaks) or\n"
          "                         massif (valgrind massif's out-file, for ms_print);\n"
          "                         exports for viewers, gzipped, to -o FILE: heaptrack\n"
          "                         (FILE.gz, for heaptrack_print and heaptrack_gui)\n"
#ifndef MT_NO_PPROF
          "                         and pprof (profile.proto, for pprof and speedscope)\n"
#else
          "                         (pprof: not in this build, made without protobuf-c)\n"
#endif
          "  -d, --depth N          frames kept per allocation (default 20)\n"
          "  -n, --top N            stacks listed in the text report (default 100; 0:\n"
          "                         all); one line sums up the rest.  JSON and the\n"
          "                         other formats keep every stack\n"
          "      --sample BYTES     keep the stack of a sample of the allocations, one\n"
          "                         per BYTES allocated on average (a Poisson sample by\n"
          "                         bytes, as tcmalloc's; 524288 for always-on tracing):\n"
          "                         totals, blocks and leaks stay exact, per-stack\n"
          "                         figures are estimates; $MEMTRACE_SAMPLE_SEED seeds it\n"
          "      --check            remember freed blocks (with their stacks) so that a\n"
          "                         double free names where the block was freed; costs\n"
          "                         a stack capture per free\n"
          "  -f, --follow-fork      trace the processes the program forks too (and\n"
          "                         theirs), each with its own report after the first's\n"
          "  -C, --console          console on stdin also for a started PROGRAM\n"
          "                         (its stdin is then /dev/null); always on with -p\n"
          "      --sysroot DIR      look for the target's files and debug files in DIR\n"
          "                         first (repeatable)\n"
          "  -c, --connect HOST[:PORT]  fetch files from memtrace-fs on HOST\n"
          "  -l, --listen ADDR[:PORT]   wait for memtrace-fs -c to connect in\n"
          "  -m, --mdns             find memtrace-fs by an mDNS query on the LAN\n"
          "      --debuginfod URL   fetch debug files missing on the target by build-id\n"
          "                         from a debuginfod server (http://HOST:PORT; memtrace-fs\n"
          "                         --http, or elfutils' debuginfod), after local files;\n"
          "                         repeatable.  Without it (and without -c, -l or a\n"
          "                         memtrace-fs found by -m), $DEBUGINFOD_URLS is used\n"
          "      --key FILE         the pre-shared key memtrace-fs --key FILE has: both\n"
          "                         sides authenticated, the connection encrypted\n"
          "                         (TLS 1.3 PSK; not in 32-bit x86 builds)\n"
          "  -a, --autoscan         leak scan when the program is about to exit (or\n"
          "                         when tracing ends), reported with the final report\n"
          "      --leak-exitcode N  exit with N when definitely lost bytes remain at\n"
          "                         exit (implies -a)\n"
          "      --suppressions FILE  leak suppressions (LeakSanitizer's leak:PATTERN)\n"
          "      --engine ENGINE    agent (an agent injected into the process records\n"
          "                         calls in shared memory; the default on x86_64,\n"
          "                         i386 and aarch64, breakpoints where it cannot be\n"
          "                         used) or ptrace (breakpoints; the default on\n"
          "                         arm); also\n"
          "                         $MEMTRACE_ENGINE\n"
          "      --alloc-fn NAME=KIND[:POS]  the program's own function NAME (in the\n"
          "                         executable or any library) allocates like KIND:\n"
          "                         malloc, calloc, realloc, free or aligned\n"
          "                         ((alignment, size)); repeatable.  Its blocks are a\n"
          "                         family of their own (given to free(): mismatched);\n"
          "                         the malloc it calls is not counted.  POS: where its\n"
          "                         arguments are, 1-based, in KIND's order (malloc:SIZE,\n"
          "                         calloc:N,SIZE, realloc:PTR,SIZE, free:PTR,\n"
          "                         aligned:ALIGN,SIZE; pool_free(pool, p) is free:2)\n"
          "      --alloc-fn @FILE   the same words from FILE, one a line (# comments)\n"
          "      --record FILE      write the heap over time to FILE: totals at least every\n"
          "                         interval and the stacks that changed (bounded size)\n"
          "      --record-interval MS  sample spacing for --record and charts (default 100)\n"
          "      --record-max MIB   size bound of the --record file (default 64)\n"
          "      --snapshot-rss MIB a report file (the report's format and directory,\n"
          "                         named after the pid and the time) when RSS first\n"
          "                         reaches MIB, and at each further 10%; MIB may be\n"
          "                         N% of the cgroup's memory.max; also when the\n"
          "                         cgroup's memory.events counts a high or oom event\n"
          "      --snapshot-peak    a report file at each new heap peak (one a second)\n"
          "      --replay FILE      the report of a recording instead of tracing (as at\n"
          "                         its end; with --format, -o, -d)\n"
          "      --at SECONDS       with --replay: the report at that time since the start\n"
          "      --diff T1 T2       with --replay: the figures at T2 minus those at T1\n"
          "  -q, --quiet            no progress messages\n"
          "  -h, --help             this help\n"
          "  -V, --version          version\n"
          "  -i, --inlines          with --addr2line: the inlined calls at each address\n"
          "                         too, innermost first (addr2line -i)\n"
          "      --addresses        with --addr2line: each address first (addr2line -a)\n"
          "\n"
          "Console commands (stdin): help, status, monitor N, report, clear, scan, quit.\n"
          "The report is written when the program ends, or on quit, Ctrl-C, SIGTERM or\n"
          "SIGHUP, after which memtrace detaches and the program runs on.\n",
          out);
}

/* -V: the release, the git description, and what this build can trace:
 * its engines (one today) and the CPU it was built for (the programs it
 * traces are of that CPU; --addr2line reads ELF files of any). */
static void print_version(void)
{
    version_print(stdout, "memtrace", ARCH_NAME);
    fputs("engines:", stdout);
    for (int e = 0, n = 0; e < ENGINE_COUNT; e++)
        if (engine_built((enum tracer_engine)e))
            printf("%s %s", n++ ? "," : "", engine_ops_of((enum tracer_engine)e)->name);
    putchar('\n');
    printf("cpus: %s\n", ARCH_NAME);
    printf("console: %s\n", console_line_reader());
}

enum { OPT_SYSROOT = 256, OPT_ADDR2LINE, OPT_FORMAT, OPT_LEAK_EXITCODE, OPT_SUPPRESSIONS, OPT_CHECK,
       OPT_ADDRESSES, OPT_KEY, OPT_ENGINE, OPT_ALLOC_FN, OPT_RECORD, OPT_RECORD_INTERVAL, OPT_RECORD_MAX,
       OPT_REPLAY, OPT_AT, OPT_DIFF, OPT_DEBUGINFOD, OPT_SNAPSHOT_RSS, OPT_SNAPSHOT_PEAK, OPT_SAMPLE };

struct cli {
    pid_t pid;
    const char *output;
    enum report_format format;
    unsigned depth;
    size_t text_limit;      /* -n: stacks listed in the text report; 0: all */
    uint64_t sample_bytes;  /* --sample; 0: every stack */
    bool quiet;
    bool console;
    bool addr2line;
    bool inlines;          /* --addr2line -i: the inlined-call chain */
    bool addresses;        /* --addr2line --addresses: each address first (addr2line -a) */
    bool check;
    bool follow_fork;
    const char *engine;     /* --engine, else $MEMTRACE_ENGINE, else the CPU's default */
    const char *connect;
    const char *listen;
    bool mdns;
    const char *key_file;   /* --key */
    const char *sysroots[FILE_LOCATOR_MAX];
    int nsysroots;
    const char *debuginfod[FILE_LOCATOR_MAX / 2]; /* --debuginfod URL... */
    int ndebuginfod;
    struct session_leak_options leak;   /* -a, --leak-exitcode, --suppressions */
    const char *record;     /* --record FILE */
    const char *replay;     /* --replay FILE */
    unsigned long record_max_mib; /* --record-max MIB */
    double at, from, to;    /* --at, --diff */
    unsigned record_ms;     /* --record-interval MS */
    unsigned long snapshot_rss_mib; /* --snapshot-rss MIB */
    unsigned long snapshot_rss_percent; /* --snapshot-rss N%: of the cgroup's memory.max */
    bool snapshot_peak;     /* --snapshot-peak */
    bool depth_given, at_given, diff;
};

/* A time in seconds (decimals allowed). */
static bool parse_seconds(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0) || v > 1e9)
        return false;
    *out = v;
    return true;
}

static bool parse_uint(const char *s, unsigned long max, unsigned long *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || v > max || s[0] == '-')
        return false;
    *out = v;
    return true;
}

/* --sample's seed: $MEMTRACE_SAMPLE_SEED (tests repeat a run), else the
 * clock and the pid. */
static uint64_t sample_seed(void)
{
    const char *env = getenv("MEMTRACE_SAMPLE_SEED");
    if (env && *env) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(env, &end, 0);
        if (!errno && !*end)
            return v;
        mt_warn("MEMTRACE_SAMPLE_SEED: not a number (%s); a seed from the clock instead", env);
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ ((uint64_t)getpid() << 16);
}

static int parse_cli(int argc, char **argv, struct cli *cli)
{
    static const struct option longopts[] = {
        {"pid", required_argument, NULL, 'p'},
        {"output", required_argument, NULL, 'o'},
        {"json", no_argument, NULL, 'j'},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"depth", required_argument, NULL, 'd'},
        {"top", required_argument, NULL, 'n'},
        {"console", no_argument, NULL, 'C'},
        {"sysroot", required_argument, NULL, OPT_SYSROOT},
        {"connect", required_argument, NULL, 'c'},
        {"listen", required_argument, NULL, 'l'},
        {"mdns", no_argument, NULL, 'm'},
        {"key", required_argument, NULL, OPT_KEY},
        {"debuginfod", required_argument, NULL, OPT_DEBUGINFOD},
        {"addr2line", no_argument, NULL, OPT_ADDR2LINE},
        {"inlines", no_argument, NULL, 'i'},
        {"addresses", no_argument, NULL, OPT_ADDRESSES},
        {"check", no_argument, NULL, OPT_CHECK},
        {"sample", required_argument, NULL, OPT_SAMPLE},
        {"follow-fork", no_argument, NULL, 'f'},
        {"quiet", no_argument, NULL, 'q'},
        {"autoscan", no_argument, NULL, 'a'},
        {"leak-exitcode", required_argument, NULL, OPT_LEAK_EXITCODE},
        {"suppressions", required_argument, NULL, OPT_SUPPRESSIONS},
        {"engine", required_argument, NULL, OPT_ENGINE},
        {"alloc-fn", required_argument, NULL, OPT_ALLOC_FN},
        {"record", required_argument, NULL, OPT_RECORD},
        {"record-interval", required_argument, NULL, OPT_RECORD_INTERVAL},
        {"record-max", required_argument, NULL, OPT_RECORD_MAX},
        {"snapshot-rss", required_argument, NULL, OPT_SNAPSHOT_RSS},
        {"snapshot-peak", no_argument, NULL, OPT_SNAPSHOT_PEAK},
        {"replay", required_argument, NULL, OPT_REPLAY},
        {"at", required_argument, NULL, OPT_AT},
        {"diff", required_argument, NULL, OPT_DIFF},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    int c;
    unsigned long v;
    while ((c = getopt_long(argc, argv, "+p:o:jd:n:fCc:l:mqahVi", longopts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (!parse_uint(optarg, 0x7fffffff, &v) || v == 0) {
                mt_error("-p: not a process id: %s", optarg);
                return -1;
            }
            cli->pid = (pid_t)v;
            break;
        case 'o': cli->output = optarg; break;
        case 'j': cli->format = REPORT_JSON; break;
        case OPT_FORMAT:
            if (!report_parse_format(optarg, &cli->format)) {
                mt_error("--format: text, json, folded, html, massif, heaptrack%s, not %s",
#ifndef MT_NO_PPROF
                         " or pprof",
#else
                         " (pprof: not in this build)",
#endif
                         optarg);
                return -1;
            }
            break;
        case 'd':
            if (!parse_uint(optarg, 256, &v) || v == 0) {
                mt_error("-d: frames per allocation must be 1 to 256, not %s", optarg);
                return -1;
            }
            cli->depth = (unsigned)v;
            cli->depth_given = true;
            break;
        case 'n':
            if (!parse_uint(optarg, 0xffffffff, &v)) {
                mt_error("-n: a number of stacks (0: all), not %s", optarg);
                return -1;
            }
            cli->text_limit = v;
            break;
        case 'C': cli->console = true; break;
        case OPT_SYSROOT:
            if (cli->nsysroots == FILE_LOCATOR_MAX - 2) {
                mt_error("--sysroot: too many");
                return -1;
            }
            cli->sysroots[cli->nsysroots++] = optarg;
            break;
        case 'c': cli->connect = optarg; break;
        case OPT_KEY: cli->key_file = optarg; break;
        case OPT_DEBUGINFOD:
            if (cli->ndebuginfod == FILE_LOCATOR_MAX / 2) {
                mt_error("--debuginfod: too many");
                return -1;
            }
            cli->debuginfod[cli->ndebuginfod++] = optarg;
            break;
        case 'l': cli->listen = optarg; break;
        case 'm': cli->mdns = true; break;
        case OPT_ADDR2LINE: cli->addr2line = true; break;
        case 'i': cli->inlines = true; break;
        case OPT_ADDRESSES: cli->addresses = true; break;
        case OPT_CHECK: cli->check = true; break;
        case OPT_SAMPLE:
        {
            /* 64-bit on every CPU (unsigned long is 32-bit on i386) */
            char *end;
            errno = 0;
            unsigned long long b = strtoull(optarg, &end, 10);
            if (errno || end == optarg || *end || optarg[0] == '-' || b == 0 || b > SAMPLE_BYTES_MAX) {
                mt_error("--sample: mean bytes between samples, 1 to %llu, not %s",
                         (unsigned long long)SAMPLE_BYTES_MAX, optarg);
                return -1;
            }
            cli->sample_bytes = b;
            break;
        }
        case 'f': cli->follow_fork = true; break;
        case 'q': cli->quiet = true; break;
        case 'a': cli->leak.autoscan = true; break;
        case OPT_LEAK_EXITCODE:
            if (!parse_uint(optarg, 255, &v)) {
                mt_error("--leak-exitcode: an exit status 0 to 255, not %s", optarg);
                return -1;
            }
            cli->leak.exitcode = (int)v;
            break;
        case OPT_SUPPRESSIONS: cli->leak.suppressions = optarg; break;
        case OPT_ENGINE: cli->engine = optarg; break;
        case OPT_ALLOC_FN: {
            char why[160];
            if (intercept_add_named(optarg, why, sizeof(why)) < 0) {
                mt_error("%s", why);
                return -1;
            }
            break;
        }
        case OPT_RECORD: cli->record = optarg; break;
        case OPT_RECORD_INTERVAL:
            if (!parse_uint(optarg, 3600000, &v) || v == 0) {
                mt_error("--record-interval: milliseconds from 1 to 3600000, not %s", optarg);
                return -1;
            }
            cli->record_ms = (unsigned)v;
            break;
        case OPT_RECORD_MAX:
            if (!parse_uint(optarg, 1ul << 20, &v) || v == 0) {
                mt_error("--record-max: MiB from 1 to 1048576, not %s", optarg);
                return -1;
            }
            cli->record_max_mib = v;
            break;
        case OPT_SNAPSHOT_RSS: {
            size_t n = strlen(optarg);
            if (n > 1 && optarg[n - 1] == '%') {
                char pct[16];
                snprintf(pct, sizeof(pct), "%.*s", (int)(n - 1), optarg);
                if (n - 1 >= sizeof(pct) || !parse_uint(pct, 100, &v) || v == 0) {
                    mt_error("--snapshot-rss: a percentage from 1%% to 100%%, not %s", optarg);
                    return -1;
                }
                cli->snapshot_rss_percent = v;
                cli->snapshot_rss_mib = 0;
                break;
            }
            if (!parse_uint(optarg, 1ul << 24, &v) || v == 0) {
                mt_error("--snapshot-rss: MiB from 1 to 16777216 or a percentage of memory.max "
                         "(80%%), not %s", optarg);
                return -1;
            }
            cli->snapshot_rss_mib = v;
            cli->snapshot_rss_percent = 0;
            break;
        }
        case OPT_SNAPSHOT_PEAK: cli->snapshot_peak = true; break;
        case OPT_REPLAY: cli->replay = optarg; break;
        case OPT_AT:
            if (!parse_seconds(optarg, &cli->at)) {
                mt_error("--at: seconds since the start, not %s", optarg);
                return -1;
            }
            cli->at_given = true;
            break;
        case OPT_DIFF:
            /* two values: T1 here, T2 the next word */
            if (!parse_seconds(optarg, &cli->from) || optind >= argc ||
                !parse_seconds(argv[optind], &cli->to)) {
                mt_error("--diff: two times in seconds expected (--diff T1 T2)");
                return -1;
            }
            optind++;
            cli->diff = true;
            break;
        case 'h': usage(stdout); exit(0);
        case 'V': print_version(); exit(0);
        default: usage(stderr); return -1;
        }
    }
    if ((cli->at_given || cli->diff) && !cli->replay) {
        mt_error("--at and --diff go with --replay FILE");
        return -1;
    }
    if (cli->at_given && cli->diff) {
        mt_error("--at and --diff are alternatives: give one");
        return -1;
    }
    if (cli->replay && cli->record) {
        mt_error("--replay reads a recording; --record makes one: give one");
        return -1;
    }
    if (report_format_binary(cli->format) && !cli->output) {
        mt_error("--format %s: give -o FILE (the export is gzip-compressed)",
                 report_format_name(cli->format));
        return -1;
    }
    if (report_format_binary(cli->format) && cli->follow_fork)
        mt_warn("--format %s: the file holds the first process only, not the ones it forks",
                report_format_name(cli->format));
    if (cli->format == REPORT_HEAPTRACK && !str_ends_with(cli->output, ".gz"))
        mt_warn("--format heaptrack: heaptrack_print reads %s as gzip only if its name ends in .gz",
                cli->output);
    if (!!cli->connect + !!cli->listen + cli->mdns > 1) {
        mt_error("-c, -l and -m are alternatives: give one");
        return -1;
    }
    return 0;
}

/* --engine, else $MEMTRACE_ENGINE (how the tests run both engines), else
 * the CPU's default (engine_default). */
static int select_engine(const struct cli *cli, struct tracer_options *topts)
{
    const char *name = cli->engine ? cli->engine : getenv("MEMTRACE_ENGINE");
    enum tracer_engine e = engine_default();
    if (name && *name && !engine_parse(name, &e)) {
        mt_error("--engine: agent or ptrace, not %s", name);
        return -1;
    }
    topts->engine = e;
    topts->engine_asked = name && *name;
    return 0;
}

/* debuginfod servers come after the target's own files: only what the
 * target lacks goes on the network.  --debuginfod URL wins; else, when no
 * memtrace-fs serves this run (no -c or -l, none found by -m),
 * $DEBUGINFOD_URLS (space-separated, as elfutils reads it; https:// entries
 * are skipped: memtrace's small client speaks plain HTTP). */
static int add_debuginfod(const struct cli *cli, struct file_locator *loc, bool env_allowed)
{
    char err[256];
    for (int i = 0; i < cli->ndebuginfod; i++) {
        struct file_provider *p = debuginfod_provider_new(cli->debuginfod[i], NET_TIMEOUT_MS, err,
                                                          sizeof(err));
        if (!p) {
            mt_error("--debuginfod: %s", err);
            return -1;
        }
        if (file_locator_add(loc, p) < 0) {
            p->ops->destroy(p);
            mt_error("--debuginfod: too many file providers");
            return -1;
        }
    }
    const char *env = getenv("DEBUGINFOD_URLS");
    if (cli->ndebuginfod > 0 || !env_allowed || !env)
        return 0;
    char *urls = strdup(env);
    if (!urls)
        return 0;
    char *save = NULL;
    for (char *u = strtok_r(urls, " \t\n", &save); u; u = strtok_r(NULL, " \t\n", &save)) {
        struct file_provider *p = debuginfod_provider_new(u, NET_TIMEOUT_MS, err, sizeof(err));
        if (!p) {
            mt_info("DEBUGINFOD_URLS: skipping %s", err);
            continue;
        }
        if (file_locator_add(loc, p) < 0) {
            p->ops->destroy(p);
            break;
        }
    }
    free(urls);
    return 0;
}

static int build_locator(const struct cli *cli, struct file_locator *loc)
{
    file_locator_init(loc);
    for (int i = 0; i < cli->nsysroots; i++)
        file_locator_add(loc, file_provider_sysroot(cli->sysroots[i]));
    char err[256] = "";
    struct file_provider *remote = NULL;
    if (cli->key_file) {
        if (!cli->connect && !cli->listen && !cli->mdns) {
            mt_error("--key needs -c, -l or -m");
            return -1;
        }
        struct wire_key *key = wire_key_load(cli->key_file, err, sizeof(err));
        if (!key) {
            mt_error("%s", err);
            return -1;
        }
        remote_set_key(key); /* kept for the whole run: reconnects use it */
    }
    if (cli->connect) {
        remote = remote_provider_connect(cli->connect, NET_TIMEOUT_MS, err, sizeof(err));
        if (!remote) {
            mt_error("%s", err);
            return -1;
        }
    } else if (cli->listen) {
        mt_info("waiting for memtrace-fs to connect to %s", cli->listen);
        remote = remote_provider_listen(cli->listen, LISTEN_TIMEOUT_MS, err, sizeof(err));
        if (!remote) {
            mt_error("%s", err);
            return -1;
        }
    } else if (cli->mdns) {
        char host_port[300];
        if (mdns_discover(MDNS_TIMEOUT_MS, host_port, sizeof(host_port), err, sizeof(err)) == 0) {
            mt_info("found memtrace-fs at %s", host_port);
            remote = remote_provider_connect(host_port, NET_TIMEOUT_MS, err, sizeof(err));
        }
        if (!remote)
            mt_warn("no memtrace-fs found (%s): using local files only", err);
    }
    if (remote)
        file_locator_add(loc, remote);
    file_locator_add(loc, file_provider_sysroot("/"));
    return add_debuginfod(cli, loc, !remote && !cli->connect && !cli->listen);
}

/* The exit status of memtrace: the program's own when it ended, as strace
 * does; 0 after a detach. */
static int exit_code_of(const struct tracee *t)
{
    if (!t->exited)
        return 0;
    if (WIFEXITED(t->exit_status))
        return WEXITSTATUS(t->exit_status);
    if (WIFSIGNALED(t->exit_status))
        return 128 + WTERMSIG(t->exit_status);
    return 0;
}

/* The symbolizer's indexes grow by doubling to a few hundred KiB each and
 * are trimmed or freed when built.  glibc raises its mmap threshold to the
 * largest block freed, after which such arrays come from the heap, where
 * freed space is kept: a fixed threshold gives them their own mappings
 * (resized by mremap, given back at free).  ~150 KiB less peak RSS on
 * `make bench`'s "0 live blocks" row. */
static void bound_heap(void)
{
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
    mallopt(M_MMAP_THRESHOLD, 32 * 1024);
    mallopt(M_TRIM_THRESHOLD, 32 * 1024);
#endif
}

/* The signals that end a trace (SIGINT, SIGTERM, SIGHUP) and SIGCHLD are
 * blocked before any constructor or main() runs: from .preinit_array, the
 * first code of ours the dynamic linker runs.  A signal sent while memtrace
 * is still starting (a shell's `kill` a few ms after `memtrace -p PID &`)
 * then waits for the handlers instead of killing a half-started tracer.
 * The mask we were started with is the launched program's, and is given
 * back at once where memtrace does not trace (--replay, --addr2line, help).
 * Written once, before main(); read-only after. */
static sigset_t mask_at_start;

static void block_ending_signals(void)
{
    sigset_t ending;
    sigemptyset(&ending);
    sigaddset(&ending, SIGINT);
    sigaddset(&ending, SIGTERM);
    sigaddset(&ending, SIGHUP);
    sigaddset(&ending, SIGCHLD);
    sigprocmask(SIG_BLOCK, &ending, &mask_at_start);
}

__attribute__((used, section(".preinit_array")))
static void (*const block_ending_signals_early)(void) = block_ending_signals;

static void restore_start_mask(void)
{
    sigprocmask(SIG_SETMASK, &mask_at_start, NULL);
}

int main(int argc, char **argv)
{
    bound_heap();
    struct cli cli = {.depth = 20, .text_limit = TEXT_LIMIT_DEFAULT, .format = REPORT_TEXT, .leak = {.exitcode = -1}};
    if (parse_cli(argc, argv, &cli) < 0)
        return 1;
    if (cli.addr2line || cli.replay || (!cli.pid && optind >= argc))
        restore_start_mask(); /* nothing traced: a Ctrl-C ends us as usual */
    log_set_quiet(cli.quiet);
    struct file_locator loc;
    if (cli.addr2line) {
        if (optind >= argc) {
            mt_error("--addr2line: ELF file and addresses expected");
            return 1;
        }
        if (build_locator(&cli, &loc) < 0)
            return 1;
        int rc = addr2line_main(argc - optind, argv + optind, &loc,
                                (cli.inlines ? ADDR2LINE_INLINES : 0) | (cli.addresses ? ADDR2LINE_ADDRESSES : 0));
        file_locator_destroy(&loc);
        return rc;
    }
    if (cli.replay) {
        if (cli.pid || optind < argc) {
            mt_error("--replay FILE: no program or -p to trace");
            return 1;
        }
        struct replay_options ro = {
            .path = cli.replay, .output = cli.output,
            .report = {.format = cli.format, .sort = REPORT_SORT_BYTES, .text_limit = cli.text_limit},
            .at_given = cli.at_given, .at = cli.at, .diff = cli.diff,
            .from = cli.from, .to = cli.to, .depth = cli.depth_given ? cli.depth : 0,
        };
        return replay_main(&ro);
    }
    if (!cli.pid && optind >= argc) {
        usage(stderr);
        return 1;
    }
    if (cli.pid && optind < argc) {
        mt_error("give either -p PID or a PROGRAM, not both");
        return 1;
    }
    /* reliability: from here on this process is the tracer; the pid the
     * user started supervises it (target/tracer/guardian.h).
     * MEMTRACE_NO_SUPERVISOR=1 keeps the tracer in this process, unguarded:
     * for measuring it alone (make bench) or running it under strace/gdb. */
    /* Our own handling of the ending signals started before main()
     * (block_ending_signals), before the guardian forks and before the
     * target exists, so that no signal can kill us half started: the
     * supervisor unblocks them once its handlers are in place (it passes
     * them on), the tracer reads them in its loop (a signal met during the
     * attach ends in a clean detach).  The mask we were given is the
     * launched program's. */
    sigset_t program_mask = mask_at_start;
    const char *no_sup = getenv("MEMTRACE_NO_SUPERVISOR");
    if (!no_sup || strcmp(no_sup, "1") != 0)
        guardian_start();
    if (build_locator(&cli, &loc) < 0)
        return 1;

    struct tracer_options topts = {.depth = cli.depth, .check = cli.check,
                                    .sample_bytes = cli.sample_bytes,
                                    .sample_seed = sample_seed(),
                                    .follow_fork = cli.follow_fork,
                                    .program_sigmask = &program_mask,
                                    .on_misuse = session_print_misuse};
    if (select_engine(&cli, &topts) < 0)
        return 1;
    struct session s;
    memset(&s, 0, sizeof(s));
    s.console_fd = -1;
    s.signal_fd = -1;
    s.output_path = cli.output;
    s.report.format = cli.format;
    s.report.sort = REPORT_SORT_BYTES;
    s.report.text_limit = cli.text_limit;
    s.sample_ms = cli.record_ms;
    s.snapshot_rss = (uint64_t)cli.snapshot_rss_mib << 20;
    s.snapshot_rss_percent = (unsigned)cli.snapshot_rss_percent;
    s.snapshot_peak = cli.snapshot_peak;
    char err[512] = "";
    if (cli.record) {
        s.recorder = recorder_open(cli.record, cli.record_ms, (uint64_t)cli.record_max_mib << 20,
                                   err, sizeof(err));
        if (!s.recorder) {
            mt_error("--record: cannot create %s", err);
            file_locator_destroy(&loc);
            return 1;
        }
    }
    if (session_leak_setup(&s, &cli.leak) < 0) {
        file_locator_destroy(&loc);
        return 1;
    }
    session_leak_hook(&s, &topts);
    topts.on_misuse_ctx = &s; /* misuse stacks are named apart (process_report.c) */
    if (cli.pid) {
        s.tracee = tracer_attach(cli.pid, &topts, &loc, err, sizeof(err));
    } else {
        if (cli.console) {
            /* The console owns stdin: the program gets /dev/null. */
            int saved = dup(STDIN_FILENO);
            int null_fd = open("/dev/null", O_RDONLY);
            if (saved < 0 || null_fd < 0) {
                mt_error("cannot set up the console: %s", strerror(errno));
                return 1;
            }
            dup2(null_fd, STDIN_FILENO);
            close(null_fd);
            s.tracee = tracer_launch(argv + optind, &topts, &loc, err, sizeof(err));
            dup2(saved, STDIN_FILENO);
            close(saved);
        } else {
            s.tracee = tracer_launch(argv + optind, &topts, &loc, err, sizeof(err));
        }
    }
    if (!s.tracee) {
        mt_error("%s", err);
        recorder_close(s.recorder);
        if (cli.record)
            unlink(cli.record);
        session_leak_free(&s);
        file_locator_destroy(&loc);
        return 1;
    }
    family_add(&s.family, s.tracee);
    if (s.recorder)
        recorder_start(s.recorder, s.tracee->pid, cli.depth, s.tracee->program,
                       engine_name(s.tracee));
    if (cli.pid || cli.console)
        session_attach_console(&s, STDIN_FILENO, isatty(STDIN_FILENO));
    if (cli.pid)
        mt_info("attached to process %d (%s)", (int)cli.pid, s.tracee->program);
    guardian_watch(s.tracee->pid, s.tracee->mem.mem_fd);

    /* A tracer error ends the loop early: the target is still let go and
     * reported on as after a quit, and memtrace exits 1. */
    int run_rc = session_run(&s);
    bool detached = false;
    if (!family_finished(&s.family)) {
        session_leak_finish(&s);
        family_detach(&s.family);
        detached = !tracer_finished(s.tracee);
        if (s.quit_signal)
            mt_info("%s: detached from process %d", strsignal(s.quit_signal), (int)s.tracee->pid);
        else
            mt_info("detached from process %d", (int)s.tracee->pid);
    }
    guardian_release();
    session_end_signals(); /* the target is safe: a later Ctrl-C ends the report */
    session_flush_misuse(&s); /* those met at the very end */
    session_misuse_free(&s);
    int rc = session_final_report(&s) < 0 ? 1 : 0;
    /* The first process's status when it ended (children may have been
     * detached after it); 0 after detaching from it. */
    int code = detached ? 0 : exit_code_of(s.tracee);
    if (session_leak_exit_code(&s) >= 0)
        code = session_leak_exit_code(&s);
    session_leak_free(&s);
    timeline_free(s.timeline);
    free(s.rss_points);
    if (s.recorder && recorder_close(s.recorder) < 0)
        mt_warn("--record: %s is incomplete", cli.record);
    if (s.console)
        console_free(s.console);
    family_free(&s.family);
    file_locator_destroy(&loc);
    if (run_rc < 0)
        return 1;
    return rc ? rc : code;
}
