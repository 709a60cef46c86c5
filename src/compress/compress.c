/* compress.c — see compress.h. */
#include "compress.h"
#include "crcz.h"
#include "digest.h"
#include "engine.h"
#include "gzip.h"
#include "idx_w.h"
#include "mf.h"
#include "input.h"
#include "out.h"
#include "pool.h"
#include "reader.h"
#include "rescue.h"
#include "scan.h"
#include "zrun.h"

#include <stdlib.h>
#include <string.h>

#define CMP_WINDOW (1u << 20) /* read window: 1 MiB reads measured best here */
#define CMP_WINDOWS 8         /* windows of data the reader may hold ahead */

/* One pipeline item: a data chunk or a piece of a zero run. */
struct cmp_item {
    bool zero;
    uint64_t len;
    uint8_t *in, *out; /* chunk and compressed piece, allocated on first use */
    size_t out_len;
    uint32_t crc;
    uint64_t uoff;     /* content offset (set by the segmenter's sink) */
    uint8_t *leaves;   /* with a digest: the chunk's block hashes (digest.h) */
    bool leafed;       /* they were made (the chunk starts on a block) */
};

struct cmp_ctx {
    const struct cmp_opts *opts;
    struct pool *pool;
    struct eng **engs;        /* one per worker */
    struct sp_err *werr;      /* one per worker */
    size_t out_cap;
    struct cmp_item *cur;     /* item being filled by the segmenter */
    struct sp_err perr;       /* the producer's own error */
    /* Writer thread state (before/after the run: the calling thread). */
    struct out out;
    uint32_t crc;
    uint64_t length;
    struct idx_w *idx;        /* NULL with --no-index */
    uint64_t prog_zeros;      /* zero-run bytes counted in progress (producer) */
    uint64_t prod_off;        /* content queued so far (producer) */
    struct dg *dg;            /* the image digest (writer), or NULL */
};

/* ---- worker and writer callbacks ---- */

static int cmp_work(void *vctx, void *vitem, unsigned worker)
{
    struct cmp_ctx *c = vctx;
    struct cmp_item *it = vitem;
    it->crc = eng_crc32(0, it->in, (size_t)it->len);
    it->leafed = c->dg != NULL && it->uoff % DG_BLOCK == 0;
    if (it->leafed)
        dg_leaves(it->in, (size_t)it->len, it->leaves);
    return eng_compress(c->engs[worker], it->in, (size_t)it->len, it->out,
                        c->out_cap, &it->out_len, &c->werr[worker]);
}

static int cmp_emit(void *vctx, void *vitem)
{
    struct cmp_ctx *c = vctx;
    struct cmp_item *it = vitem;
    uint64_t before = c->out.total;
    if (it->zero) {
        struct zrun z;
        zrun_encode(it->len, &z);
        if (out_write(&c->out, z.head, z.head_len) != 0 ||
            out_zeros(&c->out, z.zeros) != 0 ||
            out_write(&c->out, z.tail, z.tail_len) != 0)
            return -1;
        c->crc = crcz_zeros(c->crc, it->len);
        if (c->dg != NULL && dg_zeros(c->dg, it->len) != 0)
            goto digest;
        if (c->idx != NULL && idx_w_add(c->idx, false, it->len, zrun_size(&z), 0, &c->out.err) != 0)
            return -1;
    } else {
        if (out_write(&c->out, it->out, it->out_len) != 0)
            return -1;
        c->crc = crcz_combine(c->crc, it->crc, it->len);
        if (c->dg != NULL &&
            dg_add(c->dg, it->in, (size_t)it->len, it->leafed ? it->leaves : NULL) != 0)
            goto digest;
        if (c->idx != NULL && idx_w_add(c->idx, true, it->len, it->out_len, it->crc,
                                          &c->out.err) != 0)
            return -1;
        prog_add(c->opts->progress, PROG_IN, it->len); /* zero runs: cmp_prog_zeros */
    }
    prog_add(c->opts->progress, PROG_OUT, c->out.total - before);
    c->length += it->len;
    return 0;
digest:
    sp_err_set(&c->out.err, SP_ERR_INTERNAL, 0, "the image digest failed");
    return -1;
}

static void cmp_item_free(void *vctx, void *vitem)
{
    (void)vctx;
    struct cmp_item *it = vitem;
    free(it->in);
    free(it->out);
    free(it->leaves);
}

/* ---- segmenter sink (the calling thread) ---- */

static uint8_t *cmp_get(void *vctx)
{
    struct cmp_ctx *c = vctx;
    struct cmp_item *it = pool_get(c->pool);
    if (it == NULL)
        return NULL;
    if (it->in == NULL) {
        it->in = malloc(c->opts->chunk);
        it->out = malloc(c->out_cap);
        if (c->dg != NULL)
            it->leaves = malloc(c->opts->chunk / DG_BLOCK * DG_LEN);
        if (it->in == NULL || it->out == NULL || (c->dg != NULL && it->leaves == NULL)) {
            sp_err_set(&c->perr, SP_ERR_NOMEM, 0, "out of memory for chunk buffers");
            return NULL;
        }
    }
    c->cur = it;
    return it->in;
}

