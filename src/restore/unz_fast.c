/* unz_fast.c — a gzip member's deflate stream through ISA-L's inflate, with
 * GNU gzip's verdict kept (see unz_int.h, "the fast path").
 *
 * ISA-L and zlib decode every valid stream to the same bytes, but they part
 * on invalid ones: ISA-L builds Huffman tables from code lengths zlib
 * refuses (an incomplete or over-full literal/length set, a repeat past the
 * lengths' end) and fails later or not at all, and on a few cut streams it
 * says "invalid" where zlib (and gzip) say "unexpected end of file".  So
 * ISA-L decodes until it stops; when it stops anywhere but at the stream's
 * end, the member is decoded again by zlib from its first byte (the input
 * is seekable: this path is used for files and devices only), which gives
 * gzip's message and gzip's output up to the error.  The bytes ISA-L made
 * in the last two items are not out yet (the held item, and the current
 * one), so unless ISA-L went on more than one item (1 MiB) past the point
 * where zlib stops, the output is gzip's to the byte.  (The pool takes
 * items in turn only, so the held bytes sit in a buffer of the producer's
 * own that trades places with the items' buffers.)  doc/DESIGN.md section 9,
 * "Restoring foreign files: which inflater", gives the reasons; its
 * appendix A.9 the measurements.
 *
 * Runs on the producer thread only, as the rest of unz.c.
 */
#include "config.h"
#include "unz_int.h"
#include "pool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HAVE_ISAL
#include <isa-l/igzip_lib.h>

struct unz_fast {
    struct inflate_state st;
    off_t base; /* the descriptor's offset of input byte 0 */
};

struct unz_fast *unz_fast_open(struct unz_ctx *c, int fd)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !(S_ISREG(sb.st_mode) || S_ISBLK(sb.st_mode)))
        return NULL;
    off_t at = lseek(fd, 0, SEEK_CUR);
    if (at < 0)
        return NULL;
    struct unz_fast *f = calloc(1, sizeof *f); /* every field defined before ISA-L reads it */
    if (f == NULL || (c->held_buf = malloc(UNZ_OUT)) == NULL) {
        free(f);
        return NULL; /* memory: the zlib path, which needs none of this */
    }
    f->base = at;
    c->held_len = 0;
    return f;
}

void unz_fast_close(struct unz_ctx *c)
{
    free(c->fast);
    free(c->held_buf);
    c->fast = NULL;
    c->held_buf = NULL;
}

/* Copy the member's output bytes [at, at + n) into gzip's window, where
 * byte i of a member sits at place i mod 32 KiB. */
static void win_put(uint8_t *win, uint64_t at, const uint8_t *p, size_t n)
{
    while (n > 0) {
        size_t i = (size_t)(at % UNZ_WIN), k = UNZ_WIN - i < n ? UNZ_WIN - i : n;
        memcpy(win + i, p, k);
        at += k;
        p += k;
        n -= k;
    }
}

/* Holding back one item: c->held_len bytes in c->held_buf. */

/* The current item is full: its bytes are held, and the bytes held before
 * (if any) go out in it. */
static void fast_hold(struct unz_ctx *c)
{
    struct unz_item *it = c->cur;
    uint8_t *full = it->buf;
    it->buf = c->held_buf;
    it->len = c->held_len;
    c->held_buf = full;
    c->held_len = UNZ_OUT;
    if (it->len > 0) {
        pool_put(c->pool, it, true);
        c->cur = NULL;
    } /* else it stays current, its buffer the empty spare */
}

int unz_fast_flush(struct unz_ctx *c)
{
    if (c->held_len == 0)
        return 0;
    struct unz_item *it = unz_cur(c);
    if (it == NULL)
        return -1;
    /* the held bytes go out first, in the current item; what that item
     * had becomes the held bytes, then the current item of a new one */
    uint8_t *had = it->buf;
    size_t had_len = it->len;
    it->buf = c->held_buf;
    it->len = c->held_len;
    c->held_buf = had;
    c->held_len = had_len;
    pool_put(c->pool, it, true);
    c->cur = NULL;
    if (had_len == 0)
        return 0;
    if ((it = unz_cur(c)) == NULL)
        return -1;
    had = it->buf;
    it->buf = c->held_buf;
    it->len = c->held_len;
    c->held_buf = had;
    c->held_len = 0;
    return 0;
}

/* At the member's end (mlen bytes): its last min(mlen, 32 KiB) bytes are
 * in the current item and, before them, at the end of the held ones. */
static void fast_window(struct unz_ctx *c, uint64_t mlen)
{
    size_t n = mlen < UNZ_WIN ? (size_t)mlen : UNZ_WIN;
    size_t in_cur = c->cur != NULL ? c->cur->len : 0, a = in_cur < n ? in_cur : n;
    if (n > a && c->held_len >= n - a)
        win_put(c->win, mlen - n, c->held_buf + c->held_len - (n - a), n - a);
    if (a > 0)
        win_put(c->win, mlen - a, c->cur->buf + in_cur - a, a);
}

