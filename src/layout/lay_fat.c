/* lay_fat.c — FAT12, FAT16 and FAT32, read twice: the FAT (a cluster is
 * used when its entry is not 0), then the directory tree's cluster chains
 * (a cluster is used when a live file or directory holds it).
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
 * The second reading (lay_fs.h), as fsck.vfat's first pass: from the root
 * directory (FAT12/16's fixed region, FAT32's cluster chain) every entry in
 * use (not deleted 0xE5, not a long-name part, not the volume label, not
 * "." or ".."; 0x00 ends a directory) is followed, a directory's chain to
 * its end-of-chain mark, a file's for ceil(size / cluster) clusters, and
 * each cluster is given to lay_used_ref().  Those the FAT calls free are the
 * dispute: a FAT sector zeroed in every copy frees the clusters whose
 * entries it held, and a file of one cluster there, or the last cluster of
 * a longer one, is found only this way.
 *
 * Which FAT a chain is followed in.  The first reading counts a cluster
 * used when its entry is non-zero in ANY copy, so a chain read in any one
 * copy adds nothing to it: every cluster on it has a non-zero entry there.
 * What it misses is a cluster whose entry is 0 in every copy, and the
 * second reading finds those by following chains in the active FAT (FAT 0,
 * or the one FAT32's ExtFlags names when mirroring is off) and, where its
 * entry does not continue a chain (0, 1, a bad-cluster mark, a number
 * outside the volume, an early end), in the first other copy whose entry
 * does, when the copies are mirrors: every driver writes them all, a
 * sector lost in one is what the others are for, and fsck.vfat offers the
 * same.  With mirroring off the other copies are stale and never asked.
 * Where no copy continues a chain it is broken: the cluster reached is
 * referenced, but where the rest of the file or directory lies is unknown
 * (any cluster the FAT calls free may hold it), so the reader returns 0 and
 * the volume is read whole.  So it does when a file's chain ends before its
 * size is covered, when two chains claim one cluster (a loop, or a cross-
 * link: one of the two is wrong, and which is unknown), when a live entry
 * names a cluster outside the volume or a file with a size names none, and
 * for a directory longer than FAT allows (65536 entries, 2 MiB).
 *
 * Bounds: each cluster is claimed once (a bit per cluster, at most 32 MiB),
 * so all chains together take at most one step per cluster; each directory
 * is read once, at most 2 MiB of it, FAT_CHUNK bytes at a time; directories
 * wait on a stack (no recursion, so depth needs no limit), at most
 * FAT_MAX_DIRS of them.  The active FAT is read through a cache of at most
 * 16 MiB (lay_clu.h) that the first reading fills: a FAT up to that size is
 * read once.
 *
 * Read whole instead: a boot sector whose fields are not those of a FAT
 * volume (or disagree: a FAT too small for the clusters, a FAT32 with a
 * FAT12/16 root directory), a volume marked dirty (the boot sector's
 * flag, which Linux sets while mounted read-write, or FAT16/32's clean bit
 * in entry 1 clear), or a second reading that cannot finish (above).
 */
#include "config.h"
#include "lay.h"
#include "lay_clu.h"
#include "lay_fs.h"
#include "le.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAT_STEP 65536u  /* FAT bytes read at once, per copy */
#define FAT_CHUNK 4096u  /* directory bytes read at once: most end in the first */
#define FAT_DIR_MAX ((uint64_t)65536 * 32) /* a directory's bytes at most */
#define FAT_MAX_DIRS ((size_t)1 << 22)     /* directories waiting at most */

struct fat_geo {
    unsigned bits;      /* 12, 16 or 32 */
    uint64_t bps, spc;  /* bytes per sector, sectors per cluster */
    uint64_t fat_off;   /* of the first FAT, bytes */
    uint64_t fat_bytes; /* of one FAT */
    unsigned nfats;
    uint64_t data_off;  /* of cluster 2, bytes */
    uint64_t clusters;  /* data clusters */
    uint64_t total;     /* bytes of the volume */
    uint64_t need;      /* bytes of a FAT that hold entries 0 to clusters + 1 */
    uint64_t root_off, root_bytes; /* FAT12/16's root directory region */
    uint32_t root_clus; /* FAT32's root directory's first cluster */
    unsigned ext_flags; /* FAT32's: bits 0-3 the active FAT, bit 7 no mirroring */
};

