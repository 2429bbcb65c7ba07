/* Encoding and bounds-checked decoding of wire frames (see wire.h). */
#include "shared/wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "shared/xalloc.h"

int wire_error_from_errno(int err)
{
    switch (err) {
    case ENOENT: case ENOTDIR: return WIRE_E_NOENT;
    case EACCES: case EPERM: case EXDEV: return WIRE_E_ACCES;
    case EINVAL: return WIRE_E_INVAL;
    case ENOMEM: case EMFILE: case ENFILE: return WIRE_E_NOMEM;
    case EBADF: return WIRE_E_BADF;
    case ERANGE: return WIRE_E_RANGE;
    case EPROTO: return WIRE_E_PROTO;
    case ENAMETOOLONG: return WIRE_E_NAMETOOLONG;
    case ELOOP: return WIRE_E_LOOP;
    default: return WIRE_E_IO;
    }
}

int wire_error_to_errno(uint32_t code)
{
    switch (code) {
    case WIRE_E_NOENT: return ENOENT;
    case WIRE_E_ACCES: return EACCES;
    case WIRE_E_INVAL: return EINVAL;
    case WIRE_E_NOMEM: return ENOMEM;
    case WIRE_E_BADF: return EBADF;
    case WIRE_E_RANGE: return ERANGE;
    case WIRE_E_PROTO: return EPROTO;
    case WIRE_E_NAMETOOLONG: return ENAMETOOLONG;
    case WIRE_E_LOOP: return ELOOP;
    default: return EIO;
    }
}

/* ---- decoding ---- */

struct reader {
    const uint8_t *p;
    size_t len, pos;
    const char *why; /* first failure */
};

static bool need(struct reader *r, size_t n, const char *what)
{
    if (r->why)
        return false;
    if (n > r->len - r->pos) {
        r->why = what;
        return false;
    }
    return true;
}

static uint8_t get_u8(struct reader *r, const char *what)
{
    if (!need(r, 1, what))
        return 0;
    return r->p[r->pos++];
}

static uint16_t get_u16(struct reader *r, const char *what)
{
    if (!need(r, 2, what))
        return 0;
    uint16_t v = (uint16_t)(r->p[r->pos] << 8 | r->p[r->pos + 1]);
    r->pos += 2;
    return v;
}

static uint32_t get_u32(struct reader *r, const char *what)
{
    if (!need(r, 4, what))
        return 0;
    const uint8_t *q = r->p + r->pos;
    r->pos += 4;
    return (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3];
}

static uint64_t get_u64(struct reader *r, const char *what)
{
    uint64_t hi = get_u32(r, what);
    uint64_t lo = get_u32(r, what);
    return hi << 32 | lo;
}

/* A u16-length-prefixed string without NUL bytes, copied into out[max+1]. */
static void get_string(struct reader *r, char *out, size_t max, const char *what)
{
    out[0] = 0;
    uint16_t n = get_u16(r, what);
    if (r->why)
        return;
    if (n > max) {
        r->why = "string too long";
        return;
    }
    if (!need(r, n, what))
        return;
    if (memchr(r->p + r->pos, 0, n)) {
        r->why = "NUL byte in string";
        return;
    }
    memcpy(out, r->p + r->pos, n);
    out[n] = 0;
    r->pos += n;
}

int wire_decode_header(const uint8_t hdr[WIRE_HEADER_SIZE], uint32_t *len, uint8_t *type,
                       uint8_t *flags)
{
    *len = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
    *type = hdr[4];
    *flags = hdr[5];
    /* The reserved field must be 0 (docs/protocol.md): a peer that sets it
     * speaks something else, and a later version may give it a meaning. */
    if (hdr[6] != 0 || hdr[7] != 0)
        return -1;
    return *len > WIRE_MAX_PAYLOAD ? -1 : 0;
}

