/* attach_time: how long `memtrace -p PID` takes to attach.
 *
 *   attach_time MEMTRACE PID
 *
 * Runs MEMTRACE -p PID with its stderr and stdin on pipes, and measures the
 * time from the start until memtrace says "attached to process" (printed
 * once every thread is stopped, every module read and every breakpoint
 * placed, and the threads are running again).  Then it types "quit" and
 * waits for memtrace to detach.  Prints "attach_time: MS ms" on stdout;
 * exits non-zero when memtrace never says it attached.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: attach_time MEMTRACE PID\n");
        return 2;
    }
    int err[2], in[2];
    if (pipe(err) < 0 || pipe(in) < 0) {
        perror("pipe");
        return 1;
    }
    double t0 = now_ms();
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        dup2(in[0], STDIN_FILENO);
        dup2(err[1], STDERR_FILENO);
        close(in[0]);
        close(in[1]);
        close(err[0]);
        close(err[1]);
        execl(argv[1], argv[1], "-o", "/dev/null", "-p", argv[2], (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(err[1]);
    FILE *f = fdopen(err[0], "r");
    char line[4096];
    double attached = -1;
    while (f && fgets(line, sizeof(line), f)) {
        if (strstr(line, "attached to process")) {
            attached = now_ms() - t0;
            break;
        }
    }
    /* Detach, and drain what memtrace still says so that it never blocks. */
    if (write(in[1], "quit\n", 5) != 5)
        kill(pid, SIGTERM);
    close(in[1]);
    while (f && fgets(line, sizeof(line), f))
        ;
    int status = 0;
    waitpid(pid, &status, 0);
    if (attached < 0) {
        fprintf(stderr, "attach_time: memtrace never attached (status %d)\n", status);
        return 1;
    }
    printf("attach_time: %.1f ms\n", attached);
    return 0;
}
