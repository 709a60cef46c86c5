/* dec.c — see dec.h. */
#include "dec.h"
#include "engine.h"
#include "idx.h"
#include "pool.h"
#include "splice.h"
#include "unz.h"
#include "zrun.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The largest data piece the indexed path takes (decoded and compressed);
 * bigger ones, which no spigz writes by default, go the sequential way. */
#define DEC_PIECE_LIMIT ((uint64_t)1 << 30)
#define DEC_ZERO_STEP ((uint64_t)16 << 20) /* see dec_emit_zeros() */

/* One pipeline item: a piece, or the part of it a range needs. */
struct dec_item {
    uint64_t k;              /* piece number */
    uint64_t skip, len;      /* the slice of the piece's content to output */
    uint8_t *in, *out;
    size_t in_cap, out_cap, in_len;
};

struct dec_ctx {
    const struct idx *x;
    int fd;
    struct osink *out;
    uint64_t out_origin;     /* content offset of output byte 0 */
    struct eng_dec **decs;   /* one per worker */
    struct sp_err *werr;     /* one per worker */
    struct osink_acc *acc;   /* one per worker: positioned writes */
    uint64_t *bad;           /* one per worker: offset of a piece that failed
                                its check, UINT64_MAX if none */
    struct sp_err perr;      /* producer */
    struct sp_err oerr;      /* writer */
    uint64_t written;        /* content bytes output */
    struct sp_progress *prog;
    uint64_t prog_in;        /* compressed bytes counted in prog (writer) */
};

static uint64_t dec_ulen(const struct idx *x, uint64_t k)
{
    return x->p[k + 1].uoff - x->p[k].uoff;
}

static uint64_t dec_clen(const struct idx *x, uint64_t k)
{
    return x->p[k + 1].coff - x->p[k].coff;
}

/* ---- workers: check and decode a piece ---- */

/* A zero piece must be byte for byte the canonical encoding of its length. */
static bool dec_zero_ok(const struct dec_item *it, uint64_t ulen)
{
    struct zrun z;
    zrun_encode(ulen, &z);
    size_t clen = it->in_len - 2;
    if (clen != zrun_size(&z))
        return false;
    const uint8_t *p = it->in;
    if (memcmp(p, z.head, z.head_len) != 0 ||
        memcmp(p + clen - z.tail_len, z.tail, z.tail_len) != 0)
        return false;
    const uint8_t *mid = p + z.head_len;
    uint64_t n = z.zeros;
    return n == 0 || (mid[0] == 0 && memcmp(mid, mid + 1, (size_t)n - 1) == 0);
}

/* A data piece: complete non-final blocks ending exactly at its last byte
 * (so decoding it alone is decoding it in the stream), then its bytes. */
static bool dec_data_ok(struct dec_ctx *c, struct dec_item *it, unsigned worker)
{
    const struct idx *x = c->x;
    uint64_t clen = it->in_len - 2, ulen = dec_ulen(x, it->k);
    struct splice_info si;
    if (splice_walk(it->in, it->in_len, &si) != 0 || si.last_hdr_bit != 8 * clen)
        return false;
    if (eng_dec_exact(c->decs[worker], it->in, it->in_len, it->out, (size_t)ulen) != 0)
        return false;
    return eng_crc32(0, it->out, (size_t)ulen) == x->p[it->k].crc;
}

/* A seekable output is written by the workers themselves, at the piece's
 * place, in any order: the page-cache copies run in parallel too. */
static int dec_place(struct dec_ctx *c, struct dec_item *it, unsigned worker)
{
    const struct idx_piece *pc = &c->x->p[it->k];
    uint64_t at = pc->uoff + it->skip - c->out_origin;
    struct osink_acc *acc = &c->acc[worker];
    int rc = pc->data ? osink_pwrite(c->out, at, it->out + it->skip, (size_t)it->len, acc)
                      : osink_pzeros(c->out, at, it->len, acc);
    if (rc != 0)
        c->werr[worker] = acc->err;
    return rc;
}

