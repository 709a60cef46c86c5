/* unz.c — see unz.h. */
#include "config.h"
#include "unz.h"
#include "pipe.h"
#include "unz_int.h"
#include "crcz.h"
#include "engine.h"
#include "legacy.h"
#include "pool.h"
#include "resync.h"
#include "le.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define UNZ_WAKE_BATCH 4    /* items put per worker wake-up, ISA-L's path */

/* ---- input a byte at a time (headers, pack, LZW) ---- */

static int ib_getc(void *ctx)
{
    struct ibuf *b = ctx;
    ssize_t avail = ib_need(b, 1);
    if (avail < 0)
        return -2;
    if (avail == 0)
        return -1;
    return b->buf[b->pos++];
}

/* ---- the pipeline's workers and writer (items: unz_buf.c) ---- */

static int unz_work(void *vctx, void *vitem, unsigned worker)
{
    (void)vctx;
    (void)worker;
    struct unz_item *it = vitem;
    it->crc = eng_crc32(0, it->buf, it->len);
    return 0;
}

/* Salvage: what a member's trailer says about the member just written,
 * [start, start + len).  A CRC-32 alone that disagrees cannot be placed
 * without an index: the whole member is damaged (its bytes, already out,
 * are kept as decoded: mostly right, most likely).  A length that
 * disagrees means bytes went missing or came extra: everything after the
 * member's start may sit at a wrong offset. */
static int unz_emit_salvage(struct unz_ctx *c, const struct unz_item *it, bool crc_ok,
                            bool len_ok, uint64_t start, uint64_t len)
{
    int rc = 0;
    if (it->check == UNZ_CHECK_SALVAGE && !len_ok) {
        if (!c->wshifted) {
            c->wshifted = true;
            c->wshifted_at = start;
        }
        rc = unz_rl_add(&c->wbad, start, UINT64_MAX - start);
    } else if (it->check == UNZ_CHECK_SALVAGE && !crc_ok) {
        rc = unz_rl_add(&c->wbad, start, len);
        c->wunverified += len == 0; /* nothing to list: the trailer lies */
    } else if (it->check == UNZ_CHECK_REPAIRED && crc_ok && len_ok) {
        rc = unz_rl_add(&c->wgood, start, len);
        c->wrepaired++;
    } else if (it->check != UNZ_CHECK_SALVAGE) {
        c->wunverified++;
    }
    if (rc != 0)
        sp_err_set(&c->werr, SP_ERR_NOMEM, 0, "out of memory");
    return rc;
}

static void unz_count_out(struct unz_ctx *c, uint64_t n)
{
    c->total += n;
    if (c->total > c->prog_out) {
        prog_add(c->prog, PROG_OUT, c->total - c->prog_out);
        c->prog_out = c->total;
    }
}

static int unz_emit(void *vctx, void *vitem)
{
    struct unz_ctx *c = vctx;
    struct unz_item *it = vitem;
    if (it->kind == UNZ_END) {
        c->ends++;
        bool crc_ok = c->crc == it->want_crc, len_ok = (uint32_t)c->mlen == it->want_isize;
        uint64_t len = c->mlen;
        c->last_mlen = c->mlen;
        c->crc = 0;
        c->mlen = 0;
        if (it->check != UNZ_CHECK_GZIP)
            return unz_emit_salvage(c, it, crc_ok, len_ok, c->total - len, len);
        if (!crc_ok || !len_ok) {
            sp_err_set(&c->werr, SP_ERR_CHECK, 0, "invalid compressed data--%s",
                       crc_ok ? "length error" : "crc error");
            return -1;
        }
        return 0;
    }
    if (it->kind == UNZ_ZEROS) { /* salvage: a gap of known length */
        if (osink_zeros(c->out, it->zeros) != 0) {
            c->werr = c->out->err;
            return -1;
        }
        c->crc = crcz_zeros(c->crc, it->zeros);
        c->mlen += it->zeros;
        unz_count_out(c, it->zeros);
        return 0;
    }
    if (osink_write(c->out, it->buf, it->len) != 0) {
        c->werr = c->out->err;
        return -1;
    }
    if (it->kind == UNZ_DATA) {
        c->crc = crcz_combine(c->crc, it->crc, it->len);
        c->mlen += it->len;
    }
    unz_count_out(c, it->len);
    return 0;
}

