/* The memtrace <-> memtrace-fs wire protocol (docs/protocol.md).
 *
 * Every frame is an 8-byte header (payload length u32, type u8, flags u8,
 * reserved u16; all big-endian) and a payload of at most WIRE_MAX_PAYLOAD
 * bytes.  Integers are big-endian whatever the host, so a 32-bit big-endian
 * board can talk to a 64-bit little-endian PC.  The target sends requests and
 * the server answers each one in order; there is one request in flight per
 * connection, so no request ids are needed. */
#ifndef MT_SHARED_WIRE_H
#define MT_SHARED_WIRE_H

#include "shared/byte_buf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WIRE_MAGIC 0x4d544653u /* "MTFS" */
#define WIRE_VERSION 1
#define WIRE_DEFAULT_PORT 3002

#define WIRE_HEADER_SIZE 8
#define WIRE_MAX_PAYLOAD (1024u * 1024u)
/* Largest read a client may ask for: its reply, even uncompressed, fits a frame. */
#define WIRE_MAX_READ (512u * 1024u)
#define WIRE_MAX_PATH 4096
#define WIRE_MAX_NAME 255
#define WIRE_MAX_BUILD_ID 64

enum wire_type {
    WIRE_HELLO = 0x01,
    WIRE_OPEN_PATH = 0x02,
    WIRE_OPEN_BUILD_ID = 0x03,
    WIRE_OPEN_DEBUGLINK = 0x04,
    WIRE_READ = 0x05,
    WIRE_CLOSE = 0x06,
    WIRE_OPENED = 0x82,  /* reply to any open */
    WIRE_DATA = 0x85,    /* reply to read */
    WIRE_CLOSED = 0x86,  /* reply to close */
    WIRE_ERROR = 0x7f,   /* reply to anything that failed */
};

/* Flag of WIRE_DATA: the data is a zlib stream of raw_len bytes. */
#define WIRE_FLAG_ZLIB 0x01

/* Error codes on the wire: fixed numbers, not the host's errno values. */
enum wire_error {
    WIRE_E_NOENT = 1,
    WIRE_E_ACCES = 2,
    WIRE_E_INVAL = 3,
    WIRE_E_IO = 4,
    WIRE_E_NOMEM = 5, /* too many handles or out of memory */
    WIRE_E_BADF = 6,
    WIRE_E_RANGE = 7,
    WIRE_E_PROTO = 8,
    WIRE_E_NAMETOOLONG = 9,
    WIRE_E_LOOP = 10,
};

int wire_error_from_errno(int err);
int wire_error_to_errno(uint32_t code);

/* A decoded frame.  Strings are copied and NUL-terminated; data points into
 * the payload it was decoded from. */
struct wire_msg {
    uint8_t type;
    uint8_t flags;
    /* hello */
    uint32_t magic;
    uint16_t version;
    char name[WIRE_MAX_NAME + 1];      /* hello: peer name; debuglink: file name */
    /* open */
    char path[WIRE_MAX_PATH + 1];      /* open path; debuglink: object path */
    uint8_t build_id[WIRE_MAX_BUILD_ID];
    uint8_t build_id_len;
    uint32_t crc;
    /* opened / read / close */
    uint32_t handle;
    uint64_t size;                     /* opened: file size */
    uint64_t offset;                   /* read */
    uint32_t length;                   /* read: bytes asked; data: raw bytes */
    const uint8_t *data;               /* data: payload bytes (maybe zlib) */
    uint32_t data_len;
    uint32_t error;                    /* error code */
    char message[WIRE_MAX_NAME + 1];   /* error: one line for humans */
};

/* Decodes a frame header.  Returns 0, or -1 when the length is over the limit. */
int wire_decode_header(const uint8_t hdr[WIRE_HEADER_SIZE], uint32_t *len, uint8_t *type,
                       uint8_t *flags);
/* Decodes one payload of the given type.  Returns 0, or -1 with a reason in
 * *why when anything is short, long, unknown or not terminated. */
int wire_decode(uint8_t type, uint8_t flags, const uint8_t *payload, size_t len,
                struct wire_msg *msg, const char **why);

/* The encoders write a frame, header and payload, into a byte_buf (its
 * len starts over at each frame; byte_buf_free releases it). */
/* Each starts a new frame in b (discarding what was there). */
void wire_encode_hello(struct byte_buf *b, const char *name);
void wire_encode_open_path(struct byte_buf *b, const char *path);
void wire_encode_open_build_id(struct byte_buf *b, const uint8_t *id, size_t len);
void wire_encode_open_debuglink(struct byte_buf *b, const char *obj_path, const char *name,
                                uint32_t crc);
void wire_encode_read(struct byte_buf *b, uint32_t handle, uint64_t offset, uint32_t length);
void wire_encode_close(struct byte_buf *b, uint32_t handle);
void wire_encode_opened(struct byte_buf *b, uint32_t handle, uint64_t size,
                        const uint8_t *build_id, size_t build_id_len);
/* Compresses data when that saves at least an eighth. */
void wire_encode_data(struct byte_buf *b, const uint8_t *data, uint32_t len);
void wire_encode_closed(struct byte_buf *b);
void wire_encode_error(struct byte_buf *b, uint32_t code, const char *message);

/* Unpacks a WIRE_DATA reply into out (exactly msg->length bytes, which the
 * caller checked against what it asked).  Returns 0 or -1. */
int wire_data_unpack(const struct wire_msg *msg, void *out, size_t out_len);

/* Socket I/O with a deadline on every operation; -1 with errno set (ETIMEDOUT
 * when the peer is silent, ECONNRESET when it closed, EMSGSIZE when a frame
 * is longer than cap, the caller's payload buffer). */
int wire_send(int fd, const struct byte_buf *b, int timeout_ms);
int wire_recv(int fd, uint8_t *payload, uint32_t cap, uint32_t *len, uint8_t *type,
              uint8_t *flags, int timeout_ms);

/* Convenience: hello exchange on a fresh connection.  Returns 0, or -1 with err. */
int wire_handshake(int fd, const char *my_name, char *peer_name, size_t peer_len,
                   int timeout_ms, char *err, size_t errlen);

/* "host", "host:port", "[v6]:port" -> host and port (default_port when none). */
int wire_split_host_port(const char *spec, char *host, size_t hostlen, uint16_t *port,
                         uint16_t default_port);

#endif
