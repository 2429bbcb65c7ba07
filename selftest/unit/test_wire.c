/* Wire protocol tests.
 *
 *   test_wire                      encode/decode round trips, truncations,
 *                                  limits, compression, address parsing
 *   test_wire client -c HOST:PORT  a scripted memtrace-fs client for the
 *   test_wire client -l ADDR:PORT  net_*.sh and fs_*.sh tests: one command per
 *                                  line on stdin, one result line on stdout
 *
 * Client commands:
 *   path ABS OUT | buildid HEX OUT | debuglink OBJ NAME CRCHEX OUT
 *       open, read the whole file in ranges of varied sizes, write it to OUT;
 *       prints "ok SIZE BUILDID" or "error ..."
 *   seq ABS OUT CHUNK   the same, front to back in CHUNK-byte reads
 *   hold ABS        keep ABS open;   readheld OUT   read it again (all of it)
 *   sleep MS        stats           prints the traffic counters
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shared/wire.h"
#include "target/net/remote.h"
#include "selftest/unit/test.h"

static struct wire_msg msg;

/* Decodes a whole encoded frame; returns the decode result. */
static int decode_frame(const struct byte_buf *b, const char **why)
{
    uint32_t len;
    uint8_t type, flags;
    if (b->len < WIRE_HEADER_SIZE || wire_decode_header(b->data, &len, &type, &flags) < 0 ||
        len != b->len - WIRE_HEADER_SIZE)
        return -2;
    return wire_decode(type, flags, b->data + WIRE_HEADER_SIZE, len, &msg, why);
}

/* Every strict prefix of a frame's payload must be refused, not crash. */
static void check_truncations(const struct byte_buf *b)
{
    uint8_t type = b->data[4], flags = b->data[5];
    size_t len = b->len - WIRE_HEADER_SIZE;
    for (size_t n = 0; n < len; n++) {
        uint8_t *copy = malloc(n ? n : 1); /* exact size: ASan sees overreads */
        memcpy(copy, b->data + WIRE_HEADER_SIZE, n);
        const char *why = NULL;
        int r = wire_decode(type, flags, copy, n, &msg, &why);
        if (type != WIRE_DATA || flags & WIRE_FLAG_ZLIB)
            CHECK(r < 0 || (type == WIRE_DATA));
        free(copy);
    }
    /* and a trailing byte too */
    uint8_t *longer = malloc(len + 1);
    memcpy(longer, b->data + WIRE_HEADER_SIZE, len);
    longer[len] = 0;
    const char *why = NULL;
    if (type != WIRE_DATA)
        CHECK(wire_decode(type, flags, longer, len + 1, &msg, &why) < 0);
    free(longer);
}