static void unz_item_free(void *vctx, void *vitem)
{
    (void)vctx;
    free(((struct unz_item *)vitem)->buf);
}

/* ---- one member ---- */

/* After a member of L bytes: gzip's window holds, at each place i, the last
 * byte the member wrote at a position = i (mod 32 KiB); zlib gives the last
 * min(L, 32 KiB) bytes in order. */
static void unz_keep_window(struct unz_ctx *c, z_stream *zs)
{
    uint8_t dict[UNZ_WIN];
    uInt n = UNZ_WIN;
    if (inflateGetDictionary(zs, dict, &n) != Z_OK)
        return;
    uint64_t len = zs->total_out; /* since inflateReset: this member's */
    for (uInt j = 0; j < n; j++)
        c->win[(len - n + j) % UNZ_WIN] = dict[j];
}

/* Invalid data in a member that decoded to mlen bytes so far: GNU gzip
 * writes its 32 KiB window each time it fills (the position starts at 0
 * with each member) and drops the rest on an error, so only the member's
 * first mlen rounded down to 32 KiB are output.  The bytes past that are
 * all in the current item: items end at 1 MiB of a member, 32 KiB-aligned. */
static void unz_gzip_cut(struct unz_ctx *c, uint64_t mlen)
{
    size_t cut = (size_t)(mlen % UNZ_WIN);
    if (c->cur != NULL && cut <= c->cur->len) {
        c->cur->len -= cut;
        c->pout -= cut;
    }
}

/* A block's start: its header's input bit and the member's output there. */
struct unz_blk {
    uint64_t bit, out;
};

/* The input ended inside a member that zlib decoded to mlen bytes: GNU gzip
 * writes what it decoded, but its look-ahead stops it a code or two earlier
 * (resync.h, rs_gzip_cut): those bytes come off the current item.  The
 * current block's start is still in the buffer unless the block is over
 * half of it (then zlib's count stands). */
static void unz_gzip_eof(struct unz_ctx *c, struct ibuf *b, const struct unz_blk *blk,
                         uint64_t mlen)
{
    uint64_t buf0 = b->total - b->len; /* input offset of b->buf[0] */
    if (blk->bit / 8 < buf0 || c->cur == NULL)
        return;
    uint64_t gz = blk->out + rs_gzip_cut(b->buf, b->len, blk->bit - 8 * buf0);
    if (gz < mlen && mlen - gz <= c->cur->len) {
        c->cur->len -= (size_t)(mlen - gz);
        c->pout -= mlen - gz;
    }
}

/* The input ended inside a member where gzip would have refused the
 * current block's header already (rs_gzip_no_lengths): its message is
 * "format violated", not zlib's "unexpected end of file". */
static bool unz_gzip_refused(const struct ibuf *b, const struct unz_blk *blk)
{
    uint64_t buf0 = b->total - b->len; /* input offset of b->buf[0] */
    return blk->bit / 8 >= buf0 && rs_gzip_no_lengths(b->buf, b->len, blk->bit - 8 * buf0);
}

/* Inflate one member's deflate stream into pipeline items with zlib; the
 * first `skip` bytes it decodes are out already (the fast path's). */
