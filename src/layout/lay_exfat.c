/* lay_exfat.c — exFAT: the allocation bitmap.
 *
 * By hand: exfatprogs and exfat-fuse ship programs, not a library.  From
 * Microsoft's exFAT specification: the main boot region (sectors 0-11) is
 * checked with its checksum (sector 11); the root directory, a FAT chain
 * from FirstClusterOfRootDirectory, holds the allocation bitmap's entry
 * (type 0x81: first cluster and length); the bitmap is read along its own
 * FAT chain, and bit n says whether cluster n + 2 is allocated.  Files
 * marked NoFatChain have no FAT entries, but every cluster they hold is set
 * in the bitmap, which is why the bitmap, not the FAT, is read.
 *
 * Used: everything before the cluster heap (boot regions, FATs), every
 * allocated cluster, and everything after the heap up to VolumeLength.
 * With two FATs (TexFAT), both bitmaps are read and a cluster is used when
 * either says so.
 *
 * Read whole instead: a boot checksum that does not match, fields outside
 * the specification's ranges, VolumeDirty (Linux sets it while mounted) or
 * MediaFailure set, a chain that leaves the heap or loops, a bitmap too
 * short for the clusters.
 */
#include "config.h"
#include "lay.h"
#include "lay_fs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XF_DIRTY 0x0002
#define XF_MEDIA_FAILURE 0x0004