static int dec_work(void *vctx, void *vitem, unsigned worker)
{
    struct dec_ctx *c = vctx;
    struct dec_item *it = vitem;
    const struct idx_piece *pc = &c->x->p[it->k];
    bool ok = pc->data ? dec_data_ok(c, it, worker) : dec_zero_ok(it, dec_ulen(c->x, it->k));
    if (!ok) {
        /* The index lies about this piece (or its bytes are damaged, which
         * the sequential decode will tell): not an error of ours yet. */
        if (pc->uoff < c->bad[worker])
            c->bad[worker] = pc->uoff;
        return -1;
    }
    return c->out->seekable ? dec_place(c, it, worker) : 0;
}

/* ---- writer: a stream output gets the slices in order ---- */

/* A stream's zero piece goes out (and counts in the progress) 16 MiB at a
 * time: a 1 GiB piece into a slow pipe would hold the display still. */
static int dec_emit_zeros(struct dec_ctx *c, uint64_t n)
{
    while (n > 0) {
        uint64_t step = n < DEC_ZERO_STEP ? n : DEC_ZERO_STEP;
        if (osink_zeros(c->out, step) != 0)
            return -1;
        prog_add(c->prog, PROG_OUT, step);
        n -= step;
    }
    return 0;
}

static int dec_emit(void *vctx, void *vitem)
{
    struct dec_ctx *c = vctx;
    struct dec_item *it = vitem;
    bool data = c->x->p[it->k].data;
    c->written += it->len;
    if (!c->out->seekable) {
        int rc = data ? osink_write(c->out, it->out + it->skip, (size_t)it->len)
                      : dec_emit_zeros(c, it->len);
        if (rc != 0) {
            c->oerr = c->out->err;
            return rc;
        }
    }
    /* Progress: the piece counts once it is out. */
    c->prog_in += dec_clen(c->x, it->k);
    prog_add(c->prog, PROG_IN, dec_clen(c->x, it->k));
    if (data || c->out->seekable)
        prog_add(c->prog, PROG_OUT, it->len);
    return 0;
}

static void dec_item_free(void *vctx, void *vitem)
{
    (void)vctx;
    struct dec_item *it = vitem;
    free(it->in);
    free(it->out);
}

/* ---- producer: read each piece ---- */

static int dec_grow(uint8_t **p, size_t *cap, size_t need)
{
    if (*cap >= need)
        return 0;
    uint8_t *q = realloc(*p, need);
    if (q == NULL)
        return -1;
    *p = q;
    *cap = need;
    return 0;
}

static int dec_read_piece(struct dec_ctx *c, struct dec_item *it)
{
    const struct idx *x = c->x;
    size_t clen = (size_t)dec_clen(x, it->k);
    bool data = x->p[it->k].data;
    if (dec_grow(&it->in, &it->in_cap, clen + 2) != 0 ||
        (data && dec_grow(&it->out, &it->out_cap, (size_t)dec_ulen(x, it->k)) != 0)) {
        sp_err_set(&c->perr, SP_ERR_NOMEM, 0, "out of memory");
        return -1;
    }
    uint64_t off = x->base + x->header_len + x->p[it->k].coff;
    for (size_t got = 0; got < clen;) {
        ssize_t r = pread(c->fd, it->in + got, clen - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            sp_err_set(&c->perr, r < 0 ? SP_ERR_READ : SP_ERR_DATA, r < 0 ? errno : 0,
                       r < 0 ? "read error" : "unexpected end of file");
            return -1;
        }
        got += (size_t)r;
    }
    it->in[clen] = 0x03; /* an empty final block closes the piece */
    it->in[clen + 1] = 0x00;
    it->in_len = clen + 2;
    return 0;
}