static int cmp_data(void *vctx, uint8_t *buf, size_t len)
{
    struct cmp_ctx *c = vctx;
    struct cmp_item *it = c->cur;
    (void)buf;
    it->zero = false;
    it->len = len;
    it->uoff = c->prod_off;
    c->prod_off += len;
    c->cur = NULL;
    pool_put(c->pool, it, true);
    return 0;
}

static int cmp_zero(void *vctx, uint64_t len)
{
    struct cmp_ctx *c = vctx;
    struct cmp_item *it = pool_get(c->pool);
    if (it == NULL)
        return -1;
    it->zero = true;
    it->len = len;
    it->uoff = c->prod_off;
    c->prod_off += len;
    pool_put(c->pool, it, false);
    return 0;
}

/* ---- the run ---- */

void cmp_opts_default(struct cmp_opts *o)
{
    memset(o, 0, sizeof *o);
    o->level = 6;
    o->threads = 1;
    o->chunk = CMP_CHUNK_DEFAULT;
    o->zmin = CMP_ZMIN_DEFAULT;
    o->index = true;
    o->progress = NULL;
}

/* Progress: zero-run bytes count as soon as the segmenter has settled them
 * (sent, or pending in a run known to reach the threshold), so a long run or
 * a hole advances the display at once.  The sum never decreases. */
static void cmp_prog_zeros(struct cmp_ctx *c, const struct seg *sg)
{
    uint64_t z = sg->zero_bytes + (sg->zrun ? sg->zpend : 0);
    if (z > c->prog_zeros) {
        prog_add(c->opts->progress, PROG_IN, z - c->prog_zeros);
        prog_add(c->opts->progress, PROG_ZEROS, z - c->prog_zeros);
        c->prog_zeros = z;
    }
}

static void cmp_seen(void *vctx, const struct seg *sg, const struct rd_run *run, uint64_t off)
{
    (void)run;
    (void)off;
    cmp_prog_zeros(vctx, sg);
}

/* Segment and queue everything the reader thread classified.  Returns 0
 * or -1 (c->perr set unless the pool stopped because a worker or the writer
 * failed). */
static int cmp_feed(struct cmp_ctx *c, struct in_src *in, struct seg *sg)
{
    struct rd *r = rd_start(in, CMP_WINDOWS, &c->perr);
    if (r == NULL)
        return -1;
    int rc = rd_feed(r, sg, cmp_seen, c, &c->perr);
    rd_stop(r);
    if (rc < 0 || seg_end(sg) != 0)
        return -1;
    cmp_prog_zeros(c, sg);
    return 0;
}

/* Engines for every worker; the output capacity from the first. */
static int cmp_engines(struct cmp_ctx *c, struct sp_err *err)
{
    unsigned n = c->opts->threads;
    c->engs = calloc(n, sizeof *c->engs);
    c->werr = calloc(n, sizeof *c->werr);
    if (c->engs == NULL || c->werr == NULL) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
        return -1;
    }
    for (unsigned i = 0; i < n; i++)
        if ((c->engs[i] = eng_new(c->opts->level, err)) == NULL)
            return -1;
    if (c->opts->index && c->opts->manifest != NULL && (c->dg = dg_new()) == NULL) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory for the image digest");
        return -1;
    }
    c->out_cap = eng_bound(c->engs[0], c->opts->chunk);
    return 0;
}

static void cmp_cleanup(struct cmp_ctx *c)
{
    if (c->engs != NULL)
        for (unsigned i = 0; i < c->opts->threads; i++)
            eng_free(c->engs[i]);
    dg_free(c->dg);
    free(c->engs);
    free(c->werr);
}

/* The manifest, with the image digest, after the notes: the last thing in
 * the index's payload (FORMAT.md §2.2). */
static int cmp_manifest(struct cmp_ctx *c)
{
    struct mf *m = c->opts->manifest;
    uint8_t d[DG_LEN], *bytes = NULL;
    size_t len = 0;
    if (m == NULL || c->idx == NULL)
        return 0;
    if (dg_final(c->dg, d) != 0 || mf_add_bytes(m, DG_KEY, d, DG_LEN) != 0 ||
        mf_encode(m, &bytes, &len) != 0) {
        sp_err_set(&c->out.err, SP_ERR_NOMEM, 0, "the manifest could not be made");
        return -1;
    }
    int rc = idx_w_add_manifest(c->idx, bytes, len, &c->out.err);
    free(bytes);
    return rc;
}

/* The first error of the run, in causal order: producer, workers, writer. */
static void cmp_pick_error(struct cmp_ctx *c, struct sp_err *err)
{
    if (c->perr.kind != SP_OK) {
        *err = c->perr;
        return;
    }
    for (unsigned i = 0; i < c->opts->threads; i++)
        if (c->werr[i].kind != SP_OK) {
            *err = c->werr[i];
            return;
        }
    if (c->out.err.kind != SP_OK)
        *err = c->out.err;
    else
        sp_err_set(err, SP_ERR_INTERNAL, 0, "compression pipeline failed");
}