int wire_decode(uint8_t type, uint8_t flags, const uint8_t *payload, size_t len,
                struct wire_msg *msg, const char **why)
{
    struct reader r = { .p = payload, .len = len };
    memset(msg, 0, offsetof(struct wire_msg, name));
    msg->name[0] = msg->path[0] = msg->message[0] = 0;
    msg->build_id_len = 0;
    msg->crc = msg->handle = msg->length = msg->data_len = msg->error = 0;
    msg->size = msg->offset = 0;
    msg->data = NULL;
    msg->type = type;
    msg->flags = flags;
    if (len > WIRE_MAX_PAYLOAD) {
        *why = "frame too long";
        return -1;
    }
    /* Only DATA has a flag (zlib); every other bit must be 0. */
    if (flags & ~(type == WIRE_DATA ? WIRE_FLAG_ZLIB : 0)) {
        *why = "unknown flag bits";
        return -1;
    }
    switch (type) {
    case WIRE_HELLO:
        msg->magic = get_u32(&r, "hello magic");
        msg->version = get_u16(&r, "hello version");
        get_string(&r, msg->name, WIRE_MAX_NAME, "hello name");
        break;
    case WIRE_OPEN_PATH:
        get_string(&r, msg->path, WIRE_MAX_PATH, "path");
        break;
    case WIRE_OPEN_BUILD_ID:
        msg->build_id_len = get_u8(&r, "build-id length");
        if (!r.why && (msg->build_id_len == 0 || msg->build_id_len > WIRE_MAX_BUILD_ID))
            r.why = "bad build-id length";
        if (need(&r, msg->build_id_len, "build-id")) {
            memcpy(msg->build_id, r.p + r.pos, msg->build_id_len);
            r.pos += msg->build_id_len;
        }
        break;
    case WIRE_OPEN_DEBUGLINK:
        get_string(&r, msg->path, WIRE_MAX_PATH, "object path");
        get_string(&r, msg->name, WIRE_MAX_NAME, "debuglink name");
        msg->crc = get_u32(&r, "crc");
        break;
    case WIRE_READ:
        msg->handle = get_u32(&r, "handle");
        msg->offset = get_u64(&r, "offset");
        msg->length = get_u32(&r, "length");
        if (!r.why && msg->length > WIRE_MAX_READ)
            r.why = "read too long";
        break;
    case WIRE_CLOSE:
        msg->handle = get_u32(&r, "handle");
        break;
    case WIRE_OPENED:
        msg->handle = get_u32(&r, "handle");
        msg->size = get_u64(&r, "size");
        msg->build_id_len = get_u8(&r, "build-id length");
        if (!r.why && msg->build_id_len > WIRE_MAX_BUILD_ID)
            r.why = "bad build-id length";
        if (need(&r, msg->build_id_len, "build-id")) {
            memcpy(msg->build_id, r.p + r.pos, msg->build_id_len);
            r.pos += msg->build_id_len;
        }
        break;
    case WIRE_DATA:
        msg->length = get_u32(&r, "data length");
        if (!r.why && msg->length > WIRE_MAX_READ)
            r.why = "data too long";
        if (!r.why) {
            msg->data = r.p + r.pos;
            msg->data_len = (uint32_t)(r.len - r.pos);
            r.pos = r.len;
            if (!(flags & WIRE_FLAG_ZLIB) && msg->data_len != msg->length)
                r.why = "data length mismatch";
        }
        break;
    case WIRE_CLOSED:
        break;
    case WIRE_ERROR:
        msg->error = get_u32(&r, "error code");
        get_string(&r, msg->message, WIRE_MAX_NAME, "error message");
        break;
    default:
        r.why = "unknown frame type";
    }
    if (!r.why && r.pos != r.len)
        r.why = "trailing bytes in frame";
    if (r.why) {
        *why = r.why;
        return -1;
    }
    return 0;
}

int wire_data_unpack(const struct wire_msg *msg, void *out, size_t out_len)
{
    if (msg->type != WIRE_DATA || msg->length != out_len)
        return -1;
    if (!(msg->flags & WIRE_FLAG_ZLIB)) {
        if (msg->data_len != out_len)
            return -1;
        memcpy(out, msg->data, out_len);
        return 0;
    }
    uLongf got = (uLongf)out_len;
    if (uncompress(out, &got, msg->data, msg->data_len) != Z_OK || got != out_len)
        return -1;
    return 0;
}

/* ---- encoding ---- */

static void put_u16(struct byte_buf *b, uint16_t v)
{
    byte_buf_put_u8(b, (uint8_t)(v >> 8));
    byte_buf_put_u8(b, (uint8_t)v);
}

static void put_u32(struct byte_buf *b, uint32_t v)
{
    put_u16(b, (uint16_t)(v >> 16));
    put_u16(b, (uint16_t)v);
}

static void put_u64(struct byte_buf *b, uint64_t v)
{
    put_u32(b, (uint32_t)(v >> 32));
    put_u32(b, (uint32_t)v);
}

