/* lay_ext4.c — ext2/3/4: the block (cluster) bitmaps, and the inodes, through libext2fs.
 *
 * libext2fs opens the filesystem through an I/O manager of our own that
 * reads the region with lay_dev_read() (bounded to the partition, counted,
 * never a write).  Two readings of what is used (lay_fs.h):
 *
 * 1. The block bitmaps.  Before they are read, the group descriptors are
 *    checked as e2fsck does first: ext2fs_check_desc() (every group's
 *    bitmaps and inode table inside the filesystem, overlapping nothing:
 *    libext2fs reads a group whose bitmap pointer is 0 or past the end as
 *    all free), and, with metadata_csum or uninit_bg, every descriptor's
 *    checksum (ext2fs_open2() verifies only the superblock's; the
 *    descriptors also say which groups and inode-table tails are unused,
 *    which the bitmaps and the inode scan then skip).  libext2fs checks the
 *    bitmaps' own checksums, and marks the metadata of groups whose bitmap
 *    was never initialised (BLOCK_UNINIT).
 * 2. What the filesystem's structures reference, as e2fsck's pass 1 finds
 *    it: (a) the metadata the superblock and descriptors place (the
 *    superblock and descriptor copies, reserved GDT blocks, each group's
 *    bitmaps and inode table, the MMP block), and (b) an inode scan: every
 *    live inode's blocks, mapping blocks included (extent tree nodes,
 *    indirect blocks), and its xattr block.  Live is e2fsck's rule: a
 *    link count above 0, or a reserved inode below s_first_ino or one the
 *    superblock names (journal, quota, orphan file), whatever its count; a
 *    deleted ext2 inode keeps its block pointers with a count of 0 and is
 *    not live.  The resize inode (7) gives its double-indirect block only:
 *    the rest of its tree is the reserved GDT blocks of (a), as in e2fsck.
 *    Fast symlinks, inline data and device inodes hold no block numbers
 *    (ext2fs_inode_has_valid_blocks2()).  With bigalloc each reference
 *    counts its whole cluster, the unit the bitmap allocates.
 *
 * Read whole instead: errors recorded (EXT2_ERROR_FS), not cleanly
 * unmounted (no VALID_FS: mounted, or crashed), a journal needing recovery
 * (its replay would write blocks the bitmaps call free), a descriptor,
 * bitmap, inode or extent block that fails its check or checksum, a block
 * number outside the filesystem, an extent tree deeper than ext4 allows,
 * or anything libext2fs refuses.
 *
 * Bounds: the inode scan reads each inode table once (skipping what
 * verified descriptors call unused); the mapping walk may name at most
 * 2 x blocks + inodes blocks in all (a sound filesystem names each block
 * once, an xattr block once per inode sharing it), so a tree that loops or
 * blocks cross-linked many times over end it (read whole), and it reads
 * at most that many mapping blocks.
 *
 * The I/O manager's open() finds its device in lay_ext4_dev: readers run on
 * one thread at a time (lay_fs.h), and the variable is per thread anyway.
 */
#include "config.h"
#include "lay.h"
#include "lay_fs.h"
#include "le.h"

#include <errno.h>
#include <stdbool.h>
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
    uint32_t log_bs = le_get32(sb + 24);
    if (log_bs > 6)
        return "its block size is out of range";
    uint64_t blocks = le_get32(sb + 4);
    if (sb[96] & 0x80) /* INCOMPAT_64BIT: s_blocks_count_hi counts */
        blocks |= (uint64_t)le_get32(sb + 336) << 32;
    if (blocks > d->len >> (10 + log_bs))
        return "the filesystem is larger than its partition";
    return NULL;
}

/* The second reading's state (see the top): where references go, the
 * pending run they are gathered into, and the work left. */
struct ext_ref {
    ext2_filsys fs;
    struct lay_used *u;
    blk64_t blocks;              /* the filesystem's */
    blk64_t run, run_len;        /* gathered, not yet reported */
    uint64_t budget;             /* blocks references may still name */
    ext2_ino_t ino;              /* the inode walked (0: the metadata) */
    struct ext2_inode *inode;    /* its inode, for lay_ext4_read_inode() */
    char *why;
    size_t wn;
    int rc;                      /* 1 going on, 0 refused (why), -1 out of memory */
};

