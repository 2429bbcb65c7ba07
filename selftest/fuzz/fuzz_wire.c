/* libFuzzer target for the wire protocol decoder.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. -D_GNU_SOURCE \
 *       selftest/fuzz/fuzz_wire.c shared/wire.c shared/xalloc.c shared/log.c shared/text_escape.c -lz -o fuzz_wire
 *   ./fuzz_wire -max_len=4096 selftest/fuzz/seeds/wire
 *
 * The input is one frame as it arrives from the network: header, then
 * payload.  Everything a peer does with a frame is done: header limits,
 * decoding of whatever type it claims, and unpacking of data replies
 * (zlib included) into a buffer of exactly the announced size. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct wire_msg msg;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < WIRE_HEADER_SIZE)
        return 0;
    uint32_t len;
    uint8_t type, flags;
    if (wire_decode_header(data, &len, &type, &flags) < 0)
        return 0;
    /* The payload is what follows, whatever the header claims: a decoder
     * must never trust len beyond the bytes it really has. */
    size_t have = size - WIRE_HEADER_SIZE;
    if (len < have)
        have = len;
    uint8_t *payload = malloc(have ? have : 1);
    memcpy(payload, data + WIRE_HEADER_SIZE, have);
    const char *why = NULL;
    if (wire_decode(type, flags, payload, have, &msg, &why) == 0) {
        if (type == WIRE_DATA) {
            uint8_t *out = malloc(msg.length ? msg.length : 1);
            if (wire_data_unpack(&msg, out, msg.length) == 0 && msg.length && !(flags & 1))
                if (memcmp(out, msg.data, msg.length) != 0)
                    abort();
            free(out);
        }
        if (type == WIRE_OPEN_PATH && (strlen(msg.path) > WIRE_MAX_PATH))
            abort();
        /* What decodes must encode back to the same payload. */
        struct byte_buf b = { 0 };
        int check = 1;
        switch (type) {
        case WIRE_OPEN_PATH: wire_encode_open_path(&b, msg.path); break;
        case WIRE_READ: wire_encode_read(&b, msg.handle, msg.offset, msg.length); break;
        case WIRE_CLOSE: wire_encode_close(&b, msg.handle); break;
        case WIRE_OPEN_DEBUGLINK: wire_encode_open_debuglink(&b, msg.path, msg.name, msg.crc); break;
        default: check = 0;
        }
        if (check && (b.len != have + WIRE_HEADER_SIZE ||
                      memcmp(b.data + WIRE_HEADER_SIZE, payload, have) != 0))
            abort();
        byte_buf_free(&b);
    }
    free(payload);
    return 0;
}
