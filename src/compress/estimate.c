/* estimate.c — see estimate.h for the method; doc/DESIGN.md for the why.
 *
 * Layout: the shape pass (probe or full read) feeds the segmenter in blank
 * or real mode; its sink records data chunks and prices zero pieces and the
 * index exactly.  The sample pass compresses chunks on a pool and keeps
 * (length, compressed length) pairs; est_finish() turns them into the
 * prediction.
 */
#define _GNU_SOURCE /* SEEK_DATA, SEEK_HOLE */
#include "config.h"
#include "estimate.h"
#include "compress.h"
#include "engine.h"
#include "idx_w.h"
#include "input.h"
#include "io.h"
#include "pool.h"
#include "reader.h"
#include "scan.h"
#include "scout.h"
#include "zrun.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EST_WINDOW (64u << 20)      /* read window (full mode: 1/8 of it) */
#define EST_BIG_READ (256u << 10)   /* reads this long cost what the compressor's do */
#define EST_BIG_N 32                /* such reads timed at most */
#define EST_BIG_MIN 8               /* such reads wanted (est_time_reads) */
#define EST_GROUP 32                /* blocks per probe group (<= 32) */
#define EST_PIECE (24u << 10)       /* proxy piece: 24 KiB ... */
#define EST_NPIECE 2                /* ... two per chunk: 1/16 of the data */
#define EST_CAL 12                  /* chunks that calibrate the proxies */
#define EST_STREAM_CAL 32           /* streams: 1 chunk in 32 calibrates */
#define EST_ALL_WHOLE 24            /* up to this many chunks: all compressed */
#define EST_GRAINS (1u << 20)       /* map resolution before rebinning */
#define EST_Z90 1.645               /* two-sided 90% normal quantile */

enum est_kind {
    EST_WHOLE,  /* compressed whole: its size is exact */
    EST_PIECES, /* EST_NPIECE pieces compressed alone: a proxy */
    EST_CALIB   /* whole and every piece alone: calibrates the proxies */
};

struct est_chunk {
    uint64_t off;
    uint32_t len;
};

/* A calibration chunk: compressed whole, and as its pieces each alone. */
struct est_cal {
    double whole, pieces, len;
};

struct est {
    const struct est_opts *o;
    struct est_result *r;
    struct sp_err *err;
    struct in_src in;
    struct seg seg;
    uint8_t *chunk_buf;          /* the segmenter's buffer (full pass) */
    uint64_t cursor;             /* offset of the next segmenter output */
    struct est_chunk *ch;        /* every data chunk */
    size_t nch, cap;
    uint64_t fixed_out;          /* exact output bytes: zero pieces, frame */
    uint64_t idx_payload;        /* the zero pieces' index records (the data
                                    pieces' wait for the ratio) */
    uint8_t *grp_buf[2];         /* the probe's two groups */
    uint64_t hits, hit_blocks;   /* groups in zero stretches drawn as data; their data blocks */
    uint64_t hit_clen;           /* their compressed size */
    uint64_t presumed_groups, presumed_bytes; /* groups taken as zero unread */
    uint64_t probe_off;          /* window being probed (for a fault's message) */
    uint64_t stream_cal;         /* calibration chunks chosen so far (streams) */
    struct eng *eng;             /* main thread's (hidden blocks) */
    uint8_t *tmp;                /* eng output for hidden blocks */
    size_t tmp_cap;
    /* map: data bytes per grain */
    uint32_t *grain;
    uint64_t grain_bytes;
    size_t ngrain;
    /* what the sample pass measured (the pool's writer thread adds) */
    double exact_c;              /* chunks compressed whole: their total */
    uint64_t exact_n;
    double proxy_x, proxy_var;   /* proxied chunks: scaled piece sizes */
    double proxy_xr;             /* the sum of x times x / len (for kappa's slope) */
    struct est_px *px;           /* proxies by chunk number (writer thread) */
    size_t px_cap;
    uint64_t proxy_n;
    struct est_cal *cal;
    size_t ncal, cal_cap;
    uint64_t compressed_bytes;   /* input bytes put through the engine */
    struct pool *pool;
    bool pool_failed;
    struct sp_err pool_err;      /* the writer's */
    struct eng **wk_eng;         /* per worker */
    uint8_t **wk_out;
    size_t *wk_cap;
    struct sp_err *wk_err;
    double cpu_compress;         /* thread CPU s in eng_compress */
    uint64_t cpu_bytes;
    double read_wall, read_cpu;  /* sampled reads */
    uint64_t read_timed;
    /* reads of EST_BIG_READ and more: seconds per byte, wall and CPU, of
     * each (the medians guide the prediction: one read that met the disk in a
     * cached input must not decide it) */
    double big_w[EST_BIG_N], big_c[EST_BIG_N];
    unsigned big_n;
};