/* Refill b keeping the last 8 bytes read: ISA-L's bit buffer may hold that
 * many bytes past the stream's end, given back when it ends. */
static int fast_fill(struct ibuf *b)
{
    uint64_t at = b->total - (b->len - b->pos);
    return ib_fill_keep(b, at >= 8 ? at - 8 : 0);
}

/* ISA-L stopped short: drop what it made and is not out yet, and put the
 * input back at the member's deflate data for zlib. */
static int fast_refused(struct unz_ctx *c, struct ibuf *b, uint64_t data_at,
                        uint64_t mlen, uint64_t *done)
{
    uint64_t pending = (c->cur != NULL ? c->cur->len : 0) + c->held_len;
    if (c->cur != NULL)
        c->cur->len = 0;
    c->held_len = 0;
    c->pout -= pending;
    *done = mlen - pending;
    if (lseek(b->fd, c->fast->base + (off_t)data_at, SEEK_SET) < 0) {
        sp_err_set(&c->perr, SP_ERR_READ, errno, "read error");
        return -1;
    }
    b->pos = b->len = 0;
    b->eof = false;
    b->total = data_at;
    return 1;
}

int unz_fast_member(struct unz_ctx *c, struct ibuf *b, uint64_t *done)
{
    struct inflate_state *s = &c->fast->st;
    uint64_t data_at = b->total - (b->len - b->pos), mlen = 0;
    isal_inflate_reset(s);
    s->crc_flag = ISAL_DEFLATE; /* the workers compute the CRC-32 */
    s->hist_bits = 0;
    /* gzip's window, as the zlib path gives it (unz.c, unz_inflate) */
    if (isal_inflate_set_dict(s, c->win, UNZ_WIN) != ISAL_DECOMP_OK)
        return fast_refused(c, b, data_at, mlen, done);
    /* Input is read when ISA-L has used it all (or made nothing of what it
     * has) and is not merely out of room for what it decoded. */
    bool out_full = false, stalled = false;
    for (;;) {
        if ((b->pos == b->len && !out_full) || stalled) {
            size_t had = b->len - b->pos;
            if (fast_fill(b) != 0)
                return -1;
            if (b->len - b->pos == had) /* cut short: zlib says how */
                return fast_refused(c, b, data_at, mlen, done);
        }
        struct unz_item *it = unz_cur(c);
        if (it == NULL)
            return -1;
        size_t in = b->len - b->pos, room = UNZ_OUT - it->len;
        s->next_in = b->buf + b->pos;
        s->avail_in = (uint32_t)in;
        s->next_out = it->buf + it->len;
        s->avail_out = (uint32_t)room;
        int rc = isal_inflate(s);
        b->pos += in - s->avail_in;
        size_t made = room - s->avail_out;
        out_full = s->avail_out == 0;
        stalled = !out_full && made == 0 && s->avail_in == in;
        it->len += made;
        c->pout += made;
        mlen += made;
        if (rc != ISAL_DECOMP_OK)
            return fast_refused(c, b, data_at, mlen, done);
        if (s->block_state == ISAL_BLOCK_FINISH) {
            /* whole bytes left in the bit buffer are the trailer's */
            size_t back = (size_t)(s->read_in_length > 0 ? s->read_in_length / 8 : 0);
            if (s->tmp_in_size != 0 || back > b->pos)
                return fast_refused(c, b, data_at, mlen, done);
            /* Nothing decoded: the trailer cannot vouch for it (the CRC-32
             * and length of nothing are eight zero bytes, as common in a
             * damaged file as anywhere), so a code ISA-L takes and gzip
             * refuses would pass.  zlib decides: such a member is short. */
            if (mlen == 0)
                return fast_refused(c, b, data_at, mlen, done) == 1 ? 2 : -1;
            b->pos -= back;
            fast_window(c, mlen);
            return unz_fast_flush(c);
        }
        if (it->len == UNZ_OUT) /* full: it waits one item before going out */
            fast_hold(c);
    }
}

#else /* without ISA-L: always the zlib path */

struct unz_fast *unz_fast_open(struct unz_ctx *c, int fd)
{
    (void)c;
    (void)fd;
    return NULL;
}

void unz_fast_close(struct unz_ctx *c) { (void)c; }

int unz_fast_flush(struct unz_ctx *c)
{
    (void)c;
    return 0;
}

int unz_fast_member(struct unz_ctx *c, struct ibuf *b, uint64_t *done)
{
    (void)c;
    (void)b;
    *done = 0;
    return -1;
}

#endif
