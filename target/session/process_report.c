/* Reports: the first process's report source and final report, misuse
 * errors as they are found, and the reports of followed children (-f)
 * after the first process's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/log.h"
#include "shared/xalloc.h"
#include "target/net/remote.h"
#include "target/report/report_file.h"
#include "target/session/resolve.h"
#include "target/session/session.h"
#include "target/tracer/modules.h"

void session_resolve(void *ctx, uint64_t pc, unsigned frame_index, struct report_frame *out)
{
    struct session *s = ctx;
    struct object_space space = module_map_objects(s->tracee->modules);
    resolve_frame(&space, s->resolve_buf, pc, frame_index, out);
}

void process_resolve(void *ctx, uint64_t pc, unsigned frame_index, struct report_frame *out)
{
    struct process_resolver *r = ctx;
    struct object_space space = module_map_objects(r->tracee->modules);
    resolve_frame(&space, r->buf, pc, frame_index, out);
}

static struct report_source source_of(struct tracee *t, struct process_resolver *r)
{
    r->tracee = t;
    return (struct report_source){
        .books = t->books,
        .stacks = t->stacks,
        .resolve = process_resolve,
        .resolve_ctx = r,
        .pid = t->pid,
        .program = t->program,
        .errors = &t->errors,
        .max_frames = t->opts.depth,
        .engine = engine_name(t),
        .allocators = &t->allocators,
    };
}

/* With a memtrace-fs connection, naming an error's stacks may wait on the
 * network, and the error is met in the middle of handling a stop: it is
 * queued, and the loop has the queue printed by a child (apart.c) once the
 * stop is handled.  Errors met while a child runs wait for the next one. */
#define DEFERRED_MAX 256

static void print_now(struct tracee *t, const struct misuse_error *e)
{
    struct process_resolver *r = xmalloc(sizeof(*r));
    struct report_source src = source_of(t, r);
    report_write_misuse(stderr, &src, e);
    fflush(stderr);
    free(r);
}

void session_print_misuse(void *ctx, struct tracee *t, const struct misuse_error *e)
{
    struct session *s = ctx;
    if (!s || (s->apart_pid == 0 && !remote_conns_any())) {
        print_now(t, e);
        return;
    }
    if (!s->deferred) {
        s->deferred = xcalloc(DEFERRED_MAX, sizeof(*s->deferred));
        s->deferred_of = xcalloc(DEFERRED_MAX, sizeof(*s->deferred_of));
    }
    if (s->ndeferred < DEFERRED_MAX) {
        s->deferred[s->ndeferred] = *e;
        s->deferred_of[s->ndeferred++] = t;
    } else {
        s->deferred_dropped++; /* still in the final report */
    }
}

static int print_deferred(void *arg)
{
    struct session *s = arg;
    for (size_t i = 0; i < s->ndeferred; i++)
        print_now(s->deferred_of[i], &s->deferred[i]);
    if (s->deferred_dropped)
        fprintf(stderr, "memtrace: %zu more misuse errors not shown here (see the final report)\n",
                s->deferred_dropped);
    return fflush(stderr) == 0 ? 0 : -1;
}

/* A child's folded lines, each under a first frame "pid-N" so that a flame
 * graph keeps the processes apart. */
static int write_folded_child(FILE *out, const struct report_source *src,
                              const struct report_options *opt)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem)
        return -1;
    int rc = report_write(mem, src, opt);
    rc |= fclose(mem);
    for (char *line = buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        fprintf(out, "pid-%d;%.*s\n", src->pid, (int)(nl ? nl - line : (long)strlen(line)), line);
    }
    free(buf);
    return rc;
}

/* Before a report: the debug data its frames need, read in file order. */
static void prefetch_names(struct tracee *t)
{
    struct object_space space = module_map_objects(t->modules);
    resolve_prefetch(&space, t->stacks);
}

