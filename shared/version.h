/* The release of memtrace and memtrace-fs (the VERSION file) and, when built
 * from git, `git describe` of the tree: both printed by --version. */
#ifndef MT_SHARED_VERSION_H
#define MT_SHARED_VERSION_H

#include <stdio.h>

/* "0.2.0": the first line of VERSION at build time. */
const char *version_release(void);
/* `git describe --tags --always --dirty` of the source tree, or "" when it
 * was not built from a git checkout. */
const char *version_git(void);
/* The first lines of --version: "PROGRAM RELEASE (DETAIL)" and, when built
 * from git, "git: DESCRIPTION".  The caller adds what it has built in. */
void version_print(FILE *out, const char *program, const char *detail);

#endif