/* Close the data member; then the index members and footer. */
static int cmp_finish(struct cmp_ctx *c, uint64_t header_len, uint64_t *index_bytes)
{
    uint8_t end[GZ_END_LEN];
    uint64_t before = c->out.total;
    gz_end(end, c->crc, c->length);
    if (out_write(&c->out, end, sizeof end) != 0)
        return -1;
    uint64_t data_len = c->out.total;
    if (c->idx != NULL && idx_w_finish(c->idx, &c->out, c->length, data_len, header_len) != 0)
        return -1;
    *index_bytes = c->out.total - data_len;
    prog_add(c->opts->progress, PROG_OUT, c->out.total - before);
    return out_flush(&c->out);
}

int cmp_run(int in_fd, int out_fd, const struct cmp_opts *opts,
            struct cmp_stats *st, struct sp_err *err)
{
    struct cmp_ctx *c = calloc(1, sizeof *c);
    if (c == NULL) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
        return -1;
    }
    c->opts = opts;
    out_init(&c->out, out_fd);
    struct in_src in;
    int rc = -1;
    if (in_open(&in, in_fd, CMP_WINDOW, err) != 0) {
        free(c);
        return -1;
    }
    if (opts->nzero_ranges > 0)
        in_set_zero_ranges(&in, opts->zero_ranges, opts->nzero_ranges);
    in.prog = opts->progress;
    struct rsc rescue;
    rsc_init(&rescue, in_fd, in.base, opts->progress);
    if (opts->rescue)
        in_set_rescue(&in, &rescue);
    if (opts->nocache)
        in.nocache = true;
    if (cmp_engines(c, err) != 0)
        goto done;
    if (opts->index &&
        (c->idx = idx_w_new(idx_w_may_spill(in.size_known, in.size), err)) == NULL)
        goto done;

    size_t namelen = opts->name != NULL ? strlen(opts->name) : 0;
    uint8_t *hdr = malloc(GZ_HEADER_MAX(namelen));
    if (hdr == NULL) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
        goto done;
    }
    size_t hlen = gz_write_header(hdr, opts->name, opts->mtime, opts->level);
    int hw = out_write(&c->out, hdr, hlen);
    free(hdr);
    if (hw != 0) {
        *err = c->out.err;
        goto done;
    }
    prog_add(opts->progress, PROG_OUT, hlen);

    /* Depth: a chunk per worker in progress, one queued per worker, one being
     * written and one being filled; more buys nothing but memory. */
    unsigned depth = 2 * opts->threads + 2;
    c->pool = pool_new(opts->threads, depth, sizeof(struct cmp_item),
                       cmp_work, cmp_emit, c, err);
    if (c->pool == NULL)
        goto done;
    struct seg sg;
    struct seg_sink sink = {c, cmp_get, cmp_data, cmp_zero};
    seg_init(&sg, opts->chunk, opts->zmin, CMP_ZMAX, &sink);
    struct seg_rsync rs;
    if (opts->rsyncable)
        seg_rsyncable(&sg, &rs);
    int fed = cmp_feed(c, &in, &sg);
    int closed = pool_close(c->pool, fed != 0);
    if (fed != 0 || closed != 0) {
        cmp_pick_error(c, err);
        goto done;
    }
    uint64_t index_bytes = 0;
    if (c->idx != NULL && ((rescue.nbad > 0 &&
                            idx_w_add_bad(c->idx, rescue.bad, rescue.nbad, &c->out.err) != 0) ||
                           idx_w_add_notes(c->idx, opts->notes, opts->nnotes, &c->out.err) != 0 ||
                           cmp_manifest(c) != 0)) {
        *err = c->out.err;
        goto done;
    }
    if (cmp_finish(c, hlen, &index_bytes) != 0) {
        *err = c->out.err;
        goto done;
    }
    memset(st, 0, sizeof *st);
    st->in_bytes = c->length;
    st->out_bytes = c->out.total;
    st->frame_bytes = hlen + 8 + index_bytes; /* header, trailer, index */
    st->index_bytes = index_bytes;
    st->zero_bytes = sg.zero_bytes;
    st->hole_bytes = in.hole_bytes;
    st->free_bytes = in.zr_bytes;
    st->crc = c->crc;
    st->size_changed = in_size_changed(&in);
    st->bad = rescue.bad;
    st->nbad = rescue.nbad;
    st->bad_bytes = rescue.bad_bytes;
    rescue.bad = NULL; /* the caller's now */
    rc = 0;
done:
    if (c->pool != NULL)
        pool_free(c->pool, cmp_item_free);
    cmp_cleanup(c);
    idx_w_free(c->idx);
    in_close(&in);
    rsc_free(&rescue);
    free(c);
    return rc;
}