static int write_child(FILE *out, struct session *s, struct tracee *c, bool first)
{
    struct process_resolver *r = xmalloc(sizeof(*r));
    struct report_source src = source_of(c, r);
    prefetch_names(c);
    struct report_family fam = {.ppid = c->ppid};
    src.family = &fam;
    int rc = 0;
    switch (s->report.format) {
    case REPORT_JSON:
        fputs(first ? "\n  " : ",\n  ", out);
        rc = report_write(out, &src, &s->report);
        break;
    case REPORT_FOLDED:
        rc = write_folded_child(out, &src, &s->report);
        break;
    case REPORT_TEXT:
    default:
        fprintf(out, "\n==== process %d (forked by %d): %s\n", (int)c->pid, (int)c->ppid,
                c->program ? c->program : "?");
        rc = report_write(out, &src, &s->report);
        break;
    }
    free(r);
    return rc;
}

static void json_children(FILE *out, void *ctx)
{
    struct session *s = ctx;
    fputs(",\n \"children\": [", out);
    for (size_t i = 1; i < s->family.count; i++)
        write_child(out, s, s->family.procs[i], i == 1);
    fputs(s->family.count > 1 ? " ]" : "]", out);
}

const struct report_family *session_family_report(struct session *s)
{
    if (!s->tracee->opts.follow_fork)
        return NULL;
    s->family_report = (struct report_family){.write_children = json_children, .ctx = s};
    return &s->family_report;
}

int session_write_children(FILE *out, struct session *s)
{
    if (s->report.format == REPORT_JSON)
        return 0; /* inside the first process's object */
    if (s->report.format == REPORT_HTML)
        return 0; /* one page, of the first process (it says so) */
    if (s->report.format == REPORT_MASSIF)
        return 0; /* one massif file is one process */
    if (report_format_binary(s->report.format))
        return 0; /* an export holds one process: the first */
    int rc = 0;
    for (size_t i = 1; i < s->family.count; i++)
        rc |= write_child(out, s, s->family.procs[i], i == 1);
    return rc;
}

void session_flush_misuse(struct session *s)
{
    if (!s->ndeferred && !s->deferred_dropped)
        return;
    if (session_run_apart(s, print_deferred, s) == -2)
        print_deferred(s);
    s->ndeferred = 0;
    s->deferred_dropped = 0;
}

void session_misuse_free(struct session *s)
{
    free(s->deferred);
    free(s->deferred_of);
    s->deferred = NULL;
    s->deferred_of = NULL;
}

struct report_source session_report_source(struct session *s)
{
    return (struct report_source){
        .books = s->tracee->books,
        .stacks = s->tracee->stacks,
        .resolve = session_resolve,
        .resolve_ctx = s,
        .pid = s->tracee->pid,
        .program = s->tracee->program,
        .max_frames = s->tracee->opts.depth,
        .engine = engine_name(s->tracee),
        .timeline = s->timeline,
        .allocators = &s->tracee->allocators,
        .rss_points = s->rss_points,
        .nrss_points = s->nrss_points,
    };
}

int session_final_report(struct session *s)
{
    FILE *out = stdout;
    if (s->output_path) {
        char why[512];
        out = report_file_open(s->output_path, why, sizeof(why));
        if (!out) {
            mt_error("report: cannot open %s", why);
            return -1;
        }
    }
    session_sample(s, true);
    struct report_source src = session_report_source(s);
    src.leaks = session_leak_report(s);
    src.errors = &s->tracee->errors;
    src.family = session_family_report(s);
    struct rss_parts *mem = session_memory_of(s->tracee);   /* when still alive (detach, quit) */
    src.memory = mem;
    prefetch_names(s->tracee);
    int rc = report_write(out, &src, &s->report);
    session_memory_free(mem);
    rc |= session_write_children(out, s);
    if (out != stdout)
        rc |= fclose(out);
    else
        fflush(out);
    return rc;
}
