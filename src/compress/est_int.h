/* est_int.h — PRIVATE to the estimate: what its files share.
 *
 *   estimate.c     the run: set up, the passes in turn, free (est_run)
 *   est_shape.c    step 1, the shape: probes or a full read into the
 *                  segmenter; the map
 *   est_sample.c   step 2, the sample: the pool that compresses chunks and
 *                  pieces, and which chunks it is given
 *   est_predict.c  steps 2 and 3: the calibration, the interval, the time
 *
 * Contract: as estimate.h's: nothing prints or exits; -1 with *e->err set
 * on failure.  One struct est per est_run(); its fields belong to the
 * calling thread, but those the pool's writer thread fills (the sample's
 * measurements, marked below) until est_pool_close() returns.
 */
#ifndef SPIGZ_EST_INT_H
#define SPIGZ_EST_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "err.h"
#include "estimate.h"
#include "input.h"
#include "scan.h"

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

static inline double est_now(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* splitmix64: the seed's stream of choices, the same on every machine. */
static inline uint64_t est_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static inline int est_nomem(struct est *e)
{
    sp_err_set(e->err, SP_ERR_NOMEM, 0, "out of memory");
    return -1;
}

/* ---- est_shape.c ---- */

/* The segmenter, its sink the shape's: data chunks recorded, zero pieces
 * priced. */
void est_shape_init(struct est *e);
/* The shape pass: every block classified (or presumed), into the
 * segmenter, which it ends; r's split and byte counts filled.  0 or -1. */
int est_shape(struct est *e);
/* pread exactly len bytes at input offset off (zero ranges cleared, the
 * bytes counted as read); a short read means the input shrank.  0 or -1. */
int est_pread(struct est *e, uint64_t off, size_t len, uint8_t *buf);
/* The map's cells, from the grains, into r->map.  0 or -1. */
int est_map_finish(struct est *e);

/* ---- est_sample.c ---- */

/* The pool and its workers' slots.  0 or -1. */
int est_pool_open(struct est *e);
/* Close the pool (abort: drop what is queued), taking the first error of
 * a worker or the writer into *e->err.  0 or -1. */
int est_pool_close(struct est *e, bool abort);
void est_workers_free(struct est *e);
/* A stream's chunk, measured as it passes.  0 or -1. */
int est_sample_put(struct est *e, const uint8_t *buf, size_t len);
/* Read chunk c (number idx) for its kind and queue it; replace: its
 * pieces were measured already, the whole takes their place.  0 or -1. */
int est_queue(struct est *e, const struct est_chunk *c, size_t idx, enum est_kind kind,
              bool replace);
/* After the shape pass, seekable inputs: the chunks compressed whole
 * (few chunks) or that calibrate.  0 or -1. */
int est_sample_chunks(struct est *e);
/* Timed reads of the compressor's size when the sample made too few.  0
 * or -1. */
int est_time_reads(struct est *e);

/* ---- est_predict.c ---- */

/* The prediction into *e->r (and the map).  0 or -1. */
int est_finish(struct est *e);

#endif