static int unz_zlib(struct unz_ctx *c, struct ibuf *b, z_stream *zs, uint64_t skip)
{
    /* gzip inflates into a 32 KiB window that starts as zeros and is not
     * cleared between members, its position starting again at 0 with each:
     * a distance reaching back before a member's start reads zeros, or what
     * the members before left at that place, and the CRC-32 then says
     * whether the output is right.  zlib refuses such a distance, unless it
     * is given that window as the dictionary; then the two decode alike.  A
     * valid stream never reaches there, so this changes nothing for it. */
    if (inflateReset(zs) != Z_OK || inflateSetDictionary(zs, c->win, UNZ_WIN) != Z_OK)
        return unz_data_error(c, "inflate reset failed");
    /* Where the current block starts (input bit, member output), kept in
     * the input buffer, for a cut stream's end (unz_gzip_eof). */
    struct unz_blk blk = {.bit = 8 * (b->total - (b->len - b->pos)), .out = 0};
    for (;;) {
        if (b->pos == b->len) {
            if (ib_fill_keep(b, blk.bit / 8) != 0)
                return -1;
            if (b->pos == b->len && unz_gzip_refused(b, &blk)) {
                unz_gzip_cut(c, zs->total_out);
                return unz_data_error(c, "invalid compressed data--format violated");
            }
            if (b->pos == b->len) {
                unz_gzip_eof(c, b, &blk, zs->total_out);
                return unz_data_error(c, "unexpected end of file");
            }
        }
        /* a full item goes out only when more output comes: at a cut or an
         * error its last bytes may still have to come off (unz_gzip_*) */
        if (c->cur != NULL && c->cur->len == UNZ_OUT)
            unz_flush(c, UNZ_DATA);
        struct unz_item *it = unz_cur(c);
        if (it == NULL)
            return -1;
        zs->next_in = b->buf + b->pos;
        zs->avail_in = (uInt)(b->len - b->pos);
        zs->next_out = it->buf + it->len;
        zs->avail_out = (uInt)(UNZ_OUT - it->len);
        int rc = inflate(zs, Z_BLOCK); /* as Z_NO_FLUSH, and a stop at each block's end */
        b->pos = b->len - zs->avail_in;
        if (zs->data_type & 128) { /* between blocks: the next header is here */
            blk.bit = 8 * (b->total - (b->len - b->pos)) - (uint64_t)(zs->data_type & 63);
            blk.out = zs->total_out;
        }
        size_t made = UNZ_OUT - zs->avail_out - it->len;
        if (skip > 0) {
            size_t drop = made < skip ? made : (size_t)skip;
            memmove(it->buf + it->len, it->buf + it->len + drop, made - drop);
            made -= drop;
            skip -= drop;
        }
        c->pout += made;
        it->len += made;
        if (rc == Z_STREAM_END) {
            unz_keep_window(c, zs);
            return 0;
        }
        if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT) {
            unz_gzip_cut(c, zs->total_out);
            return unz_data_error(c, "invalid compressed data--format violated");
        }
        if (rc == Z_MEM_ERROR) {
            sp_err_set(&c->perr, SP_ERR_NOMEM, 0, "out of memory");
            return -1;
        }
        /* Z_OK or Z_BUF_ERROR: more input or more room, both handled above. */
    }
}

/* One member's deflate stream: ISA-L when the input allows (unz_fast.c),
 * zlib for the rest, and wherever ISA-L stops short. */
static int unz_inflate(struct unz_ctx *c, struct ibuf *b, z_stream *zs)
{
    uint64_t done = 0;
    if (c->fast != NULL) {
        int r = unz_fast_member(c, b, &done);
        c->fast_members += r == 0;
        if (r <= 0)
            return r;
        /* 2: an empty member, checked again by zlib: not counted as zlib's
         * (-vv names the inflater of the members that hold data) */
        c->zlib_members += r == 1;
        return unz_zlib(c, b, zs, done);
    }
    c->zlib_members++;
    return unz_zlib(c, b, zs, done);
}

static int unz_trailer(struct unz_ctx *c, struct ibuf *b, struct unz_stats *st)
{
    ssize_t avail = ib_need(b, 8);
    if (avail < 0)
        return -1;
    if (avail < 8)
        return unz_data_error(c, "unexpected end of file");
    const uint8_t *p = b->buf + b->pos;
    b->pos += 8;
    st->last_crc = le_get32(p);
    st->last_isize = le_get32(p + 4);
    return unz_end_item(c, st->last_crc, st->last_isize, UNZ_CHECK_GZIP);
}

/* ---- between members: GNU gzip's rules ---- */

enum unz_next { UNZ_NEXT_MEMBER, UNZ_NEXT_DONE, UNZ_NEXT_ZEROS, UNZ_NEXT_GARBAGE,
                UNZ_NEXT_COPY, UNZ_NEXT_ERROR };

/* What a member's first two bytes say it is: gzip (1f 8b, and 1f 9e of
 * gzip 0.5), pack(1) (1f 1e) or compress(1)'s LZW (1f 9d), the formats GNU
 * gzip decompresses; anything else is not a member. */
enum unz_fmt { UNZ_FMT_NONE, UNZ_FMT_GZIP, UNZ_FMT_PACK, UNZ_FMT_LZW };

