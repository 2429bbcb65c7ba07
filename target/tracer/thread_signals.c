/* A thread that executed one of our breakpoint instructions a moment before
 * PTRACE_INTERRUPT reaches it reports the interrupt stop first: the SIGTRAP
 * stays queued behind it, and a detach at that point would hand the trap to
 * a program with no tracer, killing it.  The detach asks here first. */
#include "target/tracer/thread_signals.h"

#include <stdio.h>
#include <string.h>

bool thread_signal_pending(pid_t tid, int sig)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    unsigned long long mask = 0;
    bool found = false;
    /* SigPnd is the thread's own queue; ShdPnd the process's shared one. */
    while (!found && fgets(line, sizeof(line), f))
        found = sscanf(line, "SigPnd: %llx", &mask) == 1;
    fclose(f);
    return found && sig >= 1 && sig <= 64 && (mask >> (sig - 1)) & 1;
}
