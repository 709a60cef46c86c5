/* lay_ext4.c — ext2/3/4: the block (cluster) bitmaps, through libext2fs.
 *
 * libext2fs opens the filesystem through an I/O manager of our own that
 * reads the region with lay_dev_read() (bounded to the partition, counted,
 * never a write), and reads the block bitmaps: it checks the superblock's,
 * the group descriptors' and the bitmaps' checksums, and marks the
 * metadata of groups whose bitmap was never initialised (BLOCK_UNINIT), so
 * flex_bg, meta_bg, bigalloc and 1-64 KiB blocks are its business.  Every
 * metadata block (superblocks, descriptors, bitmaps, inode tables, the
 * journal) is marked in those bitmaps.
 *
 * Read whole instead: errors recorded (EXT2_ERROR_FS), not cleanly
 * unmounted (no VALID_FS: mounted, or crashed), a journal needing recovery
 * (its replay would write blocks the bitmaps call free), or anything
 * libext2fs refuses.
 *
 * The I/O manager's open() finds its device in lay_ext4_dev: readers run on
 * one thread at a time (lay_fs.h), and the variable is per thread anyway.
 */
#include "config.h"
#include "lay.h"
#include "lay_fs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <et/com_err.h>
#include <ext2fs/ext2fs.h>

static __thread struct lay_dev *lay_ext4_dev;
static struct struct_io_manager lay_io_manager;

static errcode_t lay_io_open(const char *name, int flags, io_channel *channel)
{
    if (lay_ext4_dev == NULL || (flags & IO_FLAG_RW))
        return EXT2_ET_OP_NOT_SUPPORTED;
    io_channel ch = calloc(1, sizeof *ch);
    if (ch == NULL)
        return ENOMEM;
    ch->name = strdup(name);
    if (ch->name == NULL) {
        free(ch);
        return ENOMEM;
    }
    ch->magic = EXT2_ET_MAGIC_IO_CHANNEL;
    ch->manager = &lay_io_manager;
    ch->block_size = 1024;
    ch->refcount = 1;
    ch->private_data = lay_ext4_dev;
    *channel = ch;
    return 0;
}

static errcode_t lay_io_close(io_channel ch)
{
    if (--ch->refcount > 0)
        return 0;
    free(ch->name);
    free(ch);
    return 0;
}

static errcode_t lay_io_set_blksize(io_channel ch, int blksize)
{
    if (blksize <= 0)
        return EXT2_ET_INVALID_ARGUMENT;
    ch->block_size = blksize;
    return 0;
}

static errcode_t lay_io_read64(io_channel ch, unsigned long long block, int count, void *data)
{
    /* count < 0: -count bytes, as every libext2fs I/O manager reads */
    uint64_t n = count < 0 ? (uint64_t)-(int64_t)count : (uint64_t)count * (uint64_t)ch->block_size;
    uint64_t off = block;
    if (ch->block_size > 0 && off > UINT64_MAX / (uint64_t)ch->block_size)
        return EXT2_ET_SHORT_READ;
    off *= (uint64_t)ch->block_size;
    if (n > SIZE_MAX || lay_dev_read(ch->private_data, off, data, (size_t)n) != 0)
        return EXT2_ET_SHORT_READ;
    return 0;
}

static errcode_t lay_io_read(io_channel ch, unsigned long block, int count, void *data)
{
    return lay_io_read64(ch, block, count, data);
}

static errcode_t lay_io_write(io_channel ch, unsigned long block, int count, const void *data)
{
    (void)ch, (void)block, (void)count, (void)data;
    return EXT2_ET_OP_NOT_SUPPORTED;
}

static errcode_t lay_io_write64(io_channel ch, unsigned long long block, int count,
                                const void *data)
{
    (void)ch, (void)block, (void)count, (void)data;
    return EXT2_ET_OP_NOT_SUPPORTED;
}

static errcode_t lay_io_write_byte(io_channel ch, unsigned long off, int count, const void *data)
{
    (void)ch, (void)off, (void)count, (void)data;
    return EXT2_ET_OP_NOT_SUPPORTED;
}

static errcode_t lay_io_flush(io_channel ch)
{
    (void)ch;
    return 0;
}

static errcode_t lay_io_set_option(io_channel ch, const char *opt, const char *arg)
{
    (void)ch, (void)opt, (void)arg;
    return EXT2_ET_INVALID_ARGUMENT;
}

