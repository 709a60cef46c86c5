/* lay.h — which bytes of a disk, a partition or a filesystem are free.
 *
 * With --free=zero, spigz codes the blocks a filesystem calls free as zeros,
 * unread.  lay_build() finds the partition table (GPT or MBR, through
 * libblkid), probes each partition (or the whole input) for a filesystem,
 * and asks that filesystem's reader (lay_fs.h: one file per filesystem) for
 * the extents of bytes it uses.  The result is one sorted list of free
 * extents of the input, which the reader (input.c) turns into zero runs.
 *
 * Safety: a byte is free only when all of these hold (doc/DESIGN.md):
 *   - it lies in a partition that is inside the input, overlaps no other
 *     partition and no partition table's own sectors (or, with no table, in
 *     the whole input);
 *   - exactly one filesystem signature was found there, and that
 *     filesystem's reader, through a maintained library where one exists,
 *     accepted its metadata as consistent (checksums, no journal to replay,
 *     not dirty, not larger than its partition);
 *   - it lies inside that filesystem's size and in none of the extents its
 *     reader reported used (every metadata block is used).
 * Anything else, including every read error or doubt, is read as it is.  A
 * region read whole says why in its lay_part.
 *
 * Determinism: the map is a function of the input's bytes only (never of
 * timing, -p or the kind of descriptor), so the output stays a function of
 * the bytes and the options.
 *
 * Contract: lay_build() reads fd (libblkid with lseek and read, the readers
 * with pread) and puts its offset back as it found it; it neither prints
 * nor exits.  The struct lay_map it fills is
 * owned by the caller (lay_free()) and read-only afterwards: any thread may
 * read it.
 */
#ifndef SPIGZ_LAY_H
#define SPIGZ_LAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"
#include "range.h"

/* One region of the input: a partition, or the whole input. */
struct lay_part {
    uint64_t off, len;   /* in the input */
    unsigned number;     /* partition number, 0 for the whole input */
    char ptype[48];      /* the partition's type (a GUID or an MBR id), or "" */
    char fs[16];         /* filesystem type as libblkid names it, or "" */
    char label[64];      /* filesystem label, or "" */
    bool mapped;         /* its free space comes from its allocation map */
    bool doubt;          /* not mapped because something is inconsistent or
                            unclean (a reader's refusal, a bad table entry),
                            not merely unknown: worth a warning */
    uint64_t used;       /* bytes read as data: len when not mapped */
    uint64_t disputed;   /* bytes its files use that its allocation map
                            calls free (read as data; lay_fs.h) */
    char why[128];       /* when not mapped: why it is read whole */
};

struct lay_map {
    uint64_t size;          /* bytes of the input it describes */
    char table[8];          /* "gpt", "dos", or "" for none */
    unsigned sector;        /* the table's sector size (libblkid's) */
    struct lay_part *parts; /* in input order */
    size_t nparts;
    struct sp_range *free;   /* sorted, disjoint, not adjacent, each len > 0 */
    size_t nfree;
    uint64_t free_bytes;    /* sum of free[].len */
    uint64_t meta_read;     /* bytes the layout readers read */
};

struct lay_opts {
    bool force_mounted; /* map a filesystem mounted read-write (it changes
                           under the reader: only for a frozen snapshot) */
};

/* Map the size bytes of fd from base (its offset: stdin may be a partly
 * read file).  0 with *m filled (possibly with nothing free), or -1 with
 * *err set when the map cannot be made at all (no memory, no libblkid, a
 * filesystem mounted read-write without force_mounted). */
int lay_build(int fd, uint64_t base, uint64_t size, const struct lay_opts *o,
              struct lay_map *m, struct sp_err *err);

void lay_free(struct lay_map *m);

/* 1 when the input open on fd (a block device, or a file behind a loop
 * device), or a partition of it, is mounted read-write, with the mount
 * point in where; else 0. */
int lay_mounted_rw(int fd, char *where, size_t wn);

/* The same for any mount (rw_only false: read-only ones too), the disk a
 * partition belongs to included: what a restore onto the device must not
 * write under. */
int lay_mounted(int fd, bool rw_only, char *where, size_t wn);

/* The whole disk a block device number belongs to (itself when it is not
 * a partition), from /sys/dev/block. */
dev_t lay_disk_of(dev_t d);

/* Whether this build can map filesystems at all, and if not, why. */
bool lay_available(const char **why);

/* What this build maps, and with which libraries, for -V. */
const char *lay_filesystems(void);

#endif
