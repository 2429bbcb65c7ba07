/* Breakpoint placement (placement.c). */
#ifndef MT_TRACER_PLACEMENT_H
#define MT_TRACER_PLACEMENT_H

#include "target/tracer/tracee.h"

/* New modules (at attach, exec, and every dynamic-linker rendezvous): their
 * allocation functions get breakpoints, the executable's first; modules
 * gone lose theirs.  th is a stopped thread of t (a scratch page may be
 * mapped through it). */
void scan_modules(struct tracee *t, struct thread *th);

#endif
