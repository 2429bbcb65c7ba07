/* Allocates in four known phases so a test can drive memtrace's console at
 * fixed points:
 *
 *   phases [CTLDIR [STOP]]
 *
 * After phase N it writes "phase N" to stdout and, when CTLDIR is given (not
 * "-"), waits for the file CTLDIR/goN before going on; it writes its pid to
 * CTLDIR/pid first.  With STOP it exits right after phase STOP, its blocks
 * still allocated, so valgrind's HEAP SUMMARY of that run is the state at
 * that point.  Phases 1 to 3 free only blocks of their own, so the figures
 * of a phase alone are the difference of two stopped runs.  Phase 4 frees
 * most of what is left and prints a checksum of every block's contents.
 *
 * Markers go out with write(2): stdio would allocate its buffer and make
 * the figures depend on where stdout points.  Waiting polls with access()
 * and nanosleep(), which allocate nothing either. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WAIT_LIMIT_S 60

static const char *ctldir;
static int stop_after;

static char *table[31];      /* phase 1 */
static char *churn[40];      /* phase 2 */
static char *leaks[12];      /* phase 3 */
static unsigned long checksum;

static void say(const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t w = write(1, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static void fill(char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (char)(seed * 31u + i);
}

static void sum(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        checksum = checksum * 33u + (unsigned char)p[i];
}

static void wait_for_go(int phase)
{
    if (!ctldir)
        return;
    char path[4096];
    snprintf(path, sizeof(path), "%s/go%d", ctldir, phase);
    const struct timespec tick = { 0, 10 * 1000 * 1000 };
    for (int i = 0; i < WAIT_LIMIT_S * 100; i++) {
        if (access(path, F_OK) == 0)
            return;
        nanosleep(&tick, NULL);
    }
    say("phases: nobody said go, giving up\n");
    exit(3);
}

static void end_of_phase(int phase)
{
    char line[32];
    snprintf(line, sizeof(line), "phase %d\n", phase);
    say(line);
    if (phase == stop_after)
        exit(0);
    wait_for_go(phase);
}

/* 30 blocks of 64 bytes and one calloc'd block of 8 x 100: the most
 * blocks but not the most bytes, so sorting by either key differs. */
static void __attribute__((noinline)) phase1_table(void)
{
    for (int i = 0; i < 30; i++) {
        table[i] = malloc(64);
        fill(table[i], 64, (unsigned)i);
    }
    table[30] = calloc(8, 100);
}

/* 40 blocks of 100 + 10 i bytes, every other one freed again, and one of
 * the rest grown by realloc. */
static void __attribute__((noinline)) phase2_churn(void)
{
    for (int i = 0; i < 40; i++) {
        churn[i] = malloc(100 + 10 * (size_t)i);
        fill(churn[i], 100 + 10 * (size_t)i, 100u + (unsigned)i);
    }
    for (int i = 0; i < 40; i += 2) {
        free(churn[i]);
        churn[i] = NULL;
    }
    churn[1] = realloc(churn[1], 2000);
    fill(churn[1], 2000, 7);
}

/* The leak: 12 blocks of 1000 bytes, two freed, one shrunk. */
static void __attribute__((noinline)) phase3_leak(void)
{
    for (int i = 0; i < 12; i++) {
        leaks[i] = malloc(1000);
        fill(leaks[i], 1000, 200u + (unsigned)i);
    }
    free(leaks[3]);
    free(leaks[7]);
    leaks[3] = leaks[7] = NULL;
    leaks[0] = realloc(leaks[0], 500);
}

/* Everything but table[0..3] and leaks[8..11] goes; the checksum proves
 * every block still held what was written into it. */
static void __attribute__((noinline)) phase4_cleanup(void)
{
    for (int i = 0; i < 31; i++)
        sum(table[i], i == 30 ? 800 : 64);
    for (int i = 1; i < 40; i += 2)
        sum(churn[i], i == 1 ? 2000 : 100 + 10 * (size_t)i);
    for (int i = 0; i < 12; i++)
        if (leaks[i])
            sum(leaks[i], i == 0 ? 500 : 1000);
    for (int i = 4; i < 31; i++)
        free(table[i]);
    for (int i = 1; i < 40; i += 2)
        free(churn[i]);
    for (int i = 0; i < 8; i++)
        free(leaks[i]);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "-") != 0)
        ctldir = argv[1];
    if (argc > 2)
        stop_after = atoi(argv[2]);
    if (ctldir) {
        char path[4096], pid[32];
        snprintf(path, sizeof(path), "%s/pid", ctldir);
        FILE *f = fopen(path, "w");  /* allocates, but before phase 1 */
        if (!f) {
            perror(path);
            return 2;
        }
        snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
        fputs(pid, f);
        fclose(f);
    }
    say("phases: start\n");
    wait_for_go(0);
    phase1_table();
    end_of_phase(1);
    phase2_churn();
    end_of_phase(2);
    phase3_leak();
    end_of_phase(3);
    phase4_cleanup();
    char line[64];
    snprintf(line, sizeof(line), "done checksum %lu\n", checksum);
    say(line);
    return 0;
}
