/* A process tree with known allocation behaviour, for -f/--follow-fork:
 *
 *   root         allocates, forks child A, vforks child B, allocates more
 *                while they run, waits for both, frees some, leaks some
 *   child A      (fork) frees one block it inherited, allocates and frees,
 *                forks grandchild C, waits for it, leaks some
 *   grandchild C (fork) allocates, frees, leaks, exits
 *   child B      (vfork) execs this program as "leaf": new books
 *   leaf         allocates, frees, leaks
 *
 * "busy N": the root forks two children and all three allocate for about N
 * tenths of a second (usleep between rounds), long enough to detach from
 * them midway.
 *
 * Every process prints one line with a checksum of its work, so a run under
 * a tracer must print what an untraced run prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned long work(const char *who, int rounds, size_t base, int leak)
{
    unsigned long sum = 0;
    char *keep[64] = {0};
    for (int i = 0; i < rounds; i++) {
        size_t n = base + (size_t)(i * 7 % 50);
        char *p = malloc(n);
        memset(p, i & 0xff, n);
        sum += (unsigned char)p[n / 2] + n;
        if (i % 4 == 0)
            p = realloc(p, n * 2);
        if (i < leak && i < 64)
            keep[i] = p; /* leaked on purpose */
        else
            free(p);
    }
    char *s = strdup(who);
    sum += strlen(s);
    free(s);
    (void)keep;
    return sum;
}

static int run_leaf(void)
{
    printf("leaf: %lu\n", work("leaf", 40, 100, 3));
    return 0;
}

static int run_busy(int tenths)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    pid_t kids[2];
    const char *names[3] = {"busy child 1", "busy child 2", "busy root"};
    int me = 2;
    for (int k = 0; k < 2; k++) {
        kids[k] = fork();
        if (kids[k] == 0) {
            me = k;
            break;
        }
    }
    unsigned long sum = 0;
    for (int r = 0; r < tenths * 10; r++) {
        sum += work(names[me], 20, 8 + (size_t)me, 0);
        usleep(10000);
    }
    printf("%s: %lu\n", names[me], sum);
    if (me != 2)
        exit(0);
    for (int k = 0; k < 2; k++)
        waitpid(kids[k], NULL, 0);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "leaf") == 0)
        return run_leaf();
    if (argc > 2 && strcmp(argv[1], "busy") == 0)
        return run_busy(atoi(argv[2]));
    setvbuf(stdout, NULL, _IONBF, 0);
    char *inherited[3];
    for (int i = 0; i < 3; i++)
        inherited[i] = calloc(1, 64 + (size_t)i);

    pid_t a = fork();
    if (a == 0) {
        free(inherited[0]); /* a block the parent allocated: a correct free */
        unsigned long sum = work("child A", 60, 16, 2);
        pid_t c = fork();
        if (c == 0) {
            printf("grandchild C: %lu\n", work("grandchild C", 30, 300, 4));
            exit(0);
        }
        waitpid(c, NULL, 0);
        printf("child A: %lu\n", sum);
        exit(0);
    }
    pid_t b = vfork();
    if (b == 0) {
        execl(argv[0], argv[0], "leaf", (char *)NULL);
        _exit(127);
    }
    unsigned long sum = work("root", 80, 24, 5);
    int sa = 0, sb = 0;
    waitpid(a, &sa, 0);
    waitpid(b, &sb, 0);
    free(inherited[1]);
    printf("root: %lu, children %d %d\n", sum, WEXITSTATUS(sa), WEXITSTATUS(sb));
    return 0;
}
