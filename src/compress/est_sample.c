/* est_sample.c — the estimate's sample (estimate.h, step 2): chunks and
 * pieces of chunks compressed by a pool of workers with the real engine,
 * the writer thread recording what they measured; which chunks are
 * compressed whole, which by pieces, which calibrate the pieces; the timed
 * reads.  See est_int.h. */
#define _GNU_SOURCE /* SEEK_DATA */
#include "config.h"
#include "est_int.h"
#include "engine.h"
#include "pool.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the sample pool: workers compress, the writer records ---- */


struct est_item {
    uint8_t *buf;        /* the chunk (for EST_NPIECE only its pieces are read) */
    enum est_kind kind;
    size_t len;
    uint64_t off;        /* chooses the pieces */
    size_t idx;          /* the chunk's number */
    bool replace;        /* measured by pieces already: the whole replaces them */
    size_t at[EST_NPIECE], plen[EST_NPIECE];
    double whole;        /* EST_WHOLE, EST_CALIB: compressed size */
    double piece[EST_NPIECE]; /* EST_NPIECE: the pieces' sizes */
    double pieces;       /* EST_CALIB: sum over all pieces */
    double cpu;          /* thread CPU seconds of the whole compression */
};

/* Where a proxied chunk's pieces lie: EST_NPIECE pieces of the EST_PIECE
 * grid, evenly spaced from a start drawn from the seed and the offset. */
static void est_pick_pieces(const struct est *e, struct est_item *it)
{
    size_t np = (it->len + EST_PIECE - 1) / EST_PIECE;
    double stride = (double)np / EST_NPIECE;
    double s0 = (double)(est_mix(e->o->seed ^ it->off) >> 11) * 0x1p-53 * stride;
    for (unsigned k = 0; k < EST_NPIECE; k++) {
        size_t g = (size_t)(s0 + k * stride);
        it->at[k] = g * EST_PIECE;
        it->plen[k] = it->len - it->at[k] < EST_PIECE ? it->len - it->at[k] : EST_PIECE;
    }
}

/* Compress p[0..n) on the worker's engine; the size, or -1.  Whole chunks
 * exactly as the compressor would; pieces without the splice walk (the
 * calibration compares whole chunks with pieces measured the same way, so
 * kappa takes those few bytes in too). */
static double est_compress(struct est *e, unsigned w, const uint8_t *p, size_t n, bool whole,
                           struct sp_err *err)
{
    size_t clen;
    int rc = whole ? eng_compress(e->wk_eng[w], p, n, e->wk_out[w], e->wk_cap[w], &clen, err)
                   : eng_size(e->wk_eng[w], p, n, e->wk_out[w], e->wk_cap[w], &clen, err);
    return rc == 0 ? (double)clen : -1;
}

static int est_work_item(struct est *e, unsigned w, struct est_item *it, struct sp_err *err)
{
    if (it->kind == EST_PIECES) {
        for (unsigned k = 0; k < EST_NPIECE; k++)
            if ((it->piece[k] = est_compress(e, w, it->buf + it->at[k], it->plen[k], false, err)) < 0)
                return -1;
        return 0;
    }
    double t0 = est_now(CLOCK_THREAD_CPUTIME_ID);
    if ((it->whole = est_compress(e, w, it->buf, it->len, true, err)) < 0)
        return -1;
    it->cpu = est_now(CLOCK_THREAD_CPUTIME_ID) - t0;
    it->pieces = 0;
    for (size_t at = 0; it->kind == EST_CALIB && at < it->len; at += EST_PIECE) {
        size_t n = it->len - at < EST_PIECE ? it->len - at : EST_PIECE;
        double c = est_compress(e, w, it->buf + at, n, false, err);
        if (c < 0)
            return -1;
        it->pieces += c;
    }
    return 0;
}

static int est_work(void *ctx, void *item, unsigned worker)
{
    struct est *e = ctx;
    struct sp_err err = {0};
    /* Each worker has its own engine and output buffer, made on first use;
     * only that worker touches its slot. */
    if (e->wk_eng[worker] == NULL) {
        e->wk_eng[worker] = eng_new(e->o->level, &err);
        if (e->wk_eng[worker] == NULL)
            goto fail;
        e->wk_cap[worker] = eng_bound(e->wk_eng[worker], e->o->chunk);
        if ((e->wk_out[worker] = malloc(e->wk_cap[worker])) == NULL) {
            sp_err_set(&err, SP_ERR_NOMEM, 0, "out of memory");
            goto fail;
        }
    }
    if (est_work_item(e, worker, item, &err) == 0)
        return 0;
fail:
    e->wk_err[worker] = err; /* the pool stops at the first failure */
    return -1;
}

