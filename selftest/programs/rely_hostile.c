/* A hostile target for rely_hostile.bash: it attacks the tracer through
 * the descriptors the agent engine gives it.
 *
 *   rely_hostile attach|fork FILE SECONDS
 *   rely_hostile inflight SECONDS
 *
 * Started as root, it becomes nobody (65534) first, then opens FILE (a
 * file only root may read or write) with O_PATH, which needs no
 * permission on the file.  Three attackers sharing its descriptor table
 * then watch that table in a tight loop: the agent's memfd is replaced by
 * the O_PATH descriptor of FILE, or truncated once mapped; a pipe (the
 * doorbell) is replaced by /dev/zero or by FILE, or made blocking.  A
 * tracer that reopens such a descriptor through /proc as root gets FILE
 * read-write or reads /dev/zero for ever; one that maps a memfd it cannot
 * keep from shrinking dies of SIGBUS.
 *
 *   attach: the attackers are processes (clone(CLONE_FILES)); the main
 *           process allocates for SECONDS while memtrace -p attaches.
 *   fork:   the attackers are threads; the main process starts CHILDREN
 *           children with clone(CLONE_FILES), so that while memtrace -f
 *           gives each child its own agent region, the attackers see it in
 *           the shared table.
 *   inflight: (traced already) every free slot of its agent's region is
 *           claimed and left "in flight" while it allocates for SECONDS:
 *           the tracer must hold back every record (docs/reliability.md).
 *
 * Prints "hostile: survived" and exits 0 at the end. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int victim_fd = -1, zero_fd = -1;
static double seconds;
static int stop; /* -f: the children are done (the attackers are threads) */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The descriptors watched: the agent's come after the program's own, at
 * the lowest free numbers. */
enum { FIRST_FD = 3, LAST_FD = 24 };
/* The agent's region is larger than this (128 MiB and its control block). */
#define REGION_MIN ((off_t)128 << 20)

/* Each object is attacked once, at its first descriptor (attacker 1's
 * own copy of a memfd is left alone). */
static bool seen_before(ino_t ino)
{
    static __thread ino_t seen[64];
    static __thread unsigned n;
    for (unsigned i = 0; i < n && i < 64; i++)
        if (seen[i] == ino)
            return true;
    seen[n++ % 64] = ino;
    return false;
}

/* One look at the shared table (fstat only: a look must be much shorter
 * than the tracer's steps), by attacker k of ATTACKERS (more than one, so
 * that one runs at the right moment on a busy machine too).  A new agent
 * memfd is watched until the target has sized it (the tracer takes it
 * next), then replaced by FILE (attacker 0 at once, 2 after up to 400 us:
 * under -f the child maps it before the tracer takes it), or kept (dup) and
 * truncated a moment later, once both sides have mapped it (attacker 1).
 * A new pipe is replaced by /dev/zero (0) or by FILE (2), or made blocking
 * (1: a tracer that shared the target's open file and trusted its flags
 * would wait on it for ever). */
enum { ATTACKERS = 3 };
static unsigned attack_once(unsigned k)
{
    static __thread int kept = -1;
    static __thread double kept_at;
    static __thread unsigned seed;
    if (!seed)
        seed = (unsigned)getpid() * 31u + k + 1;
    unsigned hits = 0;
    if (kept >= 0 && now() - kept_at > 0.05) {
        if (ftruncate(kept, 4096) == 0)
            hits++;
        close(kept);
        kept = -1;
    }
    for (int fd = FIRST_FD; fd <= LAST_FD; fd++) {
        struct stat st;
        if (fd == victim_fd || fd == zero_fd || fd == kept || fstat(fd, &st) < 0)
            continue;
        if (S_ISREG(st.st_mode) && st.st_nlink == 0 && !seen_before(st.st_ino)) {
            /* a memfd: its size, looked at as fast as can be */
            ino_t ino = st.st_ino;
            double until = now() + 0.5;
            while (st.st_size < REGION_MIN && now() < until)
                if (fstat(fd, &st) < 0 || st.st_ino != ino)
                    break;
            if (st.st_size < REGION_MIN || st.st_ino != ino)
                continue;
            hits++;
            if (k == 2) {
                /* a moment later: under -f the child maps it first, then
                 * the tracer takes it */
                double at = now() + (double)(rand_r(&seed) % 400) / 1e6;
                while (now() < at)
                    ;
            }
            if (k != 1) {
                dup2(victim_fd, fd);
            } else if (kept < 0) {
                kept = dup(fd);
                kept_at = now();
            }
        } else if (S_ISFIFO(st.st_mode) && !seen_before(st.st_ino)) {
            hits++;
            if (k == 0)
                dup2(zero_fd, fd);
            else if (k == 2)
                dup2(victim_fd, fd);
            else
                fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        }
    }
    return hits;
}

static int sibling(void *arg)
{
    /* (a thread under -f, a process under -p) */
    unsigned k = (unsigned)(unsigned long)arg;
    double end = now() + seconds + 1;
    unsigned round = 0, hits = 0;
    for (; now() < end && !__atomic_load_n(&stop, __ATOMIC_RELAXED); round++)
        hits += attack_once(k);
    fprintf(stderr, "hostile: attacker %u made %u attacks in %u looks\n", k, hits, round);
    return 0;
}

