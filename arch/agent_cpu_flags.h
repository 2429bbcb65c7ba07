/* The bits of agent_data.cpu_flags (target/agent/agent_abi.h): what the
 * tracer found out about the CPU and kernel (agent_cpu_ready) that the
 * payload must know.  A header of its own because the payloads, which
 * include nothing else of arch/, read them too. */
#ifndef MT_ARCH_AGENT_CPU_FLAGS_H
#define MT_ARCH_AGENT_CPU_FLAGS_H

/* x86_64: the kernel allows rdfsbase (FSGSBASE in AT_HWCAP2); without it
 * the payload reads the TCB's self pointer at %fs:0 instead. */
#define AGENT_CPU_RDFSBASE 1u

#endif
