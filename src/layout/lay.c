/* lay.c — see lay.h: the regions, the filesystem probe, the readers' table, the free list. */
#include "config.h"
#include "lay.h"
#include "lay_fs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef HAVE_BLKID
#include <blkid.h>
#endif

/* The filesystems mapped, by libblkid's TYPE name.  Anything else is read
 * whole: a new filesystem is one line here and one file. */
static const struct {
    const char *type;
    lay_fs_fn used;
} lay_fs_table[] = {
#ifdef HAVE_EXT2FS
    {"ext2", lay_ext4_used},
    {"ext3", lay_ext4_used},
    {"ext4", lay_ext4_used},
#endif
#ifdef HAVE_NTFS3G
    {"ntfs", lay_ntfs_used},
#endif
    {"vfat", lay_fat_used},
    {"exfat", lay_exfat_used},
    {"swap", lay_swap_used},
};

int lay_dev_read(struct lay_dev *d, uint64_t off, void *buf, size_t n)
{
    if (off > d->len || n > d->len - off)
        return -1;
    uint8_t *p = buf;
    for (size_t got = 0; got < n;) {
        ssize_t r = pread(d->fd, p + got, n - got, (off_t)(d->off + off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
        d->read += (uint64_t)r;
    }
    return 0;
}

/* Memory: a reader's extents are bounded by LAY_MAX_EXTENTS (64 MiB of
 * them), whatever the filesystem says: a bitmap alternating used and free
 * blocks on a large disk would otherwise ask for gigabytes.  At the bound
 * the list is coarsened: extents closer than a gap (64 KiB, doubled until
 * the list is at most half full) are joined, the space between them counted
 * used.  That only ever adds used bytes (never a free one), and depends
 * only on the reader's extents, so the output stays a function of the
 * input; real filesystems stay far below the bound. */
#define LAY_MAX_EXTENTS ((size_t)1 << 22)

static size_t lay_merge(struct sp_range *e, size_t n);

static void lay_coarsen(struct lay_used *u)
{
    u->n = lay_merge(u->e, u->n);
    /* the extents reported since lay_used_seal() are merged into the map:
     * a superset of it, so lay_used_ref() stays right (it counted them) */
    for (uint64_t gap = 65536; u->n > LAY_MAX_EXTENTS / 2 && gap != 0; gap <<= 1) {
        size_t k = 0;
        for (size_t i = 1; i < u->n; i++) {
            uint64_t end = u->e[k].off + u->e[k].len;
            if (u->e[i].off - end < gap)
                u->e[k].len = u->e[i].off + u->e[i].len - u->e[k].off;
            else
                u->e[++k] = u->e[i];
        }
        u->n = k + 1;
        u->coarsened = true;
    }
    if (u->is_sealed)
        u->sealed = u->n;
}

int lay_used_add(struct lay_used *u, uint64_t off, uint64_t len)
{
    if (len == 0)
        return 0;
    if (u->n == LAY_MAX_EXTENTS)
        lay_coarsen(u);
    if (u->n == u->cap) {
        size_t cap = u->cap ? u->cap * 2 : 256;
        struct sp_range *e = realloc(u->e, cap * sizeof *e);
        if (e == NULL) {
            u->oom = true;
            return -1;
        }
        u->e = e;
        u->cap = cap;
    }
    u->e[u->n++] = (struct sp_range){off, len};
    return 0;
}

int lay_used_seal(struct lay_used *u)
{
    u->n = lay_merge(u->e, u->n);
    u->sealed = u->n;
    u->is_sealed = true;
    return 0;
}

/* The first extent of the sealed map that ends after at. */
static size_t lay_sealed_after(const struct lay_used *u, uint64_t at)
{
    size_t lo = 0, hi = u->sealed;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (u->e[mid].off + u->e[mid].len <= at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int lay_used_ref(struct lay_used *u, uint64_t off, uint64_t len)
{
    if (!u->is_sealed)
        return lay_used_add(u, off, len);
    uint64_t end = len > UINT64_MAX - off ? UINT64_MAX : off + len;
    uint64_t at = off;
    while (at < end) {
        /* searched again after each add: lay_used_add() may coarsen */
        size_t i = lay_sealed_after(u, at);
        if (i < u->sealed && u->e[i].off <= at) {
            at = u->e[i].off + u->e[i].len;
            continue;
        }
        uint64_t gap_end = i < u->sealed && u->e[i].off < end ? u->e[i].off : end;
        if (lay_used_add(u, at, gap_end - at) != 0)
            return -1;
        u->disputed += gap_end - at;
        at = gap_end;
    }
    return 0;
}

/* The bytes reported by lay_used_ref() outside the map, each counted once
 * (two files may name the same block: a shared xattr block, a cross-linked
 * cluster).  Exact unless the list was coarsened after the seal, when the
 * running count (an over-count) stands. */
static uint64_t lay_used_disputed(struct lay_used *u)
{
    if (!u->is_sealed || u->disputed == 0 || u->sealed > u->n)
        return u->disputed;
    size_t k = lay_merge(u->e + u->sealed, u->n - u->sealed);
    u->n = u->sealed + k;
    uint64_t sum = 0;
    for (size_t i = u->sealed; i < u->n; i++)
        sum += u->e[i].len;
    return sum < u->disputed ? sum : u->disputed;
}

static int lay_ext_cmp(const void *a, const void *b)
{
    const struct sp_range *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Sort and merge overlapping or adjacent extents in place. */
static size_t lay_merge(struct sp_range *e, size_t n)
{
    if (n == 0)
        return 0;
    qsort(e, n, sizeof *e, lay_ext_cmp);
    size_t k = 0;
    for (size_t i = 1; i < n; i++) {
        uint64_t end = e[k].off + e[k].len;
        if (e[i].off <= end) {
            uint64_t iend = e[i].off + e[i].len;
            if (iend > end)
                e[k].len = iend - e[k].off;
        } else {
            e[++k] = e[i];
        }
    }
    return k + 1;
}

/* Append the complement of the used extents u (relative to the region at
 * off) within [off, off + fs_len) to m's free list. */
static int lay_add_free(struct lay_map *m, uint64_t off, uint64_t fs_len, struct lay_used *u,
                        size_t *cap)
{
    u->n = lay_merge(u->e, u->n);
    uint64_t at = 0;
    for (size_t i = 0; i <= u->n; i++) {
        uint64_t end = i < u->n ? u->e[i].off : fs_len;
        if (end > fs_len)
            end = fs_len;
        if (end > at) {
            if (m->nfree == *cap) {
                size_t c = *cap ? *cap * 2 : 256;
                struct sp_range *e = realloc(m->free, c * sizeof *e);
                if (e == NULL)
                    return -1;
                m->free = e;
                *cap = c;
            }
            m->free[m->nfree++] = (struct sp_range){off + at, end - at};
        }
        if (i < u->n && u->e[i].off + u->e[i].len > at)
            at = u->e[i].off + u->e[i].len;
        if (at >= fs_len)
            break;
    }
    return 0;
}

/* Why a filesystem without a reader is read whole: not read by spigz at
 * all, or by this build (configured without its library). */
static const char *lay_unbuilt(const char *type)
{
#ifndef HAVE_EXT2FS
    if (strcmp(type, "ext2") == 0 || strcmp(type, "ext3") == 0 || strcmp(type, "ext4") == 0)
        return "this spigz was built without libext2fs";
#endif
#ifndef HAVE_NTFS3G
    if (strcmp(type, "ntfs") == 0)
        return "this spigz was built without libntfs-3g";
#endif
    (void)type;
    return "spigz does not read this filesystem's allocation map";
}

static lay_fs_fn lay_find_fs(const char *type)
{
    for (size_t i = 0; i < sizeof lay_fs_table / sizeof lay_fs_table[0]; i++)
        if (strcmp(lay_fs_table[i].type, type) == 0)
            return lay_fs_table[i].used;
    return NULL;
}

void lay_whole(struct lay_part *p, bool doubt, const char *why)
{
    p->mapped = false;
    p->doubt = doubt;
    p->used = p->len;
    snprintf(p->why, sizeof p->why, "%s", why);
}

#ifdef HAVE_BLKID
/* Probe one region (at base + p->off) for a filesystem: its TYPE and LABEL
 * into p.  1 when exactly one signature was found, else 0 with p marked
 * read whole. */
static int lay_probe_fs(int fd, uint64_t base, struct lay_part *p)
{
    blkid_probe pr = blkid_new_probe();
    if (pr == NULL) {
        lay_whole(p, false, "cannot probe it");
        return 0;
    }
    int rc = -1;
    if (blkid_probe_set_device(pr, fd, (blkid_loff_t)(base + p->off), (blkid_loff_t)p->len) == 0) {
        blkid_probe_enable_partitions(pr, 0);
        blkid_probe_enable_superblocks(pr, 1);
        /* a bad checksum still names the filesystem: its reader then
         * refuses it, with a warning, rather than "no filesystem" */
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_LABEL |
                                                  BLKID_SUBLKS_BADCSUM);
        rc = blkid_do_safeprobe(pr);
    }
    const char *v;
    if (rc == 0 && blkid_probe_lookup_value(pr, "TYPE", &v, NULL) == 0) {
        snprintf(p->fs, sizeof p->fs, "%s", v);
        if (blkid_probe_lookup_value(pr, "LABEL", &v, NULL) == 0)
            snprintf(p->label, sizeof p->label, "%s", v);
    }
    blkid_free_probe(pr);
    if (rc == -2) {
        lay_whole(p, true, "more than one filesystem signature");
        return 0;
    }
    if (p->fs[0] == '\0') {
        lay_whole(p, false, rc < 0 ? "cannot probe it" : "no filesystem found");
        return 0;
    }
    return 1;
}

#endif

/* Map one region: probe it, run its reader, add its free space. */
static int lay_map_part(int fd, uint64_t base, struct lay_map *m, struct lay_part *p,
                        size_t *cap)
{
    p->used = p->len;
#ifdef HAVE_BLKID
    if (!lay_probe_fs(fd, base, p))
        return 0;
#endif
    lay_fs_fn fn = lay_find_fs(p->fs);
    if (fn == NULL) {
        lay_whole(p, false, lay_unbuilt(p->fs));
        return 0;
    }
    struct lay_dev d = {.fd = fd, .off = base + p->off, .len = p->len};
    struct lay_used u = {0};
    uint64_t fs_len = 0;
    char why[sizeof p->why] = "";
    int rc = fn(&d, &u, &fs_len, why, sizeof why);
    m->meta_read += d.read;
    if (rc < 0 || u.oom) {
        free(u.e);
        return -1;
    }
    if (rc == 0 || fs_len > p->len) {
        free(u.e);
        lay_whole(p, true, rc == 0 ? why : "the filesystem is larger than its partition");
        return 0;
    }
    p->disputed = lay_used_disputed(&u);
    if (p->disputed > LAY_DISPUTE_MAX) {
        free(u.e);
        snprintf(why, sizeof why, "its allocation map calls free %llu bytes its files use "
                 "(a damaged bitmap: run its fsck)", (unsigned long long)p->disputed);
        lay_whole(p, true, why);
        return 0;
    }
    size_t before = m->nfree;
    int ar = lay_add_free(m, p->off, fs_len, &u, cap);
    free(u.e);
    if (ar != 0)
        return -1;
    uint64_t fr = 0;
    for (size_t i = before; i < m->nfree; i++)
        fr += m->free[i].len;
    p->mapped = true;
    p->used = p->len - fr;
    return 0;
}

/* libblkid reads with lseek and read: the offset is put back after it. */
static int lay_build_at(int fd, uint64_t base, uint64_t size, const struct lay_opts *o,
                        struct lay_map *m, struct sp_err *err);

int lay_build(int fd, uint64_t base, uint64_t size, const struct lay_opts *o,
              struct lay_map *m, struct sp_err *err)
{
    off_t at = lseek(fd, 0, SEEK_CUR);
    int rc = lay_build_at(fd, base, size, o, m, err);
    if (at >= 0 && lseek(fd, at, SEEK_SET) != at && rc == 0) {
        lay_free(m);
        sp_err_set(err, SP_ERR_READ, errno, "cannot seek back after reading the partitions");
        rc = -1;
    }
    return rc;
}

static int lay_build_at(int fd, uint64_t base, uint64_t size, const struct lay_opts *o,
                        struct lay_map *m, struct sp_err *err)
{
    memset(m, 0, sizeof *m);
    m->size = size;
    const char *why;
    if (!lay_available(&why)) {
        sp_err_set(err, SP_ERR_SYS, 0, "%s", why);
        return -1;
    }
    char mnt[256];
    if (!o->force_mounted && lay_mounted_rw(fd, mnt, sizeof mnt)) {
        sp_err_set(err, SP_ERR_FORMAT, 0,
                   "mounted read-write on %s: its allocation maps change while they are "
                   "read (--force-mounted maps it anyway)", mnt);
        return -1;
    }
    bool both = false;
#ifdef HAVE_BLKID
    if (lay_table_probe(fd, m, base, &both) != 0)
        goto oom;
#endif
    if (m->nparts == 0) { /* no table: the input is one filesystem (or not) */
        free(m->parts);
        m->parts = calloc(1, sizeof *m->parts);
        if (m->parts == NULL)
            goto oom;
        m->nparts = 1;
        m->parts[0] = (struct lay_part){.off = 0, .len = size};
    } else if (both) {
        for (size_t i = 0; i < m->nparts; i++) {
            lay_whole(&m->parts[i], true, "a filesystem signature on the whole disk too");
        }
    } else {
        lay_table_check(m);
    }
    size_t cap = 0;
    for (size_t i = 0; i < m->nparts; i++) {
        struct lay_part *p = &m->parts[i];
        if (p->why[0] != '\0')
            continue;
        if (lay_map_part(fd, base, m, p, &cap) != 0)
            goto oom;
    }
    /* Partitions come in table order; free extents must be in input order. */
    m->nfree = lay_merge(m->free, m->nfree);
    for (size_t i = 0; i < m->nfree; i++)
        m->free_bytes += m->free[i].len;
    return 0;
oom:
    lay_free(m);
    sp_err_set(err, SP_ERR_NOMEM, ENOMEM, "out of memory reading the partitions");
    return -1;
}

void lay_free(struct lay_map *m)
{
    free(m->parts);
    free(m->free);
    memset(m, 0, sizeof *m);
}

bool lay_available(const char **why)
{
#ifdef HAVE_BLKID
    *why = NULL;
    return true;
#else
    *why = "--free=zero needs libblkid (util-linux), which this spigz was built without";
    return false;
#endif
}

const char *lay_filesystems(void)
{
#ifndef HAVE_BLKID
    return "unavailable (built without libblkid)";
#else
    return "partitions by libblkid (GPT, MBR), "
#ifdef HAVE_EXT2FS
           "ext2/3/4 by libext2fs, "
#else
           "ext2/3/4 read whole (built without libext2fs), "
#endif
#ifdef HAVE_NTFS3G
           "NTFS by libntfs-3g, "
#else
           "NTFS read whole (built without libntfs-3g), "
#endif
           "FAT12/16/32, exFAT and swap by hand";
#endif
}
