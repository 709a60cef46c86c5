/* est_predict.c — the estimate's prediction (estimate.h, steps 2 and 3):
 * the calibrated total of the data chunks and its 90% interval, the data
 * presumed zero may hide, the index, and the time.  See est_int.h. */
#include "est_int.h"
#include "idx_w.h"
#include "scout.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the prediction ---- */

/* Index bytes for the pieces, priced by the index writer (idx_w.h), a
 * data piece's clen taken as ratio x len (truncated, plus one). */
static double est_index_bytes(const struct est *e, double ratio)
{
    if (!e->o->index)
        return 0;
    uint64_t payload = e->idx_payload + e->o->manifest_len;
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

int est_finish(struct est *e)
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
