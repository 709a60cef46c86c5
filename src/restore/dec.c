/* dec.c — see dec.h. */
#include "dec.h"
#include "digest.h"
#include "mf.h"
#include "text.h"
#include "engine.h"
#include "idx.h"
#include "io.h"
#include "le.h"
#include "piece.h"
#include "pool.h"
#include "unz.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Memory.  A file's pieces are as large as whoever made it chose, so the
 * indexed path holds at most DEC_BUDGET bytes of piece buffers at once,
 * whatever the file: the pipeline's depth is cut to fit its largest data
 * piece (compressed + decoded) into it, at least 2 (one being decoded, one
 * being read).  Data pieces over DEC_PIECE_LIMIT (dec.h) are not taken in
 * memory at all.  Zero pieces take no buffer:
 * their bytes are checked in PC_SCRATCH steps (piece.h). */
#define DEC_BUDGET ((uint64_t)256 << 20)
#define DEC_ZERO_STEP ((uint64_t)16 << 20) /* see dec_emit_zeros() */

/* One pipeline item: a piece, or the part of it a range needs. */
struct dec_item {
    uint64_t k;              /* piece number */
    uint64_t skip, len;      /* the slice of the piece's content to output */
    uint8_t *in, *out;       /* data pieces: compressed bytes + 03 00, decoded */
    size_t in_cap, out_cap, in_len;
    uint8_t *leaves;         /* with a digest: the piece's block hashes */
    size_t leaves_cap;
    bool leafed;             /* they were made (the piece starts on a block) */
};

/* Pieces are placed in a seekable output only once every piece before them
 * has passed its check: a piece's offset is the sum of the lengths the index
 * claims for the pieces before it, and only their checks prove those.  So a
 * byte placed is always the byte gunzip writes there, even when a later
 * piece shows the index wrong.  `vnext` is the first piece not yet checked;
 * `vring` marks the checked pieces after it (slot k % depth holds k + 1);
 * at most `depth` pieces are in the pipeline, so the ring never wraps onto
 * a live slot. */
struct dec_order {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t vnext;
    uint64_t *vring;
    unsigned depth;
    bool stop;               /* a piece failed, or the run is stopping */
};

struct dec_ctx {
    const struct idx *x;
    int fd;
    struct osink *out;
    uint64_t out_origin;     /* content offset of output byte 0 */
    struct eng_dec **decs;   /* one per worker */
    uint8_t **scratch;       /* one per worker: zero pieces' bytes */
    struct sp_err *werr;     /* one per worker */
    struct osink_acc *acc;   /* one per worker: positioned writes */
    uint64_t *bad;           /* one per worker: offset of a piece that failed
                                its check, UINT64_MAX if none */
    struct dec_order ord;
    struct sp_err perr;      /* producer */
    struct sp_err oerr;      /* writer */
    uint64_t written;        /* content bytes output */
    struct sp_progress *prog;
    uint64_t prog_in;        /* compressed bytes counted in prog (writer) */
    bool salvage;            /* a piece that fails is zeros, listed */
    struct dec_damage *dmg;  /* one per worker: the pieces that failed */
    struct dec_verdict *vd;  /* --salvage: is the data member damaged? */
    struct dg *dg;           /* the image digest (writer), or NULL */
};

/* --salvage: a piece that fails its check is damage only if the data member
 * is damaged; if it decodes whole as gzip (its CRC-32 and length right), the
 * index is what is wrong, and placing pieces by its lengths would write
 * bytes at offsets gunzip does not (a forged index can swap two pieces'
 * lengths and keep every checksum right).  Asked once, by the first worker
 * whose piece fails: the file is decoded sequentially to nowhere (as -t),
 * while pieces after the failed one wait (ordered placement, or the
 * stream's writer waiting for that piece). */
struct dec_verdict {
    pthread_mutex_t mu;
    int state;               /* DEC_V_* */
    unsigned threads;
    bool lenient_end, no_fast;
    struct sp_err err;       /* DEC_V_FAILED: why */
};

enum { DEC_V_UNKNOWN, DEC_V_DAMAGED, DEC_V_INTACT, DEC_V_FAILED };

/* --salvage: the pieces a worker found damaged, as content ranges. */
struct dec_damage {
    struct sp_range *r;
    size_t n, cap;
    unsigned zero_pieces;    /* zero pieces with damaged bytes (content known) */
};

static int dec_grow(uint8_t **p, size_t *cap, size_t need);

/* ---- workers: check and decode a piece ---- */

/* A data piece, as read by dec_read_piece(): checked and decoded (piece.h). */
static bool dec_data_ok(struct dec_ctx *c, struct dec_item *it, unsigned worker)
{
    return pc_data_check(c->decs[worker], c->x, it->k, it->in, it->in_len, it->out) == PC_OK;
}

static void dec_stop(struct dec_order *d)
{
    pthread_mutex_lock(&d->mu);
    d->stop = true;
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
}

/* Piece k passed its check: wait until every piece before it has too.
 * True when they have; false when the run stopped first.  Never waits on a
 * piece no worker holds: workers take pieces in order, and a check never
 * waits for anything. */
