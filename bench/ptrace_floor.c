/* ptrace_floor: the cost of one ptrace stop/resume round trip on this machine.
 *
 *   ptrace_floor [STOPS] [regs]
 *
 * A child hits int3 in a loop; the parent waits for each SIGTRAP and resumes
 * it with PTRACE_CONT.  With "regs" the parent also reads and writes the
 * registers at each stop, as any breakpoint tracer must at least do.
 * Prints the mean microseconds per round trip.  This is the lower bound for
 * what a breakpoint tracer can cost per stop.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void child(long stops)
{
    if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
        _exit(3);
    raise(SIGSTOP);
    for (long i = 0; i < stops; i++)
        __asm__ volatile("int3" ::: "memory");
    _exit(0);
}

int main(int argc, char **argv)
{
    long stops = argc > 1 ? atol(argv[1]) : 100000;
    int with_regs = argc > 2 && strcmp(argv[2], "regs") == 0;
    if (stops < 1) {
        fprintf(stderr, "ptrace_floor: STOPS must be positive\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0)
        child(stops);

    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
        fprintf(stderr, "ptrace_floor: child did not stop\n");
        return 1;
    }
    ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)PTRACE_O_EXITKILL);
    long seen = 0;
    double start = now_us();
    if (ptrace(PTRACE_CONT, pid, NULL, NULL) != 0) {
        perror("PTRACE_CONT");
        return 1;
    }
    for (;;) {
        if (waitpid(pid, &status, 0) != pid) {
            perror("waitpid");
            return 1;
        }
        if (WIFEXITED(status) || WIFSIGNALED(status))
            break;
        if (WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP) {
            seen++;
#if defined(__x86_64__) || defined(__i386__)
            if (with_regs) {
                struct user_regs_struct regs;
                ptrace(PTRACE_GETREGS, pid, NULL, &regs);
                ptrace(PTRACE_SETREGS, pid, NULL, &regs);
            }
#endif
        }
        int sig = WIFSTOPPED(status) && WSTOPSIG(status) != SIGTRAP ? WSTOPSIG(status) : 0;
        if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig) != 0) {
            perror("PTRACE_CONT");
            return 1;
        }
    }
    double elapsed = now_us() - start;
    if (seen != stops) {
        fprintf(stderr, "ptrace_floor: saw %ld stops, expected %ld\n", seen, stops);
        return 1;
    }
    printf("%.3f\n", elapsed / (double)stops);
    return 0;
}