static enum unz_fmt unz_fmt(const uint8_t *p)
{
    if (p[0] != 0x1f)
        return UNZ_FMT_NONE;
    return p[1] == 0x8b || p[1] == 0x9e ? UNZ_FMT_GZIP
         : p[1] == 0x1e ? UNZ_FMT_PACK
         : p[1] == 0x9d ? UNZ_FMT_LZW : UNZ_FMT_NONE;
}

static bool unz_magic(const uint8_t *p)
{
    return unz_fmt(p) != UNZ_FMT_NONE;
}

/* After a member: another member, the end, only zero bytes up to the end
 * (padding: tape blocks, dd), or trailing garbage; with -cdf anything that
 * is not a member is copied through (zeros too, as gzip -cdf does).  A
 * single non-zero byte left is a truncated magic. */
static enum unz_next unz_next(struct unz_ctx *c, struct ibuf *b, bool copy, bool lenient)
{
    ssize_t avail = ib_need(b, 2);
    if (avail < 0)
        return UNZ_NEXT_ERROR;
    if (avail == 0)
        return UNZ_NEXT_DONE;
    const uint8_t *p = b->buf + b->pos;
    if (avail >= 2 && unz_magic(p))
        return UNZ_NEXT_MEMBER;
    if (copy)
        return UNZ_NEXT_COPY;
    if (avail == 1 && p[0] != 0 && !lenient) {
        unz_data_error(c, "unexpected end of file");
        return UNZ_NEXT_ERROR;
    }
    for (;;) {
        for (; b->pos < b->len; b->pos++)
            if (b->buf[b->pos] != 0)
                return UNZ_NEXT_GARBAGE;
        if (b->eof)
            return UNZ_NEXT_ZEROS;
        if (ib_fill(b) != 0)
            return UNZ_NEXT_ERROR;
    }
}

static int unz_put(struct unz_ctx *c, const uint8_t *p, size_t n)
{
    return unz_put_kind(c, p, n, UNZ_RAW);
}

/* Copy the rest of the input through unchanged (gzip -dcf on non-gzip). */
static int unz_copy(struct unz_ctx *c, struct ibuf *b)
{
    for (;;) {
        if (unz_put(c, b->buf + b->pos, b->len - b->pos) != 0)
            return -1;
        b->pos = b->len;
        if (b->eof) {
            unz_flush(c, UNZ_RAW);
            return 0;
        }
        if (ib_fill(b) != 0)
            return -1;
    }
}

/* ---- pack and LZW members (legacy.c) ---- */

struct unz_lg {
    struct unz_ctx *c;
    struct ibuf *b;
};

static int unz_lg_getc(void *ctx)
{
    return ib_getc(((struct unz_lg *)ctx)->b);
}

static int unz_lg_put(void *ctx, const uint8_t *p, size_t n)
{
    return unz_put(((struct unz_lg *)ctx)->c, p, n);
}

/* A pack member (then more may follow, as in gzip) or an LZW stream (to
 * the end of the input).  Its output goes out as raw items, ended by an END
 * item with nothing to check (the decoders check what they can). */
static int unz_legacy(struct unz_ctx *c, struct ibuf *b, enum unz_fmt f, struct unz_stats *st)
{
    struct unz_lg lc = {c, b};
    struct lg_io io = {unz_lg_getc, unz_lg_put, &lc};
    uint64_t n = 0;
    unsigned flags = 0;
    b->pos += 2;
    int rc = f == UNZ_FMT_PACK ? lg_unpack(&io, &n, &c->perr)
                               : lg_unlzw(&io, &n, &flags, &c->perr);
    if (flags != 0)
        st->lzw_flags = flags;
    st->last_fmt = f == UNZ_FMT_PACK ? UNZ_LAST_PACK : UNZ_LAST_LZW;
    st->last_isize = (uint32_t)n;
    st->last_crc = UINT32_MAX;
    st->legacy_bytes += n;
    unz_flush(c, UNZ_RAW);
    return rc;
}

/* ---- a zip file's first entry, as gzip -d takes it ---- */

static bool unz_is_zip(struct ibuf *b)
{
    ssize_t avail = ib_need(b, 4);
    return avail >= 4 && memcmp(b->buf + b->pos, "PK\003\004", 4) == 0;
}

