/* Signals a traced program must receive as if untraced:
 *   - SIGUSR1 raised by itself every 10 rounds, and one sent from outside
 *     (told apart by si_pid);
 *   - SIGSEGV from a NULL write every 25 rounds, recovered by its handler
 *     with siglongjmp (a block allocated just before is freed after);
 *   - SIGSTOP/SIGCONT and SIGTSTP/SIGCONT from outside (job control; its
 *     SIGCONT handler counts).
 * Each round allocates and frees, and sleeps 5 ms so that a test can stop
 * and continue it midway.  After the rounds it says "rounds done", waits (up
 * to 20 s) for the outside SIGUSR1, then prints what it received.
 *
 *   proc_signals ROUNDS */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t usr1_self, usr1_outside, conts;
static sigjmp_buf recover;
static char *volatile in_flight;
static int *volatile nowhere; /* NULL, and the compiler cannot know it */

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    if (si->si_pid == getpid())
        usr1_self++;
    else
        usr1_outside++;
}

static void on_cont(int sig) { (void)sig; conts++; }

static void on_segv(int sig) { (void)sig; siglongjmp(recover, 1); }

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_usr1;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    sa.sa_flags = SA_RESTART;
    sa.sa_handler = on_cont;
    sigaction(SIGCONT, &sa, NULL);
    sa.sa_handler = on_segv;
    sa.sa_flags = SA_NODEFER;
    sigaction(SIGSEGV, &sa, NULL);
    /* The driver sends its job-control signals after this line: a SIGCONT
     * before the handler is in would go uncounted. */
    printf("proc_signals: ready\n");
    fflush(stdout);

    unsigned long sum = 0;
    int recovered = 0;
    for (int r = 0; r < rounds; r++) {
        char *p = malloc(16 + (size_t)r % 100);
        memset(p, r & 0xff, 16);
        sum += (unsigned char)p[3];
        free(p);
        if (r % 10 == 0)
            raise(SIGUSR1);
        if (r % 25 == 0) {
            if (sigsetjmp(recover, 1) == 0) {
                in_flight = malloc(32);
                *nowhere = 1; /* SIGSEGV */
                puts("proc_signals: no SIGSEGV?");
            } else {
                recovered++;
                free(in_flight);
            }
        }
        struct timespec ts = {0, 5000000};
        while (nanosleep(&ts, &ts) != 0)
            ;
    }
    printf("proc_signals: rounds done\n");
    fflush(stdout);
    for (int i = 0; i < 2000 && !usr1_outside; i++) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    printf("proc_signals: usr1 self %d outside %d, segv recovered %d, cont %d, checksum %lu\n",
           (int)usr1_self, (int)usr1_outside, recovered, (int)conts, sum);
    return 0;
}
