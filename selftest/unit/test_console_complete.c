/* Tab completion's candidates (target/console/complete.c) for lines typed so
 * far: command names, a command's options and their values as its usage line
 * (help) lists them, file names after '>'.  The usage lines are the help
 * text's own, so what Tab offers is checked against `help`'s words. */
#include "selftest/unit/test.h"
#include "target/console/complete.h"

#include <string.h>

static char got[512];

static void add(void *arg, const char *word)
{
    (void)arg;
    if (got[0])
        strncat(got, " ", sizeof(got) - strlen(got) - 1);
    strncat(got, word, sizeof(got) - strlen(got) - 1);
}

/* line: the whole text typed; the word being completed is its last one. */
static enum complete_kind ask(const char *line)
{
    got[0] = '\0';
    const char *sp = strrchr(line, ' ');
    const char *gt = strrchr(line, '>');
    const char *word = line;
    if (sp && sp + 1 > word)
        word = sp + 1;
    if (gt && gt + 1 > word)
        word = gt + 1;
    return console_complete(line, (size_t)(word - line), word, add, NULL);
}

#define EXPECT(line, want)                                                                        \
    do {                                                                                          \
        enum complete_kind k_ = ask(line);                                                        \
        CHECK(k_ == COMPLETE_WORDS && strcmp(got, want) == 0, "'%s': got '%s', want '%s'", line,  \
              got, want);                                                                         \
    } while (0)

int main(void)
{
    EXPECT("sta", "status");
    EXPECT("", "help status monitor report clear scan quit exit snapshot");
    EXPECT("  re", "report");
    EXPECT("e", "exit");
    EXPECT("x", "");
    EXPECT("help s", "status scan snapshot");
    EXPECT("help status ", "");
    EXPECT("report ", "-n -s -j -f");
    EXPECT("report -", "-n -s -j -f");
    EXPECT("report -f ", "text json folded html massif heaptrack pprof");
    EXPECT("report -f j", "json");
    EXPECT("report -s b", "bytes blocks");
    EXPECT("report -n ", "");           /* TOP: a number, nothing to offer */
    EXPECT("report -j -", "-n -s -j -f");
    EXPECT("status ", "");
    EXPECT("monitor ", "");
    EXPECT("nosuch -", "");
    CHECK(ask("report > /tm") == COMPLETE_FILES);
    CHECK(ask("report -f json >/tmp/x") == COMPLETE_FILES);
    CHECK(ask("report>") == COMPLETE_FILES);
    /* Words too long for a candidate, or many words: no crash, no match. */
    char big[3000];
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    EXPECT(big, "");
    char many[400] = "report";
    for (int i = 0; i < 90; i++)
        strcat(many, " -j");
    strcat(many, " -");
    EXPECT(many, "-n -s -j -f");
    return test_end("test_console_complete");
}