const char *unz_zip_check(const uint8_t *h, size_t have, size_t *skip)
{
    /* gzip: a header, name and extra field not all there is "not a valid
     * zip file", a file refused, not a cut one */
    *skip = have < 30 ? 30 : 30 + le_get16(h + 26) + le_get16(h + 28);
    if (have < *skip)
        return "not a valid zip file";
    if (h[6] & 1)
        return "encrypted file -- use unzip";
    if (h[8] != 0 && h[8] != 8)
        return "first entry not deflated or stored -- use unzip";
    return NULL;
}

/* gzip decompresses a zip file holding one stored or deflated entry (the
 * first of several, with a warning).  The local header (30 bytes, then the
 * name and an extra field), the data, and, when flag 8 says so, a data
 * descriptor (its signature PK 07 08 optional) with the CRC-32 and sizes;
 * nothing after the entry is read. */
static int unz_zip(struct unz_ctx *c, struct ibuf *b, z_stream *zs, struct unz_stats *st)
{
    ssize_t have = ib_need(b, 30);
    if (have < 0)
        return -1;
    size_t skip;
    if (have >= 30) {
        const uint8_t *h0 = b->buf + b->pos;
        if ((have = ib_need(b, 30 + le_get16(h0 + 26) + le_get16(h0 + 28))) < 0)
            return -1;
    }
    const char *bad = unz_zip_check(b->buf + b->pos, (size_t)have, &skip);
    if (bad != NULL) {
        sp_err_set(&c->perr, SP_ERR_FORMAT, 0, "%s", bad);
        return -1;
    }
    const uint8_t *h = b->buf + b->pos;
    /* gzip looks at the low bytes of the flags and the method only */
    uint32_t flags = h[6], method = h[8], crc = le_get32(h + 14);
    uint32_t csize = le_get32(h + 18), usize = le_get32(h + 22);
    b->pos += skip;
    st->members++;
    st->last_fmt = method == 8 ? UNZ_LAST_ZIP_DEFLATE : UNZ_LAST_ZIP_STORE;
    if (method == 8) {
        if (unz_inflate(c, b, zs) != 0)
            return -1;
    } else {
        if (csize != usize)
            return unz_data_error(c, "invalid compressed data--length mismatch");
        for (uint32_t left = csize; left > 0;) {
            ssize_t avail = ib_need(b, 1);
            if (avail <= 0)
                return avail < 0 ? -1 : unz_data_error(c, "unexpected end of file");
            size_t n = (size_t)avail < left ? (size_t)avail : left;
            struct unz_item *it;
            for (size_t k = 0; k < n;) {
                if ((it = unz_cur(c)) == NULL)
                    return -1;
                size_t m = n - k < UNZ_OUT - it->len ? n - k : UNZ_OUT - it->len;
                memcpy(it->buf + it->len, b->buf + b->pos + k, m);
                it->len += m;
                c->pout += m;
                k += m;
                if (it->len == UNZ_OUT)
                    unz_flush(c, UNZ_DATA);
            }
            b->pos += n;
            left -= (uint32_t)n;
        }
    }
    if (flags & 8) { /* the data descriptor */
        if (ib_need(b, 16) < 12)
            return b->failed ? -1 : unz_data_error(c, "unexpected end of file");
        const uint8_t *d = b->buf + b->pos;
        size_t at = memcmp(d, "PK\007\010", 4) == 0 ? 4 : 0;
        if (at == 4 && b->len - b->pos < 16)
            return unz_data_error(c, "unexpected end of file");
        crc = le_get32(d + at);
        usize = le_get32(d + at + 8);
        b->pos += at + 12;
    }
    st->last_crc = crc;
    st->last_isize = usize;
    if (unz_end_item(c, crc, usize, c->salvage != NULL ? UNZ_CHECK_SALVAGE : UNZ_CHECK_GZIP) != 0)
        return -1;
    st->zip_more = unz_is_zip(b);
    return 0;
}

