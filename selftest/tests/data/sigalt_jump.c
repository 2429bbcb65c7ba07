/* A SIGUSR1 handler on an alternate signal stack (SA_ONSTACK, sigaltstack)
 * that allocates and leaves with siglongjmp, N times (issue 29): the frames
 * below the signal frame live on the other stack.  Each block is kept, so
 * every allocation's stack is in the report.  Prints the count. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static sigjmp_buf back;
static void *volatile kept[1000], *volatile kept_main[1000];
static volatile int count;

__attribute__((noinline)) static void on_alarm(int sig)
{
    (void)sig;
    kept[count] = malloc(24 + (size_t)count % 8);
    count++;
    siglongjmp(back, 1);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 300;
    if (n < 1 || n > 1000)
        return 2;
    static char altstack[65536];
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack), .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0)
        return 1;
    struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_ONSTACK};
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, NULL) != 0)
        return 1;
    for (int i = 0; i < n; i++) {
        if (sigsetjmp(back, 1) == 0)
            raise(SIGUSR1);
        /* Work on the ordinary stack between signals, so that its words
         * below main's frame change after each signal. */
        kept_main[i] = malloc(16);
    }
    printf("%d handlers ran\n", count);
    return 0;
}