static void test_round_trips(void)
{
    struct byte_buf b = { 0 };
    const char *why = NULL;

    wire_encode_hello(&b, "memtrace on board");
    CHECK(decode_frame(&b, &why) == 0);
    CHECK(msg.magic == WIRE_MAGIC && msg.version == WIRE_VERSION);
    CHECK(strcmp(msg.name, "memtrace on board") == 0);
    /* Big-endian on the wire whatever the host: "MTFS" after the header. */
    CHECK(memcmp(b.data + WIRE_HEADER_SIZE, "MTFS", 4) == 0);
    check_truncations(&b);

    wire_encode_open_path(&b, "/lib/libc.so.6");
    CHECK(decode_frame(&b, &why) == 0 && strcmp(msg.path, "/lib/libc.so.6") == 0);
    check_truncations(&b);

    uint8_t id[20];
    for (int i = 0; i < 20; i++)
        id[i] = (uint8_t)(i * 13);
    wire_encode_open_build_id(&b, id, sizeof(id));
    CHECK(decode_frame(&b, &why) == 0 && msg.build_id_len == 20 &&
          memcmp(msg.build_id, id, 20) == 0);
    check_truncations(&b);

    wire_encode_open_debuglink(&b, "/usr/bin/prog", "prog.debug", 0xdeadbeef);
    CHECK(decode_frame(&b, &why) == 0 && strcmp(msg.path, "/usr/bin/prog") == 0 &&
          strcmp(msg.name, "prog.debug") == 0 && msg.crc == 0xdeadbeef);
    check_truncations(&b);

    wire_encode_read(&b, 7, 0x123456789abcull, 4096);
    CHECK(decode_frame(&b, &why) == 0 && msg.handle == 7 && msg.offset == 0x123456789abcull &&
          msg.length == 4096);
    check_truncations(&b);

    wire_encode_read(&b, 7, 0, WIRE_MAX_READ + 1);
    CHECK(decode_frame(&b, &why) < 0);

    wire_encode_close(&b, 3);
    CHECK(decode_frame(&b, &why) == 0 && msg.handle == 3);
    check_truncations(&b);

    wire_encode_opened(&b, 5, 1ull << 33, id, sizeof(id));
    CHECK(decode_frame(&b, &why) == 0 && msg.handle == 5 && msg.size == 1ull << 33 &&
          msg.build_id_len == 20 && memcmp(msg.build_id, id, 20) == 0);
    check_truncations(&b);

    wire_encode_error(&b, WIRE_E_ACCES, "outside the sysroot");
    CHECK(decode_frame(&b, &why) == 0 && msg.error == WIRE_E_ACCES &&
          strcmp(msg.message, "outside the sysroot") == 0);
    CHECK(wire_error_to_errno(msg.error) == EACCES);
    check_truncations(&b);

    wire_encode_closed(&b);
    CHECK(decode_frame(&b, &why) == 0 && msg.type == WIRE_CLOSED);

    /* Compressible data goes compressed and comes back the same. */
    static uint8_t text[100000], back[100000];
    for (size_t i = 0; i < sizeof(text); i++)
        text[i] = (uint8_t)("abcabcabd"[i % 9]);
    wire_encode_data(&b, text, sizeof(text));
    CHECK(b.data[5] & WIRE_FLAG_ZLIB);
    CHECK(b.len < sizeof(text) / 4);
    CHECK(decode_frame(&b, &why) == 0 && msg.length == sizeof(text));
    CHECK(wire_data_unpack(&msg, back, sizeof(back)) == 0 && memcmp(text, back, sizeof(text)) == 0);
    CHECK(wire_data_unpack(&msg, back, sizeof(back) - 1) < 0);
    check_truncations(&b);

    /* Random data does not pay: sent raw. */
    srand(1);
    for (size_t i = 0; i < 5000; i++)
        text[i] = (uint8_t)rand();
    wire_encode_data(&b, text, 5000);
    CHECK(!(b.data[5] & WIRE_FLAG_ZLIB));
    CHECK(decode_frame(&b, &why) == 0 && wire_data_unpack(&msg, back, 5000) == 0 &&
          memcmp(text, back, 5000) == 0);

    /* A lying zlib reply (claims more bytes than it holds) is refused. */
    memset(text, 'a', 300);
    wire_encode_data(&b, text, 300);
    CHECK(b.data[5] & WIRE_FLAG_ZLIB);
    b.data[WIRE_HEADER_SIZE + 3] ^= 1; /* raw length 300 -> 301 */
    CHECK(decode_frame(&b, &why) == 0 && wire_data_unpack(&msg, back, msg.length) < 0);

    /* Header limits and unknown types. */
    uint8_t hdr[8] = { 0x00, 0x10, 0x00, 0x01, WIRE_READ, 0, 0, 0 };
    uint32_t len;
    uint8_t type, flags;
    CHECK(wire_decode_header(hdr, &len, &type, &flags) < 0);
    CHECK(wire_decode(0x55, 0, (const uint8_t *)"", 0, &msg, &why) < 0);
    /* The reserved field must be 0 (docs/protocol.md). */
    uint8_t ok_hdr[8] = { 0, 0, 0, 4, WIRE_CLOSE, 0, 0, 0 };
    CHECK(wire_decode_header(ok_hdr, &len, &type, &flags) == 0 && len == 4);
    ok_hdr[7] = 1;
    CHECK(wire_decode_header(ok_hdr, &len, &type, &flags) < 0);
    ok_hdr[7] = 0;
    ok_hdr[6] = 0x80;
    CHECK(wire_decode_header(ok_hdr, &len, &type, &flags) < 0);
    /* Flags: only DATA's zlib bit exists. */
    uint8_t handle[4] = { 0, 0, 0, 1 };
    CHECK(wire_decode(WIRE_CLOSE, 0, handle, 4, &msg, &why) == 0);
    CHECK(wire_decode(WIRE_CLOSE, WIRE_FLAG_ZLIB, handle, 4, &msg, &why) < 0);
    CHECK(wire_decode(WIRE_CLOSE, 0x80, handle, 4, &msg, &why) < 0);
    uint8_t data[5] = { 0, 0, 0, 1, 'x' };
    CHECK(wire_decode(WIRE_DATA, 0, data, 5, &msg, &why) == 0);
    CHECK(wire_decode(WIRE_DATA, 0x02, data, 5, &msg, &why) < 0);

    /* A NUL inside a path is refused. */
    uint8_t bad[] = { 0, 5, '/', 'a', 0, 'b', 'c' };
    CHECK(wire_decode(WIRE_OPEN_PATH, 0, bad, sizeof(bad), &msg, &why) < 0);
    byte_buf_free(&b);
}