static bool dec_checked(struct dec_order *d, uint64_t k)
{
    pthread_mutex_lock(&d->mu);
    d->vring[k % d->depth] = k + 1;
    while (d->vring[d->vnext % d->depth] == d->vnext + 1)
        d->vnext++;
    pthread_cond_broadcast(&d->cv);
    while (d->vnext <= k && !d->stop)
        pthread_cond_wait(&d->cv, &d->mu);
    bool ok = d->vnext > k;
    pthread_mutex_unlock(&d->mu);
    return ok;
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

/* --salvage: piece it failed its check, and the data member is damaged
 * (dec_verdict).  The index passed checks 1-6 (its checksums, and the
 * pieces' CRCs combine to the member's): its lengths are what is left to
 * go by, so the piece's slice becomes zeros at its place and is listed,
 * and every other piece is restored.  A zero piece's content is known
 * whatever its bytes: it is counted, not listed.  0, or -1 (out of memory:
 * the run stops as without --salvage). */
static int dec_damaged(struct dec_ctx *c, struct dec_item *it, unsigned worker)
{
    struct dec_damage *d = &c->dmg[worker];
    const struct idx_piece *pc = &c->x->p[it->k];
    if (!pc->data) {
        d->zero_pieces++;
        return 0;
    }
    if (d->n == d->cap) {
        size_t cap = d->cap == 0 ? 16 : 2 * d->cap;
        struct sp_range *r = realloc(d->r, cap * sizeof *r);
        if (r == NULL)
            return -1;
        d->r = r;
        d->cap = cap;
    }
    d->r[d->n++] = (struct sp_range){pc->uoff + it->skip, it->len};
    memset(it->out + it->skip, 0, (size_t)it->len);
    return 0;
}

/* The data member (and what follows it) decoded sequentially to nowhere,
 * from the file's start, as -t would: DEC_V_INTACT when it decodes whole,
 * DEC_V_DAMAGED when its data or a trailer is wrong, DEC_V_FAILED on any
 * other failure (read error, memory: v->err). */
static int dec_member_state(struct dec_ctx *c, struct dec_verdict *v)
{
    struct osink o;
    struct unz_stats us = {0};
    struct sp_err e = {0};
    if (lseek(c->fd, (off_t)c->x->base, SEEK_SET) < 0) {
        sp_err_set(&v->err, SP_ERR_READ, errno, "cannot seek back to check the file");
        return DEC_V_FAILED;
    }
    if (osink_open(&o, -1, OSINK_SPARSE_NEVER, &v->err) != 0)
        return DEC_V_FAILED;
    struct unz_opts uo = {.threads = v->threads, .lenient_end = v->lenient_end,
                          .no_fast = v->no_fast};
    int rc = unz_run(c->fd, &o, &uo, &us, &e);
    free(us.bad);
    if (rc == 0)
        return DEC_V_INTACT;
    if (e.kind == SP_ERR_DATA || e.kind == SP_ERR_CHECK || e.kind == SP_ERR_FORMAT)
        return DEC_V_DAMAGED;
    v->err = e;
    return DEC_V_FAILED;
}

/* The verdict, decided by the first caller (the others wait for it). */
static int dec_verdict(struct dec_ctx *c)
{
    struct dec_verdict *v = c->vd;
    pthread_mutex_lock(&v->mu);
    if (v->state == DEC_V_UNKNOWN)
        v->state = dec_member_state(c, v);
    int st = v->state;
    pthread_mutex_unlock(&v->mu);
    return st;
}

/* --salvage: piece it failed its check.  1 when it is damage (its slice is
 * zeros now, listed), 0 when the index is wrong (it decodes sequentially),
 * -1 on an error (werr set). */
static int dec_salvage_piece(struct dec_ctx *c, struct dec_item *it, unsigned worker)
{
    int v = dec_verdict(c);
    if (v == DEC_V_FAILED) {
        c->werr[worker] = c->vd->err;
        return -1;
    }
    return v == DEC_V_DAMAGED && dec_damaged(c, it, worker) == 0 ? 1 : 0;
}

/* The image digest: a checked data piece's block hashes, made by its
 * worker when the piece starts on a block (the writer folds them in). */
static int dec_leaves(struct dec_ctx *c, struct dec_item *it, unsigned worker)
{
    const struct idx_piece *pc = &c->x->p[it->k];
    it->leafed = pc->data && it->skip == 0 && pc->uoff % DG_BLOCK == 0;
    if (!it->leafed)
        return 0;
    size_t need = (size_t)(it->len / DG_BLOCK * DG_LEN) + 1;
    if (dec_grow(&it->leaves, &it->leaves_cap, need) != 0) {
        sp_err_set(&c->werr[worker], SP_ERR_NOMEM, 0, "out of memory");
        dec_stop(&c->ord);
        return -1;
    }
    dg_leaves(it->out, (size_t)it->len, it->leaves);
    return 0;
}

static int dec_work(void *vctx, void *vitem, unsigned worker)
{
    struct dec_ctx *c = vctx;
    struct dec_item *it = vitem;
    const struct idx_piece *pc = &c->x->p[it->k];
    int ok = pc->data ? dec_data_ok(c, it, worker)
                      : pc_zero_ok(c->fd, c->x, it->k, c->scratch[worker], &c->werr[worker]);
    if (ok == 0 && c->salvage)
        ok = dec_salvage_piece(c, it, worker);
    if (ok == 0) {
        /* The index lies about this piece (or its bytes are damaged, which
         * the sequential decode will tell): not an error of ours yet. */
        if (pc->uoff < c->bad[worker])
            c->bad[worker] = pc->uoff;
    }
    if (ok != 1) {
        dec_stop(&c->ord);
        return -1;
    }
    if (c->dg != NULL && dec_leaves(c, it, worker) != 0)
        return -1;
    if (!c->out->seekable)
        return 0; /* the writer emits it in order */
    if (!dec_checked(&c->ord, it->k))
        return -1;
    if (dec_place(c, it, worker) != 0) {
        dec_stop(&c->ord);
        return -1;
    }
    return 0;
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
    if (c->dg != NULL &&
        (data ? dg_add(c->dg, it->out + it->skip, (size_t)it->len, it->leafed ? it->leaves : NULL)
              : dg_zeros(c->dg, it->len)) != 0) {
        sp_err_set(&c->oerr, SP_ERR_INTERNAL, 0, "the image digest failed");
        return -1;
    }
    /* Progress: the piece counts once it is out. */
    c->prog_in += pc_clen(c->x, it->k);
    prog_add(c->prog, PROG_IN, pc_clen(c->x, it->k));
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
    free(it->leaves);
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

/* The same, page-aligned (for --direct); the old contents are not kept. */
static int dec_grow_aligned(uint8_t **p, size_t *cap, size_t need)
{
    if (*cap >= need)
        return 0;
    void *q;
    if (posix_memalign(&q, 4096, need) != 0)
        return -1;
    free(*p);
    *p = q;
    *cap = need;
    return 0;
}

/* A data piece's compressed bytes, closed by an empty final block.  Zero
 * pieces are read by the worker that checks them. */
static int dec_read_piece(struct dec_ctx *c, struct dec_item *it)
{
    const struct idx *x = c->x;
    it->in_len = 0;
    if (!x->p[it->k].data)
        return 0;
    size_t clen = (size_t)pc_clen(x, it->k);
    if (dec_grow(&it->in, &it->in_cap, clen + 2) != 0 ||
        dec_grow_aligned(&it->out, &it->out_cap, (size_t)pc_ulen(x, it->k)) != 0) {
        sp_err_set(&c->perr, SP_ERR_NOMEM, 0, "out of memory");
        return -1;
    }
    if (pc_read_data(c->fd, x, it->k, it->in, &c->perr) != 0)
        return -1;
    it->in_len = clen + 2;
    return 0;
}

/* The pieces overlapping [from, to), in order, from piece `first`. */
static int dec_feed(struct dec_ctx *c, struct pool *pool, uint64_t first, uint64_t from,
                    uint64_t to)
{
    const struct idx *x = c->x;
    for (uint64_t k = first; k < x->n && x->p[k].uoff < to; k++) {
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

/* The pipeline's depth: 2p + 2 (p decoding, p waiting, one being read, one
 * being written), less when the largest data piece would not fit the
 * budget that many times. */
static unsigned dec_depth(const struct idx *x, unsigned threads)
{
    uint64_t item = x->max_ulen + x->max_clen + 2;
    uint64_t fit = DEC_BUDGET / item;
    uint64_t want = 2 * (uint64_t)threads + 2;
    return (unsigned)(fit < 2 ? 2 : fit < want ? fit : want);
}

static int dec_workers(struct dec_ctx *c, unsigned n, unsigned depth, uint64_t first,
                       struct sp_err *err)
{
    c->decs = calloc(n, sizeof *c->decs);
    c->scratch = calloc(n, sizeof *c->scratch);
    c->werr = calloc(n, sizeof *c->werr);
    c->acc = calloc(n, sizeof *c->acc);
    c->bad = malloc(n * sizeof *c->bad);
    c->dmg = calloc(n, sizeof *c->dmg);
    c->ord.vring = calloc(depth, sizeof *c->ord.vring);
    c->ord.depth = depth;
    c->ord.vnext = first;
    if (c->decs == NULL || c->scratch == NULL || c->werr == NULL || c->acc == NULL ||
        c->bad == NULL || c->dmg == NULL || c->ord.vring == NULL) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
        return -1;
    }
    for (unsigned i = 0; i < n; i++) {
        c->bad[i] = UINT64_MAX;
        if ((c->scratch[i] = malloc(PC_SCRATCH)) == NULL) {
            sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
            return -1;
        }
        if ((c->decs[i] = eng_dec_new(err)) == NULL)
            return -1;
    }
    return 0;
}

static void dec_workers_free(struct dec_ctx *c, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        if (c->decs != NULL)
            eng_dec_free(c->decs[i]);
        if (c->scratch != NULL)
            free(c->scratch[i]);
        if (c->acc != NULL) {
            c->out->written += c->acc[i].written;
            c->out->holes += c->acc[i].holes;
        }
    }
    free(c->decs);
    free(c->scratch);
    free(c->werr);
    free(c->acc);
    free(c->bad);
    for (unsigned i = 0; c->dmg != NULL && i < n; i++)
        free(c->dmg[i].r);
    free(c->dmg);
    free(c->ord.vring);
}

/* The workers' damaged pieces, as one sorted list with touching ranges
 * joined, into st.  0, or -1 out of memory. */
static int dec_damage_collect(struct dec_ctx *c, unsigned n, struct dec_stats *st)
{
    size_t total = 0;
    for (unsigned i = 0; i < n; i++) {
        total += c->dmg[i].n;
        st->zero_repaired += c->dmg[i].zero_pieces;
    }
    if (total == 0)
        return 0;
    struct sp_range *r = malloc(total * sizeof *r);
    if (r == NULL)
        return -1;
    size_t k = 0;
    for (unsigned i = 0; i < n; i++) {
        if (c->dmg[i].n == 0)
            continue; /* its list may be NULL */
        memcpy(r + k, c->dmg[i].r, c->dmg[i].n * sizeof *r);
        k += c->dmg[i].n;
    }
    st->bad = r;
    st->nbad = sp_ranges_normalize(r, total);
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

/* Run the pipeline over [from, to).  0 done, -1 error (*err), 1 a piece
 * disagreed with the index (st->index_warning says which). */
static int dec_pipeline(struct dec_ctx *c, unsigned threads, uint64_t from, uint64_t to,
                        struct dec_stats *st, struct sp_err *err)
{
    uint64_t first = pc_find(c->x, from);
    unsigned depth = dec_depth(c->x, threads);
    if (dec_workers(c, threads, depth, first, err) != 0)
        return -1;
    pthread_mutex_init(&c->ord.mu, NULL);
    pthread_cond_init(&c->ord.cv, NULL);
    int rc = -1;
    struct pool *pool = pool_new(threads, depth, sizeof(struct dec_item), dec_work, dec_emit,
                                 c, err);
    if (pool != NULL) {
        int fed = dec_feed(c, pool, first, from, to);
        if (fed != 0)
            dec_stop(&c->ord); /* no worker waits on a piece never fed */
        int closed = pool_close(pool, fed != 0);
        uint64_t bad = dec_first_bad(c, threads);
        if (fed == 0 && closed == 0 && osink_finish(c->out, to - from) == 0) {
            rc = 0;
        } else if (fed == 0 && closed == 0) {
            *err = c->out->err;
        } else if (bad != UINT64_MAX && !dec_failed_otherwise(c, threads)) {
            snprintf(st->index_warning, sizeof st->index_warning,
                     "the piece at offset %llu does not match it", (unsigned long long)bad);
            rc = 1;
        } else {
            dec_pick_error(c, threads, err);
        }
        pool_free(pool, dec_item_free);
    }
    pthread_mutex_destroy(&c->ord.mu);
    pthread_cond_destroy(&c->ord.cv);
    return rc;
}

/* --range must lie inside the image: an offset past its end, or a length
 * given as a number that runs past it, is an error (dd would copy what there
 * is and exit 0, which hides a mistyped offset from a script).  "end" as the
 * length (UINT64_MAX) takes what there is; an offset at the very end gives 0
 * bytes.  Returns 0, or -1 with *err set. */
static int dec_range_check(const struct dec_opts *o, uint64_t total, struct sp_err *err)
{
    if (!o->range || (o->range_off <= total &&
                      (o->range_len == UINT64_MAX || o->range_len <= total - o->range_off)))
        return 0;
    if (o->range_len == UINT64_MAX)
        sp_err_set(err, SP_ERR_FORMAT, 0, "--range starts at %llu, past the end of the image "
                   "(%llu bytes)", (unsigned long long)o->range_off, (unsigned long long)total);
    else
        sp_err_set(err, SP_ERR_FORMAT, 0, "--range %llu:%llu runs past the end of the image "
                   "(%llu bytes)", (unsigned long long)o->range_off,
                   (unsigned long long)o->range_len, (unsigned long long)total);
    return -1;
}

/* The digest of what was decoded against the manifest's: a difference is
 * an error of the data (every piece passed its CRC-32, yet the image is
 * not the one the backup was made from). */
static int dec_digest_check(struct dec_ctx *c, const struct mf_entry *want,
                            struct dec_stats *st, struct sp_err *err)
{
    uint8_t got[DG_LEN];
    if (dg_final(c->dg, got) != 0) {
        sp_err_set(err, SP_ERR_INTERNAL, 0, "the image digest failed");
        return -1;
    }
    if (memcmp(got, want->v, DG_LEN) != 0) {
        char a[DG_TEXT_LEN], b[DG_TEXT_LEN];
        sp_err_set(err, SP_ERR_CHECK, 0, "the image's digest (%s) is not the one recorded "
                   "when the backup was made (%s)", dg_text(got, a), dg_text(want->v, b));
        return -1;
    }
    st->digest_checked = true;
    return 0;
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
    if (dec_range_check(o, x->total, err) != 0)
        return -1; /* before a byte is written */
    if (o->range) {
        from = o->range_off;
        to = o->range_len == UINT64_MAX ? x->total : from + o->range_len;
    }
    struct dec_verdict vd = {.state = DEC_V_UNKNOWN, .threads = o->threads,
                             .lenient_end = o->lenient_end, .no_fast = o->no_fast};
    pthread_mutex_init(&vd.mu, NULL);
    struct dec_ctx c = {.x = x, .fd = fd, .out = out, .out_origin = from,
                        .prog = o->progress, .salvage = o->salvage, .vd = &vd};
    if (o->progress != NULL) /* the exact output to come: what the display counts */
        atomic_store_explicit(&o->progress->out_total, to - from, memory_order_relaxed);
    const struct mf_entry *want = o->digest && !o->range && x->has_mf
                                      ? mf_get(&x->mf, DG_KEY) : NULL;
    if (want != NULL && (want->type != MF_BYTES || want->vlen != DG_LEN))
        want = NULL; /* a newer writer's: not ours to check */
    int rc = 0;
    if (want != NULL && (c.dg = dg_new()) == NULL) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory for the image digest");
        rc = -1;
    }
    if (rc == 0)
        rc = dec_pipeline(&c, o->threads, from, to, st, err);
    if (rc == 0 && want != NULL)
        rc = dec_digest_check(&c, want, st, err);
    dg_free(c.dg);
    pthread_mutex_destroy(&vd.mu);
    if (rc == 1 && o->progress != NULL) /* the sequential decode takes over */
        atomic_store_explicit(&o->progress->out_total, 0, memory_order_relaxed);
    if (rc == 0 && c.dmg != NULL && dec_damage_collect(&c, o->threads, st) != 0) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
        rc = -1;
    }
    dec_workers_free(&c, o->threads);
    *emitted = c.written;
    *counted = c.prog_in;
    st->out_bytes = c.written;
    st->in_bytes = x->data_len + x->index_len + IDX_FOOTER_LEN;
    st->indexed = rc != 1;
    st->have_header = true;
    st->hdr = x->hdr;
    if (rc == 0 && o->free_map && x->has_mf && mf_get(&x->mf, "options.free") != NULL)
        st->free_unmapped = mf_ranges(mf_get(&x->mf, "free.map"), &st->free, &st->nfree) != 0;
    if (rc == 0 && x->nbad > 0 && (st->unread = malloc(x->nbad * sizeof *st->unread)) != NULL) {
        memcpy(st->unread, x->bad, x->nbad * sizeof *st->unread);
        st->nunread = (size_t)x->nbad;
    }
    return rc;
}

void dec_notes_free(char **notes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(notes[i]);
    free(notes);
}

/* Move x's notes before those in (*v, *n): dec_list walks files joined by
 * cat from the last to the first, so the notes end in file order, the
 * first IDX_NOTES_MAX kept.  x keeps none.  Out of memory, they are
 * dropped (they describe the source; the content does not depend on them). */
static void dec_notes_take(struct idx *x, char ***v, size_t *n)
{
    size_t k = x->nnotes < IDX_NOTES_MAX ? x->nnotes : IDX_NOTES_MAX;
    size_t keep = *n < IDX_NOTES_MAX - k ? *n : IDX_NOTES_MAX - k;
    char **a = k > 0 ? realloc(*v, (k + *n) * sizeof *a) : NULL;
    if (a != NULL) {
        for (size_t i = keep; i < *n; i++) /* the later files' past the cap */
            free(a[i]);
        memmove(a + k, a, keep * sizeof *a);
        *n = k + keep;
    }
    for (size_t i = 0; i < x->nnotes; i++) {
        if (a != NULL && i < k)
            a[i] = x->notes[i];
        else
            free(x->notes[i]);
    }
    if (a != NULL)
        *v = a;
    free(x->notes);
    x->notes = NULL;
    x->nnotes = 0;
}

/* ---- choosing the path ---- */

/* Try the index of a seekable regular input.  1: loaded, 0: not usable. */
static int dec_try_index(int fd, struct idx *x, uint64_t *end, char *warn, size_t wn,
                         struct sp_err *err, bool salvage)
{
    struct stat s;
    off_t here = lseek(fd, 0, SEEK_CUR);
    if (fstat(fd, &s) != 0 || !S_ISREG(s.st_mode) || here < 0 || here > s.st_size)
        return 0;
    *end = (uint64_t)s.st_size;
    return (salvage ? idx_load_salvage : idx_load)(fd, (uint64_t)here, (uint64_t)s.st_size, x,
                                                   warn, wn, err);
}

/* A device output must hold what will be written, whenever that is known
 * before a byte is: the image (from the index: x), or --range's bytes (a
 * number, or with the index "end"; the range checked against the image
 * first).  Without an index and a range, the length is unknown: the
 * device's end is met as an error, and the CLI says a partial image was
 * written.  Refused so, a range restored onto a device too small for it no
 * longer writes what fits and then fails, leaving a cut filesystem that
 * blkid still recognises.  0, or -1 with *err set. */
/* "the device (B bytes, S) is smaller than the WHAT (B bytes, S): not written" */
static int dec_too_small(struct sp_err *err, uint64_t dev, const char *what, uint64_t need)
{
    char a[TXT_SIZE_LEN], b[TXT_SIZE_LEN];
    sp_err_set(err, SP_ERR_WRITE, 0,
               "the device (%llu bytes, %s) is smaller than the %s (%llu bytes, %s): not written",
               (unsigned long long)dev, txt_size(a, sizeof a, (double)dev), what,
               (unsigned long long)need, txt_size(b, sizeof b, (double)need));
    return -1;
}

static int dec_device_fits(const struct dec_opts *o, const struct idx *x,
                           const struct osink *out, struct sp_err *err)
{
    if (x == NULL) {
        if (!o->range || o->range_len == UINT64_MAX || o->range_len <= out->dev_size)
            return 0;
        return dec_too_small(err, out->dev_size, "range", o->range_len);
    }
    if (!o->range)
        return x->total <= out->dev_size ? 0 : dec_too_small(err, out->dev_size, "image", x->total);
    if (dec_range_check(o, x->total, err) != 0)
        return -1;
    uint64_t need = o->range_len == UINT64_MAX ? x->total - o->range_off : o->range_len;
    return need <= out->dev_size ? 0 : dec_too_small(err, out->dev_size, "range", need);
}

int dec_run(int in_fd, struct osink *out, const struct dec_opts *o,
            struct dec_stats *st, struct sp_err *err)
{
    memset(st, 0, sizeof *st);
    out->prog = o->progress; /* "syncing" while a device is flushed */
    struct idx x;
    uint64_t end = 0;
    int r = o->use_index ? dec_try_index(in_fd, &x, &end, st->index_warning,
                                         sizeof st->index_warning, err, o->salvage) : 0;
    if (r == 1 && x.trailer_mismatch)
        st->trailer_damaged = true;
    if (r < 0)
        return -1;
    if (r == 1 && (x.max_ulen > DEC_PIECE_LIMIT || x.max_clen > DEC_PIECE_LIMIT)) {
        /* A valid index, but pieces too large to hold (see DEC_BUDGET): not
         * a fault of the file, so no warning; -vv says "sequential". */
        (void)lseek(in_fd, (off_t)x.base, SEEK_SET);
        idx_free(&x);
        r = 0;
    }
    if (out->device && dec_device_fits(o, r == 1 ? &x : NULL, out, err) != 0) {
        if (r == 1)
            idx_free(&x);
        return -1; /* refused before a byte is written */
    }
    uint64_t skip = 0; /* stream output already written by the indexed path */
    uint64_t emitted = 0, counted = 0; /* by the indexed path */
    if (r == 1) {
        uint64_t base = x.base;
        int rc = dec_indexed(in_fd, &x, out, o, st, &emitted, &counted, err);
        if (rc == 0)
            dec_notes_take(&x, &st->notes, &st->nnotes);
        idx_free(&x);
        if (rc != 1) {
            (void)lseek(in_fd, (off_t)end, SEEK_SET); /* consumed, as a stream read */
            if (rc == 0 && !o->range && end - base > counted)
                prog_add(o->progress, PROG_IN, end - base - counted); /* frame, index */
            return rc;
        }
        /* The index lied: decode it all again, as any gzip file.  Only
         * pieces whose every predecessor passed its check were placed, so
         * what is in the output is gunzip's bytes at gunzip's offsets, and
         * the sequential pass writes them again (a device, or a file not
         * at its end: every byte).  A sparse file is cut back to where the
         * output began first, so that it ends up holding exactly what the
         * sequential decode writes, even if that decode fails early.  On a
         * stream, what went out is skipped. */
        if (lseek(in_fd, (off_t)base, SEEK_SET) < 0) {
            sp_err_set(err, SP_ERR_READ, errno, "cannot seek back to decode sequentially");
            return -1;
        }
        struct stat os;
        if (out->fd >= 0 && out->sparse && fstat(out->fd, &os) == 0 && S_ISREG(os.st_mode) &&
            ftruncate(out->fd, (off_t)out->base) != 0) {
            sp_err_set(err, SP_ERR_WRITE, errno, "cannot truncate the output");
            return -1;
        }
        skip = out->seekable || out->fd < 0 ? 0 : emitted;
    }
    if (o->range || skip > 0) {
        uint64_t off = (o->range ? o->range_off : 0), len = o->range ? o->range_len : UINT64_MAX;
        off = off > UINT64_MAX - skip ? UINT64_MAX : off + skip;
        osink_window(out, off, len > skip ? len - skip : 0);
    }
    struct unz_opts uo = {.threads = o->threads, .copy_non_gzip = o->copy_non_gzip,
                          .lenient_end = o->lenient_end, .progress = o->progress,
                          .prog_in_done = counted, .prog_out_done = emitted,
                          .salvage = o->salvage, .no_fast = o->no_fast};
    struct unz_stats us = {0};
    int rc = unz_run(in_fd, out, &uo, &us, err);
    st->fast_members = us.fast_members;
    st->zlib_members = us.zlib_members;
    st->bad = us.bad;
    st->nbad = us.nbad;
    st->shifted = us.shifted;
    st->shifted_at = us.shifted_at;
    st->unverified = us.unverified;
    st->repaired = us.repaired;
    st->in_bytes = us.in_bytes;
    st->out_bytes = us.out_bytes;
    st->trailing_garbage = us.trailing_garbage;
    st->trailing_zeros = us.trailing_zeros;
    st->have_header = us.have_header;
    st->hdr = us.first;
    st->last_mtime = us.last_mtime;
    st->zip_more = us.zip_more;
    st->lzw_flags = us.lzw_flags;
    st->extras = us.extras;
    memcpy(st->extra_len, us.extra_len, sizeof st->extra_len);
    if (rc == 0 && dec_range_check(o, us.out_bytes, err) != 0)
        rc = -1; /* known only now: what the window held went out */
    return rc;
}

/* ---- -l ---- */

/* No index: decode it all into nothing, as gzip -l does, and report the
 * first header and the last member's trailer. */
static int dec_list_plain(int fd, unsigned threads, bool lenient_end, struct dec_list *l,
                          struct sp_err *err)
{
    struct osink o;
    if (osink_open(&o, -1, OSINK_SPARSE_NEVER, err) != 0)
        return -1;
    /* zlib, as -t (cmd_decompress.c): a listing is an integrity check too */
    struct unz_opts uo = {.threads = threads, .lenient_end = lenient_end, .no_fast = true};
    struct unz_stats us;
    int rc = unz_run(fd, &o, &uo, &us, err);
    l->lzw_flags = us.lzw_flags; /* these hold on failure too */
    l->extras = us.extras;
    memcpy(l->extra_len, us.extra_len, sizeof l->extra_len);
    l->have_header = us.have_header;
    l->hdr = us.first;
    l->members = us.members;
    if (rc != 0)
        return -1;
    /* gzip -l counts the whole input, the part after a zip file's first
     * entry too (which no decoder reads) */
    l->compressed = us.read_bytes;
    for (;;) { /* to the end, or to a read error (the decode reported it) */
        uint8_t sink[8192];
        size_t got;
        int rc = io_read(fd, sink, sizeof sink, &got);
        l->compressed += got;
        if (rc != 0 || got < sizeof sink)
            break;
    }
    /* gzip 1.12 -l: the last member's length as decoded (not its ISIZE,
     * which is modulo 4 GiB) for a gzip member */
    l->uncompressed = us.last_fmt == UNZ_LAST_GZIP ? us.last_len : us.last_isize;
    l->crc = us.last_crc;
    l->all = us.out_bytes;
    l->trailing_garbage = us.trailing_garbage;
    l->trailing_zeros = us.trailing_zeros;
    l->maybe_wrapped = us.out_bytes != l->uncompressed;
    /* gzip -lv's method names, and its CRC "-1" for all but gzip members */
    l->legacy = us.members > 0 && us.last_fmt != UNZ_LAST_GZIP;
    l->method = us.last_fmt == UNZ_LAST_PACK ? "pack"
              : us.last_fmt == UNZ_LAST_LZW ? "compress"
              : us.last_fmt == UNZ_LAST_ZIP_STORE ? "store" : "deflate";
    l->zip_more = us.zip_more;
    l->mtime = us.last_mtime;
    return 0;
}

/* One spigz file of a listing, x, found before (at lower offsets than)
 * those already added: its sizes, and its unreadable ranges moved after it
 * (*after: the content of the files that follow it, already counted). */
static int dec_list_add(struct dec_list *l, struct idx *x, uint64_t *after)
{
    if (l->uncompressed > UINT64_MAX - x->total)
        return -1;
    l->uncompressed += x->total;
    l->deflated += x->data_len - x->header_len - 8;
    if (l->parts++ == 0) { /* the last file: gzip -lv's CRC and time */
        l->crc = x->crc;
        l->mtime = x->hdr.mtime;
    }
    l->hdr = x->hdr; /* the first file's in the end: its name */
    if (x->nbad > 0) {
        /* the ranges found so far belong to files after this one */
        for (size_t i = 0; i < l->nbad; i++)
            l->bad[i].off += x->total;
        struct sp_range *b = realloc(l->bad, (l->nbad + x->nbad) * sizeof *b);
        if (b == NULL)
            return -1;
        memmove(b + x->nbad, b, l->nbad * sizeof *b);
        memcpy(b, x->bad, x->nbad * sizeof *b);
        l->bad = b;
        l->nbad += (size_t)x->nbad;
    } else {
        for (size_t i = 0; i < l->nbad; i++)
            l->bad[i].off += x->total;
    }
    dec_notes_take(x, &l->notes, &l->nnotes);
    if (x->has_mf) { /* walked from the last file: the first's stays */
        mf_free(&l->mf);
        l->mf = x->mf;
        l->has_mf = true;
        memset(&x->mf, 0, sizeof x->mf);
        x->has_mf = false;
    }
    *after += x->total;
    return 0;
}

/* The whole input as spigz files, each with a valid index, one after the
 * other (one file, or cat a.gz b.gz): walked from the last footer back to
 * the input's offset.  1 with *l filled, 0 when it is not that (*l
 * cleared, why says why when a footer was there but did not validate),
 * -1 on a read error. */
static int dec_list_indexed(int fd, struct dec_list *l, char *why, size_t wn,
                            struct sp_err *err)
{
    struct stat s;
    off_t here = lseek(fd, 0, SEEK_CUR);
    if (fstat(fd, &s) != 0 || !S_ISREG(s.st_mode) || here < 0 || here > s.st_size)
        return 0;
    uint64_t end = (uint64_t)s.st_size, at = end, after = 0;
    int r = 1;
    while (r == 1 && at > (uint64_t)here) {
        uint64_t start;
        struct idx x;
        if ((r = idx_start(fd, (uint64_t)here, at, &start, err)) != 1)
            break;
        if ((r = idx_load(fd, start, at, &x, why, wn, err)) != 1)
            break;
        if (dec_list_add(l, &x, &after) != 0)
            r = 0; /* more than 64 bits, or no memory: decode it instead */
        idx_free(&x);
        at = start;
    }
    if (r != 1 || l->parts == 0) {
        char said[sizeof l->index_warning];
        /* the last file's index is bad: say so; an earlier file that is not
         * spigz's (or is, with a bad index) is only decoded */
        snprintf(said, sizeof said, "%s", r == 0 && at == end ? why : "");
        free(l->bad);
        dec_notes_free(l->notes, l->nnotes);
        mf_free(&l->mf);
        memset(l, 0, sizeof *l);
        snprintf(why, wn, "%s", said);
        return r < 0 ? -1 : 0;
    }
    l->compressed = end - (uint64_t)here;
    l->exact = true;
    l->have_header = true;
    l->members = l->parts;
    l->method = "deflate";
    (void)lseek(fd, (off_t)end, SEEK_SET);
    return 1;
}

int dec_list(int in_fd, unsigned threads, bool lenient_end, struct dec_list *l,
             struct sp_err *err)
{
    memset(l, 0, sizeof *l);
    int r = dec_list_indexed(in_fd, l, l->index_warning, sizeof l->index_warning, err);
    if (r < 0)
        return -1;
    if (r == 0)
        return dec_list_plain(in_fd, threads, lenient_end, l, err);
    return 0;
}

struct dec_prd {
    int fd;
    uint64_t off;
    uint8_t buf[4096];
    size_t pos, len;
};

static int dec_prd_getc(void *ctx)
{
    struct dec_prd *r = ctx;
    if (r->pos == r->len) {
        ssize_t n = io_pread_once(r->fd, r->buf, sizeof r->buf, r->off);
        if (n <= 0)
            return n < 0 ? -2 : -1;
        r->off += (uint64_t)n;
        r->pos = 0;
        r->len = (size_t)n;
    }
    return r->buf[r->pos++];
}

/* gzip checks a zip file's first local header before the output. */
static int dec_probe_zip(int fd, uint64_t at, struct sp_err *err)
{
    uint8_t h[30];
    ssize_t n = io_pread_once(fd, h, sizeof h, at);
    if (n < 4 || memcmp(h, "PK\003\004", 4) != 0)
        return 0; /* not zip after all: the decode says what it is */
    size_t skip, have = (size_t)n;
    if (have == 30) {
        have = 30 + (size_t)le_get16(h + 26) + le_get16(h + 28);
        uint8_t last; /* the name and extra field must be there too */
        n = io_pread_once(fd, &last, 1, at + have - 1);
        if (n < 0)
            return 0; /* the decode reports read errors */
        if (n == 0)
            have = 30;
    }
    const char *bad = unz_zip_check(h, have, &skip);
    if (bad == NULL)
        return 0;
    sp_err_set(err, SP_ERR_FORMAT, 0, "%s", bad);
    return -1;
}

int dec_probe(int fd, struct sp_err *err)
{
    off_t at = lseek(fd, 0, SEEK_CUR);
    if (at < 0)
        return 0; /* a stream: the decode will tell */
    uint8_t m[2];
    ssize_t n = io_pread_once(fd, m, sizeof m, (uint64_t)at);
    if (n < 0)
        return 0; /* the decode reports read errors */
    if (n == 0 || (n == 1 && m[0] != 0)) { /* as unz.c: a cut magic */
        sp_err_set(err, SP_ERR_DATA, 0, "unexpected end of file");
        return -1;
    }
    if (n == 1) {
        sp_err_set(err, SP_ERR_FORMAT, 0, "not in gzip format");
        return -1;
    }
    if (m[0] == 0x1f && (m[1] == 0x8b || m[1] == 0x9e)) {
        struct gz_info h;
        struct dec_prd *r = calloc(1, sizeof *r);
        if (r == NULL)
            return 0;
        r->fd = fd;
        r->off = (uint64_t)at;
        int hs = gz_read_header(dec_prd_getc, r, &h);
        free(r);
        if (hs == GZ_OK || hs == GZ_READ_ERROR)
            return 0;
        char msg[128];
        sp_err_set(err, hs == GZ_TRUNCATED ? SP_ERR_DATA : SP_ERR_FORMAT, 0, "%s",
                   gz_status_msg(hs, &h, msg, sizeof msg));
        return -1;
    }
    if (m[0] == 'P' && m[1] == 'K')
        return dec_probe_zip(fd, (uint64_t)at, err);
    if (m[0] == 0x1f && (m[1] == 0x1e || m[1] == 0x9d))
        return 0; /* pack, LZW: their checks come with the decode, as gzip's */
    sp_err_set(err, SP_ERR_FORMAT, 0, "not in gzip format");
    return -1;
}

int dec_first_header(int fd, struct gz_info *h)
{
    off_t at = lseek(fd, 0, SEEK_CUR);
    if (at < 0)
        return -1;
    struct dec_prd *r = calloc(1, sizeof *r);
    if (r == NULL)
        return -1;
    r->fd = fd;
    r->off = (uint64_t)at;
    int hs = gz_read_header(dec_prd_getc, r, h);
    free(r);
    return hs == GZ_OK ? 0 : -1;
}