static uint32_t xf_le16(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t xf_le32(const uint8_t *p)
{
    return xf_le16(p) | xf_le16(p + 2) << 16;
}

static uint64_t xf_le64(const uint8_t *p)
{
    return (uint64_t)xf_le32(p) | (uint64_t)xf_le32(p + 4) << 32;
}

struct xf_vol {
    struct lay_dev *d;
    uint64_t bps, cluster;  /* bytes per sector, per cluster */
    uint64_t fat_off, fat_len; /* bytes */
    uint64_t heap_off;      /* bytes */
    uint32_t clusters;
    unsigned nfats;
    uint64_t vol_len;       /* bytes */
};

/* The boot region's checksum over sectors 0-10, bytes 106, 107 and 112 of
 * sector 0 left out, against sector 11 (the value repeated).  0 or -1. */
static int xf_checksum(struct xf_vol *v, uint8_t *sec)
{
    uint32_t sum = 0;
    for (unsigned s = 0; s < 11; s++) {
        if (lay_dev_read(v->d, s * v->bps, sec, (size_t)v->bps) != 0)
            return -1;
        for (uint64_t i = 0; i < v->bps; i++) {
            if (s == 0 && (i == 106 || i == 107 || i == 112))
                continue;
            sum = ((sum & 1) ? 0x80000000u : 0) + (sum >> 1) + sec[i];
        }
    }
    if (lay_dev_read(v->d, 11 * v->bps, sec, (size_t)v->bps) != 0)
        return -1;
    for (uint64_t i = 0; i < v->bps; i += 4)
        if (xf_le32(sec + i) != sum)
            return -1;
    return 0;
}

static const char *xf_geometry(struct xf_vol *v, const uint8_t *b)
{
    if (memcmp(b + 3, "EXFAT   ", 8) != 0)
        return "no exFAT boot sector";
    for (unsigned i = 11; i < 64; i++)
        if (b[i] != 0)
            return "its boot sector's MustBeZero field is not zero";
    unsigned bps_shift = b[108], spc_shift = b[109];
    if (bps_shift < 9 || bps_shift > 12 || spc_shift > 25 - bps_shift)
        return "its sector or cluster size is out of range";
    v->bps = (uint64_t)1 << bps_shift;
    v->cluster = v->bps << spc_shift;
    v->nfats = b[110];
    uint64_t vol_sec = xf_le64(b + 72);
    uint64_t fat_sec = xf_le32(b + 80), fat_n = xf_le32(b + 84);
    uint64_t heap_sec = xf_le32(b + 88);
    v->clusters = xf_le32(b + 92);
    if (v->nfats < 1 || v->nfats > 2 || fat_sec < 24 || fat_n == 0 ||
        heap_sec < fat_sec + v->nfats * fat_n || v->clusters == 0 || v->clusters > 0xFFFFFFF5u ||
        vol_sec > UINT64_MAX >> bps_shift)
        return "its boot sector's fields are out of range";
    v->fat_off = fat_sec * v->bps;
    v->fat_len = fat_n * v->bps;
    v->heap_off = heap_sec * v->bps;
    v->vol_len = vol_sec * v->bps;
    if ((uint64_t)(v->clusters + 2) * 4 > v->fat_len ||
        v->heap_off + (uint64_t)v->clusters * v->cluster > v->vol_len)
        return "its FAT or cluster heap does not fit the volume";
    return NULL;
}

/* The FAT entry of cluster c in FAT k, or 0 on a read error (never a valid
 * next cluster). */
static uint32_t xf_next(struct xf_vol *v, unsigned k, uint32_t c)
{
    uint8_t e[4];
    if (lay_dev_read(v->d, v->fat_off + k * v->fat_len + (uint64_t)c * 4, e, 4) != 0)
        return 0;
    return xf_le32(e);
}

static bool xf_valid(const struct xf_vol *v, uint32_t c)
{
    return c >= 2 && c - 2 < v->clusters;
}

/* Read len bytes of the chain from cluster first (FAT k) into buf.  0 or -1
 * (a chain that leaves the heap, ends early or loops). */
static int xf_read_chain(struct xf_vol *v, unsigned k, uint32_t first, uint8_t *buf, uint64_t len)
{
    uint32_t c = first;
    for (uint64_t at = 0, steps = 0; at < len; steps++) {
        if (!xf_valid(v, c) || steps > v->clusters)
            return -1;
        uint64_t n = len - at < v->cluster ? len - at : v->cluster;
        if (lay_dev_read(v->d, v->heap_off + (uint64_t)(c - 2) * v->cluster, buf + at, (size_t)n) != 0)
            return -1;
        at += n;
        if (at < len)
            c = xf_next(v, k, c);
    }
    return 0;
}

/* Find the bitmap entries in the root directory: first cluster and length
 * per FAT (flags bit 0).  1 found, 0 not (or a bad chain). */
static int xf_find_bitmaps(struct xf_vol *v, uint32_t root, uint32_t first[2], uint64_t len[2])
{
    uint8_t *clu = malloc((size_t)v->cluster);
    if (clu == NULL)
        return -1;
    unsigned found = 0;
    int rc = 0;
    uint32_t c = root;
    /* a directory is at most 256 MiB (the specification): a chain that runs
     * longer loops */
    uint64_t max_steps = ((uint64_t)256 << 20) / v->cluster + 1;
    for (uint64_t steps = 0; xf_valid(v, c) && steps < max_steps; steps++) {
        if (lay_dev_read(v->d, v->heap_off + (uint64_t)(c - 2) * v->cluster, clu, (size_t)v->cluster) != 0)
            break;
        bool end = false;
        for (uint64_t i = 0; i < v->cluster && !end; i += 32) {
            uint8_t type = clu[i];
            if (type == 0x00) {
                end = true;
            } else if (type == 0x81) {
                unsigned which = clu[i + 1] & 1;
                if (which < v->nfats && !(found & (1u << which))) {
                    first[which] = xf_le32(clu + i + 20);
                    len[which] = xf_le64(clu + i + 24);
                    found |= 1u << which;
                }
            }
        }
        if (end)
            break;
        c = xf_next(v, 0, c);
    }
    free(clu);
    if (found == (v->nfats == 2 ? 3u : 1u))
        rc = 1;
    return rc;
}

int lay_exfat_used(struct lay_dev *d, struct lay_used *u, uint64_t *fs_len, char *why, size_t wn)
{
    uint8_t b[512];
    struct xf_vol v = {.d = d};
    if (lay_dev_read(d, 0, b, sizeof b) != 0) {
        snprintf(why, wn, "its boot sector cannot be read");
        return 0;
    }
    const char *bad = xf_geometry(&v, b);
    if (bad != NULL) {
        snprintf(why, wn, "%s", bad);
        return 0;
    }
    uint32_t flags = xf_le16(b + 106), root = xf_le32(b + 96);
    if (flags & (XF_DIRTY | XF_MEDIA_FAILURE)) {
        snprintf(why, wn, "%s", flags & XF_DIRTY ? "it is marked dirty (mounted, or not cleanly unmounted)"
                                                 : "it is marked as having had media failures");
        return 0;
    }
    if (v.vol_len > d->len) {
        snprintf(why, wn, "the filesystem is larger than its partition");
        return 0;
    }
    uint8_t *sec = malloc((size_t)v.bps);
    if (sec == NULL)
        return -1;
    int ck = xf_checksum(&v, sec);
    free(sec);
    if (ck != 0) {
        snprintf(why, wn, "its boot region's checksum does not match");
        return 0;
    }
    uint32_t first[2] = {0, 0};
    uint64_t len[2] = {0, 0};
    int fr = xf_find_bitmaps(&v, root, first, len);
    if (fr <= 0) {
        if (fr == 0)
            snprintf(why, wn, "its allocation bitmap was not found");
        return fr;
    }
    uint64_t need = ((uint64_t)v.clusters + 7) / 8;
    uint8_t *bm[2] = {NULL, NULL};
    int rc = 1;
    for (unsigned k = 0; k < v.nfats && rc == 1; k++) {
        if (len[k] < need) {
            snprintf(why, wn, "its allocation bitmap is shorter than its clusters");
            rc = 0;
        } else if ((bm[k] = malloc((size_t)need)) == NULL) {
            rc = -1;
        } else if (xf_read_chain(&v, k, first[k], bm[k], need) != 0) {
            snprintf(why, wn, "its allocation bitmap cannot be read along its chain");
            rc = 0;
        }
    }
    uint64_t run = 0, run_len = 0;
    for (uint64_t c = 0; rc == 1 && c <= v.clusters; c++) {
        bool used = false;
        for (unsigned k = 0; c < v.clusters && k < v.nfats; k++)
            used = used || (bm[k][c / 8] >> (c % 8) & 1);
        if (used && run_len > 0 && run + run_len == c) {
            run_len++;
            continue;
        }
        if (run_len > 0 && lay_used_add(u, v.heap_off + run * v.cluster, run_len * v.cluster) != 0)
            rc = -1;
        run = c;
        run_len = used ? 1 : 0;
    }
    free(bm[0]);
    free(bm[1]);
    if (rc != 1)
        return rc;
    uint64_t heap_end = v.heap_off + (uint64_t)v.clusters * v.cluster;
    if (lay_used_add(u, 0, v.heap_off) != 0 || lay_used_add(u, heap_end, v.vol_len - heap_end) != 0)
        return -1;
    *fs_len = v.vol_len;
    return 1;
}
