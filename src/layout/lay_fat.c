/* lay_fat.c — FAT12, FAT16 and FAT32: a cluster is free when its FAT entry
 * is 0.
 *
 * By hand: no maintained library reads a FAT volume's allocation (dosfstools
 * and mtools are programs, not libraries).  Microsoft's FAT specification
 * decides the type from the cluster count (under 4085 FAT12, under 65525
 * FAT16, else FAT32), as every driver does.  Used: everything before the
 * data region (boot sector, reserved sectors, every FAT copy, FAT12/16's root
 * directory), every cluster whose entry is not 0 in any FAT copy (so a copy
 * that disagrees can only add used clusters), and the sectors past the last
 * whole cluster.
 *
 * Read whole instead: a boot sector whose fields are not those of a FAT
 * volume (or disagree: a FAT too small for the clusters, a FAT32 with a
 * FAT12/16 root directory), or a volume marked dirty (the boot sector's
 * flag, which Linux sets while mounted read-write, or FAT16/32's clean bit
 * in entry 1 clear).
 */
#include "config.h"
#include "lay.h"
#include "lay_fs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAT_STEP 65536u /* FAT bytes read at once, per copy */

static uint32_t fat_le16(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t fat_le32(const uint8_t *p)
{
    return fat_le16(p) | fat_le16(p + 2) << 16;
}

struct fat_geo {
    unsigned bits;      /* 12, 16 or 32 */
    uint64_t bps, spc;  /* bytes per sector, sectors per cluster */
    uint64_t fat_off;   /* of the first FAT, bytes */
    uint64_t fat_bytes; /* of one FAT */
    unsigned nfats;
    uint64_t data_off;  /* of cluster 2, bytes */
    uint64_t clusters;  /* data clusters */
    uint64_t total;     /* bytes of the volume */
};

static bool fat_pow2(uint64_t v)
{
    return v != 0 && (v & (v - 1)) == 0;
}

/* The geometry from the boot sector b, or a reason it is not one. */
static const char *fat_geometry(const uint8_t *b, struct fat_geo *g)
{
    g->bps = fat_le16(b + 11);
    g->spc = b[13];
    uint64_t reserved = fat_le16(b + 14), root_ents = fat_le16(b + 17);
    uint64_t fatsz = fat_le16(b + 22), total = fat_le16(b + 19);
    g->nfats = b[16];
    if (fatsz == 0)
        fatsz = fat_le32(b + 36);
    if (total == 0)
        total = fat_le32(b + 32);
    if (g->bps < 512 || g->bps > 4096 || !fat_pow2(g->bps) || !fat_pow2(g->spc) ||
        reserved == 0 || g->nfats == 0 || g->nfats > 4 || fatsz == 0 || total == 0)
        return "its boot sector does not describe a FAT volume";
    uint64_t root_sec = (root_ents * 32 + g->bps - 1) / g->bps;
    uint64_t data_sec = reserved + g->nfats * fatsz + root_sec;
    if (data_sec >= total)
        return "its FATs leave no room for data";
    g->clusters = (total - data_sec) / g->spc;
    g->bits = g->clusters < 4085 ? 12 : g->clusters < 65525 ? 16 : 32;
    if ((g->bits == 32) != (fat_le16(b + 22) == 0) || (g->bits == 32 && root_ents != 0))
        return "its boot sector disagrees with its cluster count";
    if (g->bits == 32 && g->clusters > 0x0FFFFFF5u)
        return "it counts more clusters than FAT32 can address";
    uint64_t need = g->bits == 12 ? ((g->clusters + 2) * 3 + 1) / 2 : (g->clusters + 2) * (g->bits / 8);
    g->fat_off = reserved * g->bps;
    g->fat_bytes = fatsz * g->bps;
    if (need > g->fat_bytes)
        return "its FAT is too small for its clusters";
    g->data_off = data_sec * g->bps;
    g->total = total * g->bps;
    return NULL;
}

/* Entry n of a FAT held from entry `first` on in buf. */
static uint32_t fat_entry(const struct fat_geo *g, const uint8_t *buf, uint64_t first, uint64_t n)
{
    if (g->bits == 12) {
        uint32_t v = fat_le16(buf + n * 3 / 2);
        return n & 1 ? v >> 4 : v & 0xFFF;
    }
    if (g->bits == 16)
        return fat_le16(buf + (n - first) * 2);
    return fat_le32(buf + (n - first) * 4) & 0x0FFFFFFF;
}

/* Entry 1's clean-shutdown bit (FAT16 bit 15, FAT32 bit 27): clear is dirty. */
static bool fat_entry1_dirty(const struct fat_geo *g, const uint8_t *fat)
{
    if (g->bits == 16)
        return !(fat_le16(fat + 2) & 0x8000);
    if (g->bits == 32)
        return !(fat_le32(fat + 4) & 0x08000000);
    return false;
}

/* Walk the FATs in steps; used clusters to u.  1, 0 (why), -1. */
static int fat_walk(struct lay_dev *d, const struct fat_geo *g, struct lay_used *u, char *why,
                    size_t wn)
{
    unsigned esz = g->bits == 12 ? 0 : g->bits / 8;
    /* FAT12 is at most 6 KiB: read whole; else FAT_STEP bytes of entries */
    uint64_t per = esz == 0 ? g->clusters + 2 : FAT_STEP / esz;
    size_t bytes = esz == 0 ? (size_t)(((g->clusters + 2) * 3 + 1) / 2) : FAT_STEP;
    uint8_t *buf = malloc((size_t)g->nfats * bytes);
    if (buf == NULL)
        return -1;
    int rc = 1;
    uint64_t run = 0, run_len = 0; /* the used run being built, in clusters */
    for (uint64_t first = 0; first < g->clusters + 2 && rc == 1; first += per) {
        uint64_t n = g->clusters + 2 - first < per ? g->clusters + 2 - first : per;
        size_t nb = esz == 0 ? bytes : (size_t)(n * esz);
        for (unsigned k = 0; k < g->nfats && rc == 1; k++)
            if (lay_dev_read(d, g->fat_off + k * g->fat_bytes + first * esz, buf + k * bytes, nb) != 0) {
                snprintf(why, wn, "its FAT cannot be read");
                rc = 0;
            }
        if (rc != 1)
            break;
        if (first == 0 && fat_entry1_dirty(g, buf)) {
            snprintf(why, wn, "it is marked dirty (mounted, or not cleanly unmounted)");
            rc = 0;
            break;
        }
        for (uint64_t c = first < 2 ? 2 : first; c < first + n; c++) {
            bool used = false;
            for (unsigned k = 0; k < g->nfats && !used; k++)
                used = fat_entry(g, buf + k * bytes, first, c) != 0;
            if (used && run_len > 0 && run + run_len == c) {
                run_len++;
            } else if (used) {
                if (run_len > 0 &&
                    lay_used_add(u, g->data_off + (run - 2) * g->spc * g->bps, run_len * g->spc * g->bps) != 0)
                    rc = -1;
                run = c;
                run_len = 1;
            }
        }
    }
    if (rc == 1 && run_len > 0 &&
        lay_used_add(u, g->data_off + (run - 2) * g->spc * g->bps, run_len * g->spc * g->bps) != 0)
        rc = -1;
    free(buf);
    return rc;
}

int lay_fat_used(struct lay_dev *d, struct lay_used *u, uint64_t *fs_len, char *why, size_t wn)
{
    uint8_t b[512];
    if (lay_dev_read(d, 0, b, sizeof b) != 0) {
        snprintf(why, wn, "its boot sector cannot be read");
        return 0;
    }
    struct fat_geo g;
    const char *bad = fat_geometry(b, &g);
    if (bad != NULL) {
        snprintf(why, wn, "%s", bad);
        return 0;
    }
    /* the boot sector's dirty flag: byte 37 (FAT12/16) or 65 (FAT32), bit 0 */
    if (b[g.bits == 32 ? 65 : 37] & 1) {
        snprintf(why, wn, "it is marked dirty (mounted, or not cleanly unmounted)");
        return 0;
    }
    if (g.total > d->len) {
        snprintf(why, wn, "the filesystem is larger than its partition");
        return 0;
    }
    int rc = fat_walk(d, &g, u, why, wn);
    if (rc != 1)
        return rc;
    uint64_t data_end = g.data_off + g.clusters * g.spc * g.bps;
    if (lay_used_add(u, 0, g.data_off) != 0 || lay_used_add(u, data_end, g.total - data_end) != 0)
        return -1;
    *fs_len = g.total;
    return 1;
}