/* A proxied chunk: its pieces' sizes scaled to the chunk, and the variance
 * of that from the two pieces' disagreement (pieces drawn from np). */
/* The writer's record of each proxied chunk, by chunk number, so a later
 * whole compression can take its place.  Writer thread only. */
struct est_px {
    double x, var;
    uint32_t len;
};

static int est_px_store(struct est *e, size_t idx, double x, double var, size_t len)
{
    if (idx >= e->px_cap) {
        size_t cap = e->px_cap ? e->px_cap : 1024;
        while (cap <= idx)
            cap *= 2;
        struct est_px *n = realloc(e->px, cap * sizeof *n);
        if (n == NULL)
            return -1;
        memset(n + e->px_cap, 0, (cap - e->px_cap) * sizeof *n);
        e->px = n;
        e->px_cap = cap;
    }
    e->px[idx] = (struct est_px){x, var, (uint32_t)len};
    return 0;
}

static void est_px_drop(struct est *e, size_t idx)
{
    if (idx >= e->px_cap || e->px[idx].len == 0)
        return;
    const struct est_px *p = &e->px[idx];
    e->proxy_x -= p->x;
    e->proxy_xr -= p->x * p->x / p->len;
    e->proxy_var -= p->var;
    if (--e->proxy_n == 0) /* what the sums keep of rounding, dropped */
        e->proxy_x = e->proxy_xr = e->proxy_var = 0;
}

static int est_add_proxy(struct est *e, const struct est_item *it)
{
    double y[EST_NPIECE], sum = 0, plen = 0;
    for (unsigned k = 0; k < EST_NPIECE; k++) {
        y[k] = it->piece[k] * (double)it->len / (double)it->plen[k];
        sum += it->piece[k];
        plen += (double)it->plen[k];
    }
    double np = ceil((double)it->len / EST_PIECE);
    double d = y[0] - y[1]; /* EST_NPIECE == 2: s^2 = d^2 / 2 */
    /* The finite-population correction: none left unsampled, no variance
     * (a chunk of at most EST_NPIECE pieces; negative below that). */
    double fpc = np > EST_NPIECE ? 1 - EST_NPIECE / np : 0;
    double x = sum * (double)it->len / plen, var = d * d / 2 / EST_NPIECE * fpc;
    e->proxy_x += x;
    e->proxy_xr += x * x / (double)it->len;
    e->proxy_var += var;
    e->proxy_n++;
    return e->r->stream ? 0 : est_px_store(e, it->idx, x, var, it->len);
}

static int est_emit(void *ctx, void *item)
{
    struct est *e = ctx;
    struct est_item *it = item;
    if (it->kind == EST_PIECES) {
        for (unsigned k = 0; k < EST_NPIECE; k++)
            e->compressed_bytes += it->plen[k];
        if (est_add_proxy(e, it) == 0)
            return 0;
        sp_err_set(&e->pool_err, SP_ERR_NOMEM, 0, "out of memory");
        return -1;
    }
    if (it->replace)
        est_px_drop(e, it->idx);
    e->exact_c += it->whole;
    e->exact_n++;
    e->cpu_compress += it->cpu;
    e->cpu_bytes += it->len;
    e->compressed_bytes += it->len * (it->kind == EST_CALIB ? 2 : 1);
    if (it->kind != EST_CALIB)
        return 0;
    if (e->ncal == e->cal_cap) {
        size_t cap = e->cal_cap ? 2 * e->cal_cap : 64;
        struct est_cal *n = realloc(e->cal, cap * sizeof *n);
        if (n == NULL) {
            sp_err_set(&e->pool_err, SP_ERR_NOMEM, 0, "out of memory");
            return -1;
        }
        e->cal = n;
        e->cal_cap = cap;
    }
    e->cal[e->ncal++] = (struct est_cal){it->whole, it->pieces, (double)it->len};
    return 0;
}

static void est_item_free(void *ctx, void *item)
{
    (void)ctx;
    free(((struct est_item *)item)->buf);
}

int est_pool_open(struct est *e)
{
    unsigned t = e->o->threads;
    e->wk_eng = calloc(t, sizeof *e->wk_eng);
    e->wk_out = calloc(t, sizeof *e->wk_out);
    e->wk_cap = calloc(t, sizeof *e->wk_cap);
    e->wk_err = calloc(t, sizeof *e->wk_err);
    if (e->wk_eng == NULL || e->wk_out == NULL || e->wk_cap == NULL || e->wk_err == NULL)
        return est_nomem(e);
    e->pool = pool_new(t, 4 * t + 8, sizeof(struct est_item), est_work, est_emit, e, e->err);
    return e->pool != NULL ? 0 : -1;
}

