/* lay_ntfs.c — NTFS: the $Bitmap, and the MFT, through libntfs-3g.
 *
 * libntfs-3g mounts the volume read-only on a device of our own whose
 * operations read the region with lay_dev_read() (bounded, counted; writes
 * fail).  Two readings of what is used (lay_fs.h):
 *
 * 1. $Bitmap's data attribute: bit n says whether cluster n is allocated.
 *    The MFT, its mirror, $LogFile and every other metadata file hold their
 *    clusters in $Bitmap like any file.  Used besides: the bytes past
 *    nr_clusters (the backup boot sector lives in the volume's last sector,
 *    outside the clusters), and cluster 0 (the boot sector) whatever
 *    $Bitmap says.
 * 2. The MFT, as chkdsk's first pass reads it: every record of $MFT's
 *    initialised data, in order, its update sequence checked
 *    (ntfs_mst_post_read_fixup()) and, when live, its header and attribute
 *    chain (ntfs_mft_record_check()); every non-resident attribute's
 *    runlist (ntfs_mapping_pairs_decompress(), one attribute record at a
 *    time) gives the clusters it names, holes skipped.  Extension records
 *    are records like the others, so attribute lists need no following,
 *    and $MFT's own runlist is read where it lies.  A record is live when
 *    its header flag (MFT_RECORD_IN_USE) or $MFT's $Bitmap says so: that
 *    bitmap is a third reading, of records rather than clusters, one bit a
 *    record to read; either alone may be the damaged one, so the union is
 *    scanned.  Every record of the initialised MFT is a FILE record on a
 *    sound volume (formatting writes free ones too), so one that is not,
 *    or fails its fixups, is damage whatever the flags say: a lost record
 *    may have been a live file's.  One exception, where the third reading
 *    decides: a record all zeros that $MFT's $Bitmap calls free is taken
 *    as never formatted (zeros also fill a bad sector, but then the bitmap
 *    bit of the live record it held is set).
 *
 * Read whole instead: the volume marked dirty, Windows hibernated on it or
 * its $LogFile not clean (fast startup, a crash: the bitmap on disk may not
 * be the volume's), a record that is damaged as above or does not parse, a
 * run outside the volume, or anything libntfs-3g refuses.
 *
 * Bounds: the MFT is read once, in batches; the records are at most its
 * initialised size over the record size (that much data the volume holds),
 * each parsed within its own bytes; runs are at most the mapping pairs'
 * bytes.
 *
 * libntfs-3g's log messages are silenced (the core never prints); its
 * device state lives in the ntfs_device we allocate, one per call.
 */
#include "config.h"
#include "lay.h"
#include "lay_fs.h"
#include "le.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <ntfs-3g/types.h>
#include <ntfs-3g/attrib.h>
#include <ntfs-3g/device.h>
#include <ntfs-3g/dir.h>
#include <ntfs-3g/inode.h>
#include <ntfs-3g/logfile.h>
#include <ntfs-3g/logging.h>
#include <ntfs-3g/mft.h>
#include <ntfs-3g/mst.h>
#include <ntfs-3g/runlist.h>
#include <ntfs-3g/volume.h>

#define NTFS_STEP 65536u /* bitmap bytes read at once */
#define NTFS_MFT_STEP 64u /* MFT records read at once (a multiple of 8) */

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

/* --exclude=volatile: Windows' volatile files, in the root, whose unnamed
 * data Windows recreates (the page file, the swap file) or throws away
 * when it does not resume from it (the hibernation file: a volume that is
 * hibernated is read whole before this).  Their MFT records, and their
 * clusters as sorted, merged byte ranges of the region. */
static const char *const ntfs_volatile_names[] = {"pagefile.sys", "hiberfil.sys",
                                                  "swapfile.sys"};
#define NTFS_VOLATILE 3
struct ntfs_volatile {
    uint64_t mft[NTFS_VOLATILE];
    size_t nmft;
    struct sp_range *r;
    size_t n;
    bool shared;   /* another record names one of those clusters */
    char names[48];
};

/* The second reading's state (see the top). */
struct ntfs_ref {
    ntfs_volume *vol;
    struct lay_used *u;
    uint64_t nc;   /* clusters */
    char *why;
    size_t wn;
    int rc;        /* 1 going on, 0 refused (why), -1 out of memory */
    struct ntfs_volatile *vf; /* --exclude=volatile, or NULL */
};

