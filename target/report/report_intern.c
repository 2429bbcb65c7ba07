#include "target/report/report_intern.h"

#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"
#include "target/report/report.h"

struct intern_pair_slot {
    uint64_t a, b;
    uint32_t index;
    bool used;
};

struct intern_string_slot {
    char *s;
    uint64_t hash;
    uint32_t index;
};

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* Tables grow at half full, so probing always ends. */
static size_t grown(size_t mask, size_t used)
{
    size_t cap = mask ? mask + 1 : 0;
    if ((used + 1) * 2 <= cap)
        return 0;
    return cap ? cap * 2 : 64;
}

static void pairs_grow(struct intern_pairs *t, size_t cap)
{
    struct intern_pair_slot *old = t->slots;
    size_t old_cap = t->mask ? t->mask + 1 : 0;
    t->slots = xcalloc(cap, sizeof(*t->slots));
    t->mask = cap - 1;
    for (size_t i = 0; i < old_cap; i++) {
        if (!old[i].used)
            continue;
        size_t j = mix(old[i].a ^ mix(old[i].b)) & t->mask;
        while (t->slots[j].used)
            j = (j + 1) & t->mask;
        t->slots[j] = old[i];
    }
    free(old);
}

uint32_t intern_pair(struct intern_pairs *t, uint64_t a, uint64_t b, uint32_t next_index, bool *added)
{
    size_t cap = grown(t->mask, t->used);
    if (cap)
        pairs_grow(t, cap);
    size_t j = mix(a ^ mix(b)) & t->mask;
    for (; t->slots[j].used; j = (j + 1) & t->mask)
        if (t->slots[j].a == a && t->slots[j].b == b) {
            *added = false;
            return t->slots[j].index;
        }
    t->slots[j] = (struct intern_pair_slot){ a, b, next_index, true };
    t->used++;
    *added = true;
    return next_index;
}

void intern_pairs_free(struct intern_pairs *t)
{
    free(t->slots);
    memset(t, 0, sizeof(*t));
}

static uint64_t hash_string(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;   /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static void strings_grow(struct intern_strings *t, size_t cap)
{
    struct intern_string_slot *old = t->slots;
    size_t old_cap = t->mask ? t->mask + 1 : 0;
    t->slots = xcalloc(cap, sizeof(*t->slots));
    t->mask = cap - 1;
    for (size_t i = 0; i < old_cap; i++) {
        if (!old[i].s)
            continue;
        size_t j = old[i].hash & t->mask;
        while (t->slots[j].s)
            j = (j + 1) & t->mask;
        t->slots[j] = old[i];
    }
    free(old);
}

uint32_t intern_string(struct intern_strings *t, const char *s, uint32_t next_index, bool *added)
{
    size_t cap = grown(t->mask, t->used);
    if (cap)
        strings_grow(t, cap);
    uint64_t h = hash_string(s);
    size_t j = h & t->mask;
    for (; t->slots[j].s; j = (j + 1) & t->mask)
        if (t->slots[j].hash == h && strcmp(t->slots[j].s, s) == 0) {
            *added = false;
            return t->slots[j].index;
        }
    t->slots[j] = (struct intern_string_slot){ xstrdup(s), h, next_index };
    t->used++;
    *added = true;
    return next_index;
}

void intern_strings_free(struct intern_strings *t)
{
    size_t cap = t->mask ? t->mask + 1 : 0;
    for (size_t i = 0; i < cap; i++)
        free(t->slots[i].s);
    free(t->slots);
    memset(t, 0, sizeof(*t));
}

static void export_stack_clear(struct export_stack *st)
{
    for (size_t i = 0; i < st->npcs; i++) {
        free(st->pcs[i].module);
        free(st->pcs[i].build_id);
    }
    for (size_t i = 0; i < st->nframes; i++) {
        free(st->frames[i].function);
        free(st->frames[i].file);
    }
    st->npcs = st->nframes = 0;
}

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

static void load(struct export_stack *st, const struct report_source *src, uint32_t stack_id, bool skip_first)
{
    struct report_frames it;
    struct report_frame f;
    report_frames_begin(&it, src, stack_id);
    it.want_mapping = true;
    for (;;) {
        unsigned pc_index = it.i;
        bool first_of_pc = it.sub == 0;
        if (!report_frames_next(&it, &f))
            break;
        if (skip_first && pc_index == 0)
            continue;
        if (first_of_pc || !st->npcs) {
            if (st->npcs == st->pcs_cap) {
                st->pcs_cap = st->pcs_cap ? st->pcs_cap * 2 : 32;
                st->pcs = xreallocarray(st->pcs, st->pcs_cap, sizeof(*st->pcs));
            }
            st->pcs[st->npcs++] = (struct export_pc){ f.pc, dup_or_null(f.module), f.offset, f.map_start,
                                                      f.map_end, dup_or_null(f.build_id), st->nframes, 0 };
        }
        if (st->nframes == st->frames_cap) {
            st->frames_cap = st->frames_cap ? st->frames_cap * 2 : 32;
            st->frames = xreallocarray(st->frames, st->frames_cap, sizeof(*st->frames));
        }
        st->frames[st->nframes++] = (struct export_frame){ dup_or_null(f.function), dup_or_null(f.file), f.line };
        st->pcs[st->npcs - 1].count++;
    }
}

void export_stack_load(struct export_stack *st, const struct report_source *src, uint32_t stack_id)
{
    export_stack_clear(st);
    load(st, src, stack_id, true);
    if (!st->npcs)
        load(st, src, stack_id, false);
}

void export_stack_free(struct export_stack *st)
{
    export_stack_clear(st);
    free(st->pcs);
    free(st->frames);
    memset(st, 0, sizeof(*st));
}
