/* Splits a console line into words.  Whitespace separates words; single or
 * double quotes group (backslash escapes " and \ inside double quotes); an
 * unquoted '>' is a redirection token of its own, so ">FILE", "> FILE" and
 * "report>FILE" all read the same.  Bounded: at most TOKENS_MAX words. */
#ifndef MT_CONSOLE_TOKENIZE_H
#define MT_CONSOLE_TOKENIZE_H

#include <stdbool.h>
#include <stddef.h>

#define TOKENS_MAX 32

struct tokens {
    size_t count;
    const char *word[TOKENS_MAX];
    bool redirect[TOKENS_MAX];  /* true: an unquoted '>' */
    char *storage;              /* all words, NUL separated */
};

/* Returns NULL on success, else a static description of what is wrong.
 * On success free the words with tokens_release. */
const char *tokenize(const char *line, size_t len, struct tokens *out);
void tokens_release(struct tokens *t);

#endif
