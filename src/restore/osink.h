/* osink.h — where decompressed bytes go: a file, a device, a pipe, or
 * nowhere (-t), holes left for zero blocks when the output allows it.
 *
 * Sparse output: a 4 KiB block (aligned on the file's offsets) that is all
 * zero is not written; the file offset moves over it, and osink_finish() sets
 * the final size, so trailing zeros become a hole too.  Partial blocks are
 * always written.  Sparse output needs a regular file positioned at its end
 * and not in append mode (otherwise skipped blocks would keep old bytes).
 *
 * Two ways in, not to be mixed on one sink: sequential (osink_write,
 * osink_zeros: the stream order) and positioned (osink_pwrite, osink_pzeros:
 * any order, seekable outputs only).
 *
 * Contract: sequential calls and osink_finish() from one thread at a time;
 * positioned calls from any number of threads at once (see below).  The
 * caller owns fd.  The first sequential failure is kept in `err`; later
 * sequential calls return -1 at once.
 */
#ifndef SPIGZ_OSINK_H
#define SPIGZ_OSINK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "progress.h"
#include "range.h"

#include <pthread.h>

enum osink_sparse { OSINK_SPARSE_AUTO, OSINK_SPARSE_ALWAYS, OSINK_SPARSE_NEVER };

struct osink {
    int fd;             /* -1: discard everything (testing) */
    bool sparse;        /* leave holes for zero blocks */
    bool seekable;      /* positioned writes possible */
    uint64_t base;      /* file offset of output byte 0 */
    uint64_t pos;       /* sequential: output bytes accepted */
    uint64_t skipped;   /* sequential: zero bytes not yet seeked over */
    uint64_t written;   /* bytes actually written */
    uint64_t holes;     /* zero bytes left as holes */
    bool sequential;    /* the sequential calls are in use */
    bool windowed;      /* sequential input clipped to [win_off, win_end) */
    uint64_t win_off, win_end, lpos;
    int failed;
    struct sp_err err;
    /* A block device: zero spans are zeroed by the kernel (BLKZEROOUT:
     * WRITE ZEROES where the device offloads it, else the kernel's own
     * writes), or with `discard` by fallocate(PUNCH_HOLE), which only
     * succeeds where the device guarantees zeros after the discard; a
     * device that takes neither gets plain writes.  Only the span's whole
     * 4 KiB pages are zeroed so (a page holding data too is written: no page
     * cache page is ever half-zeroed behind its back).  Writes past
     * dev_size fail with "the image is larger than the device", and
     * osink_finish() syncs the device and drops its page cache
     * (fsync, BLKFLSBUF). */
    bool device;
    bool discard;
    int dfd;            /* --direct: the device opened with O_DIRECT, or -1 */
    uint64_t dev_size;  /* bytes from base to the device's end */
    _Atomic uint64_t offloaded; /* bytes zeroed by BLKZEROOUT or discard */
    _Atomic int no_offload;     /* the device refused both: plain writes */
    /* --compare (osink_open_compare): nothing is written; every output byte
     * is compared with the target's byte at the same offset, and the ranges
     * that differ are listed (bytes past the target's end differ).  A
     * regular file or a block device is read with pread (positioned: the
     * indexed path compares pieces in parallel), a regular file's holes
     * being zeros without a read; anything else (a FIFO, a character device
     * such as /dev/null or /dev/zero, a socket) is a stream, read once in
     * order with read() (seekable false: the decoders output in order), its
     * end where a read returns 0.  A failure to read the target is the
     * output side's error (SP_ERR_WRITE: the CLI names the target, never
     * the backup, for it). */
    bool compare;
    bool cmp_stream;            /* read in order with read() */
    bool cmp_holes;             /* a regular file: SEEK_DATA finds its holes */
    uint64_t cmp_size;          /* the target's size from base (UINT64_MAX:
                                   unknown, a stream's) */
    bool cmp_device;            /* a device: what was read leaves the page cache */
    struct osink_diff *diff;
    struct sp_progress *prog;   /* its `syncing` set while osink_finish()
                                   flushes a device, or NULL (dec_run sets it) */
};

struct osink_diff {
    pthread_mutex_t mu;
    struct sp_range *r;         /* sorted once osink_finish() returns */
    size_t n, cap;
    uint64_t bytes;             /* sum of the ranges */
    uint64_t compared;          /* bytes compared */
    bool nomem;
    bool eof;                   /* a stream target ended (read returned 0) */
};

/* Prepare fd (or -1 for nothing) for output.  AUTO is sparse for a regular
 * file at its end, never for pipes, terminals and devices; ALWAYS also for
 * devices (the user says the device reads as zeros), never for a regular
 * file with bytes after its offset.  Returns 0 or -1. */
int osink_open(struct osink *o, int fd, enum osink_sparse mode, struct sp_err *err);

/* --direct (a device only; call after osink_open): positioned writes of
 * whole aligned pages go past the page cache (O_DIRECT), so a restore does
 * not fill it; the rest, and sequential writes, go through it as usual.
 * 0, or -1 with *err set.  osink_close() releases the descriptor. */
int osink_set_direct(struct osink *o, struct sp_err *err);

/* Compare instead of writing: the target open on fd (a file or device
 * read from offset 0, or a stream read from where it is).  The diff list
 * is the sink's until osink_close(). */
int osink_open_compare(struct osink *o, int fd, struct sp_err *err);

/* Release what osink_open_compare() or osink_set_direct() took (harmless
 * after a plain osink_open). */
void osink_close(struct osink *o);

/* Zero device spans by discard where the device guarantees zeros (a
 * device only; call after osink_open). */
void osink_set_discard(struct osink *o, bool discard);

/* Sequential input is content from offset 0; only [off, off + len) of it
 * is output (--range without an index). */
void osink_window(struct osink *o, uint64_t off, uint64_t len);

int osink_write(struct osink *o, const uint8_t *p, size_t n);
int osink_zeros(struct osink *o, uint64_t n);

/* Positioned writes may run on several threads at once: they only read *o
 * and count into *acc, one per thread (summed by the caller). */
struct osink_acc {
    uint64_t written, holes;
    struct sp_err err;
};

int osink_pwrite(const struct osink *o, uint64_t off, const uint8_t *p, size_t n,
                 struct osink_acc *acc);
int osink_pzeros(const struct osink *o, uint64_t off, uint64_t n, struct osink_acc *acc);

/* The output is `total` bytes long (sequential: what was output, whatever
 * total says): seek over pending holes, set the size of a sparse file, and
 * leave the file offset at base + total, as sequential writes would have
 * (positioned writes never move it).  Returns 0 or -1. */
int osink_finish(struct osink *o, uint64_t total);

#endif