/* All members, then the end of the input. */
static int unz_members(struct unz_ctx *c, struct ibuf *b, z_stream *zs,
                       const struct unz_opts *o, struct unz_stats *st)
{
    /* The first member decides whether this is gzip at all. */
    ssize_t avail = ib_need(b, 2);
    if (avail < 0)
        return -1;
    const uint8_t *p = b->buf + b->pos;
    bool magic = avail >= 2 && unz_magic(p);
    if (!magic && unz_is_zip(b))
        return unz_zip(c, b, zs, st); /* the whole input: gzip reads no further */
    if (!magic && o->copy_non_gzip)
        return unz_copy(c, b);
    /* gzip: one byte that is not 0 (or none) is a cut magic; a 0 and no
     * second byte is not gzip */
    if (!magic && (avail == 0 || (avail == 1 && p[0] != 0)))
        return unz_data_error(c, "unexpected end of file");
    if (!magic) {
        sp_err_set(&c->perr, SP_ERR_FORMAT, 0, "not in gzip format");
        return -1;
    }
    for (;;) {
        enum unz_fmt f = unz_fmt(b->buf + b->pos);
        if (f == UNZ_FMT_LZW) { /* it reads to the end of the input */
            st->members++;
            return unz_legacy(c, b, f, st);
        }
        if (f == UNZ_FMT_PACK) {
            st->members++;
            if (unz_legacy(c, b, f, st) != 0)
                return -1;
            goto next;
        }
        struct gz_info h;
        uint64_t mstart = ib_abs(b, b->pos);
        if (c->salvage != NULL)
            ib_keep(b, mstart);
        int hs = gz_read_header(ib_getc, b, &h);
        if (hs != GZ_OK) {
            char msg[128];
            if (hs == GZ_READ_ERROR)
                return -1;
            if (c->salvage != NULL) { /* salvage: a header refused is damage */
                int r = hs != GZ_TRUNCATED ? c->salvage->stray(c, b, mstart, false)
                                           : c->salvage->cut(c, b);
                if (r == SV_GO_ON)
                    goto next;
                if (r == SV_NEW_MEMBER)
                    continue;
                return r < 0 ? -1 : 0;
            }
            /* gzip refuses what a header asks for and goes on with the next
             * file; a header cut short is an error like any cut input */
            sp_err_set(&c->perr, hs == GZ_TRUNCATED ? SP_ERR_DATA : SP_ERR_FORMAT, 0, "%s",
                       gz_status_msg(hs, &h, msg, sizeof msg));
            return -1;
        }
        if (st->members++ == 0) {
            st->first = h;
            st->have_header = true;
        }
        if (h.mtime != 0) /* gzip -N takes the last member's time that is set */
            st->last_mtime = h.mtime;
        if ((h.flags & GZ_FEXTRA) && st->extras < UNZ_EXTRAS)
            st->extra_len[st->extras++] = h.extra_len;
        if (c->salvage != NULL) {
            int r = c->salvage->member(c, b);
            if (r == SV_NEW_MEMBER)
                continue;
            if (r != SV_GO_ON)
                return r < 0 ? -1 : 0;
        } else if (unz_inflate(c, b, zs) != 0 || unz_trailer(c, b, st) != 0) {
            return -1;
        }
        st->last_fmt = UNZ_LAST_GZIP;
    next:
        switch (unz_next(c, b, o->copy_non_gzip, o->lenient_end)) {
        case UNZ_NEXT_MEMBER:
            continue;
        case UNZ_NEXT_DONE:
            return 0;
        case UNZ_NEXT_ZEROS:
            st->trailing_zeros = true;
            return 0;
        case UNZ_NEXT_GARBAGE:
            if (c->salvage != NULL) { /* a member whose header is damaged? */
                int r = c->salvage->stray(c, b, ib_abs(b, b->pos), true);
                if (r == SV_GO_ON)
                    goto next;
                if (r == SV_NEW_MEMBER)
                    continue;
                return r < 0 ? -1 : 0;
            }
            st->trailing_garbage = true;
            return 0;
        case UNZ_NEXT_COPY:
            return unz_copy(c, b);
        default:
            return -1;
        }
    }
}

