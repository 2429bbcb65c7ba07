/* The console's `snapshot [> FILE]`: a report written now, as
 * --snapshot-rss writes them (the engine's snapshot hook). */
#include "target/console/console_internal.h"

#include <string.h>
#include <sys/stat.h>

/* FILE is the console's own input (or stdin): never written into. */
static bool is_input(const struct console *c, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return false;
    int fds[2] = { c->in_fd, 0 };
    for (int i = 0; i < 2; i++) {
        struct stat in;
        if (fds[i] >= 0 && fstat(fds[i], &in) == 0 && in.st_dev == st.st_dev &&
            in.st_ino == st.st_ino && !S_ISCHR(in.st_mode))
            return true;
    }
    return false;
}

void cmd_snapshot(struct console *c, const struct tokens *t)
{
    const char *path = NULL;
    if (t->count == 3 && t->redirect[1] && !t->redirect[2]) {
        path = t->word[2];
        if (!*path) {
            console_error(c, "snapshot: empty file name");
            return;
        }
    } else if (t->count != 1) {
        console_error(c, "usage: snapshot [> FILE]");
        return;
    }
    if (!c->ops.snapshot) {
        console_error(c, "snapshot: not available");
        return;
    }
    if (path && is_input(c, path)) {
        console_error(c, "snapshot: %.256s is the console's own input: not written", path);
        return;
    }
    char written[1400];
    if (c->ops.snapshot(c->ctx, path, written, sizeof(written)) != 0) {
        console_error(c, "snapshot: not written");
        return;
    }
    fprintf(c->out, "snapshot written to %.1300s\n", written);
}