/* The pieces overlapping [from, to), in order. */
static int dec_feed(struct dec_ctx *c, struct pool *pool, uint64_t from, uint64_t to)
{
    const struct idx *x = c->x;
    /* Binary search for the first piece ending after `from`. */
    uint64_t lo = 0, hi = x->n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (x->p[mid + 1].uoff <= from)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (uint64_t k = lo; k < x->n && x->p[k].uoff < to; k++) {
        struct dec_item *it = pool_get(pool);
        if (it == NULL)
            return -1;
        uint64_t a = x->p[k].uoff, b = x->p[k + 1].uoff;
        it->k = k;
        it->skip = from > a ? from - a : 0;
        it->len = (to < b ? to : b) - a - it->skip;
        if (dec_read_piece(c, it) != 0)
            return -1;
        pool_put(pool, it, true);
    }
    return 0;
}

static int dec_workers(struct dec_ctx *c, unsigned n, struct sp_err *err)
{
    c->decs = calloc(n, sizeof *c->decs);
    c->werr = calloc(n, sizeof *c->werr);
    c->acc = calloc(n, sizeof *c->acc);
    c->bad = malloc(n * sizeof *c->bad);
    if (c->decs == NULL || c->werr == NULL || c->acc == NULL || c->bad == NULL) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
        return -1;
    }
    for (unsigned i = 0; i < n; i++)
        c->bad[i] = UINT64_MAX;
    for (unsigned i = 0; i < n; i++)
        if ((c->decs[i] = eng_dec_new(err)) == NULL)
            return -1;
    return 0;
}

static void dec_pick_error(struct dec_ctx *c, unsigned n, struct sp_err *err)
{
    if (c->perr.kind != SP_OK) {
        *err = c->perr;
        return;
    }
    for (unsigned i = 0; i < n; i++)
        if (c->werr[i].kind != SP_OK) {
            *err = c->werr[i];
            return;
        }
    if (c->oerr.kind != SP_OK)
        *err = c->oerr;
    else
        sp_err_set(err, SP_ERR_INTERNAL, 0, "decompression pipeline failed");
}

/* Did anything fail besides a piece check (reading, writing, memory)? */
static bool dec_failed_otherwise(const struct dec_ctx *c, unsigned n)
{
    bool any = c->perr.kind != SP_OK || c->oerr.kind != SP_OK;
    for (unsigned i = 0; c->werr != NULL && i < n; i++)
        any = any || c->werr[i].kind != SP_OK;
    return any;
}

/* The first piece that failed its check, or UINT64_MAX. */
static uint64_t dec_first_bad(const struct dec_ctx *c, unsigned n)
{
    uint64_t bad = UINT64_MAX;
    for (unsigned i = 0; c->bad != NULL && i < n; i++)
        if (c->bad[i] < bad)
            bad = c->bad[i];
    return bad;
}

/* Decode through the index.  0 done, -1 error (*err), 1 a piece disagreed
 * with the index: *emitted bytes of [from, to) went out in order (stream
 * outputs), and st->index_warning says which piece.  *counted: compressed
 * bytes counted in o->progress. */