/* Strings longer than the receiver accepts are cut: it would refuse them anyway. */
static void put_string(struct byte_buf *b, const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n > max)
        n = max;
    put_u16(b, (uint16_t)n);
    byte_buf_put(b, s, n);
}

static void begin(struct byte_buf *b, uint8_t type, uint8_t flags)
{
    b->len = 0;
    put_u32(b, 0);
    byte_buf_put_u8(b, type);
    byte_buf_put_u8(b, flags);
    put_u16(b, 0);
}

static void finish(struct byte_buf *b)
{
    uint32_t n = (uint32_t)(b->len - WIRE_HEADER_SIZE);
    b->data[0] = (uint8_t)(n >> 24);
    b->data[1] = (uint8_t)(n >> 16);
    b->data[2] = (uint8_t)(n >> 8);
    b->data[3] = (uint8_t)n;
}

void wire_encode_hello(struct byte_buf *b, const char *name)
{
    begin(b, WIRE_HELLO, 0);
    put_u32(b, WIRE_MAGIC);
    put_u16(b, WIRE_VERSION);
    put_string(b, name, WIRE_MAX_NAME);
    finish(b);
}

void wire_encode_open_path(struct byte_buf *b, const char *path)
{
    begin(b, WIRE_OPEN_PATH, 0);
    put_string(b, path, WIRE_MAX_PATH);
    finish(b);
}

void wire_encode_open_build_id(struct byte_buf *b, const uint8_t *id, size_t len)
{
    if (len > WIRE_MAX_BUILD_ID)
        len = WIRE_MAX_BUILD_ID;
    begin(b, WIRE_OPEN_BUILD_ID, 0);
    byte_buf_put_u8(b, (uint8_t)len);
    byte_buf_put(b, id, len);
    finish(b);
}

void wire_encode_open_debuglink(struct byte_buf *b, const char *obj_path, const char *name,
                                uint32_t crc)
{
    begin(b, WIRE_OPEN_DEBUGLINK, 0);
    put_string(b, obj_path, WIRE_MAX_PATH);
    put_string(b, name, WIRE_MAX_NAME);
    put_u32(b, crc);
    finish(b);
}

void wire_encode_read(struct byte_buf *b, uint32_t handle, uint64_t offset, uint32_t length)
{
    begin(b, WIRE_READ, 0);
    put_u32(b, handle);
    put_u64(b, offset);
    put_u32(b, length);
    finish(b);
}

void wire_encode_close(struct byte_buf *b, uint32_t handle)
{
    begin(b, WIRE_CLOSE, 0);
    put_u32(b, handle);
    finish(b);
}

void wire_encode_opened(struct byte_buf *b, uint32_t handle, uint64_t size,
                        const uint8_t *build_id, size_t build_id_len)
{
    if (build_id_len > WIRE_MAX_BUILD_ID)
        build_id_len = 0;
    begin(b, WIRE_OPENED, 0);
    put_u32(b, handle);
    put_u64(b, size);
    byte_buf_put_u8(b, (uint8_t)build_id_len);
    byte_buf_put(b, build_id, build_id_len);
    finish(b);
}

void wire_encode_data(struct byte_buf *b, const uint8_t *data, uint32_t len)
{
    if (len > WIRE_MAX_READ)
        len = WIRE_MAX_READ;
    /* Small replies are not worth a deflate stream header. */
    if (len >= 256) {
        uLongf bound = compressBound(len);
        begin(b, WIRE_DATA, WIRE_FLAG_ZLIB);
        put_u32(b, len);
        byte_buf_reserve(b, bound);
        uLongf out = bound;
        if (compress2(b->data + b->len, &out, data, len, Z_BEST_SPEED) == Z_OK &&
            out < len - len / 8) {
            b->len += out;
            finish(b);
            return;
        }
    }
    begin(b, WIRE_DATA, 0);
    put_u32(b, len);
    byte_buf_put(b, data, len);
    finish(b);
}

void wire_encode_closed(struct byte_buf *b)
{
    begin(b, WIRE_CLOSED, 0);
    finish(b);
}

void wire_encode_error(struct byte_buf *b, uint32_t code, const char *message)
{
    begin(b, WIRE_ERROR, 0);
    put_u32(b, code);
    put_string(b, message ? message : "", WIRE_MAX_NAME);
    finish(b);
}
