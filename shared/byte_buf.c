#include "shared/byte_buf.h"

#include "shared/log.h"
#include "shared/xalloc.h"

#include <stdlib.h>
#include <string.h>

void byte_buf_reserve(struct byte_buf *b, size_t more)
{
    if (b->cap - b->len >= more)
        return;
    if (more > SIZE_MAX / 2 - b->len) {
        mt_error("a buffer of %zu + %zu bytes is too large", b->len, more);
        exit(1);
    }
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < more)
        cap *= 2;
    b->data = xrealloc(b->data, cap);
    b->cap = cap;
}

void byte_buf_put(struct byte_buf *b, const void *p, size_t n)
{
    if (!n)
        return;
    byte_buf_reserve(b, n);
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void byte_buf_put_u8(struct byte_buf *b, uint8_t v)
{
    byte_buf_reserve(b, 1);
    b->data[b->len++] = v;
}

void byte_buf_free(struct byte_buf *b)
{
    free(b->data);
    *b = (struct byte_buf){ 0 };
}