int unz_run(int in_fd, struct osink *out, const struct unz_opts *o,
            struct unz_stats *st, struct sp_err *err)
{
    memset(st, 0, sizeof *st);
    struct unz_ctx *c = calloc(1, sizeof *c);
    size_t cap = o->salvage ? SV_IN : UNZ_IN;
    struct ibuf b = {.fd = in_fd, .buf = malloc(cap), .cap = cap};
    sp_pipe_widen(in_fd, 1u << 20); /* `cat x.gz | spigz -d`: pipe.h */
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    int rc = -1;
    if (c != NULL && o->salvage)
        c->salvage = &unz_salvage;
    if (c == NULL || b.buf == NULL || inflateInit2(&zs, -15) != Z_OK ||
        (c->salvage != NULL && c->salvage->open(c, in_fd, st) != 0)) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
        if (c != NULL && c->salvage != NULL)
            c->salvage->close(c);
        free(c);
        free(b.buf);
        inflateEnd(&zs);
        return -1;
    }
    b.err = &c->perr;
    b.prog = o->progress;
    b.prog_in = o->prog_in_done;
    c->out = out;
    if (!o->salvage && !o->no_fast)
        c->fast = unz_fast_open(c, in_fd);
    c->prog = o->progress;
    c->prog_out = o->prog_out_done;
    /* Depth: the inflater runs ahead of CRC and writing by a few buffers. */
    c->pool = pool_new(o->threads, 2 * o->threads + 4, sizeof(struct unz_item),
                       unz_work, unz_emit, c, err);
    /* A file inflated by ISA-L: the CRC-32 of an item takes the workers a
     * few microseconds, so each item woke a sleeping worker, a futex call
     * on the inflating thread, the one that sets the pace (3% of its time).
     * Woken every 4 items it is ahead of igzip -d instead of level with it
     * (DESIGN section 9).  The input is a file, never waited on, so no item
     * is held back for long. */
    if (c->pool != NULL && c->fast != NULL)
        pool_set_batch(c->pool, UNZ_WAKE_BATCH);
    if (c->pool != NULL) {
        int fed = unz_members(c, &b, &zs, o, st);
        if (fed != 0 && c->salvage != NULL)
            fed = c->salvage->fallback(c);
        if (unz_fast_flush(c) != 0 && fed == 0) /* after an error, still output */
            fed = -1;
        /* What was decoded before bad or cut input still goes out, as gzip
         * writes what it inflated before it reports the error: the items
         * already put are worked and emitted, never dropped, so the output
         * is the same whatever the threads' timing.  Only a failure of the
         * pipeline itself (a write error, memory) stops it short. */
        unz_flush(c, UNZ_DATA);
        bool input_failed = c->perr.kind == SP_ERR_DATA || c->perr.kind == SP_ERR_READ ||
                            c->perr.kind == SP_ERR_FORMAT;
        int closed = pool_close(c->pool, fed != 0 && !input_failed);
        /* After bad input too: zero blocks output last are still owed to a
         * sparse file (a seek and its size), or the file would be short. */
        int finished = closed == 0 || input_failed ? osink_finish(out, c->total) : -1;
        if (fed == 0 && closed == 0 && finished == 0) {
            rc = 0;
        } else if (c->werr.kind != SP_OK) {
            /* the writer's failure is at an earlier place in the stream than
             * wherever the reader was (a member's bad CRC-32 before the cut
             * in the next), and gzip stops at the first */
            *err = c->werr;
        } else if (c->perr.kind != SP_OK) {
            *err = c->perr;
        } else if (out->err.kind != SP_OK) {
            *err = out->err;
        } else {
            sp_err_set(err, SP_ERR_INTERNAL, 0, "decompression pipeline failed");
        }
        st->out_bytes = c->total;
        st->last_len = c->last_mlen;
        /* A bad CRC-32 or length ends the file at that member, as for gzip,
         * whatever the reader had started after it. */
        if (rc != 0 && err->kind == SP_ERR_CHECK)
            st->members = c->ends;
        pool_free(c->pool, unz_item_free);
        if (c->salvage != NULL && c->salvage->finish(c, st) != 0 && rc == 0) {
            sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
            rc = -1;
        }
    }
    st->in_bytes = b.total - (b.len - b.pos);
    st->read_bytes = b.total;
    st->fast_members = c->fast_members;
    st->zlib_members = c->zlib_members;
    inflateEnd(&zs);
    if (c->salvage != NULL)
        c->salvage->close(c);
    free(c->wbad.r);
    free(c->wgood.r);
    unz_fast_close(c);
    free(b.buf);
    free(c);
    return rc;
}
