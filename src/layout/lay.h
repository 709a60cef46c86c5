/* lay.h — which bytes of a disk, a partition or a filesystem are free.
 *
 * With --free=zero, spigz codes the blocks a filesystem calls free as zeros,
 * unread.  lay_build() reads the input's layout every way a program would
 * (lay_tab.h: the kernel's MBR rules, each valid GPT header, libblkid's
 * table, the whole input as one filesystem when a signature lies at its
 * start), probes each region of each reading for a filesystem, and asks
 * that filesystem's reader (lay_fs.h: one file per filesystem) for the
 * extents of bytes it uses.  The result is one sorted list of free extents
 * of the input, which the reader (input.c) turns into zero runs.
 *
 * Safety: a byte is free only when every reading calls it free, and a
 * reading calls it free only when all of these hold (doc/DESIGN.md §12):
 *   - it lies in a partition that is inside the input, overlaps no other
 *     partition and none of its table's own structures (or, for the whole
 *     input reading, anywhere);
 *   - exactly one filesystem signature was found there, and that
 *     filesystem's reader, through a maintained library where one exists,
 *     accepted its metadata as consistent (checksums, no journal to replay,
 *     not dirty, not larger than its partition);
 *   - it lies inside that filesystem's size and in none of the extents its
 *     reader reported used: neither its allocation map nor its files' own
 *     metadata uses it (lay_fs.h);
 * and it is no partition table's structure (an MBR, an extended boot
 * record, a GPT header or entry array), of any reading.  Anything else,
 * including every read error or doubt, is read as it is.  A region read
 * whole says why in its lay_part; readings that disagree are all kept
 * (m->nlayouts > 1), which the CLI warns of.
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
    unsigned layout;     /* the reading it belongs to: m->layouts[layout] */
    char ptype[48];      /* the partition's type (a GUID or an MBR id), or "" */
    char fs[16];         /* filesystem type as libblkid names it, or "" */
    char label[64];      /* filesystem label, or "" */
    bool mapped;         /* its free space comes from its allocation map */
    bool doubt;          /* not mapped because something is inconsistent or
                            unclean (a reader's refusal, a bad table entry),
                            not merely unknown: worth a warning */
    bool encrypted;      /* an encrypted volume (libblkid's USAGE "crypto":
                            LUKS, BitLocker): read whole, ciphertext */
    uint64_t excluded;   /* --exclude=volatile: bytes of Windows' volatile
                            files (excl_names) coded as zeros, of used */
    char excl_names[48]; /* "pagefile.sys, hiberfil.sys", or "" */
    bool excl_refused;   /* they share clusters with another file: kept */
    uint64_t used;       /* bytes read as data: len when not mapped */
    uint64_t disputed;   /* bytes its files use that its allocation map
                            calls free (read as data; lay_fs.h) */
    char why[128];       /* when not mapped: why it is read whole */
    /* A region holding volumes (an LVM PV): they are m->vols[vol_first,
     * vol_first + nvols).  A volume (in m->vols) has off 0 and len its own
     * size (its bytes lie where its volume manager maps them, inside its
     * region), number 0, and its name in vol ("rhel/root"). */
    size_t vol_first, nvols;
    char vol[128];
};

/* One reading of the input's layout (several programs' readings that
 * define the same regions are one): its regions are m->parts[first,
 * first + nparts). */
struct lay_layout {
    char name[240];         /* "an MBR (the kernel's reading), libblkid's dos table" */
    char table[8];          /* "gpt", "dos", or "" for the whole input */
    size_t first, nparts;
};

struct lay_map {
    uint64_t size;          /* bytes of the input it describes */
    char table[8];          /* the first layout's: "gpt", "dos", or "" for none */
    unsigned sector;        /* the device's logical sector size (512 for files) */
    struct lay_part *parts; /* by layout, in each in table order */
    size_t nparts;
    struct lay_layout *layouts; /* the first is the kernel's reading */
    size_t nlayouts;        /* more than 1: the readings disagree (a warning) */
    struct lay_part *vols;  /* volumes inside regions (LVM logical volumes),
                               by region: lay_part's vol_first, nvols */
    size_t nvols;
    struct sp_range *tables; /* partition-table structures found: always data */
    size_t ntables;
    struct sp_range *free;   /* sorted, disjoint, not adjacent, each len > 0 */
    size_t nfree;
    uint64_t free_bytes;    /* sum of free[].len */
    char forced[512];       /* --force-mounted, and the input may change
                               (lay_mount_check()'s why), or "" */
    uint64_t meta_read;     /* bytes the layout readers read */
};

