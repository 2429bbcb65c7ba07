#include "target/console/tokenize.h"

#include "shared/xalloc.h"

#include <stdlib.h>

static bool is_space(char c)
{
    return c == ' ' || c == '\t';
}

const char *tokenize(const char *line, size_t len, struct tokens *out)
{
    out->count = 0;
    /* Each word is at most as long as the line and needs a terminator;
     * redirections take two bytes: len * 2 + 1 bounds everything. */
    out->storage = xmalloc(len * 2 + 1);
    char *w = out->storage;
    size_t i = 0;
    for (;;) {
        while (i < len && is_space(line[i]))
            i++;
        if (i >= len)
            return NULL;
        if (out->count == TOKENS_MAX) {
            tokens_release(out);
            return "too many words";
        }
        size_t k = out->count++;
        out->word[k] = w;
        out->redirect[k] = false;
        if (line[i] == '>') {
            out->redirect[k] = true;
            *w++ = '>';
            *w++ = '\0';
            i++;
            continue;
        }
        while (i < len && !is_space(line[i]) && line[i] != '>') {
            char q = line[i];
            if (q != '"' && q != '\'') {
                *w++ = line[i++];
                continue;
            }
            i++;
            while (i < len && line[i] != q) {
                if (q == '"' && line[i] == '\\' && i + 1 < len &&
                    (line[i + 1] == '"' || line[i + 1] == '\\'))
                    i++;
                *w++ = line[i++];
            }
            if (i >= len) {
                tokens_release(out);
                return "unterminated quote";
            }
            i++;
        }
        *w++ = '\0';
    }
}

void tokens_release(struct tokens *t)
{
    free(t->storage);
    t->storage = NULL;
    t->count = 0;
}
