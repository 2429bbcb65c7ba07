/* Allocates through libreplaced.so before and after the file is replaced
 * on disk (the test renames another build over it between "ready" and
 * "go"). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void *lib_alloc(int n);

int main(void)
{
    void *a = lib_alloc(100);
    FILE *f = fopen("ready", "w");
    if (f)
        fclose(f);
    while (access("go", F_OK) != 0)
        usleep(10000);
    void *b = lib_alloc(200);
    printf("%p %p\n", a, b);
    return 0;
}
