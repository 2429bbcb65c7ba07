/* libFuzzer harness for --alloc-fn's @FILE parser (and so each word's,
 * NAME=KIND[:POSITIONS]): built by run-fuzzers.sh against libmt.a; seeds
 * in selftest/fuzz/seeds/alloc_fn.  Whatever the input, a word accepted
 * has a name of allowed bytes and in-range, distinct positions, and a
 * refusal says why on one line. */
#include "target/tracer/alloc_fn_spec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct alloc_fn_spec sp[INTERCEPT_NAMED_MAX];
    char err[256] = "";
    size_t n = 0;
    if (alloc_fn_file_parse((const char *)data, size, "fuzz", sp, INTERCEPT_NAMED_MAX, &n, err,
                            sizeof(err)) < 0) {
        if (!err[0] || strchr(err, '\n'))
            abort(); /* a failure must say why, on one line */
        return 0;
    }
    if (n > INTERCEPT_NAMED_MAX)
        abort();
    for (size_t i = 0; i < n; i++) {
        size_t len = strnlen(sp[i].name, sizeof(sp[i].name));
        if (len == 0 || len > ALLOC_FN_NAME_MAX || sp[i].line == 0)
            abort();
        for (size_t k = 0; k < len; k++)
            if ((unsigned char)sp[i].name[k] <= ' ' || sp[i].name[k] == '=')
                abort();
        for (unsigned k = 0; k < INTERCEPT_POS_MAX; k++)
            if (sp[i].pos[k] > ALLOC_FN_POS_MAX ||
                (k && sp[i].pos[k] && sp[i].pos[k] == sp[i].pos[0]))
                abort();
    }
    return 0;
}
