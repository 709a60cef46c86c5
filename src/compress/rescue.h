/* rescue.h — reading a failing disk: a read error costs the sectors that
 * fail, not the backup (--rescue).
 *
 * When a read of the input fails with a media error (EIO, ENODATA, EBADMSG,
 * EILSEQ, EREMOTEIO), the failing span is read again in halves, recursively,
 * down to the sector size (BLKSSZGET for devices, 512 bytes for files); a
 * sector is tried RSC_TRIES times in all, and one that fails every time is
 * returned as zeros and recorded as bad.  So one bad sector in a 1 MiB
 * window costs about 2 log2(2048) = 22 reads, and a window where every
 * sector fails costs 2 reads a sector: bounded, the kernel's own retries
 * aside (a real disk may take seconds per failing sector; a mapfile lets
 * GNU ddrescue retry just those later, with its own strategy).
 *
 * Sector reads go through a second descriptor opened with O_DIRECT when the
 * input allows it (through /proc/self/fd): through the page cache a 512-byte
 * read fills a whole page, so a bad sector would fail its good neighbours.
 * Without O_DIRECT the granularity is whatever the page cache gives.
 *
 * Errors that are not about the medium (EBADF, EINVAL, ENODEV, ENXIO: the
 * device went away, ...) and errors on pipes (no way to read again) stay
 * errors: the run stops with the offset in the message.
 *
 * The bad ranges are kept sorted (the reader goes forward), adjacent ones
 * merged, at most RSC_RANGES_MAX of them: past that each new bad range is
 * merged with the last one, so the list only ever grows to cover more
 * (good sectors between may be listed as bad; never a bad one as good).
 *
 * Contract: a struct rsc belongs to the reader thread while the input is
 * read, then to whoever reads its list.  It owns its descriptor and its
 * list; rsc_free() releases both.  Nothing prints or exits.
 */
#ifndef SPIGZ_RESCUE_H
#define SPIGZ_RESCUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"
#include "progress.h"
#include "range.h"

#define RSC_TRIES 2
#define RSC_RANGES_MAX ((size_t)1 << 20)

struct rsc {
    int fd;              /* the input's descriptor (not owned) */
    int dfd;             /* O_DIRECT descriptor, -1 if none (yet) */
    bool direct_tried;
    unsigned sector;     /* granularity of the retries, a power of two */
    uint8_t *bounce;     /* one aligned sector for dfd */
    uint64_t base;       /* file offset of the input's byte 0 */
    struct sp_range *bad;
    size_t nbad, cap;
    uint64_t bad_bytes;  /* sum of the bad ranges' lengths */
    struct sp_progress *progress; /* PROG_BAD advances by each bad sector */
};

/* Prepare rescue reads of fd (a regular file or a device) whose byte 0 of
 * input is at file offset base. */
void rsc_init(struct rsc *r, int fd, uint64_t base, struct sp_progress *progress);

/* Whether errnum is a media error that rescue reads go around. */
bool rsc_media_error(int errnum);

/* Fill buf with the input's [off, off + n) (offsets from base) after a read
 * of it failed: what can be read is, the rest is zeros and recorded.
 * Returns the bytes filled (fewer than n only at the end of the input), or
 * -1 with *err set for an error that is not the medium's. */
ssize_t rsc_read(struct rsc *r, uint8_t *buf, size_t n, uint64_t off, struct sp_err *err);

void rsc_free(struct rsc *r);

#endif
