/* Grows until the kernel stops it (rss_snapshot_oom.sh):
 *
 *   rss_grow PROCS_FILE [MIB [MS]]
 *
 * Moves itself into the cgroup whose cgroup.procs is PROCS_FILE ("-": stays
 * where it is; its
 * memory limit is the test's), then allocates and writes 1 MiB blocks from
 * grow_step(), MS milliseconds apart (default 3), up to MIB MiB (default 1024): with
 * a limit below that, the OOM killer ends it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLOCK (1 << 20)

static char *__attribute__((noinline)) grow_step(void)
{
    char *p = malloc(BLOCK);
    if (p)
        memset(p, 0x5a, BLOCK);
    return p;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    long mib = argc > 2 ? atol(argv[2]) : 1024;
    if (strcmp(argv[1], "-") != 0) {
        int fd = open(argv[1], O_WRONLY);
        char pid[32];
        snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
        if (fd < 0 || write(fd, pid, strlen(pid)) < 0) {
            fprintf(stderr, "rss_grow: cannot join %s: %s\n", argv[1], strerror(errno));
            return 2;
        }
        close(fd);
    }
    long ms = argc > 3 ? atol(argv[3]) : 3;
    if (ms < 0 || ms > 1000)
        ms = 3;
    const struct timespec pause = {0, ms * 1000 * 1000};
    for (long i = 0; i < mib; i++) {
        if (!grow_step())
            return 3;
        nanosleep(&pause, NULL);
    }
    return 0;
}
