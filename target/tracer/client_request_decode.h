/* Valgrind's client requests as valgrind.h defines them: the request codes
 * memtrace honours, and the argument block a request site points to
 * (words of the target's size: the code, then five arguments). */
#ifndef MT_TRACER_CLIENT_REQUEST_DECODE_H
#define MT_TRACER_CLIENT_REQUEST_DECODE_H

#include <stdint.h>

#include "target/tracer/target_mem.h"

/* valgrind.h's Vg_ClientRequest values */
enum client_request_code {
    CR_MALLOCLIKE_BLOCK = 0x1301,    /* addr, size, redzone, zeroed */
    CR_FREELIKE_BLOCK = 0x1302,      /* addr, redzone */
    CR_CREATE_MEMPOOL = 0x1303,      /* pool, redzone, zeroed, flags */
    CR_DESTROY_MEMPOOL = 0x1304,     /* pool */
    CR_MEMPOOL_ALLOC = 0x1305,       /* pool, addr, size */
    CR_MEMPOOL_FREE = 0x1306,        /* pool, addr */
    CR_MEMPOOL_TRIM = 0x1307,        /* pool, addr, size */
    CR_MOVE_MEMPOOL = 0x1308,        /* from pool, to pool */
    CR_MEMPOOL_CHANGE = 0x1309,      /* pool, from addr, to addr, size */
    CR_MEMPOOL_EXISTS = 0x130a,      /* pool */
    CR_RESIZEINPLACE_BLOCK = 0x130b, /* addr, old size, new size, redzone */
};

struct client_request {
    uint64_t code;
    uint64_t arg[5];
};

/* Reads the block at addr (word: 4 or 8 bytes a word).  0, or -EFAULT
 * when it cannot be read whole (the request is then left alone). */
int client_request_read(struct target_mem *mem, uint64_t addr, unsigned word,
                        struct client_request *out);
/* valgrind.h's name of a request memtrace honours ("MALLOCLIKE_BLOCK"),
 * or NULL for every other (a no-op). */
const char *client_request_name(uint64_t code);
/* For the reader: the name of any request valgrind.h or memcheck.h makes
 * (RUNNING_ON_VALGRIND, MAKE_MEM_DEFINED...), honoured or not; NULL for
 * an unknown code. */
const char *client_request_label(uint64_t code);

#endif