static bool fat_pow2(uint64_t v)
{
    return v != 0 && (v & (v - 1)) == 0;
}

/* The geometry from the boot sector b, or a reason it is not one. */
static const char *fat_geometry(const uint8_t *b, struct fat_geo *g)
{
    g->bps = le_get16(b + 11);
    g->spc = b[13];
    uint64_t reserved = le_get16(b + 14), root_ents = le_get16(b + 17);
    uint64_t fatsz = le_get16(b + 22), total = le_get16(b + 19);
    g->nfats = b[16];
    if (fatsz == 0)
        fatsz = le_get32(b + 36);
    if (total == 0)
        total = le_get32(b + 32);
    if (g->bps < 512 || g->bps > 4096 || !fat_pow2(g->bps) || !fat_pow2(g->spc) ||
        reserved == 0 || g->nfats == 0 || g->nfats > 4 || fatsz == 0 || total == 0)
        return "its boot sector does not describe a FAT volume";
    uint64_t root_sec = (root_ents * 32 + g->bps - 1) / g->bps;
    uint64_t data_sec = reserved + g->nfats * fatsz + root_sec;
    if (data_sec >= total)
        return "its FATs leave no room for data";
    g->clusters = (total - data_sec) / g->spc;
    g->bits = g->clusters < 4085 ? 12 : g->clusters < 65525 ? 16 : 32;
    if ((g->bits == 32) != (le_get16(b + 22) == 0) || (g->bits == 32 && root_ents != 0))
        return "its boot sector disagrees with its cluster count";
    if (g->bits == 32 && g->clusters > 0x0FFFFFF5u)
        return "it counts more clusters than FAT32 can address";
    uint64_t need = g->bits == 12 ? ((g->clusters + 2) * 3 + 1) / 2 : (g->clusters + 2) * (g->bits / 8);
    g->fat_off = reserved * g->bps;
    g->fat_bytes = fatsz * g->bps;
    if (need > g->fat_bytes)
        return "its FAT is too small for its clusters";
    g->need = need;
    g->data_off = data_sec * g->bps;
    g->total = total * g->bps;
    g->root_off = (reserved + g->nfats * fatsz) * g->bps;
    g->root_bytes = root_ents * 32;
    g->root_clus = g->bits == 32 ? le_get32(b + 44) : 0;
    g->ext_flags = g->bits == 32 ? le_get16(b + 40) : 0;
    return NULL;
}

/* Entry n of a FAT held from entry `first` on in buf. */
static uint32_t fat_entry(const struct fat_geo *g, const uint8_t *buf, uint64_t first, uint64_t n)
{
    if (g->bits == 12) {
        uint32_t v = le_get16(buf + n * 3 / 2);
        return n & 1 ? v >> 4 : v & 0xFFF;
    }
    if (g->bits == 16)
        return le_get16(buf + (n - first) * 2);
    return le_get32(buf + (n - first) * 4) & 0x0FFFFFFF;
}

/* Entry 1's clean-shutdown bit (FAT16 bit 15, FAT32 bit 27): clear is dirty. */
static bool fat_entry1_dirty(const struct fat_geo *g, const uint8_t *fat)
{
    if (g->bits == 16)
        return !(le_get16(fat + 2) & 0x8000);
    if (g->bits == 32)
        return !(le_get32(fat + 4) & 0x08000000);
    return false;
}

/* Walk the FATs in steps; used clusters to u, FAT `active`'s bytes to the
 * cache.  1, 0 (why), -1. */
