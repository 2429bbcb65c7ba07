/* pprof's profile.proto (perftools.profiles.Profile), gzipped, encoded with
 * protobuf-c from target/report/profile.proto.  One sample per stack with
 * the four values of a Go heap profile, which pprof and speedscope know:
 *
 *   alloc_objects/count  alloc_space/bytes    allocations since the start
 *   inuse_objects/count  inuse_space/bytes    blocks in use now (the default)
 *
 * Every allocation is counted (nothing is sampled).  A location is one
 * stored pc, its lines the functions inlined there (innermost first); a
 * mapping is one module, with its runtime extent and GNU build-id, so that
 * pprof can symbolize again from the binaries. */
#include "target/report/report_internal.h"

#ifdef MT_NO_PPROF

int report_write_pprof(FILE *out, const struct report_source *src)
{
    (void)out;
    (void)src;
    return -1;
}

#else

#include "target/report/profile.pb-c.h"
#include "target/report/report_gzip.h"
#include "target/report/report_export_stack.h"

#include "shared/intern.h"
#include "shared/text_escape.h"
#include "shared/xalloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

/* A growable array of pointers to protobuf-c messages (which it owns). */
struct vec {
    void **v;
    size_t n, cap;
};

static void *vec_push(struct vec *a, void *p)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 64;
        a->v = xreallocarray(a->v, a->cap, sizeof(*a->v));
    }
    a->v[a->n++] = p;
    return p;
}

struct pp {
    struct interner strings;
    struct vec table;                   /* string_table */
    struct interner locations, mappings;
    struct interner functions;          /* "name\nfile" -> id */
    struct vec location, mapping, function, sample;
};

static int64_t pp_string(struct pp *p, const char *s)
{
    if (!s)
        s = "";
    bool added;
    uint32_t idx = interner_add_string(&p->strings, s, &added);
    /* protobuf's string is valid UTF-8 (Go's decoder refuses the profile
     * otherwise), and pprof prints names on a terminal: escaped. */
    if (added)
        vec_push(&p->table, text_escape_dup(s));
    return idx;
}

static uint64_t pp_mapping(struct pp *p, const struct export_pc *pc)
{
    if (!pc->module)
        return 0;
    bool added;
    uint32_t id = interner_add_pair(&p->mappings, pc->map_start, pc->map_end, &added) + 1;
    if (added) {
        Mapping *m = vec_push(&p->mapping, xmalloc(sizeof(*m)));
        perftools__profiles__mapping__init(m);
        m->id = id;
        m->memory_start = pc->map_start;
        m->memory_limit = pc->map_end;
        m->filename = pp_string(p, pc->module);
        m->build_id = pp_string(p, pc->build_id);
    }
    return id;
}

static uint64_t pp_function(struct pp *p, const struct export_frame *f)
{
    const char *name = f->function ? f->function : "", *file = f->file ? f->file : "";
    size_t nl = strlen(name), fl = strlen(file);
    char *key = xmalloc(nl + fl + 2);
    memcpy(key, name, nl);
    key[nl] = '\n';
    memcpy(key + nl + 1, file, fl + 1);
    bool added;
    uint32_t id = interner_add_string(&p->functions, key, &added) + 1;
    free(key);
    if (added) {
        Function *fn = vec_push(&p->function, xmalloc(sizeof(*fn)));
        perftools__profiles__function__init(fn);
        fn->id = id;
        fn->name = fn->system_name = pp_string(p, f->function);
        fn->filename = pp_string(p, f->file);
    }
    return id;
}

static uint64_t pp_location(struct pp *p, const struct export_stack *st, const struct export_pc *pc)
{
    bool added;
    uint32_t id = interner_add_pair(&p->locations, pc->pc, 0, &added) + 1;
    if (!added)
        return id;
    Location *loc = vec_push(&p->location, xmalloc(sizeof(*loc)));
    perftools__profiles__location__init(loc);
    loc->id = id;
    loc->address = pc->pc;
    loc->mapping_id = pp_mapping(p, pc);
    Mapping *m = loc->mapping_id ? p->mapping.v[loc->mapping_id - 1] : NULL;
    size_t named = 0;
    for (size_t k = 0; k < pc->count; k++)
        named += st->frames[pc->first + k].function != NULL;
    if (named) {
        loc->line = xcalloc(named, sizeof(*loc->line));
        for (size_t k = 0; k < pc->count; k++) {
            const struct export_frame *f = &st->frames[pc->first + k];
            if (!f->function)
                continue;
            Line *l = xmalloc(sizeof(*l));
            perftools__profiles__line__init(l);
            l->function_id = pp_function(p, f);
            l->line = f->line;
            loc->line[loc->n_line++] = l;
            if (m) {
                m->has_functions = true;
                m->has_filenames |= f->file != NULL;
                m->has_line_numbers |= f->line != 0;
                m->has_inline_frames |= loc->n_line > 1;
            }
        }
    }
    return id;
}

static void pp_sample(struct pp *p, const struct export_stack *st, const struct stack_totals *t)
{
    Sample *s = vec_push(&p->sample, xmalloc(sizeof(*s)));
    perftools__profiles__sample__init(s);
    s->n_location_id = st->npcs;
    s->location_id = xcalloc(st->npcs ? st->npcs : 1, sizeof(*s->location_id));
    for (size_t k = 0; k < st->npcs; k++)
        s->location_id[k] = pp_location(p, st, &st->pcs[k]);
    s->n_value = 4;
    s->value = xcalloc(4, sizeof(*s->value));
    s->value[0] = (int64_t)t->allocs;
    s->value[1] = (int64_t)t->bytes_allocated;
    s->value[2] = (int64_t)t->blocks_in_use;
    s->value[3] = (int64_t)t->bytes_in_use;
}