static int dec_indexed(int fd, const struct idx *x, struct osink *out, const struct dec_opts *o,
                       struct dec_stats *st, uint64_t *emitted, uint64_t *counted,
                       struct sp_err *err)
{
    uint64_t from = 0, to = x->total;
    if (o->range) {
        from = o->range_off < x->total ? o->range_off : x->total;
        to = x->total - from < o->range_len ? x->total : from + o->range_len;
    }
    struct dec_ctx c = {.x = x, .fd = fd, .out = out, .out_origin = from,
                        .prog = o->progress};
    int rc = -1;
    struct pool *pool = NULL;
    if (dec_workers(&c, o->threads, err) == 0)
        pool = pool_new(o->threads, 2 * o->threads + 2, sizeof(struct dec_item),
                        dec_work, dec_emit, &c, err);
    if (pool != NULL) {
        int fed = dec_feed(&c, pool, from, to);
        int closed = pool_close(pool, fed != 0);
        uint64_t bad = dec_first_bad(&c, o->threads);
        if (fed == 0 && closed == 0 && osink_finish(out, to - from) == 0) {
            rc = 0;
        } else if (fed == 0 && closed == 0) {
            *err = out->err;
        } else if (bad != UINT64_MAX && !dec_failed_otherwise(&c, o->threads)) {
            snprintf(st->index_warning, sizeof st->index_warning,
                     "the piece at offset %llu does not match it", (unsigned long long)bad);
            rc = 1;
        } else {
            dec_pick_error(&c, o->threads, err);
        }
        pool_free(pool, dec_item_free);
    }
    *emitted = c.written;
    *counted = c.prog_in;
    for (unsigned i = 0; c.decs != NULL && i < o->threads; i++)
        eng_dec_free(c.decs[i]);
    for (unsigned i = 0; c.acc != NULL && i < o->threads; i++) {
        out->written += c.acc[i].written;
        out->holes += c.acc[i].holes;
    }
    free(c.decs);
    free(c.werr);
    free(c.acc);
    free(c.bad);
    st->out_bytes = c.written;
    st->in_bytes = x->data_len + x->index_len + IDX_FOOTER_LEN;
    st->indexed = rc != 1;
    st->have_header = true;
    st->hdr = x->hdr;
    return rc;
}

/* ---- choosing the path ---- */

/* Try the index of a seekable regular input.  1: loaded, 0: not usable. */
static int dec_try_index(int fd, struct idx *x, uint64_t *end, char *warn, size_t wn,
                         struct sp_err *err)
{
    struct stat s;
    off_t here = lseek(fd, 0, SEEK_CUR);
    if (fstat(fd, &s) != 0 || !S_ISREG(s.st_mode) || here < 0 || here > s.st_size)
        return 0;
    *end = (uint64_t)s.st_size;
    int r = idx_load(fd, (uint64_t)here, (uint64_t)s.st_size, x, warn, wn, err);
    if (r == 1 && (x->max_ulen > DEC_PIECE_LIMIT || x->max_clen > DEC_PIECE_LIMIT)) {
        snprintf(warn, wn, "pieces too large for the parallel path");
        idx_free(x);
        return 0;
    }
    return r;
}

int dec_run(int in_fd, struct osink *out, const struct dec_opts *o,
            struct dec_stats *st, struct sp_err *err)
{
    memset(st, 0, sizeof *st);
    struct idx x;
    uint64_t end = 0;
    int r = o->use_index ? dec_try_index(in_fd, &x, &end, st->index_warning,
                                         sizeof st->index_warning, err) : 0;
    if (r < 0)
        return -1;
    uint64_t skip = 0; /* stream output already written by the indexed path */
    uint64_t emitted = 0, counted = 0; /* by the indexed path */
    if (r == 1) {
        uint64_t base = x.base;
        int rc = dec_indexed(in_fd, &x, out, o, st, &emitted, &counted, err);
        idx_free(&x);
        if (rc != 1) {
            (void)lseek(in_fd, (off_t)end, SEEK_SET); /* consumed, as a stream read */
            if (rc == 0 && !o->range && end - base > counted)
                prog_add(o->progress, PROG_IN, end - base - counted); /* frame, index */
            return rc;
        }
        /* The index lied: decode it all again, as any gzip file.  Pieces
         * already placed were checked, so rewriting them is harmless; on a
         * stream, what went out is skipped. */
        if (lseek(in_fd, (off_t)base, SEEK_SET) < 0) {
            sp_err_set(err, SP_ERR_READ, errno, "cannot seek back to decode sequentially");
            return -1;
        }
        skip = out->seekable || out->fd < 0 ? 0 : emitted;
    }
    if (o->range || skip > 0) {
        uint64_t off = (o->range ? o->range_off : 0), len = o->range ? o->range_len : UINT64_MAX;
        off = off > UINT64_MAX - skip ? UINT64_MAX : off + skip;
        osink_window(out, off, len > skip ? len - skip : 0);
    }
    struct unz_opts uo = {o->threads, o->copy_non_gzip, o->progress, counted, emitted};
    struct unz_stats us;
    int rc = unz_run(in_fd, out, &uo, &us, err);
    st->in_bytes = us.in_bytes;
    st->out_bytes = us.out_bytes;
    st->trailing_garbage = us.trailing_garbage;
    st->have_header = us.have_header;
    st->hdr = us.first;
    return rc;
}