static int fat_walk(struct lay_dev *d, const struct fat_geo *g, struct lay_used *u,
                    struct lay_cache *cache, unsigned active, char *why, size_t wn)
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
        for (size_t o = 0; o < nb; o += LAY_SLOT)
            lay_cache_put(cache, first * esz + o, buf + active * bytes + o,
                          nb - o < LAY_SLOT ? nb - o : LAY_SLOT);
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

/* The second reading's state: the volume, its active FAT, the clusters
 * claimed, the directories still to read. */
struct fat_vol {
    struct lay_dev *d;
    struct fat_geo g;
    struct lay_used *u;
    unsigned active; /* the FAT chains are followed in */
    bool mirrored;   /* the other copies may continue a chain */
    struct lay_cache fat;
    struct lay_seen seen; /* cluster c is bit c - 2 */
    struct lay_run run;
    uint32_t *dirs; /* first clusters of directories to read (a stack) */
    size_t ndirs, cap;
    uint8_t *chunk; /* FAT_CHUNK bytes of a directory */
    char *why;
    size_t wn;
};

static bool fat_valid(const struct fat_geo *g, uint64_t c)
{
    return c >= 2 && c - 2 < g->clusters;
}

/* Entry n of FAT k: 0, or -1 when it cannot be read.  The active FAT comes
 * through the cache (a FAT12 entry may straddle two of its slots). */
static int fat_get(struct fat_vol *v, unsigned k, uint64_t n, uint32_t *val)
{
    const struct fat_geo *g = &v->g;
    uint64_t off = g->bits == 12 ? n * 3 / 2 : n * (g->bits / 8);
    size_t sz = g->bits == 32 ? 4 : 2;
    uint8_t e[4];
    if (k != v->active) {
        if (lay_dev_read(v->d, g->fat_off + k * g->fat_bytes + off, e, sz) != 0)
            return -1;
    } else {
        for (size_t i = 0; i < sz;) {
            size_t m = LAY_SLOT - (off + i) % LAY_SLOT;
            m = m < sz - i ? m : sz - i;
            const uint8_t *p = lay_cache_get(&v->fat, off + i, m);
            if (p == NULL)
                return -1;
            memcpy(e + i, p, m);
            i += m;
        }
    }
    if (g->bits == 12)
        *val = n & 1 ? le_get16(e) >> 4 : le_get16(e) & 0xFFF;
    else
        *val = g->bits == 16 ? le_get16(e) : le_get32(e) & 0x0FFFFFFF;
    return 0;
}

/* The cluster after c on its chain (see the top: the active FAT, then the
 * mirrors): 1 with *next set, 0 at an end-of-chain mark, -1 broken (no copy
 * continues it), -2 a FAT that cannot be read. */
static int fat_step(struct fat_vol *v, uint32_t c, uint32_t *next)
{
    uint32_t eoc = v->g.bits == 12 ? 0xFF8 : v->g.bits == 16 ? 0xFFF8 : 0x0FFFFFF8;
    bool end = false;
    for (unsigned i = 0; i < v->g.nfats && (i == 0 || v->mirrored); i++) {
        uint32_t val;
        if (fat_get(v, (v->active + i) % v->g.nfats, c, &val) != 0)
            return -2;
        if (fat_valid(&v->g, val)) {
            *next = val;
            return 1;
        }
        end = end || val >= eoc;
    }
    return end ? 0 : -1;
}

/* Why a chain stopped after cluster c (fat_step()'s s): 0 returned. */
static int fat_broken(struct fat_vol *v, int s, const char *whose, uint32_t c)
{
    if (s == -2)
        snprintf(v->why, v->wn, "its FAT cannot be read");
    else
        snprintf(v->why, v->wn, "its FAT is damaged: %s cluster chain %s at cluster %u "
                 "(run fsck.vfat)", whose, s == 0 ? "ends early" : "breaks", c);
    return 0;
}

/* Claim the valid cluster c for one chain and reference it.  1, 0 (why:
 * claimed before), -1. */
