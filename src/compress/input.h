/* input.h — the reader: large reads, holes found instead of read.
 *
 * Regular files are walked with SEEK_DATA/SEEK_HOLE: holes come back as zero
 * extents without a byte read (a 64 GiB hole costs two lseek calls); data
 * extents are read in windows.  Hole edges are rounded inward to SCAN_BLOCK so
 * every extent starts on the 4 KiB grid; a hole that reaches the end of the
 * file may end on a partial block.  Devices, pipes and terminals are read
 * in order, each window filled completely despite short reads, so the
 * extents seen are the same whatever the read sizes were.
 *
 * Regular files and devices are read with pread; with a scout (scout.h),
 * stretches it found zero come back as zero extents (data NULL) unread, the
 * same bytes a read would have classified.
 *
 * Zero ranges (in_set_zero_ranges: --free=zero, from the filesystems'
 * allocation maps, src/layout) are read as zeros: their whole 4 KiB blocks
 * come back as zero extents unread, and the part of a block they cover at
 * their edges is cleared in the window after the read, so the scanner sees
 * exactly the bytes "the input with those ranges zeroed" holds, whatever
 * the read sizes.  The scout is not used with them (it would read free
 * space).
 *
 * With a rescue state (in_set_rescue, --rescue), a media error on a regular
 * file or device costs only the sectors that fail (rescue.h): they come back
 * as zeros and are listed.  Without one, the first read error ends the run,
 * its offset in the message.
 *
 * With nocache (devices always; files with --nocache), the pages just read
 * are dropped from the page cache (POSIX_FADV_DONTNEED) as the reader goes:
 * backing up a 500 GB disk must not evict everything else the machine had
 * cached.  The page cache of a regular file is kept by default (a file read
 * again soon, as the tests and benches do, stays fast).
 *
 * A regular file or device is read from its current offset (stdin redirected from a
 * file another program has partly read); offsets in extents count from
 * there.  in_close() leaves the file offset just past what was read, as a
 * sequential reader would.
 *
 * Contract: a struct in_src belongs to one thread at a time.  The caller owns
 * the file descriptor and the window buffers.  Errors are reported through
 * struct sp_err, never printed.
 */
#ifndef SPIGZ_INPUT_H
#define SPIGZ_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "progress.h"
#include "range.h"
#include "rescue.h"
#include "scout.h"

enum in_kind { IN_REG, IN_BLK, IN_STREAM };

struct in_src {
    int fd;
    enum in_kind kind;
    bool size_known;    /* regular file with st_size > 0, or a device */
    uint64_t size;      /* bytes from base to the end, when size_known */
    uint64_t base;      /* file offset where the input starts (stdin may be
                           a file already partly read: gzip starts there) */
    bool seek_holes;    /* SEEK_DATA/SEEK_HOLE work on this file */
    uint64_t pos;       /* offset of the next extent */
    uint64_t data_end;  /* end of the data extent being read (regular files) */
    bool eof;
    bool short_file;    /* a regular file ended before its initial size */
    size_t wsize;       /* bytes per data extent at most */
    uint64_t hole_bytes; /* bytes skipped as holes */
    struct scout *scout; /* zero units found ahead (reader.c), or NULL */
    uint64_t scout_bytes; /* bytes skipped because the scout marked them */
    const struct sp_range *zr; /* zero ranges, relative to base, or NULL */
    size_t nzr;         /* how many */
    uint64_t zr_bytes;  /* bytes of whole blocks skipped as zero ranges */
    struct sp_progress *prog; /* PROG_SKIP advanced as zero ranges are passed
                                 over, or NULL */
    struct rsc *rescue; /* read errors survived (rescue.h), or NULL: stop */
    bool nocache;       /* drop the pages read from the page cache */
    uint64_t dropped;   /* [0, dropped) advised away already */
};

struct in_ext {
    uint64_t off, len;
    const uint8_t *data; /* NULL for a hole: len zero bytes */
};

/* Prepare to read fd in windows of wsize bytes (a multiple of 4 KiB).
 * Returns 0 or -1. */
int in_open(struct in_src *in, int fd, size_t wsize, struct sp_err *err);

/* The next extent: returns 1 with *ext filled (a data extent is read into
 * win, wsize bytes), 0 at the end, -1 on error. */
int in_next(struct in_src *in, uint8_t *win, struct in_ext *ext, struct sp_err *err);

/* Read the ranges r[0..n) (sorted, disjoint, relative to the input's start,
 * owned by the caller until in_close) as zeros.  Call after in_open. */
void in_set_zero_ranges(struct in_src *in, const struct sp_range *r, size_t n);

/* Clear the bytes of buf (the input's [off, off + len)) that lie in a zero
 * range: for readers of their own (the estimate's probes). */
void in_mask_zero_ranges(const struct in_src *in, uint64_t off, uint8_t *buf, size_t len);

/* The first zero range's whole blocks at or after pos, [*s, *e) (on the
 * 4 KiB grid, *e may be the input's end); false when there are none. */
bool in_next_zero_range(const struct in_src *in, uint64_t pos, uint64_t *s, uint64_t *e);

/* Survive media errors (rescue.h), r set up with rsc_init on the same
 * descriptor and base; r stays the caller's.  Streams ignore it. */
void in_set_rescue(struct in_src *in, struct rsc *r);

/* True when a regular file's size differs now from when it was opened. */
bool in_size_changed(const struct in_src *in);

/* Leave the file offset just past what was read. */
void in_close(struct in_src *in);

#endif
