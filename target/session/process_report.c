/* Reports: the first process's report source and final report, misuse
 * errors as they are found, and the reports of followed children (-f)
 * after the first process's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"
#include "target/session/session.h"

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
    };
}

void session_print_misuse(void *ctx, struct tracee *t, const struct misuse_error *e)
{
    (void)ctx;
    struct process_resolver *r = xmalloc(sizeof(*r));
    struct report_source src = source_of(t, r);
    report_write_misuse(stderr, &src, e);
    fflush(stderr);
    free(r);
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

static int write_child(FILE *out, struct session *s, struct tracee *c, bool first)
{
    struct process_resolver *r = xmalloc(sizeof(*r));
    struct report_source src = source_of(c, r);
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
    int rc = 0;
    for (size_t i = 1; i < s->family.count; i++)
        rc |= write_child(out, s, s->family.procs[i], i == 1);
    return rc;
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
    };
}

int session_final_report(struct session *s)
{
    FILE *out = stdout;
    if (s->output_path) {
        out = fopen(s->output_path, "w");
        if (!out) {
            perror(s->output_path);
            return -1;
        }
    }
    struct report_source src = session_report_source(s);
    src.leaks = session_leak_report(s);
    src.errors = &s->tracee->errors;
    src.family = session_family_report(s);
    int rc = report_write(out, &src, &s->report);
    rc |= session_write_children(out, s);
    if (out != stdout)
        rc |= fclose(out);
    else
        fflush(out);
    return rc;
}
