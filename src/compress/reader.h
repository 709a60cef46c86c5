/* reader.h — a thread that reads and classifies the input ahead of the
 * segmenter.
 *
 * The reader thread pulls extents from input.c into a small set of windows,
 * splits each window into runs of zero and data 4 KiB blocks, and queues the
 * runs.  A window holding only zeros is given back at once and its run merged
 * with the zero run before it, so the reader runs ahead through zeros (a
 * 3 GB empty tail, a hole) without bound while compression of earlier data
 * goes on; only data holds windows, so memory stays at `nwin` windows.
 * Without this, the zeros after the data would be scanned by one thread
 * while the compressors wait.
 *
 * The runs come out in input order, on the 4 KiB grid, so the segmenter sees
 * exactly the blocks it would have seen reading itself.
 *
 * rd_open() gives the same runs without a thread (and without a scout):
 * each rd_next() reads and classifies on the caller's thread, for the
 * estimate, which times its own reads.  rd_feed() is the loop both run:
 * runs into the segmenter (scan.h), in order.
 *
 * Contract: rd_start/rd_open, rd_next, rd_feed and rd_stop belong to one
 * consumer thread.  The struct in_src belongs to the reader (its thread,
 * or rd_next's caller) from rd_start()/rd_open() to rd_stop().  Errors are
 * reported through *err, never printed.
 */
#ifndef SPIGZ_READER_H
#define SPIGZ_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "input.h"
#include "scan.h"

struct rd;

struct rd_run {
    const uint8_t *data; /* NULL: len zero bytes */
    uint64_t len;
};

/* Start reading in with nwin windows of in's window size.  NULL with *err. */
struct rd *rd_start(struct in_src *in, unsigned nwin, struct sp_err *err);

/* The next run: 1 with *run filled (data valid until the next call), 0 at
 * the end of the input, -1 when reading failed (*err set). */
int rd_next(struct rd *r, struct rd_run *run, struct sp_err *err);

/* The same runs read on the calling thread, one window of in's window
 * size, no scout.  NULL with *err. */
struct rd *rd_open(struct in_src *in, struct sp_err *err);

/* Stop the reader (early or at the end) and free everything. */
void rd_stop(struct rd *r);

/* What rd_feed tells its caller after the segmenter took a run: the
 * segmenter's state, the run, and its offset in the input. */
typedef void (*rd_seen_fn)(void *ctx, const struct seg *s, const struct rd_run *run,
                           uint64_t off);

/* The read -> classify -> segment loop: every run of r, in order, into s
 * (seg_zeros for zeros, seg_data for data), then to seen (if not NULL).
 * 0 at the input's end (seg_end() is the caller's), -1 when a read failed
 * (*err set) or the segmenter's sink stopped. */
int rd_feed(struct rd *r, struct seg *s, rd_seen_fn seen, void *ctx, struct sp_err *err);

#endif
