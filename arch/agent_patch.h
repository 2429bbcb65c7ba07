/* The agent engine's entry patch (target/agent/agent_inject.c), written by
 * each CPU that has an agent: arch/x86_64_patch.c, arch/i386_patch.c,
 * arch/aarch64_patch.c.  A patched function's first instructions become a
 * jump to a stub in a scratch slot near its module; the stub passes the
 * function's index on to the agent's entry, and the out-of-line copy of
 * the instructions the jump replaced follows the stub in the slot. */
#ifndef MT_ARCH_AGENT_PATCH_H
#define MT_ARCH_AGENT_PATCH_H

#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)
#define ARCH_HAS_AGENT_PATCH 1
#endif

#define AGENT_PATCH_READ 32     /* bytes of the entry read: enough for every CPU */
#define AGENT_PATCH_MAX_COVER 16 /* at most this many bytes are replaced */

/* Bytes of the stub, before the copy in a slot. */
unsigned agent_patch_stub_len(void);
/* The entry must have at least this many readable bytes. */
unsigned agent_patch_min_len(void);

/* For the function at addr (code[0..avail) its first bytes), patched
 * through slot (bytes_cap bytes) with index idx to the agent's entry:
 * the stub then the copy into bytes, what replaces the entry's first
 * *covered bytes into jump (AGENT_PATCH_MAX_COVER bytes).  Returns the
 * copy's length, or 0 with a reason in *why (NULL: the slot is out of
 * the jump's reach). */
size_t agent_patch_build(const uint8_t *code, size_t avail, uint64_t addr, uint64_t slot, unsigned idx,
                         uint64_t entry, uint8_t *bytes, size_t bytes_cap, uint8_t *jump,
                         unsigned *covered, const char **why);

#endif
