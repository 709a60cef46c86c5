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
 * Contract: rd_start/rd_next/rd_stop belong to one consumer thread.  The
 * struct in_src belongs to the reader thread from rd_start() to rd_stop().
 * Errors are reported through *err, never printed.
 */
#ifndef SPIGZ_READER_H
#define SPIGZ_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "input.h"

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

/* Stop the reader (early or at the end) and free everything. */
void rd_stop(struct rd *r);

#endif
