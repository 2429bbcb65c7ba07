/* libFuzzer target for the mDNS response parser.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. -D_GNU_SOURCE \
 *       selftest/fuzz/fuzz_mdns.c target/net/mdns_parse.c -o fuzz_mdns
 *   ./fuzz_mdns -max_len=1500 selftest/fuzz/seeds/mdns
 *
 * The input is a UDP payload as a responder (or anyone on the link) could
 * send it.  It is parsed as a response to the id it carries, resolved as
 * mdns_discover would, and every offset is tried as the start of a name. */
#include <stdint.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>

#include "target/net/mdns_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct mdns_table table;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *pkt = malloc(size ? size : 1); /* exact size: overreads are caught */
    memcpy(pkt, data, size);
    uint16_t id = size >= 2 ? (uint16_t)(pkt[0] << 8 | pkt[1]) : 0;
    table.count = 0;
    const struct mdns_peer from = { .family = AF_INET6, .addr = { 0xfe, 0x80, [15] = 1 },
                                    .scope_id = 1 };
    if (mdns_parse_response(pkt, size, id, &from, &table) >= 0) {
        char hp[64];
        const char *ns, *na;
        mdns_resolve(&table, "_memtrace-fs._tcp.local", hp, sizeof(hp), &ns, &na);
        if (ns && strlen(ns) >= MDNS_NAME_MAX)
            abort();
    }
    char name[MDNS_NAME_MAX];
    for (size_t off = 0; off < size && off < 64; off++) {
        size_t pos = off;
        if (mdns_read_name(pkt, size, &pos, name, sizeof(name)) == 0 &&
            (pos > size || strlen(name) >= sizeof(name)))
            abort();
    }
    free(pkt);
    return 0;
}