static void test_host_port(void)
{
    char host[64];
    uint16_t port;
    CHECK(wire_split_host_port("10.0.0.1", host, sizeof(host), &port, 3002) == 0 &&
          strcmp(host, "10.0.0.1") == 0 && port == 3002);
    CHECK(wire_split_host_port("box:4000", host, sizeof(host), &port, 3002) == 0 &&
          strcmp(host, "box") == 0 && port == 4000);
    CHECK(wire_split_host_port("[fe80::1%eth0]:5", host, sizeof(host), &port, 3002) == 0 &&
          strcmp(host, "fe80::1%eth0") == 0 && port == 5);
    CHECK(wire_split_host_port("fe80::1", host, sizeof(host), &port, 3002) == 0 &&
          strcmp(host, "fe80::1") == 0 && port == 3002);
    CHECK(wire_split_host_port("box:70000", host, sizeof(host), &port, 3002) < 0);
    CHECK(wire_split_host_port("box:", host, sizeof(host), &port, 3002) < 0);
    CHECK(wire_split_host_port(":1", host, sizeof(host), &port, 3002) < 0);
}

/* ---- client mode ---- */

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads all of src in ranges of varied sizes (small ones hit the cache, big
 * ones go around it) and writes it to out_path. */
static int read_all_to(struct byte_source *src, const char *out_path, char *err, size_t errlen)
{
    FILE *f = fopen(out_path, "wb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", out_path, strerror(errno));
        return -1;
    }
    static const size_t sizes[] = { 1, 100, 4096, 70000, 300000, 17, 65536, 200000 };
    static uint8_t buf[300000];
    uint64_t off = 0;
    int r = 0;
    for (int i = 0; off < src->size; i++) {
        size_t n = sizes[i % 8];
        if (n > src->size - off)
            n = (size_t)(src->size - off);
        r = byte_source_read(src, off, buf, n);
        if (r < 0) {
            snprintf(err, errlen, "read at %llu: %s", (unsigned long long)off, strerror(-r));
            break;
        }
        fwrite(buf, 1, n, f);
        off += n;
    }
    /* Reading past the end must be refused. */
    if (r == 0 && byte_source_read(src, src->size, buf, 1) != -ERANGE) {
        snprintf(err, errlen, "read past the end was not refused");
        r = -1;
    }
    fclose(f);
    return r < 0 ? -1 : 0;
}

/* Reads all of src front to back in chunks of one size. */
static int read_seq_to(struct byte_source *src, const char *out_path, size_t chunk, char *err,
                       size_t errlen)
{
    FILE *f = fopen(out_path, "wb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", out_path, strerror(errno));
        return -1;
    }
    uint8_t *buf = malloc(chunk);
    int r = 0;
    for (uint64_t off = 0; off < src->size && r == 0; off += chunk) {
        size_t n = src->size - off < chunk ? (size_t)(src->size - off) : chunk;
        r = byte_source_read(src, off, buf, n);
        if (r < 0)
            snprintf(err, errlen, "read at %llu: %s", (unsigned long long)off, strerror(-r));
        else
            fwrite(buf, 1, n, f);
    }
    free(buf);
    fclose(f);
    return r < 0 ? -1 : 0;
}

static size_t seq_chunk; /* 0: the mixed pattern of read_all_to */