static int fat_claim(struct fat_vol *v, uint32_t c)
{
    if (!lay_seen_claim(&v->seen, c - 2, 1)) {
        snprintf(v->why, v->wn, "its cluster chains loop or cross at cluster %u "
                 "(run fsck.vfat)", c);
        return 0;
    }
    uint64_t cs = v->g.spc * v->g.bps;
    return lay_run_ref(v->u, &v->run, v->g.data_off + (uint64_t)(c - 2) * cs, cs) == 0 ? 1 : -1;
}

/* A file of size bytes from the valid cluster first. */
static int fat_file(struct fat_vol *v, uint32_t first, uint32_t size)
{
    uint64_t cs = v->g.spc * v->g.bps, count = ((uint64_t)size + cs - 1) / cs;
    uint32_t c = first;
    int rc = fat_claim(v, c);
    for (uint64_t i = 1; i < count && rc == 1; i++) {
        int s = fat_step(v, c, &c);
        if (s != 1)
            return fat_broken(v, s, "a file's", c);
        rc = fat_claim(v, c);
    }
    return rc;
}

/* Claim a directory's first cluster c and put it on the stack. */
static int fat_push(struct fat_vol *v, uint32_t c)
{
    int rc = fat_claim(v, c);
    if (rc != 1)
        return rc;
    if (v->ndirs == v->cap) {
        if (v->cap >= FAT_MAX_DIRS) {
            snprintf(v->why, v->wn, "it has more directories than spigz follows");
            return 0;
        }
        size_t cap = v->cap ? v->cap * 2 : 64;
        uint32_t *d = realloc(v->dirs, cap * sizeof *d);
        if (d == NULL)
            return -1;
        v->dirs = d;
        v->cap = cap;
    }
    v->dirs[v->ndirs++] = c;
    return 1;
}

/* One directory entry, not the end mark. */
static int fat_dirent(struct fat_vol *v, const uint8_t *e)
{
    uint8_t attr = e[11];
    if (e[0] == 0xE5 || (attr & 0x3F) == 0x0F || (attr & 0x08) ||
        memcmp(e, ".          ", 11) == 0 || memcmp(e, "..         ", 11) == 0)
        return 1;
    uint32_t c = le_get16(e + 26) | (v->g.bits == 32 ? le_get16(e + 20) << 16 : 0);
    uint32_t size = le_get32(e + 28);
    if (!(attr & 0x10) && size == 0)
        return 1;
    if (!fat_valid(&v->g, c)) {
        snprintf(v->why, v->wn, "a %s's directory entry names no cluster of the volume "
                 "(run fsck.vfat)", attr & 0x10 ? "directory" : "file");
        return 0;
    }
    return attr & 0x10 ? fat_push(v, c) : fat_file(v, c, size);
}

/* The entries of len bytes of a directory at off, up to the end mark
 * (*ended then). */
static int fat_entries(struct fat_vol *v, uint64_t off, uint64_t len, bool *ended)
{
    for (uint64_t at = 0; at < len && !*ended; at += FAT_CHUNK) {
        size_t n = len - at < FAT_CHUNK ? (size_t)(len - at) : FAT_CHUNK;
        if (lay_dev_read(v->d, off + at, v->chunk, n) != 0) {
            snprintf(v->why, v->wn, "a directory cannot be read");
            return 0;
        }
        for (size_t i = 0; i + 32 <= n; i += 32) {
            if (v->chunk[i] == 0x00) {
                *ended = true;
                break;
            }
            int rc = fat_dirent(v, v->chunk + i);
            if (rc != 1)
                return rc;
        }
    }
    return 1;
}

/* The directory whose first cluster c is claimed: its entries, and its
 * chain to the end-of-chain mark (past the end mark too: it is held). */
