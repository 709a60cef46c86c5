/* vol.h — a gzip backup as a read-only volume: its content, read at any
 * offset.  The one interface the front ends use (the FUSE mount in
 * cli/cmd_mount.c, the nbdkit plugin in nbd/), whatever made the file.
 *
 * Backends:
 *  - a spigz file with its index: ra.h (each piece checked before a byte of
 *    it is returned; zero runs answered without inflating);
 *  - any other gzip file (and a spigz file whose index does not validate): an
 *    index of access points (gzx.h), loaded from the file idx_name in
 *    idx_dirfd when one is there and matches the file, else built in one
 *    pass over the file (advancing prog) and then, with idx_save, saved
 *    there; vol_note() says which, and why a saved one was not used.
 *
 * Errors: a read either returns the content's bytes or fails with *err set
 * (SP_ERR_DATA or SP_ERR_CHECK: a piece failed its check or the file
 * changed, the message naming the content range; SP_ERR_READ; SP_ERR_NOMEM).
 * The front ends map a failure to EIO and log err's message once.
 *
 * Contract: vol_open() and vol_close() from one thread with no other call
 * running; vol_size(), vol_pread() and vol_extent() from any number of
 * threads at once.  The volume owns nothing the caller passed: the caller
 * keeps fd open until vol_close() and closes it afterwards.  Never prints
 * or exits.
 */
#ifndef SPIGZ_VOL_H
#define SPIGZ_VOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "progress.h"

struct vol_opts {
    uint64_t cache_bytes;      /* decoded bytes kept; 0: the backend's default */
    struct sp_progress *prog;  /* advanced by a one-pass index build; may be NULL */
    /* Where a gzip file's index is kept (gzx.h): the file idx_name in the
     * directory idx_dirfd (the caller's, open until vol_open returns).
     * idx_name NULL (zeroed options): built in memory, never saved. */
    int idx_dirfd;
    const char *idx_name;
    bool idx_save;             /* save a built index there */
    /* No read-ahead thread until vol_hold_ahead(v, false): for a caller
     * that reads and then forks (the mount's daemon, nbdkit), whose
     * threads would not survive the fork (ra.h). */
    bool hold_ahead;
};

struct vol;

/* Open the gzip file on fd (a regular file).  0 with *out, or -1 with *err
 * set: SP_ERR_FORMAT when the file cannot be read at random (not gzip, or a
 * gzip file of a kind no backend takes; the message says why), else the
 * error met.  o may be NULL (the defaults). */
int vol_open(int fd, const struct vol_opts *o, struct vol **out, struct sp_err *err);

/* The content's length. */
uint64_t vol_size(const struct vol *v);

/* Read up to len bytes at off: the bytes read (fewer than len only at the
 * end; 0 at or past it), or -1 with *err set. */
int64_t vol_pread(struct vol *v, void *buf, size_t len, uint64_t off, struct sp_err *err);

/* The run holding off: 0 with *len (bytes from off to the run's end) and
 * *zero (true: the run reads as zeros and may be reported as a hole: its
 * zeros are checked, ra_extent and gzx_extent say how), or -1 at or past
 * the end.  A backend that knows nothing of zeros reports one data run to
 * the end. */
int vol_extent(struct vol *v, uint64_t off, uint64_t *len, bool *zero);

/* Which backend serves the volume: "spigz index" or "gzip index". */
const char *vol_kind(const struct vol *v);

/* For the gzip index, how it came, for the CLI to show: "loaded from the
 * saved index"; "built" (no idx_name); "built (WHY)" where WHY says why no
 * saved index was used ("no saved index", a rejection's reason), followed
 * with idx_save by "; saved as NAME" or "; not saved: REASON".  "" for a
 * spigz index. */
const char *vol_note(const struct vol *v);

/* Hold or release read-ahead (vol_opts.hold_ahead).  Any thread. */
void vol_hold_ahead(struct vol *v, bool hold);

void vol_close(struct vol *v);

#endif
