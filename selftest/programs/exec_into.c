/* Allocates, then replaces itself with the program named on the command
 * line: the tracer's books restart for the new image. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    static void *keep[5];
    for (int i = 0; i < 5; i++)
        keep[i] = malloc(1000);
    printf("exec_into: %p\n", keep[4]);
    fflush(stdout);
    if (argc < 2)
        return 0;
    execv(argv[1], argv + 1);
    perror("execv");
    return 127;
}
