/* Whether a process runs code of the CPU this memtrace was built for.  A
 * 64-bit memtrace would read a 32-bit process's registers, arguments and
 * stack words with the wrong layout (and a 32-bit one a 64-bit process's
 * not at all), so such a process is refused with a one-line reason. */
#ifndef MT_TRACER_EXE_CLASS_H
#define MT_TRACER_EXE_CLASS_H

#include <stddef.h>
#include <sys/types.h>

/* 0 when /proc/PID/exe is an ELF object of our word size and CPU (or cannot
 * be read: the caller's own errors then say why); -1 with the reason in
 * err otherwise. */
int exe_class_check(pid_t pid, char *err, size_t errlen);

#endif