/* The main program's mapping goes first, as pprof expects. */
static void main_mapping_first(struct pp *p, const char *program)
{
    if (!program || !*program)
        return;
    char *prog = text_escape_dup(program);   /* as the table holds it */
    const char *base = strrchr(prog, '/');
    base = base ? base + 1 : prog;
    for (size_t i = 0; i < p->mapping.n; i++) {
        const Mapping *m = p->mapping.v[i];
        const char *name = p->table.v[m->filename];
        const char *nb = strrchr(name, '/');
        if (strcmp(nb ? nb + 1 : name, base) == 0) {
            void *tmp = p->mapping.v[0];
            p->mapping.v[0] = p->mapping.v[i];
            p->mapping.v[i] = tmp;
            break;
        }
    }
    free(prog);
}

static void free_vec(struct vec *a, void (*fn)(void *))
{
    for (size_t i = 0; i < a->n; i++)
        fn(a->v[i]);
    free(a->v);
}

static void free_location(void *v)
{
    Location *l = v;
    for (size_t i = 0; i < l->n_line; i++)
        free(l->line[i]);
    free(l->line);
    free(l);
}

static void free_sample(void *v)
{
    Sample *s = v;
    free(s->location_id);
    free(s->value);
    free(s);
}

int report_write_pprof(FILE *out, const struct report_source *src)
{
    struct pp p = {0};
    pp_string(&p, "");
    static const char *const types[4][2] = {
        { "alloc_objects", "count" }, { "alloc_space", "bytes" },
        { "inuse_objects", "count" }, { "inuse_space", "bytes" },
    };
    ValueType vt[4], period;
    ValueType *vtp[4];
    for (int i = 0; i < 4; i++) {
        perftools__profiles__value_type__init(&vt[i]);
        vt[i].type = pp_string(&p, types[i][0]);
        vt[i].unit = pp_string(&p, types[i][1]);
        vtp[i] = &vt[i];
    }
    perftools__profiles__value_type__init(&period);
    period.type = pp_string(&p, "space");
    period.unit = pp_string(&p, "bytes");

    uint32_t limit = heap_stack_id_limit(src->books);
    struct export_stack es = {0};
    for (uint32_t id = 0; id < limit; id++) {
        struct stack_totals t;
        heap_get_stack_totals(src->books, id, &t);
        if (!t.allocs && !t.blocks_in_use)
            continue;
        export_stack_load(&es, src, id);
        pp_sample(&p, &es, &t);
    }
    export_stack_free(&es);
    main_mapping_first(&p, src->program);

    Profile prof;
    perftools__profiles__profile__init(&prof);
    prof.n_sample_type = 4;
    prof.sample_type = vtp;
    prof.n_sample = p.sample.n;
    prof.sample = (Sample **)p.sample.v;
    prof.n_mapping = p.mapping.n;
    prof.mapping = (Mapping **)p.mapping.v;
    prof.n_location = p.location.n;
    prof.location = (Location **)p.location.v;
    prof.n_function = p.function.n;
    prof.function = (Function **)p.function.v;
    prof.period_type = &period;
    prof.period = 1;
    /* --sample: pprof's sampling period is the mean bytes between samples;
     * the values are already scaled up (estimates), as Go's heap profiles
     * are, and a comment says so. */
    uint64_t sample = heap_sample_bytes(src->books);
    int64_t comment[1];
    if (sample) {
        char note[160];
        snprintf(note, sizeof(note),
                 "memtrace --sample %" PRIu64 ": allocations sampled by bytes; values are "
                 "estimates (scaled by 1/(1-exp(-size/%" PRIu64 ")))",
                 sample, sample);
        prof.period = (int64_t)sample;
        comment[0] = pp_string(&p, note);
        prof.n_comment = 1;
        prof.comment = comment;
    }
    prof.default_sample_type = vt[3].type;
    double elapsed = heap_seconds(src->books);
    prof.duration_nanos = (int64_t)(elapsed * 1e9);
    prof.time_nanos = (int64_t)time(NULL) * 1000000000 - prof.duration_nanos;
    /* Strings last: the messages above added theirs. */
    prof.n_string_table = p.table.n;
    prof.string_table = (char **)p.table.v;

    size_t size = perftools__profiles__profile__get_packed_size(&prof);
    uint8_t *buf = xmalloc(size ? size : 1);
    perftools__profiles__profile__pack(&prof, buf);
    int rc = -1;
    FILE *z = report_gzip_open(out);
    if (z) {
        rc = fwrite(buf, 1, size, z) == size ? 0 : -1;
        rc |= report_gzip_close(z);
    }
    free(buf);

    free_vec(&p.sample, free_sample);
    free_vec(&p.location, free_location);
    free_vec(&p.mapping, free);
    free_vec(&p.function, free);
    free_vec(&p.table, free);
    interner_free(&p.strings);
    interner_free(&p.functions);
    interner_free(&p.locations);
    interner_free(&p.mappings);
    return rc;
}

#endif
