/* est_shape.c — the estimate's shape pass (estimate.h, step 1): which blocks
 * are zero and which data, probed in groups (sample mode) or read whole
 * (full mode, streams: the compressor's own loop, reader.h), fed to the
 * compressor's segmenter, whose sink records the data chunks and prices
 * the zero pieces and their index records exactly; and the map of where
 * the data lies.  See est_int.h. */
#define _GNU_SOURCE /* SEEK_DATA, SEEK_HOLE */
#include "config.h"
#include "est_int.h"
#include "compress.h"
#include "engine.h"
#include "idx_w.h"
#include "io.h"
#include "reader.h"
#include "zrun.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
int est_map_finish(struct est *e)
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

void est_shape_init(struct est *e)
{
    struct seg_sink sink = {e, est_get, est_data, est_zero};
    seg_init(&e->seg, e->o->chunk, e->o->zmin, CMP_ZMAX, &sink);
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
int est_pread(struct est *e, uint64_t off, size_t len, uint8_t *buf)
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
 * whole group is read when its draw and a neighbour's differ (an edge of a
 * data region), taken as data unread inside a data region, and presumed
 * zero between zero draws (est_probe_extent). */
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

int est_shape(struct est *e)
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
