#include "target/tracer/client_request_decode.h"

#include <errno.h>
#include <string.h>

int client_request_read(struct target_mem *mem, uint64_t addr, unsigned word,
                        struct client_request *out)
{
    uint8_t raw[6 * 8];
    if (word != 4 && word != 8)
        return -EINVAL;
    if (!addr || target_mem_read_partial(mem, addr, raw, 6 * word) != 6 * word)
        return -EFAULT;
    uint64_t v[6];
    for (unsigned i = 0; i < 6; i++) {
        if (word == 8) {
            memcpy(&v[i], raw + 8 * i, 8);
        } else {
            uint32_t w;
            memcpy(&w, raw + 4 * i, 4);
            v[i] = w;
        }
    }
    out->code = v[0];
    memcpy(out->arg, v + 1, sizeof(out->arg));
    return 0;
}

const char *client_request_name(uint64_t code)
{
    switch (code) {
    case CR_MALLOCLIKE_BLOCK: return "MALLOCLIKE_BLOCK";
    case CR_FREELIKE_BLOCK: return "FREELIKE_BLOCK";
    case CR_CREATE_MEMPOOL: return "CREATE_MEMPOOL";
    case CR_DESTROY_MEMPOOL: return "DESTROY_MEMPOOL";
    case CR_MEMPOOL_ALLOC: return "MEMPOOL_ALLOC";
    case CR_MEMPOOL_FREE: return "MEMPOOL_FREE";
    case CR_MEMPOOL_TRIM: return "MEMPOOL_TRIM";
    case CR_MOVE_MEMPOOL: return "MOVE_MEMPOOL";
    case CR_MEMPOOL_CHANGE: return "MEMPOOL_CHANGE";
    case CR_MEMPOOL_EXISTS: return "MEMPOOL_EXISTS";
    case CR_RESIZEINPLACE_BLOCK: return "RESIZEINPLACE_BLOCK";
    default: return NULL;
    }
}

const char *client_request_label(uint64_t code)
{
    const char *honoured = client_request_name(code);
    if (honoured)
        return honoured;
    /* valgrind.h's core requests, then memcheck.h's (tool base 'M','C') */
    switch (code) {
    case 0x1001: return "RUNNING_ON_VALGRIND";
    case 0x1002: return "DISCARD_TRANSLATIONS";
    case 0x1201: return "COUNT_ERRORS";
    case 0x1401: return "PRINTF";
    case 0x1402: return "PRINTF_BACKTRACE";
    case 0x1501: return "STACK_REGISTER";
    case 0x1502: return "STACK_DEREGISTER";
    case 0x1503: return "STACK_CHANGE";
    case 0x4d430000: return "MAKE_MEM_NOACCESS";
    case 0x4d430001: return "MAKE_MEM_UNDEFINED";
    case 0x4d430002: return "MAKE_MEM_DEFINED";
    case 0x4d430003: return "DISCARD";
    case 0x4d430004: return "CHECK_MEM_IS_ADDRESSABLE";
    case 0x4d430005: return "CHECK_MEM_IS_DEFINED";
    case 0x4d430006: return "DO_LEAK_CHECK";
    case 0x4d430007: return "COUNT_LEAKS";
    default: return NULL;
    }
}
