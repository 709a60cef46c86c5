/* ra.h — random access to the content of a spigz file through its index:
 * the reader under the mount and the NBD plugin.
 *
 * A read decodes only the pieces it touches.  Every piece is checked before
 * a byte of it is returned (piece.h: a zero piece against the canonical
 * encoding of its length, a data piece walked, decoded alone and its CRC-32
 * compared), so a read returns the image's bytes or fails: never a wrong
 * byte.  The index and the file are untrusted, as in restore: the index is
 * loaded and validated by idx_load(), with dec's piece-size limit
 * (DEC_PIECE_LIMIT), and each piece proves itself when it is first read.
 *
 * Zero pieces: answered with memset once their bytes passed the check,
 * which is done once and remembered (a bit a piece), never inflated.
 * Data pieces: decoded and checked, then kept in an LRU cache of decoded
 * pieces of at most cache_bytes bytes (and at most cache_bytes / 4 KiB
 * pieces); a piece larger than the cache is decoded for each read and not
 * kept.  Decoding happens outside the lock; a thread that wants a piece
 * another thread is decoding waits for it rather than decode it twice (and
 * decodes it itself if that decode failed or could not be kept).
 *
 * Read-ahead: a read that spans several data pieces hands all but its first
 * to read-ahead threads, which decode them into the cache while the reader
 * decodes the first (the reader then waits for them as for any decode under
 * way); a read that continues the previous one (starting in that one's last
 * piece or the next) also queues the data pieces after it, two per thread,
 * within half the cache.  The threads start at the first such need, never
 * in ra_open(), and end in ra_close().  A caller that forks after reading
 * (the mount reads the partition table, then its daemon forks) opens with
 * hold_ahead and releases it in the process that serves: threads started
 * before a fork would not exist in the child, and a piece they had taken
 * would be waited for forever.  They only fill the cache: a piece that fails there is
 * decoded again by the reader that needs it, which reports the failure.
 *
 * The file changed: every piece that is not already checked and held (a
 * decoded piece in the cache, a zero piece's bit) is read again, and before
 * it is, the file's size, inode and device are compared with those
 * recorded at ra_open(): any difference fails the read (SP_ERR_DATA), and
 * a piece cut off by a truncation fails as "unexpected end of file"; never
 * zeros.
 *
 * Memory: the index's tables (idx.h), a bit per piece and a word per run of
 * zero or data pieces; the cache; and per concurrent call at most one
 * piece's compressed and decoded bytes (each <= DEC_PIECE_LIMIT), a 256 KiB
 * scratch and a decoder, kept in a free list for the next call (as many as
 * there were calls at once, each read-ahead thread counting as one).  A
 * cached piece evicted while a reader copies from it lives until that copy
 * ends.
 *
 * Contract: ra_open() and ra_close() from one thread, with no other call
 * running (ra_close() joins the read-ahead threads); ra_size(), ra_extent()
 * and ra_pread() from any number of threads
 * at once (each with its own buffer and sp_err).  The caller owns fd and
 * keeps it open until ra_close(); the reader only preads it (its offset is
 * never moved).  Never prints or exits.
 */
#ifndef SPIGZ_RA_H
#define SPIGZ_RA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define RA_CACHE_DEFAULT ((uint64_t)64 << 20)

struct ra_opts {
    uint64_t cache_bytes;   /* decoded pieces kept; 0: RA_CACHE_DEFAULT */
    unsigned ahead_threads; /* read-ahead threads; 0: one per CPU (at most 8) */
    bool no_ahead;          /* no read-ahead threads at all */
    bool hold_ahead;        /* none until ra_hold_ahead(r, false) */
};

struct ra;

/* Open the spigz file on fd (a regular file; its data member at offset 0).
 * 1 with *out, 0 when it has no usable index (why says why: no spigz index,
 * an index that does not validate, pieces over DEC_PIECE_LIMIT), -1 on an
 * error (*err set: reading, memory).  o may be NULL (the defaults). */
int ra_open(int fd, const struct ra_opts *o, struct ra **out, char *why, size_t whylen,
            struct sp_err *err);

/* The content's length. */
uint64_t ra_size(const struct ra *r);

/* Read up to len bytes of the content at off into buf: the bytes read
 * (fewer than len only at the content's end; 0 for len 0 or off at or past
 * the end), or -1 with *err set: SP_ERR_DATA or SP_ERR_CHECK when a piece
 * fails its check or the file changed (the message names the piece's
 * content range), SP_ERR_READ on a read error, SP_ERR_NOMEM.  On failure
 * buf's content is undefined. */
int64_t ra_pread(struct ra *r, void *buf, size_t len, uint64_t off, struct sp_err *err);

/* The run of zero pieces, or of data pieces, holding content offset off:
 * 0 with *len (bytes from off to the run's end) and *zero, or -1 when off
 * is at or past the end.  A zero run is reported only as far as its pieces
 * passed their check (each against the canonical encoding of its length,
 * once, as a read checks it; at most RA_EXTENT_CHECK pieces a call, the
 * run then reported shorter and the next call going on): a caller may
 * skip a zero extent without reading it (a hole, SEEK_HOLE) and still
 * never take a wrong byte.  A zero piece that fails the check (or cannot
 * be read) is reported as a one-piece data run, whose read fails.  A data
 * run may hold zeros too. */
#define RA_EXTENT_CHECK 4096
int ra_extent(struct ra *r, uint64_t off, uint64_t *len, bool *zero);

/* Hold (no read-ahead thread is started and nothing is queued) or release
 * read-ahead.  Any thread. */
void ra_hold_ahead(struct ra *r, bool hold);

/* How many reads so far were taken as a sequential reader's (their first
 * piece near the previous read's end), each queueing the pieces after it
 * for read-ahead.  Counted only while read-ahead runs (threads wanted, not
 * held).  Any thread. */
uint64_t ra_seq_reads(struct ra *r);

/* Free everything (r may be NULL).  The caller closes fd. */
void ra_close(struct ra *r);

#endif
