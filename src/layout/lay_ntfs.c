/* lay_ntfs.c — NTFS: the $Bitmap, through libntfs-3g.
 *
 * libntfs-3g mounts the volume read-only on a device of our own whose
 * operations read the region with lay_dev_read() (bounded, counted; writes
 * fail), and reads $Bitmap's data attribute: bit n says whether cluster n
 * is allocated.  The MFT, its mirror, $LogFile and every other metadata
 * file hold their clusters in $Bitmap like any file.  Used besides: the
 * bytes past nr_clusters (the backup boot sector lives in the volume's last
 * sector, outside the clusters), and cluster 0 (the boot sector) whatever
 * $Bitmap says.
 *
 * Read whole instead: the volume marked dirty, Windows hibernated on it or
 * its $LogFile not clean (fast startup, a crash: the bitmap on disk may not
 * be the volume's), or anything libntfs-3g refuses.
 *
 * libntfs-3g's log messages are silenced (the core never prints); its
 * device state lives in the ntfs_device we allocate, one per call.
 */
#include "config.h"
#include "lay.h"
#include "lay_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <ntfs-3g/types.h>
#include <ntfs-3g/attrib.h>
#include <ntfs-3g/device.h>
#include <ntfs-3g/inode.h>
#include <ntfs-3g/logfile.h>
#include <ntfs-3g/logging.h>
#include <ntfs-3g/volume.h>

#define NTFS_STEP 65536u /* bitmap bytes read at once */

struct ntfs_priv {
    struct lay_dev *d;
    s64 pos;
};

static int nd_open(struct ntfs_device *dev, int flags)
{
    if ((flags & O_ACCMODE) != O_RDONLY) {
        errno = EROFS;
        return -1;
    }
    NDevSetOpen(dev);
    return 0;
}

static int nd_close(struct ntfs_device *dev)
{
    NDevClearOpen(dev);
    return 0;
}

static s64 nd_seek(struct ntfs_device *dev, s64 off, int whence)
{
    struct ntfs_priv *p = dev->d_private;
    s64 to = whence == SEEK_SET ? off : whence == SEEK_CUR ? p->pos + off
                                                            : (s64)p->d->len + off;
    if (to < 0) {
        errno = EINVAL;
        return -1;
    }
    return p->pos = to;
}

static s64 nd_pread(struct ntfs_device *dev, void *buf, s64 count, s64 off)
{
    struct ntfs_priv *p = dev->d_private;
    if (count < 0 || off < 0) {
        errno = EINVAL;
        return -1;
    }
    if ((uint64_t)off >= p->d->len)
        return 0;
    uint64_t n = (uint64_t)count < p->d->len - (uint64_t)off ? (uint64_t)count
                                                             : p->d->len - (uint64_t)off;
    if (lay_dev_read(p->d, (uint64_t)off, buf, (size_t)n) != 0) {
        errno = EIO;
        return -1;
    }
    return (s64)n;
}

static s64 nd_read(struct ntfs_device *dev, void *buf, s64 count)
{
    struct ntfs_priv *p = dev->d_private;
    s64 n = nd_pread(dev, buf, count, p->pos);
    if (n > 0)
        p->pos += n;
    return n;
}

static s64 nd_write(struct ntfs_device *dev, const void *buf, s64 count)
{
    (void)dev, (void)buf, (void)count;
    errno = EROFS;
    return -1;
}

static s64 nd_pwrite(struct ntfs_device *dev, const void *buf, s64 count, s64 off)
{
    (void)dev, (void)buf, (void)count, (void)off;
    errno = EROFS;
    return -1;
}

static int nd_sync(struct ntfs_device *dev)
{
    (void)dev;
    return 0;
}

static int nd_stat(struct ntfs_device *dev, struct stat *st)
{
    struct ntfs_priv *p = dev->d_private;
    memset(st, 0, sizeof *st);
    st->st_mode = S_IFREG | 0400;
    st->st_size = (off_t)p->d->len;
    return 0;
}

static int nd_ioctl(struct ntfs_device *dev, unsigned long req, void *arg)
{
    (void)dev, (void)req, (void)arg;
    errno = ENOTTY;
    return -1;
}

static struct ntfs_device_operations nd_ops = {
    .open = nd_open, .close = nd_close, .seek = nd_seek, .read = nd_read,
    .write = nd_write, .pread = nd_pread, .pwrite = nd_pwrite, .sync = nd_sync,
    .stat = nd_stat, .ioctl = nd_ioctl,
};

/* Whether $LogFile says the volume was shut down cleanly. */
static bool ntfs_log_clean(ntfs_volume *vol)
{
    ntfs_inode *ni = ntfs_inode_open(vol, FILE_LogFile);
    if (ni == NULL)
        return false;
    bool clean = false;
    ntfs_attr *na = ntfs_attr_open(ni, AT_DATA, AT_UNNAMED, 0);
    if (na != NULL) {
        RESTART_PAGE_HEADER *rp = NULL;
        clean = ntfs_check_logfile(na, &rp) && ntfs_is_logfile_clean(na, rp);
        free(rp);
        ntfs_attr_close(na);
    }
    ntfs_inode_close(ni);
    return clean;
}

