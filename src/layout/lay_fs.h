/* lay_fs.h — the interface between lay.c and the filesystem readers.
 *
 * Each reader (lay_ext4.c, lay_ntfs.c, lay_fat.c, lay_exfat.c, lay_swap.c)
 * turns one filesystem's allocation map into extents of used bytes and
 * nothing else of it leaks out: a new filesystem is one new file and one
 * line in lay.c's table.
 *
 * A reader is given a struct lay_dev: the filesystem's bytes [0, len) of an
 * input descriptor, read through lay_dev_read() only (bounded to the region,
 * counted).  It returns
 *    1  mapped: *fs_len set to the bytes its filesystem spans (<= len), and
 *       every used byte of [0, *fs_len) reported through lay_used_add();
 *       bytes past *fs_len are read as they are;
 *    0  not mapped: why says so ("journal needs recovery", ...); the region
 *       is read whole;
 *   -1  out of memory (the run stops).
 * A reader never guesses: any inconsistency, unexpected value or read error
 * is 0.  Extents may come in any order and may overlap; lay.c sorts and
 * merges them.  Readers run on the calling thread, one at a time.
 *
 * Two readings, not one (doc/DESIGN.md §12): the allocation map (a bitmap,
 * the FAT) is one reading of what is used, the files' own metadata (inode
 * extents, MFT runlists, cluster chains, directories: fsck's first pass) is
 * another, and a block is free only when both call it free.  A reader adds
 * its allocation map's used extents with lay_used_add(), then calls
 * lay_used_seal(), then reports every extent a live file, directory or
 * metadata structure references with lay_used_ref(): the parts the map
 * calls free are added used all the same and counted in u->disputed.  A
 * reader that cannot finish the second reading (a directory that cannot
 * be read, a chain that loops or leaves the volume, a record it cannot
 * parse) returns 0: the region is read whole.  lay.c reads the region whole
 * when the dispute is beyond LAY_DISPUTE_MAX, and warns of any dispute.
 */
#ifndef SPIGZ_LAY_FS_H
#define SPIGZ_LAY_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "range.h"

struct lay_dev {
    int fd;
    uint64_t off;  /* of the region in the file */
    uint64_t len;  /* of the region */
    uint64_t read; /* bytes read so far */
    /* When set, the input is read through it instead of fd (the content
     * of a backup, lay_kernel_parts()): n bytes at off of the input, 0 or
     * -1 (any failure, a short read included).  Table readers, and a
     * volume read through its volume manager's map (lay_vol_map()). */
    int (*readfn)(void *ctx, void *buf, size_t n, uint64_t off);
    void *ctx;
    bool exclude_volatile; /* lay_opts': NTFS reports its volatile files'
                              clusters through lay_used_exclude() */
    struct lay_nest *nest; /* lay.c's: where lay_vol_map() records volumes;
                              NULL inside a volume (no volume in a volume) */
};

struct lay_used;

/* A volume manager's reader (lay_lvm.c) maps the filesystem of one of its
 * volumes: vd reads the volume's bytes [0, vd->len) through its readfn
 * (with vd->off 0), and phys, when not UINT64_MAX, says the volume is the
 * region's bytes [phys, phys + vd->len) (libblkid then probes them in
 * place; else it probes a copy of the volume's first and last
 * LAY_PROBE_EDGE bytes).  It is probed and mapped as lay.c maps a region
 * (the same refusals, disputes and --exclude=volatile), and recorded under
 * name as a volume of d's region.  With whole set it is only recorded, read
 * whole for that reason.  1 mapped, with its used extents (of the volume)
 * in *u and *fs_len set (bytes past it are data); 0 read whole; -1 out of
 * memory.  u is the caller's to lay_used_done(). */
int lay_vol_map(struct lay_dev *d, struct lay_dev *vd, uint64_t phys, const char *name,
                const char *whole, struct lay_used *u, uint64_t *fs_len);

/* The bytes of a volume libblkid sees when it is not contiguous: its
 * probers (libblkid 2.38, every one, strace on a 1 GiB device) read no
 * further than 4 MiB + 512 bytes from a device's start and 1.5 MiB from its
 * end; 8 MiB leaves room.  A prober reading past it would see zeros there:
 * it could miss a signature, never invent one. */
