/* io.h — reads and writes that finish, and the size of a file or device.
 *
 * read(2), pread(2), write(2) and pwrite(2) may move fewer bytes than asked
 * (pipes, terminals, signals, the end of a device) or fail with EINTR.  These
 * are the loops that retry both, written once.
 *
 * What a read of 0 bytes means, decided here for every caller: the end of
 * the input.  It is never an error and never retried.  io_read and io_pread
 * stop there and return 0 with *got < n, so a caller always tells the end
 * from an error, and decides itself what a short input means (a stream's
 * end, a file that shrank, a cut index); io_pread_exact is the usual
 * decision, fewer than n bytes being IO_SHORT.
 *
 * A write that returns 0 for a non-empty buffer (no byte taken, no error)
 * would never finish: it fails with EIO.
 *
 * Errors return -1 with errno as the failing call left it; *got (*put) then
 * counts the bytes moved before the failure, for callers that report where
 * it happened or keep what was read.  got and put may be NULL.
 *
 * Contract: no allocation, no printing, no state kept; any thread may call
 * them (each on its own descriptor, or with pread/pwrite on a shared one);
 * async-signal-safe.  The caller owns the descriptor and the buffers.
 */
#ifndef SPIGZ_IO_H
#define SPIGZ_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define IO_SHORT 1 /* io_pread_exact: the input ended first */

/* Read until n bytes are in p or the input ends: 0 (*got < n only at the
 * end), or -1 with errno. */
int io_read(int fd, void *p, size_t n, size_t *got);

/* The same at file offset off, with pread(2); the file offset stays. */
int io_pread(int fd, void *p, size_t n, uint64_t off, size_t *got);

/* Exactly n bytes at off: 0, IO_SHORT when the file ends first, or -1 with
 * errno. */
int io_pread_exact(int fd, void *p, size_t n, uint64_t off);

/* One read(2) (pread(2) at off), retried on EINTR only: what it returns,
 * 0 at the end, or -1 with errno.  For readers that take what a stream has
 * now rather than wait for a full buffer. */
ssize_t io_read_once(int fd, void *p, size_t n);
ssize_t io_pread_once(int fd, void *p, size_t n, uint64_t off);

/* Write all n bytes of p: 0, or -1 with errno (*put: the bytes written). */
int io_write(int fd, const void *p, size_t n, size_t *put);

/* The same at file offset off, with pwrite(2); the file offset stays. */
int io_pwrite(int fd, const void *p, size_t n, uint64_t off, size_t *put);

/* The size in bytes of what fd opens, st being its fstat(2): a regular
 * file's st_size, a block device's size (BLKGETSIZE64).  0 with *bytes, or
 * -1 for anything else, or when the system cannot tell a device's size.
 * Whole sizes, from offset 0: callers subtract where they start. */
int io_size(int fd, const struct stat *st, uint64_t *bytes);

#endif
