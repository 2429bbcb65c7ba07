#include "target/console/complete.h"

#include <stdbool.h>
#include <string.h>

enum { WORD_MAX = 64 };

static bool starts_with(const char *s, size_t n, const char *prefix)
{
    size_t p = strlen(prefix);
    return p <= n && strncmp(s, prefix, p) == 0;
}

static void add_if(const char *s, size_t n, const char *prefix,
                   void (*add)(void *, const char *), void *arg)
{
    char w[WORD_MAX];
    if (n == 0 || n >= sizeof(w) || !starts_with(s, n, prefix))
        return;
    memcpy(w, s, n);
    w[n] = '\0';
    add(arg, w);
}

/* The words of line[0..len) split at blanks, '>' one of its own. */
struct words {
    size_t count;
    const char *at[WORD_MAX];
    size_t len[WORD_MAX];
    bool redirect;
};

static void split(const char *line, size_t len, struct words *w)
{
    memset(w, 0, sizeof(*w));
    size_t i = 0;
    while (i < len) {
        if (line[i] == ' ' || line[i] == '\t') {
            i++;
            continue;
        }
        size_t b = i;
        if (line[i] == '>') {
            w->redirect = true;
            i++;
        } else {
            while (i < len && line[i] != ' ' && line[i] != '\t' && line[i] != '>')
                i++;
        }
        if (w->count < WORD_MAX) {
            w->at[w->count] = line + b;
            w->len[w->count] = i - b;
            w->count++;
        }
    }
}

/* In a usage line, the bracketed option "[-X VALUES]": VALUES (pointer and
 * length, zero when the option takes none) for flag (e.g. "-s", length 2). */
static bool usage_option(const char *usage, const char *flag, size_t flag_len,
                         const char **values, size_t *values_len)
{
    for (const char *p = strstr(usage, "[-"); p; p = strstr(p + 1, "[-")) {
        const char *end = strchr(p, ']');
        if (!end)
            return false;
        const char *f = p + 1;
        size_t n = strcspn(f, " ]");
        if (n == flag_len && strncmp(f, flag, n) == 0) {
            *values = f[n] == ' ' ? f + n + 1 : end;
            *values_len = (size_t)(end - *values);
            return true;
        }
    }
    return false;
}

static void add_commands(const char *prefix, void (*add)(void *, const char *), void *arg)
{
    for (size_t i = 0; console_command_name(i); i++) {
        const char *name = console_command_name(i);
        add_if(name, strlen(name), prefix, add, arg);
    }
}

enum complete_kind console_complete(const char *line, size_t start, const char *prefix,
                                    void (*add)(void *arg, const char *word), void *arg)
{
    struct words w;
    split(line, start, &w);
    if (w.redirect)
        return COMPLETE_FILES;
    if (w.count == 0) {
        add_commands(prefix, add, arg);
        return COMPLETE_WORDS;
    }
    char cmd[WORD_MAX];
    if (w.len[0] >= sizeof(cmd))
        return COMPLETE_WORDS;
    memcpy(cmd, w.at[0], w.len[0]);
    cmd[w.len[0]] = '\0';
    if (strcmp(cmd, "help") == 0) {
        if (w.count == 1)
            add_commands(prefix, add, arg);
        return COMPLETE_WORDS;
    }
    const char *usage = console_command_usage(cmd);
    if (!usage)
        return COMPLETE_WORDS;

    /* After an option that takes a value: its values, when the usage lists
     * them as a|b|c (an upper-case placeholder such as TOP has none). */
    const char *vals;
    size_t vals_len;
    if (w.count > 1 && w.at[w.count - 1][0] == '-' &&
        usage_option(usage, w.at[w.count - 1], w.len[w.count - 1], &vals, &vals_len) &&
        vals_len > 0) {
        if (vals[0] >= 'A' && vals[0] <= 'Z')
            return COMPLETE_WORDS;
        for (size_t i = 0; i < vals_len;) {
            size_t n = strcspn(vals + i, "|]");
            if (n > vals_len - i)
                n = vals_len - i;
            add_if(vals + i, n, prefix, add, arg);
            i += n + 1;
        }
        return COMPLETE_WORDS;
    }
    for (const char *p = strstr(usage, "[-"); p; p = strstr(p + 1, "[-"))
        add_if(p + 1, strcspn(p + 1, " ]"), prefix, add, arg);
    return COMPLETE_WORDS;
}