struct lay_opts {
    bool force_mounted; /* map a filesystem mounted read-write (it changes
                           under the reader: only for a frozen snapshot) */
    bool exclude_volatile; /* NTFS: code the clusters of pagefile.sys,
                           hiberfil.sys and swapfile.sys (in the root, their
                           unnamed data) as zeros: Windows recreates them.
                           The user's choice, not a free-space claim: never
                           when another file names one of those clusters,
                           nor on a hibernated volume (read whole anyway) */
};

/* Map the size bytes of fd from base (its offset: stdin may be a partly
 * read file).  0 with *m filled (possibly with nothing free), or -1 with
 * *err set when the map cannot be made at all (no memory, no libblkid, a
 * filesystem mounted read-write without force_mounted). */
int lay_build(int fd, uint64_t base, uint64_t size, const struct lay_opts *o,
              struct lay_map *m, struct sp_err *err);

void lay_free(struct lay_map *m);

/* One partition as the Linux kernel would make it a block device. */
struct lay_kpart {
    unsigned number;   /* the kernel's: GPT entry index + 1; MBR 1-4, logicals from 5 */
    uint64_t off, len; /* in the disk, inside it, len > 0 */
    char ptype[48];    /* GPT type GUID or MBR type ("0x83") */
};

/* The partitions the kernel (msdos and efi parsers, 512-byte sectors: a
 * loop device's) finds on a disk of size bytes, read through
 * readfn(ctx, buf, n, off) (lay_fs.h): a GPT when sector 0 is a protective
 * MBR (the primary header, else the first valid backup), else the MBR with
 * its logicals; none for a FAT boot sector or no table.  Entries that leave
 * the disk or are empty are left out, as the kernel leaves them out; so is
 * an MBR's extended container (the kernel's 1 KiB device of it holds no
 * filesystem).  Sorted by number.  0 with *out (malloc'd, the caller
 * frees; NULL when *n is 0), or -1 out of memory.  Untrusted bytes: every
 * table is bounded as lay_mbr.c and lay_gpt.c bound it. */
int lay_kernel_parts(int (*readfn)(void *ctx, void *buf, size_t n, uint64_t off), void *ctx,
                     uint64_t size, struct lay_kpart **out, size_t *n);

/* 1 when something may change the input open on fd while its maps are
 * read, with why set to a sentence naming it ("/dev/loop3 is mounted
 * read-write on /mnt/x", "process 77 (ntfs-3g) has it open for writing",
 * "/dev/loop3 is held exclusively by the kernel: ..."); else 0.  A mount
 * anywhere (any mount namespace, a FUSE mount of the file or of a loop
 * device of it, a partition's range on a loop device) counts (lay_mount.c). */
int lay_mount_check(int fd, char *why, size_t wn);

/* lay_mount_check()'s mount scan alone: 1 when a filesystem on the input
 * open on fd is mounted read-write anywhere (the same set: the device, a
 * partition of it, the disk it is part of, a loop device of the file),
 * with why set to "/dev/loop3p1 is mounted read-write on /mnt/x"; else 0.
 * A plain backup warns of it: what it reads may change while it reads. */
int lay_mounted_rw(int fd, char *why, size_t wn);

/* 1 when the input open on fd (a block device, a file behind a loop
 * device; an O_PATH descriptor will do), a partition of it or the disk it
 * belongs to is mounted (with rw_only, read-write: its own options or its
 * superblock's), in any mount namespace, with why set to a sentence naming
 * what is mounted where ("/dev/loop10p2 is mounted on /mnt/r2"); else 0.
 * What a restore onto the device must not write under. */
int lay_mounted(int fd, bool rw_only, char *why, size_t wn);

/* Whether the block device b holds a's bytes: a loop device backed by the
 * file or device a (at any offset, through loops of loops), a partition of
 * one, or the disk one belongs to.  For same-file checks: an image written
 * onto a loop device of itself. */
struct stat;
bool lay_stores(const struct stat *a, const struct stat *b);

/* The whole disk a block device number belongs to (itself when it is not
 * a partition), from /sys/dev/block. */
dev_t lay_disk_of(dev_t d);

/* Whether this build can map filesystems at all, and if not, why. */
bool lay_available(const char **why);

/* What this build maps, and with which libraries, for -V. */
const char *lay_filesystems(void);

#endif