static struct struct_io_manager lay_io_manager = {
    .magic = EXT2_ET_MAGIC_IO_MANAGER,
    .name = "spigz pread I/O manager",
    .open = lay_io_open,
    .close = lay_io_close,
    .set_blksize = lay_io_set_blksize,
    .read_blk = lay_io_read,
    .write_blk = lay_io_write,
    .flush = lay_io_flush,
    .write_byte = lay_io_write_byte,
    .set_option = lay_io_set_option,
    .read_blk64 = lay_io_read64,
    .write_blk64 = lay_io_write64,
};

/* Report the set bits of the block bitmap as used extents. */
static int lay_ext4_runs(ext2_filsys fs, struct lay_used *u)
{
    uint64_t bs = fs->blocksize;
    blk64_t first = fs->super->s_first_data_block;
    blk64_t last = ext2fs_blocks_count(fs->super) - 1;
    /* the blocks before the first data block (the boot block of a 1 KiB
     * filesystem) are in no bitmap, and the superblock's block is used */
    if (lay_used_add(u, 0, (first + 1) * bs) != 0)
        return -1;
    blk64_t b = first;
    while (b <= last) {
        blk64_t s, z;
        if (ext2fs_find_first_set_block_bitmap2(fs->block_map, b, last, &s) != 0)
            break; /* ENOENT: no used block from b on */
        if (ext2fs_find_first_zero_block_bitmap2(fs->block_map, s, last, &z) != 0)
            z = last + 1;
        if (lay_used_add(u, s * bs, (z - s) * bs) != 0)
            return -1;
        b = z;
    }
    return 0;
}

/* The superblock's size fields against the region, before libext2fs sizes
 * its tables from them (a forged block count would have it allocate
 * gigabytes).  NULL when they fit. */
static const char *lay_ext4_precheck(struct lay_dev *d)
{
    uint8_t sb[1024];
    if (lay_dev_read(d, 1024, sb, sizeof sb) != 0)
        return "its superblock cannot be read";
    uint32_t log_bs = (uint32_t)sb[24] | (uint32_t)sb[25] << 8 | (uint32_t)sb[26] << 16 |
                      (uint32_t)sb[27] << 24;
    if (log_bs > 6)
        return "its block size is out of range";
    uint64_t blocks = (uint64_t)sb[4] | (uint64_t)sb[5] << 8 | (uint64_t)sb[6] << 16 |
                      (uint64_t)sb[7] << 24;
    if (sb[96] & 0x80) /* INCOMPAT_64BIT: s_blocks_count_hi counts */
        blocks |= ((uint64_t)sb[336] | (uint64_t)sb[337] << 8 | (uint64_t)sb[338] << 16 |
                   (uint64_t)sb[339] << 24) << 32;
    if (blocks > d->len >> (10 + log_bs))
        return "the filesystem is larger than its partition";
    return NULL;
}

int lay_ext4_used(struct lay_dev *d, struct lay_used *u, uint64_t *fs_len, char *why, size_t wn)
{
    ext2_filsys fs = NULL;
    const char *bad = lay_ext4_precheck(d);
    if (bad != NULL) {
        snprintf(why, wn, "%s", bad);
        return 0;
    }
    lay_ext4_dev = d;
    errcode_t e = ext2fs_open2("spigz", NULL, EXT2_FLAG_64BITS, 0, 0, &lay_io_manager, &fs);
    lay_ext4_dev = NULL;
    if (e != 0) {
        snprintf(why, wn, "libext2fs cannot open it: %s", error_message(e));
        return 0;
    }
    int rc = 0;
    struct ext2_super_block *sb = fs->super;
    if (sb->s_state & EXT2_ERROR_FS) {
        snprintf(why, wn, "it has errors recorded (run e2fsck)");
    } else if (!(sb->s_state & EXT2_VALID_FS)) {
        snprintf(why, wn, "it was not cleanly unmounted (mounted, or it crashed)");
    } else if (ext2fs_has_feature_journal_needs_recovery(sb)) {
        snprintf(why, wn, "its journal needs recovery (mounted, or it crashed)");
    } else if ((e = ext2fs_read_block_bitmap(fs)) != 0) {
        snprintf(why, wn, "libext2fs cannot read its block bitmaps: %s", error_message(e));
    } else {
        uint64_t blocks = ext2fs_blocks_count(sb);
        if (blocks == 0 || blocks > UINT64_MAX / fs->blocksize) {
            snprintf(why, wn, "its block count is not credible");
        } else {
            *fs_len = blocks * fs->blocksize;
            rc = lay_ext4_runs(fs, u) != 0 ? -1 : 1;
        }
    }
    ext2fs_close_free(&fs);
    return rc;
}
