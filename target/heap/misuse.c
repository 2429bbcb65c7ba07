#include "target/heap/misuse.h"

#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"

const char *misuse_title(enum misuse_kind kind)
{
    return kind == MISUSE_MISMATCHED   ? "Mismatched free() / delete / delete []"
           : kind == MISUSE_OTHER_HEAP ? "Free by another allocator"
                                       : "Invalid free() / delete / delete[] / realloc()";
}

const char *misuse_token(enum misuse_kind kind)
{
    return kind == MISUSE_MISMATCHED   ? "mismatched_free"
           : kind == MISUSE_OTHER_HEAP ? "other_allocator_free"
                                       : "invalid_free";
}

const struct misuse_error *misuse_log_add(struct misuse_log *log, const struct misuse_error *e)
{
    log->total++;
    if (log->count == MISUSE_LOG_MAX)
        return NULL;
    if (log->count == log->cap) {
        log->cap = log->cap ? log->cap * 2 : 8;
        log->errors = xreallocarray(log->errors, log->cap, sizeof(*log->errors));
    }
    log->errors[log->count] = *e;
    return &log->errors[log->count++];
}

void misuse_log_reset(struct misuse_log *log)
{
    free(log->errors);
    memset(log, 0, sizeof(*log));
}

void misuse_log_copy(struct misuse_log *dst, const struct misuse_log *src)
{
    memset(dst, 0, sizeof(*dst));
    if (src->count) {
        dst->errors = xreallocarray(NULL, src->count, sizeof(*dst->errors));
        memcpy(dst->errors, src->errors, src->count * sizeof(*dst->errors));
    }
    dst->count = dst->cap = src->count;
    dst->total = src->total;
}