/* Refuse: the filesystem is read whole, saying why. */
static void ext_refuse(struct ext_ref *r, const char *what, errcode_t e)
{
    if (r->rc != 1)
        return;
    if (r->ino != 0)
        snprintf(r->why, r->wn, "inode %lu: %s%s%s (run e2fsck)", (unsigned long)r->ino, what,
                 e ? ": " : "", e ? error_message(e) : "");
    else
        snprintf(r->why, r->wn, "%s%s%s (run e2fsck)", what, e ? ": " : "",
                 e ? error_message(e) : "");
    r->rc = 0;
}

/* Report the gathered run: its whole clusters, in bytes. */
static void ext_flush(struct ext_ref *r)
{
    if (r->run_len == 0 || r->rc != 1)
        return;
    unsigned crb = (unsigned)r->fs->cluster_ratio_bits;
    blk64_t first = r->run >> crb << crb;
    blk64_t end = ((r->run + r->run_len - 1) >> crb) + 1;
    end = end << crb > r->blocks ? r->blocks : end << crb;
    uint64_t bs = r->fs->blocksize;
    if (lay_used_ref(r->u, first * bs, (end - first) * bs) != 0)
        r->rc = -1;
    r->run_len = 0;
}

/* The structures name blocks [blk, blk + n): checked against the
 * filesystem and the budget, gathered into runs.  0, or -1 when the
 * reading stops (r->rc says why). */
static int ext_ref(struct ext_ref *r, blk64_t blk, blk64_t n)
{
    if (r->rc != 1)
        return -1;
    if (n == 0)
        return 0;
    if (blk < r->fs->super->s_first_data_block || blk >= r->blocks || n > r->blocks - blk) {
        ext_refuse(r, "a block it names lies outside the filesystem", 0);
        return -1;
    }
    if (n > r->budget) {
        ext_refuse(r, "more blocks named than the filesystem holds (a loop, or cross-linked "
                      "blocks)", 0);
        return -1;
    }
    r->budget -= n;
    if (r->run_len > 0 && blk == r->run + r->run_len) {
        r->run_len += n;
        return 0;
    }
    ext_flush(r);
    r->run = blk;
    r->run_len = n;
    return r->rc == 1 ? 0 : -1;
}

/* ext2fs_open2() read the superblock; the descriptors are checked before
 * anything trusts them.  NULL when they pass, else why not. */
static const char *lay_ext4_desc_check(ext2_filsys fs, char *buf, size_t n)
{
    errcode_t e = ext2fs_check_desc(fs);
    if (e != 0) {
        snprintf(buf, n, "its group descriptors are corrupt (e2fsck: %s)", error_message(e));
        return buf;
    }
    for (dgrp_t g = 0; g < fs->group_desc_count; g++) {
        if (!ext2fs_group_desc_csum_verify(fs, g)) { /* true without a checksum */
            snprintf(buf, n, "the checksum of its group descriptor %lu is wrong (e2fsck: "
                     "group descriptor checksum is invalid)", (unsigned long)g);
            return buf;
        }
    }
    return NULL;
}

/* (a): what the superblock and the group descriptors place. */
static void lay_ext4_meta(struct ext_ref *r)
{
    ext2_filsys fs = r->fs;
    blk64_t old_n = ext2fs_has_feature_meta_bg(fs->super)
                        ? fs->super->s_first_meta_bg
                        : fs->desc_blocks + fs->super->s_reserved_gdt_blocks;
    for (dgrp_t g = 0; g < fs->group_desc_count && r->rc == 1; g++) {
        blk64_t sb, old_desc, new_desc;
        blk_t used;
        ext2fs_super_and_bgd_loc2(fs, g, &sb, &old_desc, &new_desc, &used);
        if (sb != 0 || g == 0)
            ext_ref(r, sb, 1);
        if (old_desc != 0 && old_desc < r->blocks)
            ext_ref(r, old_desc, old_n < r->blocks - old_desc ? old_n : r->blocks - old_desc);
        if (new_desc != 0)
            ext_ref(r, new_desc, 1);
        ext_ref(r, ext2fs_block_bitmap_loc(fs, g), 1);
        ext_ref(r, ext2fs_inode_bitmap_loc(fs, g), 1);
        ext_ref(r, ext2fs_inode_table_loc(fs, g), fs->inode_blocks_per_group);
    }
    if (ext2fs_has_feature_mmp(fs->super) && fs->super->s_mmp_block != 0)
        ext_ref(r, fs->super->s_mmp_block, 1);
    ext_flush(r);
}

/* The longest extent tree ext4 makes (e2fsck's bound: deeper is corrupt). */
#define EXT_MAX_DEPTH 5

