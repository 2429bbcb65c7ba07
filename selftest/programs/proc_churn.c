/* Processes that come and go while a tracer scans (proc_churn.sh):
 *
 *   root        for ROUNDS rounds: allocates, forks a child, frees some,
 *               reaps the children that ended; keeps (still reachable)
 *               and loses (definitely lost) a fixed set of blocks
 *   child       allocates and frees, every third one forks a grandchild
 *               and waits for it; leaks a few blocks; exits
 *   grandchild  allocates, frees, leaks, exits
 *
 * Each round sleeps a little, so that a console's scans land while children
 * are being born, running and exiting.  Every process's work is
 * deterministic; the root prints one checksum line, so a traced run must
 * print what an untraced one does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *kept[16];

static unsigned long work(int rounds, size_t base, int leak)
{
    unsigned long sum = 0;
    for (int i = 0; i < rounds; i++) {
        size_t n = base + (size_t)(i * 13 % 40);
        unsigned char *p = malloc(n);
        memset(p, i & 0xff, n);
        sum += p[n / 2] + n;
        if (i >= leak)
            free(p);
    }
    return sum;
}

static void child(int round)
{
    work(30, 24, 2);
    if (round % 3 == 0) {
        pid_t g = fork();
        if (g == 0) {
            work(20, 40, 1);
            exit(0);
        }
        if (g > 0)
            waitpid(g, NULL, 0);
    }
    exit(0);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    unsigned long sum = 0;
    for (int r = 0; r < rounds; r++) {
        char *a = malloc(64 + (size_t)r);
        pid_t pid = fork();
        if (pid == 0)
            child(r);
        if (pid < 0) {
            perror("fork");
            return 1;
        }
        sum += work(10, 16, 0);
        free(a);
        if (r < 16)
            kept[r] = malloc(32);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        usleep(3000);
    }
    while (wait(NULL) > 0)
        ;
    for (int i = 0; i < 4; i++) {
        char *lost = malloc(100);
        memset(lost, 1, 100);
        sum += (unsigned long)lost[0];
        lost = NULL;
    }
    printf("root: %lu\n", sum);
    return 0;
}
