#include "target/report/report_export_stack.h"

#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"
#include "target/report/report.h"

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
