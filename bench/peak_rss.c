/* peak_rss: the peak resident set of one process itself, not its children.
 *
 *   peak_rss COMMAND [ARG]...
 *
 * /usr/bin/time's %M is the maximum over the process and every descendant it
 * reaped, so for a tracer it reports the traced program when that one is
 * bigger.  peak_rss runs COMMAND under ptrace with PTRACE_O_TRACEEXIT only;
 * at the exit stop the address space still exists, and VmHWM is read from
 * /proc.  Prints "peak_rss: N KiB" on stderr and exits with COMMAND's status.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

static long vm_hwm_kib(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long kib = -1;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            kib = atol(line + 6);
    fclose(f);
    return kib;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: peak_rss COMMAND [ARG]...\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
            _exit(127);
        raise(SIGSTOP);
        execvp(argv[1], argv + 1);
        perror(argv[1]);
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status))
        return 1;
    ptrace(PTRACE_SETOPTIONS, pid, NULL,
           (void *)(long)(PTRACE_O_TRACEEXIT | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL));
    long peak = -1;
    int sig = 0;
    for (;;) {
        if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig) != 0)
            break;
        if (waitpid(pid, &status, 0) != pid)
            break;
        if (WIFEXITED(status) || WIFSIGNALED(status))
            break;
        sig = 0;
        if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8)))
            peak = vm_hwm_kib(pid);
        else if (status >> 8 != (SIGTRAP | (PTRACE_EVENT_EXEC << 8)))
            sig = WSTOPSIG(status); /* signal-delivery-stop: deliver it */
    }
    while (!WIFEXITED(status) && !WIFSIGNALED(status))
        if (waitpid(pid, &status, 0) != pid)
            break;
    fprintf(stderr, "peak_rss: %ld KiB\n", peak);
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