/* ---- small helpers ---- */

static double est_now(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* splitmix64: the seed's stream of choices, the same on every machine. */
static uint64_t est_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static int est_nomem(struct est *e)
{
    sp_err_set(e->err, SP_ERR_NOMEM, 0, "out of memory");
    return -1;
}

/* ---- the map: data bytes per grain, grains doubled when they run out ---- */

static int est_map_add(struct est *e, uint64_t off, uint64_t len)
{
    while (len > 0) {
        uint64_t g = off / e->grain_bytes;
        while (g >= EST_GRAINS) { /* halve the resolution */
            for (size_t i = 0; i < e->ngrain; i += 2) {
                uint64_t s = (uint64_t)e->grain[i] + (i + 1 < e->ngrain ? e->grain[i + 1] : 0);
                e->grain[i / 2] = (uint32_t)(s > UINT32_MAX ? UINT32_MAX : s);
            }
            e->ngrain = (e->ngrain + 1) / 2;
            memset(e->grain + e->ngrain, 0, (EST_GRAINS - e->ngrain) * sizeof *e->grain);
            e->grain_bytes *= 2;
            g = off / e->grain_bytes;
        }
        uint64_t end = (g + 1) * e->grain_bytes, take = end - off < len ? end - off : len;
        uint64_t s = e->grain[g] + take;
        e->grain[g] = (uint32_t)(s > UINT32_MAX ? UINT32_MAX : s);
        if (g + 1 > e->ngrain)
            e->ngrain = (size_t)g + 1;
        off += take;
        len -= take;
    }
    return 0;
}

/* Rebin grains into r->cells cells over the whole input. */
static int est_map_finish(struct est *e)
{
    struct est_result *r = e->r;
    unsigned cells = e->o->cells;
    if (cells == 0 || r->in_bytes == 0)
        return 0;
    if ((r->map = calloc(cells, 1)) == NULL)
        return est_nomem(e);
    r->cells = cells;
    r->cell_bytes = (r->in_bytes + cells - 1) / cells;
    for (unsigned c = 0; c < cells; c++) {
        uint64_t lo = c * r->cell_bytes, hi = lo + r->cell_bytes;
        if (hi > r->in_bytes)
            hi = r->in_bytes;
        if (lo >= hi)
            break;
        double data = 0;
        for (uint64_t g = lo / e->grain_bytes; g < e->ngrain && g * e->grain_bytes < hi; g++) {
            uint64_t a = g * e->grain_bytes, b = a + e->grain_bytes;
            uint64_t ov = (b < hi ? b : hi) - (a > lo ? a : lo);
            data += (double)e->grain[g] * (double)ov / (double)e->grain_bytes;
        }
        double share = data / (double)(hi - lo);
        r->map[c] = (uint8_t)lrint((share > 1 ? 1 : share) * 255);
        if (r->map[c] == 0 && data >= 1)
            r->map[c] = 1; /* any data at all shows */
    }
    return 0;
}

/* ---- the segmenter's sink ---- */

static uint8_t *est_get(void *ctx)
{
    struct est *e = ctx;
    return e->chunk_buf;
}

static int est_sample_put(struct est *e, const uint8_t *buf, size_t len);
static int est_queue(struct est *e, const struct est_chunk *c, size_t idx, enum est_kind kind,
                     bool replace);

static int est_data(void *ctx, uint8_t *buf, size_t len)
{
    struct est *e = ctx;
    if (e->nch == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 1024;
        struct est_chunk *n = realloc(e->ch, cap * sizeof *n);
        if (n == NULL)
            return est_nomem(e);
        e->ch = n;
        e->cap = cap;
    }
    e->ch[e->nch++] = (struct est_chunk){e->cursor, (uint32_t)len};
    e->cursor += len;
    e->r->data_bytes += len;
    /* A stream is seen once: measure each chunk as it passes.  A seekable
     * input has its chunks' pieces read and compressed while the shape pass
     * goes on; the whole chunks come after it (est_sample_chunks). */
    if (e->r->stream)
        return est_sample_put(e, buf, len);
    const struct est_chunk *c = &e->ch[e->nch - 1];
    return est_queue(e, c, e->nch - 1, len <= EST_NPIECE * EST_PIECE ? EST_WHOLE : EST_PIECES,
                     false);
}

static int est_zero(void *ctx, uint64_t len)
{
    struct est *e = ctx;
    struct zrun z;
    zrun_encode(len, &z);
    uint64_t clen = zrun_size(&z);
    e->fixed_out += clen;
    e->idx_payload += idx_rec_size(false, len, clen);
    e->cursor += len;
    e->r->zero_bytes += len;
    return 0;
}

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

static int est_pool_open(struct est *e)
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
static int est_sample_put(struct est *e, const uint8_t *buf, size_t len)
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

static int est_pool_close(struct est *e, bool abort)
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

static void est_workers_free(struct est *e)
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

/* ---- the shape: runs of blocks in input order ---- */

static int est_blocks(struct est *e, bool zero, uint64_t off, uint64_t len)
{
    if (len == 0)
        return 0;
    if (zero)
        return seg_zeros(&e->seg, len);
    est_map_add(e, off, len);
    return seg_blank(&e->seg, len);
}

/* A run being gathered, fed when the class changes. */
struct est_run {
    bool zero;
    uint64_t off, len;
};

static int est_run_add(struct est *e, struct est_run *run, bool zero, uint64_t off,
                       uint64_t len)
{
    if (zero) /* shown now: a long run is only handed on when it ends */
        prog_add(e->o->progress, PROG_ZEROS, len);
    if (run->len > 0 && run->zero == zero && run->off + run->len == off) {
        run->len += len;
        return 0;
    }
    int rc = est_blocks(e, run->zero, run->off, run->len);
    *run = (struct est_run){zero, off, len};
    return rc;
}

/* ---- sample mode: probe groups of blocks ---- */

/* pread exactly len bytes at input offset off; a short read means the
 * input shrank under us. */
static int est_pread(struct est *e, uint64_t off, size_t len, uint8_t *buf)
{
    size_t got;
    int rc = io_pread(e->in.fd, buf, len, e->in.base + off, &got);
    if (rc != 0 || got < len) {
        sp_err_set(e->err, SP_ERR_READ, rc != 0 ? errno : 0, "%s at offset %llu",
                   rc != 0 ? "read error" : "input shrank while being read",
                   (unsigned long long)(off + got));
        return -1;
    }
    e->r->read_bytes += len;
#ifdef HAVE_POSIX_FADVISE
    if (e->in.nocache) /* a device: its pages are not kept (input.h) */
        (void)posix_fadvise(e->in.fd, (off_t)(e->in.base + off), (off_t)len, POSIX_FADV_DONTNEED);
#endif
    if (e->in.nzr > 0)
        in_mask_zero_ranges(&e->in, off, buf, len);
    return 0;
}

/* A group of EST_GROUP blocks on the absolute block grid (the ends of an
 * extent may cut it short).  One block drawn from the seed is read; the
 * whole group is read when that block or a neighbour's is data. */
struct est_group {
    uint64_t off;
    size_t len;
    bool sample_data;  /* the drawn block is data */
    bool exact;        /* read whole: data says which blocks are data */
    uint32_t data;     /* bit i: block i is data */
    bool live;
    uint8_t *buf;      /* the group's bytes (its drawn block when not exact) */
    bool all_data;     /* inside a data region: taken as data, unread */
};

static int est_group_sample(struct est *e, struct est_group *g)
{
    size_t nb = (g->len + SCAN_BLOCK - 1) / SCAN_BLOCK;
    uint64_t first = g->off / SCAN_BLOCK;
    size_t j = (size_t)(est_mix(e->o->seed ^ est_mix(first)) % nb);
    size_t n = g->len - j * SCAN_BLOCK < SCAN_BLOCK ? g->len - j * SCAN_BLOCK : SCAN_BLOCK;
    if (est_pread(e, g->off + j * SCAN_BLOCK, n, g->buf) != 0)
        return -1;
    g->sample_data = !scan_is_zero(g->buf, n);
    g->exact = false;
    g->all_data = false;
    g->data = 0;
    return 0;
}

static int est_group_read(struct est *e, struct est_group *g)
{
    if (g->exact)
        return 0;
    if (est_pread(e, g->off, g->len, g->buf) != 0)
        return -1;
    g->data = 0;
    for (size_t i = 0; i * SCAN_BLOCK < g->len; i++) {
        size_t n = g->len - i * SCAN_BLOCK < SCAN_BLOCK ? g->len - i * SCAN_BLOCK : SCAN_BLOCK;
        if (!scan_is_zero(g->buf + i * SCAN_BLOCK, n))
            g->data |= 1u << i;
    }
    g->exact = true;
    return 0;
}

/* A group whose neighbours' drawn blocks were zero lies in a zero stretch:
 * when its own drawn block is data it is a hit, the evidence of data that
 * groups presumed zero may hide.  Prices the hit by compressing it. */
static void est_group_hit(struct est *e, const struct est_group *g)
{
    size_t clen = g->len;
    struct sp_err err = {0};
    if (eng_compress(e->eng, g->buf, g->len, e->tmp, e->tmp_cap, &clen, &err) != 0)
        clen = g->len; /* priced as stored: only an estimate */
    e->hits++;
    e->hit_blocks += (uint64_t)__builtin_popcount(g->data);
    e->hit_clen += clen;
}

/* Hand a decided group to the shape: exact blocks, or presumed zeros. */
static int est_group_emit(struct est *e, struct est_run *run, const struct est_group *g)
{
    if (g->all_data)
        return est_run_add(e, run, false, g->off, g->len);
    if (!g->exact) {
        e->presumed_groups++;
        e->presumed_bytes += g->len;
        return est_run_add(e, run, true, g->off, g->len);
    }
    for (size_t i = 0; i * SCAN_BLOCK < g->len; i++) {
        size_t n = g->len - i * SCAN_BLOCK < SCAN_BLOCK ? g->len - i * SCAN_BLOCK : SCAN_BLOCK;
        if (est_run_add(e, run, !(g->data >> i & 1), g->off + i * SCAN_BLOCK, n) != 0)
            return -1;
    }
    return 0;
}

/* Probe the data extent [off, off + len): groups decided one behind, so a
 * group knows both neighbours' draws (the edges of data regions are read
 * whole, found to the block). */
static int est_probe_extent(struct est *e, struct est_run *run, uint64_t off, uint64_t len)
{
    const uint64_t gbytes = (uint64_t)EST_GROUP * SCAN_BLOCK, end = off + len;
    struct est_group prev = {.buf = e->grp_buf[0]}, cur = {.buf = e->grp_buf[1]};
    bool before_data = false; /* the draw of the group before prev */
    for (uint64_t at = off; at < end || prev.live;) {
        cur.live = at < end;
        if (cur.live) {
            uint64_t next = (at / gbytes + 1) * gbytes;
            cur.off = at;
            cur.len = (size_t)((next < end ? next : end) - at);
            if (est_group_sample(e, &cur) != 0)
                return -1;
            prog_add(e->o->progress, PROG_IN, cur.len);
            at += cur.len;
        }
        if (prev.live) {
            bool after_data = cur.live && cur.sample_data;
            /* Inside a data region (three data draws in a row) the group is
             * taken as all data unread: a zero run there would cost about
             * the same compressed inside a chunk.  At an edge (draws that
             * differ) it is read whole; between zero draws it is presumed
             * zero. */
            bool edge = prev.sample_data ? !(before_data && after_data)
                                         : before_data || after_data;
            prev.all_data = prev.sample_data && !edge;
            if (edge && est_group_read(e, &prev) != 0)
                return -1;
            if (prev.sample_data && !before_data && !after_data)
                est_group_hit(e, &prev);
            if (est_group_emit(e, run, &prev) != 0)
                return -1;
            before_data = prev.sample_data;
        }
        struct est_group t = prev; /* swap: each keeps its own buffer */
        prev = cur;
        cur = t;
    }
    return 0;
}

/* Next data extent at or after pos as SEEK_DATA sees it: [*d, *h), both
 * clamped to size and widened to the block grid.  False when the rest is a
 * hole. */
static bool est_next_data_raw(struct est *e, uint64_t pos, uint64_t *d, uint64_t *h)
{
    uint64_t size = e->in.size;
    *d = pos;
    *h = size;
    if (!e->in.seek_holes)
        return pos < size;
    off_t a = lseek(e->in.fd, (off_t)(e->in.base + pos), SEEK_DATA);
    if (a < 0) {
        if (errno == ENXIO)
            return false; /* a hole to the end */
        e->in.seek_holes = false; /* not supported here: all data */
        return pos < size;
    }
    off_t b = lseek(e->in.fd, a, SEEK_HOLE);
    uint64_t da = (uint64_t)a - e->in.base, hb = b < 0 ? size : (uint64_t)b - e->in.base;
    *d = da & ~(uint64_t)(SCAN_BLOCK - 1);
    *h = hb >= size ? size : (hb + SCAN_BLOCK - 1) & ~(uint64_t)(SCAN_BLOCK - 1);
    if (*h > size)
        *h = size;
    if (*d < pos)
        *d = pos;
    return *d < size;
}

/* The same, zero ranges (--free=zero) left out as holes are: their bytes
 * are counted in free_bytes. */
static bool est_next_data(struct est *e, uint64_t pos, uint64_t *d, uint64_t *h)
{
    for (;;) {
        if (!est_next_data_raw(e, pos, d, h))
            return false;
        uint64_t s, z;
        if (e->in.nzr == 0 || !in_next_zero_range(&e->in, *d, &s, &z) || s >= *h)
            return true;
        if (s > *d) {
            *h = s;
            return true;
        }
        e->r->free_bytes += z - *d;
        pos = z;
        if (pos >= e->in.size)
            return false;
    }
}

static int est_shape_probe(struct est *e)
{
    struct est_run run = {true, 0, 0};
    uint64_t pos = 0, d, h;
    int rc = 0;
    while (rc == 0 && pos < e->in.size) {
        uint64_t freed = e->r->free_bytes;
        bool more = est_next_data(e, pos, &d, &h);
        uint64_t hole = (more ? d : e->in.size) - pos;
        e->r->hole_bytes += hole - (e->r->free_bytes - freed);
        prog_add(e->o->progress, PROG_IN, hole);
        rc = est_run_add(e, &run, true, pos, hole);
        if (rc == 0 && more && h > d)
            rc = est_probe_extent(e, &run, d, h - d);
        pos = more && h > d ? h : e->in.size;
    }
    if (rc == 0)
        rc = est_blocks(e, run.zero, run.off, run.len);
    return rc;
}

/* ---- full mode and streams: read every byte ---- */

/* A run the compressor's loop (reader.h, rd_feed) gave the segmenter. */
static void est_seen(void *ctx, const struct seg *s, const struct rd_run *run, uint64_t off)
{
    struct est *e = ctx;
    (void)s;
    if (run->data == NULL)
        prog_add(e->o->progress, PROG_ZEROS, run->len);
    else
        est_map_add(e, off, run->len);
    prog_add(e->o->progress, PROG_IN, run->len);
}

/* The compressor's read -> classify -> segment loop, on this thread (its
 * reads are what the prediction times). */
static int est_shape_read(struct est *e)
{
    struct rd *r = rd_open(&e->in, e->err);
    if (r == NULL)
        return -1;
    int rc = rd_feed(r, &e->seg, est_seen, e, e->err);
    rd_stop(r);
    /* bytes read: all but holes and zero ranges (there is no scout) */
    e->r->read_bytes += e->in.pos - e->in.hole_bytes - e->in.zr_bytes;
    e->r->hole_bytes = e->in.hole_bytes;
    e->r->free_bytes = e->in.zr_bytes;
    return rc < 0 ? -1 : 0;
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
static int est_queue(struct est *e, const struct est_chunk *c, size_t idx, enum est_kind kind,
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
static int est_time_reads(struct est *e)
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
static int est_sample_chunks(struct est *e)
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

/* ---- the prediction ---- */

/* Index bytes for the pieces, priced by the index writer (idx_w.h), a
 * data piece's clen taken as ratio x len (truncated, plus one). */
static double est_index_bytes(const struct est *e, double ratio)
{
    if (!e->o->index)
        return 0;
    uint64_t payload = e->idx_payload;
    for (size_t i = 0; i < e->nch; i++)
        payload += idx_rec_size(true, e->ch[i].len, (uint64_t)(ratio * e->ch[i].len) + 1);
    return (double)idx_len(payload);
}

/* The calibration.  Cutting a chunk into pieces costs ratio (each piece
 * starts without history and pays for its own Huffman tables), more for
 * compressible data: kappa = whole / pieces is about 0.85 for text and
 * near 1 for what barely compresses.  So kappa is fitted as a line in the
 * pieces' ratio r = pieces / len over the calibration chunks,
 * whole ~ pieces x (a + b r), by least squares weighted 1 / pieces (as a
 * ratio estimate), and the proxied total is a Sx + b Sxr.  The fit is kept
 * only when its jackknife variance beats a plain ratio's (a line needs
 * spread in r, and at least 4 chunks).  skip: the calibration chunk left
 * out (jackknife), or n for none.  Returns the proxied total. */
static double est_fit(const struct est *e, size_t skip, bool line)
{
    double spu = 0, spr = 0, sprr = 0, sy = 0, syr = 0;
    for (size_t i = 0; i < e->ncal; i++) {
        if (i == skip)
            continue;
        const struct est_cal *c = &e->cal[i];
        double r = c->pieces / c->len;
        spu += c->pieces;
        spr += c->pieces * r;
        sprr += c->pieces * r * r;
        sy += c->whole;
        syr += c->whole * r;
    }
    double det = spu * sprr - spr * spr;
    if (!line || det <= 1e-9 * spu * sprr) /* ratio: kappa = sum whole / sum pieces */
        return spu > 0 ? sy / spu * e->proxy_x : e->proxy_x;
    double a = (sy * sprr - syr * spr) / det, b = (syr * spu - sy * spr) / det;
    return a * e->proxy_x + b * e->proxy_xr;
}

/* Jackknife variance of est_fit() over the calibration chunks. */
static double est_jackknife(const struct est *e, bool line)
{
    size_t n = e->ncal;
    if (n < 2)
        return INFINITY;
    double mean = 0, ss = 0, *t = malloc(n * sizeof *t);
    if (t == NULL)
        return INFINITY;
    for (size_t j = 0; j < n; j++)
        mean += (t[j] = est_fit(e, j, line)) / (double)n;
    for (size_t j = 0; j < n; j++)
        ss += (t[j] - mean) * (t[j] - mean);
    free(t);
    return ss * (double)(n - 1) / (double)n;
}

/* The data chunks' total: exact for chunks compressed whole, calibrated
 * proxies for the rest.  Sets *ratio (compressed / data bytes) and *var. */
static double est_data_total(const struct est *e, double *ratio, double *var)
{
    double proxied = 0, vcal = 0;
    if (e->proxy_n > 0) {
        double vline = e->ncal >= 4 ? est_jackknife(e, true) : INFINITY;
        double vratio = est_jackknife(e, false);
        bool line = vline < vratio;
        proxied = est_fit(e, e->ncal, line);
        vcal = line ? vline : vratio;
        if (!isfinite(vcal)) /* one calibration chunk or none: +-25% */
            vcal = proxied * proxied * 0.0625;
    }
    double k = e->proxy_x > 0 ? proxied / e->proxy_x : 1;
    *var = k * k * e->proxy_var + vcal;
    double total = e->exact_c + proxied;
    *ratio = e->r->data_bytes ? total / (double)e->r->data_bytes : 0;
    return total;
}

/* Data that groups presumed zero may hide.  Each group's drawn block is a
 * 1-in-n sample of it, so over the groups in zero stretches the data blocks
 * number about EST_GROUP per hit (Horvitz-Thompson); the hit groups were
 * read whole, so the rest, EST_GROUP x hits - their data blocks, went
 * unseen.  Priced like the hits (their compressed size per data block).
 * Returns the cost; *var (Poisson in the hits) and *upper (no hit: up to
 * three could have been missed, rule of three) bound it. */
static double est_hidden(struct est *e, double ratio, double *var, double *upper)
{
    const double piece = 40; /* a split zero run and the index records */
    *var = 0;
    *upper = 0;
    if (e->r->split_exact || e->presumed_groups == 0)
        return 0;
    if (e->hits == 0) {
        double per_block = (ratio > 0 ? ratio : 1) * SCAN_BLOCK + piece;
        *upper = 3.0 / (double)e->presumed_groups * (double)e->presumed_bytes / SCAN_BLOCK *
                 per_block;
        return 0;
    }
    double per_block = ((double)e->hit_clen + piece * (double)e->hits) / (double)e->hit_blocks;
    double unseen = (double)EST_GROUP * (double)e->hits - (double)e->hit_blocks;
    if (unseen < 0)
        unseen = 0;
    uint64_t bytes = (uint64_t)unseen * SCAN_BLOCK;
    e->r->data_bytes += bytes;
    e->r->zero_bytes -= bytes < e->r->zero_bytes ? bytes : e->r->zero_bytes;
    double each = EST_GROUP * per_block;
    *var = (double)e->hits * each * each;
    return unseen * per_block;
}

static int est_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n), n >= 1 (v is sorted in place). */
static double est_median(double *v, unsigned n)
{
    qsort(v, n, sizeof *v, est_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Compression time: workers bound by CPU, all threads by the cores, the
 * reader by the device. */
static double est_seconds(const struct est *e)
{
    const struct est_result *r = e->r;
    double cpb = e->cpu_bytes ? e->cpu_compress / (double)e->cpu_bytes : 0;
    double read_bytes = (double)(r->in_bytes - r->hole_bytes - r->free_bytes);
    /* The compressor reads 1 MiB at a time: a 24 KiB piece's read costs
     * several times more per byte, so the long reads (the calibration
     * chunks') are the guide when there are enough of them. */
    double rcpu, rwall;
    if (e->big_n > 0 && !r->split_exact) {
        double w[EST_BIG_N], c[EST_BIG_N];
        memcpy(w, e->big_w, e->big_n * sizeof *w);
        memcpy(c, e->big_c, e->big_n * sizeof *c);
        rcpu = est_median(c, e->big_n) * read_bytes;
        rwall = est_median(w, e->big_n) * read_bytes;
    } else {
        rcpu = e->read_timed ? e->read_cpu / (double)e->read_timed * read_bytes : 0;
        rwall = e->read_timed ? e->read_wall / (double)e->read_timed * read_bytes : 0;
    }
    double ccpu = cpb * (double)r->data_bytes * 1.03; /* + copying into chunks */
    unsigned cpus = e->o->cpus ? e->o->cpus : 1;
    double p = e->o->threads < cpus ? e->o->threads : cpus;
    double t = ccpu / p;
    if ((ccpu + rcpu) / cpus > t)
        t = (ccpu + rcpu) / cpus;
    /* A cached input (reads cost their CPU, no waiting) of a regular file
     * or device is scanned by the reader and the scout side by side. */
    if (!r->stream && r->in_bytes >= 2ull * SCOUT_GAP * SCOUT_UNIT && cpus > 1 &&
        rwall < 1.5 * rcpu)
        rwall /= 2;
    return rwall > t ? rwall : t;
}

static int est_finish(struct est *e)
{
    struct est_result *r = e->r;
    double ratio, var, hvar, upper;
    double data = est_data_total(e, &ratio, &var);
    double hidden = est_hidden(e, ratio, &hvar, &upper);
    double header = 10 + (e->o->name_len ? (double)e->o->name_len + 1 : 0);
    double fixed = header + (double)e->fixed_out + 2 + 8 + est_index_bytes(e, ratio);
    double n = (double)e->ncal;
    double z = n > 2 ? EST_Z90 + 2.5 / (n - 1) : EST_Z90; /* Student's t, roughly */
    /* Model slack: a data piece's index record is priced from the ratio
     * (its clen's LEB128 length may be off by a byte), and the proxies'
     * calibration is only as good as a ratio: 0.1% of what they carry. */
    double slack = (double)e->nch + 0.001 * (data - e->exact_c);
    /* Sums of added and dropped terms may round below zero. */
    double half = z * sqrt(var + hvar > 0 ? var + hvar : 0) + slack;
    r->ratio = ratio;
    r->size = fixed + data + hidden;
    r->lo = r->size - half < fixed ? fixed : r->size - half;
    r->hi = r->size + half + upper;
    r->chunks = e->nch;
    r->sampled = e->exact_n;
    r->proxied = e->proxy_n;
    r->sampled_bytes = e->compressed_bytes;
    r->seconds = est_seconds(e);
    return est_map_finish(e);
}

/* ---- the run ---- */

static int est_setup(struct est *e)
{
    struct est_result *r = e->r;
    size_t wsize = EST_WINDOW / 8; /* reads: 8 MiB, as the compressor */
    if (in_open(&e->in, e->in.fd, wsize, e->err) != 0)
        return -1;
    if (e->o->nzero_ranges > 0)
        in_set_zero_ranges(&e->in, e->o->zero_ranges, e->o->nzero_ranges);
    r->stream = e->in.kind == IN_STREAM || (e->in.kind == IN_BLK && !e->in.size_known);
    r->split_exact = e->o->full || r->stream;
    if (e->o->progress != NULL && e->in.size_known)
        atomic_store(&e->o->progress->in_total, e->in.size);
    e->grain_bytes = 1u << 20;
    e->grain = calloc(EST_GRAINS, sizeof *e->grain);
    e->chunk_buf = malloc(e->o->chunk);
    e->eng = eng_new(e->o->level, e->err);
    if (e->eng == NULL)
        return -1;
    e->tmp_cap = eng_bound(e->eng, (size_t)EST_GROUP * SCAN_BLOCK);
    e->tmp = malloc(e->tmp_cap);
    e->grp_buf[0] = malloc((size_t)EST_GROUP * SCAN_BLOCK);
    e->grp_buf[1] = malloc((size_t)EST_GROUP * SCAN_BLOCK);
    if (e->grain == NULL || e->chunk_buf == NULL || e->tmp == NULL || e->grp_buf[0] == NULL ||
        e->grp_buf[1] == NULL)
        return est_nomem(e);
    struct seg_sink sink = {e, est_get, est_data, est_zero};
    seg_init(&e->seg, e->o->chunk, e->o->zmin, CMP_ZMAX, &sink);
    return est_pool_open(e);
}

static int est_shape(struct est *e)
{
    struct est_result *r = e->r;
    double w0 = est_now(CLOCK_MONOTONIC), c0 = est_now(CLOCK_THREAD_CPUTIME_ID);
    int rc = r->split_exact ? est_shape_read(e) : est_shape_probe(e);
    if (rc == 0)
        rc = seg_end(&e->seg);
    r->in_bytes = r->split_exact ? e->in.pos : e->in.size;
    if (r->split_exact) { /* a pass over everything: its cost is the read's */
        e->read_wall = est_now(CLOCK_MONOTONIC) - w0;
        e->read_cpu = est_now(CLOCK_THREAD_CPUTIME_ID) - c0;
        e->read_timed = r->in_bytes - r->hole_bytes - r->free_bytes;
    }
    return rc;
}

static void est_free(struct est *e)
{
    if (e->pool != NULL)
        est_pool_close(e, true);
    est_workers_free(e);
    if (e->eng != NULL)
        eng_free(e->eng);
    free(e->tmp);
    free(e->grp_buf[0]);
    free(e->grp_buf[1]);
    free(e->grain);
    free(e->chunk_buf);
    free(e->ch);
    free(e->cal);
    free(e->px);
}

int est_run(int fd, const struct est_opts *o, struct est_result *r, struct sp_err *err)
{
    struct est e;
    memset(&e, 0, sizeof e);
    memset(r, 0, sizeof *r);
    e.o = o;
    e.r = r;
    e.err = err;
    e.in.fd = fd;
    double t0 = est_now(CLOCK_MONOTONIC);
    int rc = est_setup(&e);
    if (rc == 0)
        rc = est_shape(&e);
    double read_wall = e.read_wall, read_cpu = e.read_cpu;
    uint64_t read_timed = e.read_timed;
    if (rc == 0 && !r->stream)
        rc = est_sample_chunks(&e);
    if (rc == 0)
        rc = est_time_reads(&e);
    if (e.pool != NULL) {
        int prc = est_pool_close(&e, rc != 0);
        rc = rc != 0 ? rc : prc;
    }
    if (r->split_exact && read_timed > 0) { /* the full pass is the better guide */
        e.read_wall = read_wall;
        e.read_cpu = read_cpu;
        e.read_timed = read_timed;
    }
    if (rc == 0)
        rc = est_finish(&e);
    r->took = est_now(CLOCK_MONOTONIC) - t0;
    est_free(&e);
    if (rc != 0)
        est_result_free(r);
    return rc;
}

void est_result_free(struct est_result *r)
{
    free(r->map);
    r->map = NULL;
    r->cells = 0;
}