/* $Bitmap's set bits as used extents.  1, 0 (why), -1. */
static int ntfs_runs(ntfs_volume *vol, struct lay_used *u, char *why, size_t wn)
{
    uint64_t cs = vol->cluster_size, nc = (uint64_t)vol->nr_clusters;
    uint8_t *buf = malloc(NTFS_STEP);
    if (buf == NULL)
        return -1;
    int rc = 1;
    uint64_t run = 0, run_len = 0;
    for (uint64_t c0 = 0; c0 < nc && rc == 1; c0 += (uint64_t)NTFS_STEP * 8) {
        uint64_t bits = nc - c0 < (uint64_t)NTFS_STEP * 8 ? nc - c0 : (uint64_t)NTFS_STEP * 8;
        s64 want = (s64)((bits + 7) / 8);
        if (ntfs_attr_pread(vol->lcnbmp_na, (s64)(c0 / 8), want, buf) != want) {
            snprintf(why, wn, "its $Bitmap cannot be read whole");
            rc = 0;
            break;
        }
        for (uint64_t i = 0; i < bits; i++) {
            bool used = buf[i / 8] >> (i % 8) & 1;
            uint64_t c = c0 + i;
            if (used && run_len > 0 && run + run_len == c) {
                run_len++;
            } else if (used) {
                if (run_len > 0 && lay_used_add(u, run * cs, run_len * cs) != 0)
                    rc = -1;
                run = c;
                run_len = 1;
            }
        }
    }
    if (rc == 1 && run_len > 0 && lay_used_add(u, run * cs, run_len * cs) != 0)
        rc = -1;
    free(buf);
    return rc;
}

/* The boot sector's size against the region, before libntfs-3g sizes its
 * tables from it.  NULL when it fits. */
static const char *lay_ntfs_precheck(struct lay_dev *d)
{
    uint8_t b[512];
    if (lay_dev_read(d, 0, b, sizeof b) != 0)
        return "its boot sector cannot be read";
    uint64_t bps = (uint64_t)b[11] | (uint64_t)b[12] << 8, sectors = 0;
    for (int i = 7; i >= 0; i--)
        sectors = sectors << 8 | b[40 + i];
    if (bps < 256 || bps > 4096 || (bps & (bps - 1)) != 0)
        return "its sector size is out of range";
    if (sectors > d->len / bps)
        return "the filesystem is larger than its partition";
    return NULL;
}

int lay_ntfs_used(struct lay_dev *d, struct lay_used *u, uint64_t *fs_len, char *why, size_t wn)
{
    const char *bad = lay_ntfs_precheck(d);
    if (bad != NULL) {
        snprintf(why, wn, "%s", bad);
        return 0;
    }
    ntfs_log_set_handler(ntfs_log_handler_null);
    struct ntfs_priv priv = {.d = d};
    struct ntfs_device *dev = ntfs_device_alloc("spigz", 0, &nd_ops, &priv);
    if (dev == NULL)
        return -1;
    ntfs_volume *vol = ntfs_device_mount(dev, NTFS_MNT_RDONLY);
    if (vol == NULL) {
        snprintf(why, wn, "libntfs-3g cannot mount it: %s", strerror(errno));
        ntfs_device_free(dev);
        return 0;
    }
    int rc = 0;
    uint64_t cs = vol->cluster_size, nc = vol->nr_clusters > 0 ? (uint64_t)vol->nr_clusters : 0;
    if (vol->flags & VOLUME_IS_DIRTY) {
        snprintf(why, wn, "it is marked dirty (run chkdsk, or ntfsfix -d)");
    } else if (ntfs_volume_check_hiberfile(vol, 0) != 0) {
        snprintf(why, wn, "Windows is hibernated on it (fast startup)");
    } else if (!ntfs_log_clean(vol)) {
        snprintf(why, wn, "its $LogFile is not clean (not shut down cleanly)");
    } else if (nc == 0 || cs == 0 || nc > UINT64_MAX / cs || nc * cs > d->len ||
               vol->lcnbmp_na == NULL || (uint64_t)vol->lcnbmp_na->data_size < (nc + 7) / 8) {
        snprintf(why, wn, "its cluster count or $Bitmap does not fit the partition");
    } else if ((rc = ntfs_runs(vol, u, why, wn)) == 1) {
        if (lay_used_add(u, 0, cs) != 0)
            rc = -1;
        *fs_len = nc * cs; /* the rest, the backup boot sector's, is read */
    }
    ntfs_umount(vol, FALSE); /* frees dev too */
    return rc;
}