/* Whether [off, off + len) meets one of the volatile files' ranges. */
static bool ntfs_volatile_meets(const struct ntfs_volatile *v, uint64_t off, uint64_t len)
{
    size_t lo = 0, hi = v->n;
    while (lo < hi) { /* the first range that ends after off */
        size_t mid = lo + (hi - lo) / 2;
        if (v->r[mid].off + v->r[mid].len <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < v->n && v->r[lo].off < off + len;
}

static bool ntfs_volatile_owns(const struct ntfs_volatile *v, uint64_t rec)
{
    for (size_t i = 0; i < v->nmft; i++)
        if (v->mft[i] == rec)
            return true;
    return false;
}

static void ntfs_refuse(struct ntfs_ref *r, uint64_t rec, const char *what)
{
    if (r->rc == 1)
        snprintf(r->why, r->wn, "MFT record %llu %s (run chkdsk)", (unsigned long long)rec, what);
    r->rc = 0;
}

/* The clusters one non-resident attribute record names (rec's; owner is
 * the file's base record). */
static void ntfs_attr_runs(struct ntfs_ref *r, uint64_t rec, uint64_t owner, ATTR_RECORD *a)
{
    runlist_element *rl = ntfs_mapping_pairs_decompress(r->vol, a, NULL);
    if (rl == NULL) {
        if (errno == ENOMEM)
            r->rc = -1;
        else
            ntfs_refuse(r, rec, "has a runlist that cannot be decoded");
        return;
    }
    uint64_t cs = r->vol->cluster_size;
    for (size_t k = 0; rl[k].length != 0 && r->rc == 1; k++) {
        if (rl[k].lcn == LCN_HOLE || rl[k].lcn == LCN_RL_NOT_MAPPED)
            continue; /* sparse, or another record's part of the attribute */
        uint64_t lcn = (uint64_t)rl[k].lcn, len = (uint64_t)rl[k].length;
        if (rl[k].lcn < 0 || rl[k].length < 0 || len > r->nc || lcn > r->nc - len)
            ntfs_refuse(r, rec, "names clusters outside the volume");
        else if (lay_used_ref(r->u, lcn * cs, len * cs) != 0)
            r->rc = -1;
        else if (r->vf != NULL && !ntfs_volatile_owns(r->vf, owner) &&
                 ntfs_volatile_meets(r->vf, lcn * cs, len * cs))
            r->vf->shared = true; /* cross-linked: those clusters are kept */
    }
    free(rl);
}

static bool ntfs_all_zero(const void *p, size_t n)
{
    const uint8_t *b = p;
    return n == 0 || (b[0] == 0 && memcmp(b, b + 1, n - 1) == 0);
}

/* One record of the MFT, fixed up in place; live says whether $MFT's
 * $Bitmap calls it in use. */
static void ntfs_record(struct ntfs_ref *r, uint64_t rec, MFT_RECORD *m, bool live)
{
    u32 rs = r->vol->mft_record_size;
    if (!live && ntfs_all_zero(m, rs))
        return; /* never formatted, and $MFT's $Bitmap agrees it is free */
    if (!ntfs_is_file_record(m->magic) || ntfs_mst_post_read_fixup((NTFS_RECORD *)m, rs) != 0) {
        ntfs_refuse(r, rec, live ? "is damaged, and $MFT's bitmap calls it in use"
                                 : "is damaged (not a FILE record, or it fails its fixups)");
        return;
    }
    if (!live && !(m->flags & MFT_RECORD_IN_USE))
        return;
    if (ntfs_mft_record_check(r->vol, (MFT_REF)rec, m) != 0) {
        ntfs_refuse(r, rec, "is corrupt");
        return;
    }
    /* ntfs_mft_record_check() walked this chain to AT_END; walked again
     * here with bounds of its own all the same */
    u32 at = le16_to_cpu(m->attrs_offset), end = le32_to_cpu(m->bytes_in_use);
    while (r->rc == 1 && end <= rs && at + 8 <= end) {
        ATTR_RECORD *a = (ATTR_RECORD *)((u8 *)m + at);
        if (a->type == AT_END)
            return;
        u32 len = le32_to_cpu(a->length);
        if (len < 24 || len > end - at || (len & 7) != 0)
            break;
        if (a->non_resident)
            ntfs_attr_runs(r, rec, m->base_mft_record != 0 ? MREF_LE(m->base_mft_record) : rec,
                           a);
        at += len;
    }
    if (r->rc == 1)
        ntfs_refuse(r, rec, "is corrupt");
}

/* The second reading: every record of the initialised MFT, with $MFT's
 * $Bitmap beside it.  1, 0 (why), -1. */
static int ntfs_refs(ntfs_volume *vol, struct lay_used *u, uint64_t nc, char *why, size_t wn,
                     struct ntfs_volatile *vf)
{
    struct ntfs_ref r = {.vol = vol, .u = u, .nc = nc, .why = why, .wn = wn, .rc = 1, .vf = vf};
    u32 rs = vol->mft_record_size;
    uint64_t nrec = vol->mft_na->initialized_size > 0
                        ? (uint64_t)vol->mft_na->initialized_size >> vol->mft_record_size_bits
                        : 0;
    if (nrec > nc * vol->cluster_size / rs) /* no MFT is larger than its volume */
        nrec = nc * vol->cluster_size / rs;
    uint8_t *buf = malloc((size_t)NTFS_MFT_STEP * rs), bm[NTFS_MFT_STEP / 8];
    if (buf == NULL)
        return -1;
    for (uint64_t i = 0; i < nrec && r.rc == 1; i += NTFS_MFT_STEP) {
        uint64_t k = nrec - i < NTFS_MFT_STEP ? nrec - i : NTFS_MFT_STEP;
        s64 want = (s64)(k * rs);
        s64 got = ntfs_attr_pread(vol->mftbmp_na, (s64)(i / 8), (s64)sizeof bm, bm);
        if (got < 0 || ntfs_attr_pread(vol->mft_na, (s64)(i * rs), want, buf) != want) {
            snprintf(why, wn, "its MFT cannot be read whole");
            r.rc = 0;
            break;
        }
        memset(bm + got, 0, sizeof bm - (size_t)got); /* past the bitmap: free */
        for (uint64_t j = 0; j < k && r.rc == 1; j++)
            ntfs_record(&r, i + j, (MFT_RECORD *)(buf + j * rs), bm[j / 8] >> (j % 8) & 1);
    }
    free(buf);
    return r.rc;
}

/* One volatile file's unnamed data clusters into v.  0 (absent, resident
 * or not a plain file: nothing), or -1 out of memory. */
static int ntfs_volatile_file(ntfs_volume *vol, const char *name, uint64_t nc,
                              struct ntfs_volatile *v)
{
    ntfs_inode *ni = ntfs_pathname_to_inode(vol, NULL, name);
    if (ni == NULL)
        return 0;
    int rc = 0;
    ntfs_attr *na = NULL;
    if (!(ni->mrec->flags & MFT_RECORD_IS_DIRECTORY) &&
        (na = ntfs_attr_open(ni, AT_DATA, AT_UNNAMED, 0)) != NULL && NAttrNonResident(na) &&
        ntfs_attr_map_whole_runlist(na) == 0 && na->rl != NULL) {
        uint64_t cs = vol->cluster_size;
        size_t k = 0;
        while (na->rl[k].length != 0)
            k++;
        struct sp_range *r = realloc(v->r, (v->n + k) * sizeof *r);
        if (r == NULL) {
            rc = -1;
        } else {
            v->r = r;
            for (size_t i = 0; i < k; i++) {
                uint64_t lcn = (uint64_t)na->rl[i].lcn, len = (uint64_t)na->rl[i].length;
                if (na->rl[i].lcn < 0 || na->rl[i].length <= 0 || len > nc || lcn > nc - len)
                    continue; /* a hole, or nothing a reader of this volume may take */
                v->r[v->n++] = (struct sp_range){lcn * cs, len * cs};
            }
            v->mft[v->nmft++] = ni->mft_no;
            size_t at = strlen(v->names);
            snprintf(v->names + at, sizeof v->names - at, "%s%s", at ? ", " : "", name);
        }
    }
    if (na != NULL)
        ntfs_attr_close(na);
    ntfs_inode_close(ni);
    return rc;
}

/* --exclude=volatile: the volatile files found, their clusters sorted. */
static int ntfs_volatile_find(ntfs_volume *vol, uint64_t nc, struct ntfs_volatile *v)
{
    for (size_t i = 0; i < NTFS_VOLATILE; i++)
        if (ntfs_volatile_file(vol, ntfs_volatile_names[i], nc, v) != 0)
            return -1;
    v->n = sp_ranges_normalize(v->r, v->n);
    return 0;
}

/* Their clusters handed to lay.c to code as zeros, unless another file
 * names one of them (then nothing is, and the region says so). */
static int ntfs_volatile_report(const struct ntfs_volatile *v, struct lay_used *u)
{
    snprintf(u->excl_names, sizeof u->excl_names, "%s", v->names);
    u->excl_refused = v->shared;
    for (size_t i = 0; !v->shared && i < v->n; i++)
        if (lay_used_exclude(u, v->r[i].off, v->r[i].len) != 0)
            return -1;
    return 0;
}

/* The boot sector's size against the region, before libntfs-3g sizes its
 * tables from it.  NULL when it fits. */
static const char *lay_ntfs_precheck(struct lay_dev *d)
{
    uint8_t b[512];
    if (lay_dev_read(d, 0, b, sizeof b) != 0)
        return "its boot sector cannot be read";
    uint64_t bps = le_get16(b + 11), sectors = le_get64(b + 40);
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
    } else if (vol->mft_na == NULL || vol->mftbmp_na == NULL || vol->mft_record_size < 512 ||
               vol->mft_record_size > NTFS_STEP) {
        snprintf(why, wn, "its MFT cannot be read");
    } else if ((rc = ntfs_runs(vol, u, why, wn)) == 1) {
        struct ntfs_volatile vf = {0};
        if (lay_used_add(u, 0, cs) != 0 || lay_used_seal(u) != 0 ||
            (d->exclude_volatile && ntfs_volatile_find(vol, nc, &vf) != 0))
            rc = -1;
        else
            rc = ntfs_refs(vol, u, nc, why, wn, d->exclude_volatile ? &vf : NULL);
        if (rc == 1 && d->exclude_volatile && ntfs_volatile_report(&vf, u) != 0)
            rc = -1;
        free(vf.r);
        if (rc == 1)
            *fs_len = nc * cs; /* the rest, the backup boot sector's, is read */
    }
    ntfs_umount(vol, FALSE); /* frees dev too */
    return rc;
}