/* inflight: every free slot of the agent's control block (mapped in this
 * process: /proc/self/maps names it) claimed and marked inside a call that
 * never returns, so that the tracer must hold back every record, with a
 * thread waiting on each.  The layout is target/agent/agent_abi.h's:
 * slots from byte 128, 128 bytes each, key at 0, inflight at 16, waiting
 * at 40.  Returns the slots claimed. */
static unsigned hold_every_slot(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    unsigned long lo = 0, hi = 0;
    while (f && fgets(line, sizeof(line), f))
        if (strstr(line, "memfd:memtrace-agent") && sscanf(line, "%lx-%lx", &lo, &hi) == 2 &&
            hi - lo >= ((unsigned long)128 << 20))
            break;
        else
            lo = hi = 0;
    if (f)
        fclose(f);
    if (!lo)
        return 0;
    unsigned n = 0;
    for (unsigned s = 0; s < 256; s++) {
        volatile unsigned char *slot = (unsigned char *)lo + 128 + 128 * s;
        volatile uint64_t *key = (volatile uint64_t *)slot;
        if (*key)
            continue;
        *key = 0x1000 + s;
        *(volatile uint64_t *)(slot + 16) = 1;
        *(volatile uint32_t *)(slot + 40) = 1;
        n++;
    }
    return n;
}

static void *sibling_thread(void *arg)
{
    sibling(arg);
    return NULL;
}

static void churn(unsigned n)
{
    void *keep[64] = {0};
    for (unsigned i = 0; i < n; i++) {
        unsigned k = i % 64;
        free(keep[k]);
        keep[k] = malloc(16 + i % 1000);
    }
    for (unsigned k = 0; k < 64; k++)
        free(keep[k]);
}

static int child(void *arg)
{
    (void)arg;
    churn(2000);
    _exit(0);
}

static char sibling_stack[ATTACKERS][256 * 1024] __attribute__((aligned(16)));
static char child_stack[256 * 1024] __attribute__((aligned(16)));
/* children per run under -f (each is one more process in the report,
 * whose symbols take a while) */
enum { CHILDREN = 2 };

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "inflight") == 0) {
        /* traced already (-p or launched): hold every slot, then call */
        seconds = atof(argv[2]);
        free(malloc(1)); /* the agent's slot of this thread first */
        double end = now() + seconds, claim = 0;
        unsigned held = 0;
        while (now() < end) {
            if (now() > claim) {
                held += hold_every_slot();
                claim = now() + 0.2;
            }
            churn(100);
        }
        printf("hostile: survived (%u slots held)\n", held);
        return 0;
    }
    if (argc != 4 || (strcmp(argv[1], "attach") && strcmp(argv[1], "fork"))) {
        fprintf(stderr, "usage: rely_hostile attach|fork FILE SECONDS | inflight SECONDS\n");
        return 2;
    }
    seconds = atof(argv[3]);
    if (getuid() == 0) {
        if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0) {
            perror("rely_hostile: cannot become nobody");
            return 2;
        }
        prctl(PR_SET_DUMPABLE, 1); /* as any program nobody starts */
    }
    victim_fd = open(argv[2], O_PATH | O_CLOEXEC);
    zero_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
    if (victim_fd < 0 || zero_fd < 0) {
        perror("rely_hostile: open");
        return 2;
    }
    if (open(argv[2], O_RDONLY) >= 0) {
        fprintf(stderr, "rely_hostile: %s is readable by nobody: not a test\n", argv[2]);
        return 2;
    }
    /* The attackers share the descriptor table: under -p processes
     * (memtrace stops every thread of the process while it injects), under
     * -f threads (each child made with CLONE_FILES shares the table too;
     * fewer processes, shorter reports). */
    bool forking = strcmp(argv[1], "fork") == 0;
    int sib[ATTACKERS];
    pthread_t thr[ATTACKERS];
    for (unsigned k = 0; k < ATTACKERS; k++) {
        void *arg = (void *)(unsigned long)k;
        if (forking ? pthread_create(&thr[k], NULL, sibling_thread, arg) != 0
                    : (sib[k] = clone(sibling, sibling_stack[k] + sizeof(sibling_stack[k]),
                                      CLONE_FILES | SIGCHLD, arg)) < 0) {
            perror("rely_hostile: clone");
            return 2;
        }
    }
    double end = now() + seconds;
    unsigned children = 0;
    while (forking ? children < CHILDREN : now() < end) {
        if (forking) {
            int c = clone(child, child_stack + sizeof(child_stack), CLONE_FILES | SIGCHLD, NULL);
            if (c < 0 || waitpid(c, NULL, 0) != c) {
                perror("rely_hostile: clone or waitpid");
                return 2;
            }
            children++;
        } else {
            /* calls to trace, and most of the time idle: the attackers
             * get the CPU */
            churn(100);
        }
        struct timespec pause = {0, 2 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    for (unsigned k = 0; k < ATTACKERS; k++) {
        int st;
        if (forking)
            pthread_join(thr[k], NULL);
        else if (waitpid(sib[k], &st, 0) != sib[k] || !WIFEXITED(st))
            fprintf(stderr, "hostile: attacker %u ended badly\n", k);
    }
    printf("hostile: survived (%u children)\n", children);
    return 0;
}