/* An extent-mapped inode: every node below the root and every leaf
 * extent.  Nodes are visited at most once each way (second visits are
 * skipped); the budget bounds how many. */
static void lay_ext4_extents(struct ext_ref *r, struct ext2_inode *inode)
{
    ext2_extent_handle_t h;
    errcode_t e = ext2fs_extent_open2(r->fs, r->ino, inode, &h);
    if (e != 0) {
        ext_refuse(r, "its extent tree cannot be read", e);
        return;
    }
    struct ext2_extent_info info;
    if (ext2fs_extent_get_info(h, &info) != 0 || info.max_depth > EXT_MAX_DEPTH) {
        ext_refuse(r, "its extent tree is deeper than ext4 allows", 0);
        ext2fs_extent_free(h);
        return;
    }
    struct ext2fs_extent ex;
    for (int op = EXT2_EXTENT_ROOT; r->rc == 1; op = EXT2_EXTENT_NEXT) {
        e = ext2fs_extent_get(h, op, &ex);
        if (e == EXT2_ET_EXTENT_NO_NEXT)
            break;
        if (e != 0) {
            ext_refuse(r, "its extent tree cannot be read", e);
        } else if (ex.e_flags & EXT2_EXTENT_FLAGS_SECOND_VISIT) {
            continue;
        } else if (!(ex.e_flags & EXT2_EXTENT_FLAGS_LEAF)) {
            ext_ref(r, ex.e_pblk, 1); /* the node below */
        } else if (ex.e_len == 0) {
            ext_refuse(r, "an extent of no blocks", 0);
        } else {
            ext_ref(r, ex.e_pblk, ex.e_len);
        }
    }
    ext2fs_extent_free(h);
}

/* ext2fs_block_iterate3() reads the inode it walks: it is given the one
 * the scan holds (fs->read_inode, as e2fsck does), not read again. */
static errcode_t lay_ext4_read_inode(ext2_filsys fs, ext2_ino_t ino, struct ext2_inode *inode)
{
    struct ext_ref *r = fs->priv_data;
    if (r == NULL || r->inode == NULL || ino != r->ino)
        return EXT2_ET_CALLBACK_NOTHANDLED;
    *inode = *r->inode;
    return 0;
}

static int lay_ext4_block(ext2_filsys fs, blk64_t *blk, e2_blkcnt_t cnt, blk64_t ref_blk,
                          int ref_off, void *priv)
{
    (void)fs, (void)cnt, (void)ref_blk, (void)ref_off;
    return ext_ref(priv, *blk, 1) == 0 ? 0 : BLOCK_ABORT;
}

/* A block-mapped inode (ext2, ext3): its data, indirect blocks (each
 * checked inside the filesystem by libext2fs before it is read) and, on
 * the Hurd, its translator block. */
static void lay_ext4_indirect(struct ext_ref *r, struct ext2_inode *inode)
{
    r->inode = inode;
    errcode_t e = ext2fs_block_iterate3(r->fs, r->ino, BLOCK_FLAG_READ_ONLY, NULL,
                                        lay_ext4_block, r);
    r->inode = NULL;
    if (e != 0)
        ext_refuse(r, "its block map cannot be read", e);
}

/* Whether e2fsck's pass 1 takes the inode's blocks as used. */
static bool lay_ext4_live(ext2_filsys fs, ext2_ino_t ino, const struct ext2_inode *inode)
{
    const struct ext2_super_block *sb = fs->super;
    return inode->i_links_count > 0 || ino < EXT2_FIRST_INODE(sb) ||
           ino == sb->s_journal_inum || ino == sb->s_usr_quota_inum ||
           ino == sb->s_grp_quota_inum || ino == sb->s_prj_quota_inum ||
           ino == sb->s_orphan_file_inum;
}

