/* estimate.h — predict spigz's output size and time without writing it.
 *
 * Three steps (doc/DESIGN.md, "The estimate", gives the reasoning):
 *
 *  1. Shape.  Every 4 KiB block is classified zero or data.  Holes come from
 *     SEEK_HOLE and cost nothing.  In sample mode on a seekable input (regular
 *     file or block device) a data extent is probed in groups of EST_GROUP
 *     blocks: one block per group, drawn from the seed, is read; a group
 *     whose draw differs from a neighbour's sits at an edge and is read
 *     whole, so data regions are found to the block; a group inside a data
 *     region (three data draws in a row) is taken as data unread; the groups
 *     between zero draws are taken as zero, and the data they may hide is
 *     estimated from the groups hit in zero stretches.  Full mode (--estimate=full) and streams read every
 *     byte.  The blocks drive the compressor's own segmenter (scan.h,
 *     seg_blank), so the chunks, the zero runs and the index are those a
 *     compression would make, and priced exactly.
 *  2. Sample.  Every data chunk has two pieces (at positions drawn from the
 *     seed) compressed alone with the real engine and level, while the shape
 *     pass goes on; EST_CAL chunks, one from each stratum of the pieces'
 *     ratio, are then compressed whole and piece by piece, which calibrates
 *     the pieces (a line in their ratio).  With few chunks all are compressed
 *     whole.  Streams do the same as the chunks pass.  The 90% interval combines the pieces' spread
 *     within each chunk and the calibration's jackknife variance.
 *  3. Time.  The compression CPU time per data byte and the read cost per
 *     byte measured in step 2 predict a compression run at `threads`.
 *
 * The sample depends only on the content, the options and the seed: the same
 * inputs give the same figures whatever the thread count, bar the times.
 *
 * Contract: est_run() neither prints nor exits; 0 with *r filled, or -1 with
 * *err set.  It reads fd from its current offset (pread for seekable inputs)
 * and does not restore it.  r->map is owned by the caller (est_result_free).
 * Several est_run() calls may run at once on different descriptors.
 */
#ifndef SPIGZ_ESTIMATE_H
#define SPIGZ_ESTIMATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "progress.h"
#include "range.h"


struct est_opts {
    int level;
    unsigned threads;    /* compression threads to predict for, >= 1 */
    unsigned cpus;       /* online CPUs, for the time prediction */
    size_t chunk;        /* as struct cmp_opts */
    uint64_t zmin;
    bool index;          /* the compression would write the index */
    size_t name_len;     /* FNAME bytes the compression would store, 0 = none */
    size_t manifest_len; /* index payload bytes of the manifest the compression
                            would store (cli_manifest_payload), 0 = none */
    bool full;           /* read every block */
    uint64_t seed;
    unsigned cells;      /* map cells wanted, 0 = no map */
    struct sp_progress *progress;
    const struct sp_range *zero_ranges; /* read as zeros (input.h), or none */
    size_t nzero_ranges;
};

struct est_result {
    uint64_t in_bytes;       /* input length */
    uint64_t hole_bytes;     /* holes, never read */
    uint64_t free_bytes;     /* zero ranges (--free=zero), never read */
    uint64_t zero_bytes;     /* bytes on the zero path (holes included) */
    uint64_t data_bytes;     /* bytes in data chunks */
    bool split_exact;        /* every block was read: the split is exact */
    bool stream;             /* read once from a pipe or the like */
    uint64_t chunks;         /* data chunks */
    uint64_t sampled;        /* of which compressed whole */
    uint64_t proxied;        /* of which measured by pieces */
    uint64_t sampled_bytes;  /* input bytes put through the engine */
    uint64_t read_bytes;     /* bytes actually read or probed */
    double size, lo, hi;     /* predicted output bytes; 90% interval */
    double ratio;            /* predicted compressed / data bytes */
    double seconds;          /* predicted compression time at `threads` */
    double took;             /* what the estimate took, seconds */
    uint8_t *map;            /* cells entries: data share, 0..255 */
    unsigned cells;
    uint64_t cell_bytes;     /* input bytes per cell (the last may be short) */
};

int est_run(int fd, const struct est_opts *o, struct est_result *r, struct sp_err *err);

void est_result_free(struct est_result *r);

#endif
