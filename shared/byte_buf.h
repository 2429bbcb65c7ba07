/* A growing byte buffer: what the wire encoder (shared/wire.c) and the
 * --record writer (target/record/record_write.c) build their output in.
 * Growth cannot fail silently (shared/xalloc.h). */
#ifndef MT_SHARED_BYTE_BUF_H
#define MT_SHARED_BYTE_BUF_H

#include <stddef.h>
#include <stdint.h>

struct byte_buf {
    uint8_t *data;
    size_t len, cap;
};

/* Room for `more` bytes after len; data may move. */
void byte_buf_reserve(struct byte_buf *b, size_t more);
void byte_buf_put(struct byte_buf *b, const void *p, size_t n);
void byte_buf_put_u8(struct byte_buf *b, uint8_t v);
void byte_buf_free(struct byte_buf *b);

#endif
