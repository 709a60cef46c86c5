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
};

/* Read n bytes at off of the region.  0, or -1 when any of them is outside
 * the region or cannot be read (a short read included). */
int lay_dev_read(struct lay_dev *d, uint64_t off, void *buf, size_t n);

struct lay_used {
    struct sp_range *e;
    size_t n, cap;
    bool oom;
    bool coarsened; /* gaps joined to bound memory (lay.c) */
};

/* Report [off, off + len) of the region as used.  0, or -1 out of memory. */
int lay_used_add(struct lay_used *u, uint64_t off, uint64_t len);

typedef int (*lay_fs_fn)(struct lay_dev *d, struct lay_used *u, uint64_t *fs_len,
                         char *why, size_t wn);

/* lay_table.c: the partition table into m->parts and m->table (nothing
 * when there is none); *both when a filesystem signature is on the whole
 * disk too.  0, or -1 out of memory. */
struct lay_map;
struct lay_part;
int lay_table_probe(int fd, struct lay_map *m, uint64_t base, bool *both);

/* lay_table.c: entries that overlap each other or the table are read whole. */
void lay_table_check(struct lay_map *m);

/* lay.c: mark p read whole, saying why (fmt takes one string). */
void lay_whole(struct lay_part *p, bool doubt, const char *why);

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

#endif
