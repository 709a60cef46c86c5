/* unz_buf.c — the sequential decoder's buffers: the input buffer (ib_*) and
 * the output items (unz_cur, unz_put_kind, unz_flush, unz_end_item), which
 * unz.c, its fast path (unz_fast.c) and its salvage (salvage.c) all use;
 * see unz_int.h.  Producer thread only. */
#include "unz_int.h"
#include "io.h"
#include "pool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- input buffer ---- */

/* Count the input read so far, beyond what is already counted. */
static void ib_progress(struct ibuf *b)
{
    if (b->total > b->prog_in) {
        prog_add(b->prog, PROG_IN, b->total - b->prog_in);
        b->prog_in = b->total;
    }
}

/* Read more after the unread bytes.  0 (maybe at EOF) or -1. */
int ib_fill(struct ibuf *b)
{
    if (b->eof || b->failed)
        return b->failed ? -1 : 0;
    size_t from = b->pos;
    if (b->keeping) {
        uint64_t start = b->total - b->len; /* input offset of buf[0] */
        uint64_t k = b->keep_abs > start ? b->keep_abs - start : 0;
        if (k < from)
            from = (size_t)k;
        if (b->pos - from > b->cap / 2)
            from = b->pos - b->cap / 2;
    }
    if (from > 0) {
        memmove(b->buf, b->buf + from, b->len - from);
        b->len -= from;
        b->pos -= from;
    }
    if (b->len == b->cap)
        return 0; /* full: the caller asked for more than a window holds */
    ssize_t r = io_read_once(b->fd, b->buf + b->len, b->cap - b->len);
    if (r < 0) {
        b->failed = true;
        sp_err_set(b->err, SP_ERR_READ, errno, "read error");
        return -1;
    }
    if (r == 0)
        b->eof = true;
    b->len += (size_t)r;
    b->total += (uint64_t)r;
    ib_progress(b);
    return 0;
}

int ib_fill_keep(struct ibuf *b, uint64_t from)
{
    bool keeping = b->keeping;
    uint64_t keep_abs = b->keep_abs;
    if (!keeping) {
        b->keeping = true;
        b->keep_abs = from;
    }
    int rc = ib_fill(b);
    b->keeping = keeping;
    b->keep_abs = keep_abs;
    return rc;
}

/* Make n (<= UNZ_IN) bytes available if the input has them; returns how many
 * are, or -1 on a read error. */
ssize_t ib_need(struct ibuf *b, size_t n)
{
    while (b->len - b->pos < n && !b->eof)
        if (ib_fill(b) != 0)
            return -1;
    return (ssize_t)(b->len - b->pos);
}

uint64_t ib_abs(const struct ibuf *b, size_t idx)
{
    return b->total - b->len + idx;
}

void ib_keep(struct ibuf *b, uint64_t abs)
{
    b->keeping = true;
    b->keep_abs = abs;
}

/* ---- output: items are output buffers and member ends ---- */

/* Append [off, off + len): merged into the last range when they touch or
 * overlap; len is cut to the end of the 64-bit space (UINT64_MAX - off is
 * "to an unknown end").  0, or -1 when memory is lacking. */
int unz_rl_add(struct unz_rl *l, uint64_t off, uint64_t len)
{
    if (len == 0)
        return 0;
    if (len > UINT64_MAX - off)
        len = UINT64_MAX - off;
    if (l->n > 0) {
        struct sp_range *last = &l->r[l->n - 1];
        uint64_t end = last->off + last->len;
        if (off <= end && off >= last->off) {
            if (off + len > end)
                last->len = off + len - last->off;
            return 0;
        }
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        struct sp_range *r = realloc(l->r, cap * sizeof *r);
        if (r == NULL)
            return -1;
        l->r = r;
        l->cap = cap;
    }
    l->r[l->n++] = (struct sp_range){off, len};
    return 0;
}

/* The current output buffer, taking a new item when needed; NULL to stop. */
struct unz_item *unz_cur(struct unz_ctx *c)
{
    if (c->cur != NULL)
        return c->cur;
    struct unz_item *it = pool_get(c->pool);
    if (it == NULL)
        return NULL;
    if (it->buf == NULL && (it->buf = malloc(UNZ_OUT)) == NULL) {
        sp_err_set(&c->perr, SP_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    it->kind = UNZ_DATA;
    it->len = 0;
    c->cur = it;
    return it;
}

void unz_flush(struct unz_ctx *c, enum unz_kind kind)
{
    if (c->cur == NULL)
        return;
    c->cur->kind = kind;
    pool_put(c->pool, c->cur, kind == UNZ_DATA);
    c->cur = NULL;
}

/* Output into pipeline items of that kind (DATA: a member's, its CRC
 * folded; RAW: not a gzip member's). */
int unz_put_kind(struct unz_ctx *c, const uint8_t *p, size_t n, enum unz_kind kind)
{
    while (n > 0) {
        struct unz_item *it = unz_cur(c);
        if (it == NULL)
            return -1;
        size_t k = n < UNZ_OUT - it->len ? n : UNZ_OUT - it->len;
        memcpy(it->buf + it->len, p, k);
        it->len += k;
        c->pout += k;
        p += k;
        n -= k;
        if (it->len == UNZ_OUT)
            unz_flush(c, kind);
    }
    return 0;
}

int unz_end_item(struct unz_ctx *c, uint32_t crc, uint32_t isize,
                 enum unz_check check)
{
    unz_flush(c, UNZ_DATA);
    struct unz_item *it = pool_get(c->pool);
    if (it == NULL)
        return -1;
    it->kind = UNZ_END;
    it->len = 0;
    it->want_crc = crc;
    it->want_isize = isize;
    it->check = check;
    pool_put(c->pool, it, false);
    return 0;
}

int unz_data_error(struct unz_ctx *c, const char *msg)
{
    sp_err_set(&c->perr, SP_ERR_DATA, 0, "%s", msg);
    return -1;
}
