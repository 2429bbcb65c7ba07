/* Keeps a block and exits with status 7, or dies of SIGSEGV with "segv":
 * memtrace must hand either end back as its own exit status. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    void *p = malloc(64);
    printf("exit_status: %p kept\n", p != NULL ? (void *)1 : NULL);
    fflush(stdout);
    if (argc > 1)
        raise(SIGSEGV);
    return 7;
}
