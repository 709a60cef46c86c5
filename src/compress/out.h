/* out.h — the compressor's output: buffered writes to a file descriptor.
 *
 * Small writes (gzip header, zero-run heads and tails) are gathered in a
 * buffer; large ones (compressed chunks) go straight to write(2) after a
 * flush.  Runs of zero bytes are written from a static zero page, so a 64 GiB
 * hole's ~62 MB of zero-run bodies never sit in memory.  Short writes and
 * EINTR are retried.  The first failure is kept in `err`; every later call
 * returns -1 at once.
 *
 * Contract: one thread at a time (the writer thread during a run, the caller
 * before and after).  The caller owns fd.
 */
#ifndef SPIGZ_OUT_H
#define SPIGZ_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define OUT_BUF 65536

struct out {
    int fd;
    uint64_t total;   /* bytes accepted so far */
    size_t n;         /* bytes in buf */
    int failed;
    struct sp_err err;
    uint8_t buf[OUT_BUF];
};

void out_init(struct out *o, int fd);
int out_write(struct out *o, const void *p, size_t n);
int out_zeros(struct out *o, uint64_t n);
int out_flush(struct out *o);

#endif