/* (b), one inode. */
static void lay_ext4_inode(struct ext_ref *r, ext2_ino_t ino, struct ext2_inode *inode)
{
    ext2_filsys fs = r->fs;
    if (!lay_ext4_live(fs, ino, inode))
        return;
    r->ino = ino;
    if (ino == EXT2_RESIZE_INO) {
        ext_ref(r, inode->i_block[EXT2_DIND_BLOCK], inode->i_block[EXT2_DIND_BLOCK] != 0);
    } else if (ino == EXT2_BAD_INO || ext2fs_inode_has_valid_blocks2(fs, inode)) {
        if (inode->i_flags & EXT4_EXTENTS_FL)
            lay_ext4_extents(r, inode);
        else
            lay_ext4_indirect(r, inode);
    }
    blk64_t acl = ext2fs_file_acl_block(fs, inode);
    if (acl != 0)
        ext_ref(r, acl, 1);
    /* the Hurd's translator block, whatever the inode's kind (a
     * block-mapped inode gives it to lay_ext4_block() too: counted twice) */
    if (fs->super->s_creator_os == EXT2_OS_HURD && inode->osd1.hurd1.h_i_translator != 0)
        ext_ref(r, inode->osd1.hurd1.h_i_translator, 1);
    r->ino = 0;
}

/* (b): every inode the descriptors call initialised, read once. */
static void lay_ext4_scan(struct ext_ref *r)
{
    ext2_filsys fs = r->fs;
    ext2_inode_scan scan;
    /* an empty bad-block list: else the scan reads inode 1's list first,
     * a walk of its own outside the budget (bad blocks it lists are
     * walked below, as inode 1's blocks) */
    errcode_t e = fs->badblocks ? 0 : ext2fs_badblocks_list_create(&fs->badblocks, 0);
    if (e != 0) {
        r->rc = -1;
        return;
    }
    e = ext2fs_open_inode_scan(fs, 64, &scan);
    if (e != 0) {
        ext_refuse(r, "its inode tables cannot be read", e);
        return;
    }
    size_t isz = EXT2_INODE_SIZE(fs->super);
    struct ext2_inode *inode = malloc(isz < sizeof *inode ? sizeof *inode : isz);
    if (inode == NULL)
        r->rc = -1;
    while (r->rc == 1) {
        ext2_ino_t ino;
        e = ext2fs_get_next_inode_full(scan, &ino, inode, (int)isz);
        if (e == 0 && ino == 0)
            break;
        if (e == EXT2_ET_NO_MEMORY) {
            r->rc = -1;
        } else if (e == EXT2_ET_INODE_CSUM_INVALID || e == EXT2_ET_INODE_IS_GARBAGE) {
            r->ino = ino;
            ext_refuse(r, "it cannot be read", e);
        } else if (e != 0) {
            ext_refuse(r, "its inode tables cannot be read", e);
        } else {
            lay_ext4_inode(r, ino, inode);
        }
    }
    ext_flush(r);
    free(inode);
    ext2fs_close_inode_scan(scan);
}

/* The second reading: 1, 0 (why), -1. */
static int lay_ext4_refs(ext2_filsys fs, struct lay_used *u, char *why, size_t wn)
{
    struct ext_ref r = {
        .fs = fs, .u = u, .blocks = ext2fs_blocks_count(fs->super), .why = why, .wn = wn,
        .rc = 1,
    };
    r.budget = 2 * r.blocks + fs->super->s_inodes_count;
    fs->priv_data = &r;
    fs->read_inode = lay_ext4_read_inode;
    lay_ext4_meta(&r);
    if (r.rc == 1)
        lay_ext4_scan(&r);
    fs->read_inode = NULL;
    fs->priv_data = NULL;
    return r.rc;
}

int lay_ext4_used(struct lay_dev *d, struct lay_used *u, uint64_t *fs_len, char *why, size_t wn)
{
    ext2_filsys fs = NULL;
    const char *bad = lay_ext4_precheck(d);
    if (bad != NULL) {
        snprintf(why, wn, "%s", bad);
        return 0;
    }
    /* libext2fs's messages: error_message() knows them only once added
     * (idempotent: the table is added once) */
    initialize_ext2_error_table();
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
    } else if ((bad = lay_ext4_desc_check(fs, why, wn)) != NULL) {
        /* why is set */
    } else if ((e = ext2fs_read_block_bitmap(fs)) != 0) {
        snprintf(why, wn, "libext2fs cannot read its block bitmaps: %s", error_message(e));
    } else {
        uint64_t blocks = ext2fs_blocks_count(sb);
        if (blocks == 0 || blocks > UINT64_MAX / fs->blocksize) {
            snprintf(why, wn, "its block count is not credible");
        } else if (lay_ext4_runs(fs, u) != 0 || lay_used_seal(u) != 0) {
            rc = -1;
        } else if ((rc = lay_ext4_refs(fs, u, why, wn)) == 1) {
            *fs_len = blocks * fs->blocksize;
        }
    }
    ext2fs_close_free(&fs);
    return rc;
}
