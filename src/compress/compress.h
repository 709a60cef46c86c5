/* compress.h — one input to one gzip member: the compression pipeline.
 *
 *   reader (input.c) -> segmenter (scan.c) -> pool (pool.c) -> writer (out.c)
 *
 * The calling thread reads and segments; `threads` workers compress data
 * chunks (engine.c); the pool's writer thread emits chunks and zero runs
 * (zrun.c) in input order and folds their CRCs (crcz.c).  doc/DESIGN.md
 * explains the threads, the ordering and the back-pressure.
 *
 * Contract: cmp_run() neither prints nor exits nor closes descriptors.  It
 * returns 0 with *st filled, or -1 with *err set (the output then holds a
 * partial member that the caller must discard).  Several cmp_run() calls may
 * run at once on different descriptors.
 *
 * Progress (opts->progress, progress.h): `in` counts input bytes once they
 * are settled: a data chunk when it is written (so `out` and `in` describe
 * the same prefix and out/in is the ratio so far), a zero run as soon as the
 * segmenter knows it is one (so a long run or a hole advances at once, not in
 * 1 GiB pieces); `zeros` counts zero-run bytes (holes included); `out` counts
 * every output byte (header, pieces, trailer, index).  Updates are a few
 * atomic adds per piece and per read run; they change no output byte.
 */
#ifndef SPIGZ_COMPRESS_H
#define SPIGZ_COMPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "progress.h"
#include "range.h"

struct mf;

#define CMP_CHUNK_DEFAULT (1u << 20)  /* data chunk: 1 MiB (see DESIGN.md) */
#define CMP_ZMIN_DEFAULT (16u << 10)  /* zero-run threshold, measured: DESIGN.md A.2 */
#define CMP_ZMAX ((uint64_t)1 << 30)  /* zero-run piece: 1 GiB */

struct cmp_opts {
    int level;          /* 0..eng_max_level() */
    unsigned threads;   /* compression threads, >= 1 */
    size_t chunk;       /* data chunk bytes, a multiple of 4 KiB */
    uint64_t zmin;      /* zero-run threshold bytes, a multiple of 4 KiB */
    const char *name;   /* FNAME to store, or NULL */
    uint32_t mtime;     /* MTIME to store, 0 for none */
    bool index;         /* append the piece index (doc/FORMAT.md) */
    bool rsyncable;     /* content-defined chunk ends (scan.h, seg_rsyncable) */
    struct sp_progress *progress; /* counters to advance, or NULL (see below) */
    const struct sp_range *zero_ranges; /* read as zeros, unread (input.h); */
    size_t nzero_ranges;                /* none by default */
    bool rescue;        /* media errors: retry, then zeros (rescue.h) */
    bool nocache;       /* drop what was read from the page cache (devices
                           always do: input.h) */
    const char *const *notes; /* what the caller said of the input (a disk
                           with two layouts, a damaged filesystem), kept in
                           the index (idx_w_add_notes): none by default */
    size_t nnotes;
    struct mf *manifest; /* with the index: the manifest to store after the
                           notes (mf.h), to which cmp_run adds the image
                           digest ("image.xxh3-128-tree", digest.h, computed
                           as the content goes by); NULL: none */
};

struct cmp_stats {
    uint64_t in_bytes;    /* uncompressed length */
    uint64_t out_bytes;   /* gzip member length */
    uint64_t frame_bytes; /* of which gzip header and trailer (not deflate) */
    uint64_t index_bytes; /* of which the index members and footer */
    uint64_t zero_bytes;  /* bytes coded as zero runs */
    uint64_t hole_bytes;  /* of which skipped as holes, never read */
    uint64_t free_bytes;  /* of which skipped as zero ranges, never read */
    uint32_t crc;         /* CRC-32 of the input */
    bool size_changed;    /* a regular file changed size while being read */
    /* --rescue: the input's ranges that could not be read, coded as zeros
     * (sorted, disjoint; malloc'd, the caller frees them), and their sum.
     * The index lists them too (doc/FORMAT.md). */
    struct sp_range *bad;
    size_t nbad;
    uint64_t bad_bytes;
};

void cmp_opts_default(struct cmp_opts *o);

int cmp_run(int in_fd, int out_fd, const struct cmp_opts *opts,
            struct cmp_stats *st, struct sp_err *err);

#endif