/* Take an item and give it a chunk-sized buffer. */
static struct est_item *est_item_get(struct est *e)
{
    struct est_item *it = pool_get(e->pool);
    if (it == NULL) {
        e->pool_failed = true;
        return NULL;
    }
    if (it->buf == NULL) {
        if ((it->buf = malloc(e->o->chunk)) == NULL) {
            est_nomem(e);
            pool_put(e->pool, it, false);
            e->pool_failed = true;
            return NULL;
        }
        /* Fault the pages in now: a timed read into fresh pages would
         * count the kernel's zeroing of them as the cost of reading. */
        memset(it->buf, 0, e->o->chunk);
    }
    return it;
}

/* Streams: every chunk is measured as it passes; short ones whole, one in
 * EST_STREAM_CAL (and the first that can) calibrates, the rest proxied. */
int est_sample_put(struct est *e, const uint8_t *buf, size_t len)
{
    struct est_item *it = est_item_get(e);
    if (it == NULL)
        return -1;
    memcpy(it->buf, buf, len);
    it->len = len;
    it->off = e->cursor - len;
    if (len <= EST_NPIECE * EST_PIECE)
        it->kind = EST_WHOLE;
    else if (e->stream_cal == 0 || est_mix(e->o->seed ^ it->off) % EST_STREAM_CAL == 0)
        it->kind = EST_CALIB;
    else
        it->kind = EST_PIECES;
    if (it->kind == EST_CALIB)
        e->stream_cal++;
    if (it->kind == EST_PIECES)
        est_pick_pieces(e, it);
    pool_put(e->pool, it, true);
    return 0;
}

int est_pool_close(struct est *e, bool abort)
{
    int rc = pool_close(e->pool, abort);
    pool_free(e->pool, est_item_free);
    e->pool = NULL;
    for (unsigned w = 0; rc != 0 && !abort && w < e->o->threads; w++)
        if (e->wk_err[w].kind != SP_OK && e->err->kind == SP_OK)
            *e->err = e->wk_err[w];
    if (rc != 0 && !abort && e->err->kind == SP_OK)
        *e->err = e->pool_err;
    return rc;
}

void est_workers_free(struct est *e)
{
    for (unsigned w = 0; e->wk_eng != NULL && e->wk_out != NULL && w < e->o->threads; w++) {
        if (e->wk_eng[w] != NULL)
            eng_free(e->wk_eng[w]);
        free(e->wk_out[w]);
    }
    free(e->wk_eng);
    free(e->wk_out);
    free(e->wk_cap);
    free(e->wk_err);
}

/* ---- the sample pass (seekable inputs) ---- */

/* Read [off, off + len) of the input into buf; timed, for the prediction. */
static int est_read(struct est *e, uint64_t off, size_t len, uint8_t *buf)
{
    double w0 = est_now(CLOCK_MONOTONIC), c0 = est_now(CLOCK_THREAD_CPUTIME_ID);
    if (est_pread(e, off, len, buf) != 0)
        return -1;
    /* The compression would also scan these blocks: count that cost too. */
    for (size_t i = 0; i < len; i += SCAN_BLOCK)
        (void)scan_is_zero(buf + i, len - i < SCAN_BLOCK ? len - i : SCAN_BLOCK);
    double w = est_now(CLOCK_MONOTONIC) - w0, c = est_now(CLOCK_THREAD_CPUTIME_ID) - c0;
    e->read_wall += w;
    e->read_cpu += c;
    e->read_timed += len;
    if (len >= EST_BIG_READ && e->big_n < EST_BIG_N) {
        e->big_w[e->big_n] = w / (double)len;
        e->big_c[e->big_n++] = c / (double)len;
    }
    return 0;
}

/* A chunk's draw: the seed's hash of its offset. */
static uint64_t est_draw(const struct est *e, const struct est_chunk *c)
{
    return est_mix(e->o->seed ^ est_mix(c->off));
}

/* A proxied chunk by its proxy's ratio, then its position. */
struct est_rank {
    double ratio;
    size_t idx;
};

static int est_cmp_rank(const void *a, const void *b)
{
    const struct est_rank *x = a, *y = b;
    return x->ratio < y->ratio ? -1 : x->ratio > y->ratio ? 1 : (x->idx > y->idx) - (x->idx < y->idx);
}