static int fat_dir(struct fat_vol *v, uint32_t c)
{
    uint64_t cs = v->g.spc * v->g.bps, max = (FAT_DIR_MAX + cs - 1) / cs;
    bool ended = false;
    for (uint64_t n = 1;; n++) {
        int rc = ended ? 1 : fat_entries(v, v->g.data_off + (uint64_t)(c - 2) * cs, cs, &ended);
        if (rc != 1)
            return rc;
        int s = fat_step(v, c, &c);
        if (s == 0)
            return 1;
        if (s != 1)
            return fat_broken(v, s, "a directory's", c);
        if (n == max) {
            snprintf(v->why, v->wn, "a directory is longer than FAT allows (run fsck.vfat)");
            return 0;
        }
        if ((rc = fat_claim(v, c)) != 1)
            return rc;
    }
}

/* The second reading: the tree from the root.  1, 0 (why), -1. */
static int fat_tree(struct fat_vol *v)
{
    int rc;
    if (v->g.bits == 32 && !fat_valid(&v->g, v->g.root_clus)) {
        snprintf(v->why, v->wn, "its root directory's cluster is outside the volume");
        return 0;
    }
    if (v->g.bits == 32) {
        rc = fat_push(v, v->g.root_clus);
    } else {
        bool ended = false;
        rc = fat_entries(v, v->g.root_off, v->g.root_bytes, &ended);
    }
    while (rc == 1 && v->ndirs > 0)
        rc = fat_dir(v, v->dirs[--v->ndirs]);
    if (rc == 1 && lay_run_flush(v->u, &v->run) != 0)
        rc = -1;
    return rc;
}

/* Both readings of a volume whose boot sector was accepted. */
static int fat_read(struct fat_vol *v)
{
    const struct fat_geo *g = &v->g;
    int rc = fat_walk(v->d, g, v->u, &v->fat, v->active, v->why, v->wn);
    if (rc != 1)
        return rc;
    uint64_t data_end = g->data_off + g->clusters * g->spc * g->bps;
    if (lay_used_add(v->u, 0, g->data_off) != 0 ||
        lay_used_add(v->u, data_end, g->total - data_end) != 0 || lay_used_seal(v->u) != 0)
        return -1;
    v->seen.n = g->clusters;
    v->seen.bits = calloc((size_t)((g->clusters + 7) / 8), 1);
    v->chunk = malloc(FAT_CHUNK);
    if (v->seen.bits == NULL || v->chunk == NULL)
        return -1;
    return fat_tree(v);
}

int lay_fat_used(struct lay_dev *d, struct lay_used *u, uint64_t *fs_len, char *why, size_t wn)
{
    uint8_t b[512];
    if (lay_dev_read(d, 0, b, sizeof b) != 0) {
        snprintf(why, wn, "its boot sector cannot be read");
        return 0;
    }
    struct fat_vol v = {.d = d, .u = u, .why = why, .wn = wn, .mirrored = true};
    const char *bad = fat_geometry(b, &v.g);
    if (bad != NULL) {
        snprintf(why, wn, "%s", bad);
        return 0;
    }
    /* the boot sector's dirty flag: byte 37 (FAT12/16) or 65 (FAT32), bit 0 */
    if (b[v.g.bits == 32 ? 65 : 37] & 1) {
        snprintf(why, wn, "it is marked dirty (mounted, or not cleanly unmounted)");
        return 0;
    }
    if (v.g.total > d->len) {
        snprintf(why, wn, "the filesystem is larger than its partition");
        return 0;
    }
    if (v.g.ext_flags & 0x80) {
        v.mirrored = false;
        v.active = v.g.ext_flags & 0x0F;
        if (v.active >= v.g.nfats) {
            snprintf(why, wn, "its active FAT is not one of its FATs");
            return 0;
        }
    }
    if (lay_cache_init(&v.fat, d, v.g.fat_off + v.active * v.g.fat_bytes, v.g.need) != 0)
        return -1;
    int rc = fat_read(&v);
    lay_cache_free(&v.fat);
    free(v.seen.bits);
    free(v.chunk);
    free(v.dirs);
    if (rc == 1)
        *fs_len = v.g.total;
    return rc;
}
