#include "shared/version.h"

/* The build writes mt_version.h (MT_VERSION, MT_GIT_DESC) into its own
 * folder, rewritten only when one of them changes.  Tools that read the
 * sources alone (cppcheck, clang-tidy) get the fallback. */
#if __has_include("mt_version.h")
#include "mt_version.h"
#else
#define MT_VERSION "unknown"
#define MT_GIT_DESC ""
#endif

const char *version_release(void) { return MT_VERSION; }

const char *version_git(void) { return MT_GIT_DESC; }

void version_print(FILE *out, const char *program, const char *detail)
{
    fprintf(out, "%s %s (%s)\n", program, MT_VERSION, detail);
    if (MT_GIT_DESC[0])
        fprintf(out, "git: %s\n", MT_GIT_DESC);
}
