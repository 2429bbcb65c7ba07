/* Allocations that glibc makes inside itself, kept until exit, for
 * comparing memtrace's stacks through libc's internal functions with gdb's
 * backtraces: stdout's buffer (puts -> _IO_file_xsputn -> _IO_file_overflow
 * -> _IO_doallocbuf -> _IO_file_doallocate), a FILE and its read buffer
 * (fopen -> __fopen_internal; fgets -> _IO_getline -> __uflow), a directory
 * stream (opendir -> __alloc_dir, a hidden function), the environment
 * (setenv -> __add_to_environ, tsearch) and strdup.  (No temporaries: gdb
 * sees every allocation, memtrace's report lists the blocks in use.)  Debian's armhf glibc has unwind tables for few of these: the
 * board tests trace this with and without libc's debug file (.debug_frame;
 * else .ARM.exidx and prologue analysis). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    puts("stacks_libc");
    char line[128] = "none";
    FILE *f = fopen("/proc/self/status", "r");
    if (f && !fgets(line, sizeof(line), f))
        strcpy(line, "empty");
    DIR *d = opendir("/proc/self");
    setenv("MT_STACKS_LIBC", "1", 1);
    char *s = strdup(line);
    printf("%s %s", d ? "dir" : "nodir", s ? s : "");
    /* f, d and s stay open and allocated: the report lists blocks in use. */
    return 0;
}