static void print_result(struct byte_source *src, const char *out, long long start)
{
    char err[256];
    if (!src) {
        printf("error not found (%lld ms)\n", now_ms() - start);
        return;
    }
    int r = seq_chunk ? read_seq_to(src, out, seq_chunk, err, sizeof(err))
                      : read_all_to(src, out, err, sizeof(err));
    if (r < 0) {
        printf("error %s (%lld ms)\n", err, now_ms() - start);
        return;
    }
    uint8_t id[64];
    size_t n = remote_source_build_id(src, id, sizeof(id));
    printf("ok %llu ", (unsigned long long)src->size);
    for (size_t i = 0; i < n; i++)
        printf("%02x", id[i]);
    printf("%s\n", n ? "" : "-");
}

static int parse_hex(const char *hex, uint8_t *out, size_t max)
{
    size_t n = strlen(hex) / 2;
    if (n == 0 || n > max)
        return -1;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return -1;
        out[i] = (uint8_t)v;
    }
    return (int)n;
}

static int client_main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: test_wire client -c HOST:PORT | -l ADDR:PORT [TIMEOUT_MS]\n");
        return 2;
    }
    int timeout = argc > 4 ? atoi(argv[4]) : 3000;
    char err[256];
    struct file_provider *p =
        strcmp(argv[2], "-l") == 0 ? remote_provider_listen(argv[3], timeout, err, sizeof(err))
                                   : remote_provider_connect(argv[3], timeout, err, sizeof(err));
    if (!p) {
        printf("connect-error %s\n", err);
        return 3;
    }
    printf("connected %s\n", p->ops->name);
    fflush(stdout);
    struct byte_source *held = NULL;
    char line[8192];
    while (fgets(line, sizeof(line), stdin)) {
        char *w[6] = { 0 };
        int n = 0;
        for (char *tok = strtok(line, " \t\n"); tok && n < 6; tok = strtok(NULL, " \t\n"))
            w[n++] = tok;
        if (n == 0)
            continue;
        long long start = now_ms();
        const char *cmd = w[0], *a = w[1], *b = w[2], *c = w[3];
        if (n >= 3 && strcmp(cmd, "path") == 0) {
            struct byte_source *s = p->ops->open_path(p, a);
            print_result(s, b, start);
            byte_source_close(s);
        } else if (n >= 3 && strcmp(cmd, "buildid") == 0) {
            uint8_t id[64];
            int len = parse_hex(a, id, sizeof(id));
            struct byte_source *s = len > 0 ? p->ops->open_build_id(p, id, (size_t)len) : NULL;
            print_result(s, b, start);
            byte_source_close(s);
        } else if (n >= 5 && strcmp(cmd, "debuglink") == 0) {
            struct byte_source *s =
                p->ops->open_debuglink(p, a, b, (uint32_t)strtoul(c, NULL, 16));
            print_result(s, w[4], start);
            byte_source_close(s);
        } else if (n >= 4 && strcmp(cmd, "seq") == 0) {
            seq_chunk = strtoul(c, NULL, 0);
            struct byte_source *s = seq_chunk ? p->ops->open_path(p, a) : NULL;
            print_result(s, b, start);
            byte_source_close(s);
            seq_chunk = 0;
        } else if (n >= 2 && strcmp(cmd, "hold") == 0) {
            byte_source_close(held);
            held = p->ops->open_path(p, a);
            printf("%s\n", held ? "ok held" : "error not found");
        } else if (n >= 2 && strcmp(cmd, "readheld") == 0) {
            if (held)
                print_result(held, a, start);
            else
                printf("error nothing held\n");
        } else if (n >= 2 && strcmp(cmd, "sleep") == 0) {
            usleep((useconds_t)atoi(a) * 1000);
            printf("slept\n");
        } else if (strcmp(cmd, "stats") == 0) {
            struct remote_stats st;
            remote_provider_stats(p, &st);
            printf("stats requests=%llu sent=%llu received=%llu file_bytes=%llu reconnects=%llu\n",
                   (unsigned long long)st.requests, (unsigned long long)st.bytes_sent,
                   (unsigned long long)st.bytes_received, (unsigned long long)st.file_bytes,
                   (unsigned long long)st.reconnects);
        } else {
            printf("error bad command\n");
        }
        fflush(stdout);
    }
    byte_source_close(held);
    p->ops->destroy(p);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "client") == 0)
        return client_main(argc, argv);
    test_round_trips();
    test_host_port();
    return test_end("test_wire");
}