#define LAY_PROBE_EDGE ((uint64_t)8 << 20)

/* Read n bytes at off of the region.  0, or -1 when any of them is outside
 * the region or cannot be read (a short read included). */
int lay_dev_read(struct lay_dev *d, uint64_t off, void *buf, size_t n);

struct lay_used {
    struct sp_range *e;
    size_t n, cap;
    bool oom;
    bool coarsened;    /* gaps joined to bound memory (lay.c) */
    size_t sealed;     /* e[0, sealed) is the allocation map, sorted and
                          merged (lay_used_seal()); 0 before */
    bool is_sealed;
    uint64_t disputed; /* bytes lay_used_ref() found free in the map */
    bool coarsened_sealed; /* coarsened after the seal: the disputes merged
                              into the map, the running count stands */
    /* --exclude=volatile: used extents the user chose to code as zeros
     * (lay_used_exclude), what they are, and whether the reader kept them
     * because another file names them */
    struct sp_range *excl;
    size_t nexcl, excl_cap;
    char excl_names[48];
    bool excl_refused;
};

/* Report [off, off + len) of the region as used.  0, or -1 out of memory. */
int lay_used_add(struct lay_used *u, uint64_t off, uint64_t len);

/* The allocation map is complete: sort and merge it, so that
 * lay_used_ref() can test against it.  0, or -1 out of memory. */
int lay_used_seal(struct lay_used *u);

/* The files' metadata references [off, off + len) of the region: the parts
 * the sealed map calls free are reported used and added to u->disputed.
 * Any number of calls, in any order; O(log n) each.  Before
 * lay_used_seal() it is lay_used_add().  0, or -1 out of memory. */
int lay_used_ref(struct lay_used *u, uint64_t off, uint64_t len);

/* The bytes lay_used_ref() found outside the map, each counted once (two
 * files may name the same block).  Sorts what was reported since the seal. */
uint64_t lay_used_disputed(struct lay_used *u);

/* --exclude=volatile: [off, off + len) of the region, used, is to be coded
 * as zeros all the same (lay.c takes it out of the used extents once the
 * reader is done).  0, or -1 out of memory. */
int lay_used_exclude(struct lay_used *u, uint64_t off, uint64_t len);

/* Free what a struct lay_used holds. */
void lay_used_done(struct lay_used *u);

/* Sort and merge overlapping or adjacent extents in place; the new count. */
size_t lay_merge(struct sp_range *e, size_t n);

/* Past this many disputed bytes a filesystem is read whole: its allocation
 * map is damaged beyond a stray block or two (4 MiB: a few clusters of
 * the largest exFAT, a thousand ext4 blocks). */
#define LAY_DISPUTE_MAX ((uint64_t)4 << 20)

typedef int (*lay_fs_fn)(struct lay_dev *d, struct lay_used *u, uint64_t *fs_len,
                         char *why, size_t wn);

/* The readers; each is built only when its library was found. */
int lay_ext4_used(struct lay_dev *d, struct lay_used *u, uint64_t *fs_len, char *why,
                  size_t wn);
int lay_ntfs_used(struct lay_dev *d, struct lay_used *u, uint64_t *fs_len, char *why,
                  size_t wn);
int lay_fat_used(struct lay_dev *d, struct lay_used *u, uint64_t *fs_len, char *why,
                 size_t wn);
int lay_exfat_used(struct lay_dev *d, struct lay_used *u, uint64_t *fs_len, char *why,
                   size_t wn);
int lay_swap_used(struct lay_dev *d, struct lay_used *u, uint64_t *fs_len, char *why,
                  size_t wn);
int lay_btrfs_used(struct lay_dev *d, struct lay_used *u, uint64_t *fs_len, char *why,
                   size_t wn);
int lay_xfs_used(struct lay_dev *d, struct lay_used *u, uint64_t *fs_len, char *why,
                 size_t wn);
int lay_lvm_used(struct lay_dev *d, struct lay_used *u, uint64_t *fs_len, char *why,
                 size_t wn);

#endif
