/* ptrace_floor: the cost of one ptrace stop/resume round trip on this machine.
 *
 *   ptrace_floor [STOPS] [regs|poll]
 *
 * A child hits int3 in a loop; the parent waits for each SIGTRAP and resumes
 * it with PTRACE_CONT.  With "regs" the parent also reads and writes the
 * registers at each stop, as any breakpoint tracer must at least do.  With
 * "poll" it waits the way an event loop does (waitpid WNOHANG, then poll on
 * a signalfd for SIGCHLD, then read it), to price that style of waiting.
 * Prints the mean microseconds per round trip.  This is the lower bound for
 * what a breakpoint tracer can cost per stop.  On arm and aarch64 the
 * breakpoint does not move the pc, so every stop also reads and writes
 * the registers to step past it (the "regs" figure, always).
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
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

/* Waits for the next status of pid: blocking, or as an event loop does. */
static pid_t wait_stop(pid_t pid, int *status, int sfd)
{
    if (sfd < 0)
        return waitpid(pid, status, 0);
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r != 0)
            return r;
        struct pollfd p = { .fd = sfd, .events = POLLIN };
        if (poll(&p, 1, -1) < 0)
            return -1;
        struct signalfd_siginfo si;
        while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
            ;
    }
}

static void child(long stops)
{
    if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
        _exit(3);
    raise(SIGSTOP);
    for (long i = 0; i < stops; i++) {
#if defined(__x86_64__) || defined(__i386__)
        __asm__ volatile("int3" ::: "memory");
#elif defined(__aarch64__)
        __asm__ volatile("brk #0" ::: "memory");
#elif defined(__arm__) && defined(__thumb__)
        __asm__ volatile(".inst.n 0xde01" ::: "memory");   /* Linux's Thumb breakpoint */
#elif defined(__arm__)
        __asm__ volatile(".inst 0xe7f001f0" ::: "memory");  /* Linux's ARM breakpoint */
#else
#error "no breakpoint instruction for this CPU"
#endif
    }
    _exit(0);
}

/* On ARM the pc stays on the breakpoint: the tracer moves it past, so
 * every stop there reads and writes the registers (the floor of any
 * breakpoint tracer on these CPUs). */
#if defined(__aarch64__)
#include <elf.h>
#include <sys/uio.h>
static int step_over(pid_t pid)
{
    struct user_regs_struct regs;
    struct iovec iov = { .iov_base = &regs, .iov_len = sizeof(regs) };
    if (ptrace(PTRACE_GETREGSET, pid, (void *)NT_PRSTATUS, &iov) != 0)
        return -1;
    regs.pc += 4;
    return (int)ptrace(PTRACE_SETREGSET, pid, (void *)NT_PRSTATUS, &iov);
}
#elif defined(__arm__)
static int step_over(pid_t pid)
{
    struct user_regs regs;
    if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) != 0)
        return -1;
    regs.uregs[15] += (regs.uregs[16] & 0x20) ? 2 : 4;   /* CPSR.T: Thumb */
    return (int)ptrace(PTRACE_SETREGS, pid, NULL, &regs);
}
#else
static int step_over(pid_t pid)
{
    (void)pid;
    return 0;
}
#endif

int main(int argc, char **argv)
{
    long stops = argc > 1 ? atol(argv[1]) : 100000;
    int with_regs = argc > 2 && strcmp(argv[2], "regs") == 0;
    int sfd = -1;
    if (argc > 2 && strcmp(argv[2], "poll") == 0) {
        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
        if (sfd < 0) {
            perror("signalfd");
            return 1;
        }
    }
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
        if (wait_stop(pid, &status, sfd) != pid) {
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
#else
            (void)with_regs;
#endif
            if (step_over(pid) != 0) {
                perror("ptrace regs");
                return 1;
            }
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
