/* Calls made by exit handlers, and the moment of the leak scan at exit.
 *
 * An atexit handler closes a stdio stream (libc frees the FILE: a free
 * made inside libc), frees a block of main's, duplicates a string inside
 * libc (strdup) and allocates a block of its own.  All of it counts, under
 * either engine, as valgrind counts it.  The scan at exit (-a) runs when
 * exit() is called, before the handler: then the FILE and main's block
 * are in use, the handler's blocks not yet. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *g_file;
static void *g_keep;
static char *g_name;

static void bye(void)
{
    fclose(g_file);
    free(g_keep);
    g_keep = malloc(77);
    g_name = strdup("exit handler");
}

int main(void)
{
    g_file = fopen("/proc/self/stat", "r");
    if (!g_file)
        return 1;
    g_keep = malloc(33);
    if (atexit(bye) != 0)
        return 1;
    exit(0);
}