/* Which chunks calibrate: the proxied chunks sorted by their proxy's ratio
 * and cut into EST_CAL strata of equal count, and in each the one with the
 * smallest draw.  Every chunk has the same chance, and the sample spans the
 * ratios (text to incompressible) that kappa's line is fitted across,
 * where a simple random sample may bunch.  Marks cal[i]; runs after every
 * proxy is in (pool_drain). */
static int est_choose_cal(struct est *e, bool *cal)
{
    struct est_rank *rk = malloc((e->nch + 1) * sizeof *rk);
    size_t n = 0;
    if (rk == NULL)
        return est_nomem(e);
    for (size_t i = 0; i < e->nch; i++)
        if (e->ch[i].len > EST_NPIECE * EST_PIECE && i < e->px_cap && e->px[i].len != 0)
            rk[n++] = (struct est_rank){e->px[i].x / e->px[i].len, i};
    qsort(rk, n, sizeof *rk, est_cmp_rank);
    size_t k = n < EST_CAL ? n : EST_CAL;
    for (size_t s = 0; s < k; s++) {
        size_t lo = s * n / k, hi = (s + 1) * n / k, best = lo;
        for (size_t j = lo + 1; j < hi; j++)
            if (est_draw(e, &e->ch[rk[j].idx]) < est_draw(e, &e->ch[rk[best].idx]))
                best = j;
        cal[rk[best].idx] = true;
    }
    free(rk);
    return 0;
}

/* Read one chunk's bytes for its kind into it->buf and queue it. */
int est_queue(struct est *e, const struct est_chunk *c, size_t idx, enum est_kind kind,
                     bool replace)
{
    struct est_item *it = est_item_get(e);
    if (it == NULL)
        return -1;
    it->kind = kind;
    it->len = c->len;
    it->off = c->off;
    it->idx = idx;
    it->replace = replace;
    int rc = 0;
    if (kind == EST_PIECES) {
        est_pick_pieces(e, it);
        for (unsigned k = 0; rc == 0 && k < EST_NPIECE; k++)
            rc = est_read(e, c->off + it->at[k], it->plen[k], it->buf + it->at[k]);
    } else {
        rc = est_read(e, c->off, c->len, it->buf);
    }
    pool_put(e->pool, it, rc == 0);
    return rc;
}

/* When fewer than EST_BIG_MIN chunks were read whole (an input of zeros,
 * small chunks), time reads of the compressor's size, spread over the
 * input and in data, for the prediction.  At most 8 MiB. */
int est_time_reads(struct est *e)
{
    if (e->big_n >= EST_BIG_MIN || e->r->stream || e->r->split_exact)
        return 0;
    const size_t n = 1u << 20;
    uint8_t *buf = malloc(n);
    if (buf == NULL)
        return est_nomem(e);
    memset(buf, 0, n); /* its pages faulted in before the timing */
    uint64_t size = e->in.size;
    int rc = 0;
    for (unsigned k = 0; rc == 0 && e->big_n < EST_BIG_MIN && k < EST_BIG_MIN; k++) {
        uint64_t at = size / EST_BIG_MIN * k / n * n;
        off_t d = lseek(e->in.fd, (off_t)(e->in.base + at), SEEK_DATA);
        if (d < 0 && errno == ENXIO)
            break; /* holes to the end: nothing the compressor would read */
        uint64_t off = d < 0 ? at : ((uint64_t)d - e->in.base) / SCAN_BLOCK * SCAN_BLOCK;
        if (off + EST_BIG_READ <= size)
            rc = est_read(e, off, size - off < n ? (size_t)(size - off) : n, buf);
    }
    free(buf);
    return rc;
}

/* Seekable inputs, after the shape pass (every chunk has its pieces or
 * its whole measured by now): with few chunks, all are compressed whole;
 * otherwise EST_CAL of them calibrate.  Either replaces their pieces. */
int est_sample_chunks(struct est *e)
{
    bool *cal = calloc(e->nch + 1, sizeof *cal);
    if (cal == NULL)
        return est_nomem(e);
    bool all = e->nch <= EST_ALL_WHOLE;
    int rc = 0;
    if (!all && (rc = pool_drain(e->pool)) != 0)
        e->pool_failed = true;
    if (rc == 0 && !all)
        rc = est_choose_cal(e, cal);
    for (size_t i = 0; rc == 0 && i < e->nch; i++) {
        if (e->ch[i].len <= EST_NPIECE * EST_PIECE || !(all || cal[i]))
            continue; /* measured whole already, or stays proxied */
        rc = est_queue(e, &e->ch[i], i, all ? EST_WHOLE : EST_CALIB, true);
    }
    free(cal);
    return rc;
}