/* ---- -l ---- */

/* A byte reader over a descriptor, remembering the last 8 bytes read. */
struct dec_lrd {
    int fd;
    uint8_t buf[65536];
    size_t pos, len;
    uint64_t total;
    uint8_t last[8];
    bool failed;
};

static int dec_lrd_fill(struct dec_lrd *r)
{
    ssize_t n;
    do
        n = read(r->fd, r->buf, sizeof r->buf);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        r->failed = true;
    if (n <= 0)
        return -1;
    /* Keep the last 8 bytes of everything read so far. */
    if ((size_t)n >= 8) {
        memcpy(r->last, r->buf + n - 8, 8);
    } else {
        memmove(r->last, r->last + n, 8 - (size_t)n);
        memcpy(r->last + 8 - n, r->buf, (size_t)n);
    }
    r->total += (uint64_t)n;
    r->pos = 0;
    r->len = (size_t)n;
    return 0;
}

static int dec_lrd_getc(void *ctx)
{
    struct dec_lrd *r = ctx;
    if (r->pos == r->len && dec_lrd_fill(r) != 0)
        return r->failed ? -2 : -1;
    return r->buf[r->pos++];
}

static uint32_t dec_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* No index: the first header, then the last member's CRC-32 and ISIZE, as
 * gzip -l reports them (reading through a pipe to its end). */
static int dec_list_plain(int fd, struct dec_list *l, struct sp_err *err)
{
    struct dec_lrd *r = calloc(1, sizeof *r);
    if (r == NULL) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
        return -1;
    }
    r->fd = fd;
    int hs = gz_read_header(dec_lrd_getc, r, &l->hdr);
    while (hs == GZ_OK && !r->failed && dec_lrd_fill(r) == 0)
        ;
    int rc = 0;
    if (r->failed) {
        sp_err_set(err, SP_ERR_READ, errno, "read error");
        rc = -1;
    } else if (hs != GZ_OK || r->total < l->hdr.len + 10) {
        char msg[128];
        sp_err_set(err, SP_ERR_DATA, 0, "%s",
                   hs != GZ_OK ? gz_status_msg(hs, &l->hdr, msg, sizeof msg)
                               : "unexpected end of file");
        rc = -1;
    } else {
        l->have_header = true;
        l->compressed = r->total;
        l->crc = dec_le32(r->last);
        l->uncompressed = dec_le32(r->last + 4);
        /* deflate expands at most 1032:1: below that the size cannot wrap */
        l->maybe_wrapped = l->compressed >= (((uint64_t)1 << 32) / 1032);
    }
    free(r);
    return rc;
}

int dec_list(int in_fd, struct dec_list *l, struct sp_err *err)
{
    memset(l, 0, sizeof *l);
    struct idx x;
    uint64_t end = 0;
    int r = dec_try_index(in_fd, &x, &end, l->index_warning, sizeof l->index_warning, err);
    if (r < 0)
        return -1;
    if (r == 0)
        return dec_list_plain(in_fd, l, err);
    l->compressed = end - x.base;
    l->uncompressed = x.total;
    l->deflated = x.data_len - x.header_len - 8;
    l->exact = true;
    l->crc = x.crc;
    l->have_header = true;
    l->hdr = x.hdr;
    idx_free(&x);
    (void)lseek(in_fd, (off_t)end, SEEK_SET);
    return 0;
}
