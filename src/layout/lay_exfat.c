/* lay_exfat.c — exFAT, read twice: the allocation bitmap, then the
 * directory tree's allocations.
 *
 * By hand: exfatprogs and exfat-fuse ship programs, not a library.  From
 * Microsoft's exFAT specification: the main boot region (sectors 0-11) is
 * checked with its checksum (sector 11); the root directory, a FAT chain
 * from FirstClusterOfRootDirectory, holds the allocation bitmap's entry
 * (type 0x81: first cluster and length); the bitmap is read along its own
 * FAT chain, and bit n says whether cluster n + 2 is allocated.  Files
 * marked NoFatChain have no FAT entries, but every cluster they hold is set
 * in the bitmap, which is why the bitmap, not the FAT, is the first reading.
 *
 * Used: everything before the cluster heap (boot regions, FATs), every
 * allocated cluster, and everything after the heap up to VolumeLength.
 * With two FATs (TexFAT), both bitmaps are read and a cluster is used when
 * either says so.
 *
 * The second reading (lay_fs.h), as fsck.exfat's first pass: the tree from
 * the root directory (its FAT chain, at most 256 MiB), each directory's
 * entry sets (a primary entry and its SecondaryCount secondaries, their
 * SetChecksum verified): every allocation they describe (a File entry's
 * Stream Extension 0xC0, any secondary or benign primary with
 * AllocationPossible set: FirstCluster, DataLength, NoFatChain) is given to
 * lay_used_ref() cluster by cluster, contiguous for NoFatChain, else along
 * the active FAT, and so are the allocation bitmaps (0x81, both of TexFAT)
 * and the up-case table (0x82); directories (attribute 0x10) are read in
 * turn.  Entries not in use (type bit 7 clear: deleted) are skipped; 0x00
 * ends a directory.  The clusters the bitmap calls free are the dispute: a
 * bitmap cluster zeroed (a bad sector, a ddrescue fill) frees every file it
 * described.
 *
 * The second reading cannot finish, and the volume is read whole (0), when
 * a set's checksum does not match or a set is incomplete or an in-use
 * secondary stands alone (the allocation it holds may be wrong or another
 * file's), an unknown critical entry is met (the specification forbids
 * mounting then), an allocation leaves the heap, a FAT chain breaks (an
 * entry 0, bad or out of range) or ends before DataLength is covered, two
 * allocations claim one cluster (a loop or a cross-link), or a directory is
 * larger than the specification's 256 MiB.  Chains are followed in the
 * active FAT only (VolumeFlags' ActiveFat): TexFAT's other FAT is the
 * previous state, not a mirror.
 *
 * Bounds: each cluster is claimed once (a bit per cluster, in the first
 * bitmap's buffer once it is read), so all chains together take at most
 * one step per cluster; each directory is read once, at most 256 MiB of it,
 * XF_CHUNK bytes at a time (its cluster list at most 2 MiB); directories
 * wait on a stack (no recursion, so depth needs no limit), at most
 * XF_MAX_DIRS of them; the FAT is read through a cache of at most 16 MiB.
 *
 * Read whole instead: a boot checksum that does not match, fields outside
 * the specification's ranges, VolumeDirty (Linux sets it while mounted) or
 * MediaFailure set, a chain that leaves the heap or loops, a bitmap too
 * short for the clusters, a second reading that cannot finish (above).
 */
#include "config.h"
#include "lay.h"
#include "lay_clu.h"
#include "lay_fs.h"
#include "le.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XF_ACTIVE_FAT 0x0001
#define XF_DIRTY 0x0002
#define XF_MEDIA_FAILURE 0x0004
#define XF_DIR_MAX ((uint64_t)256 << 20) /* a directory's bytes at most */
#define XF_CHUNK 4096u /* directory bytes read at once: most end in the first */
#define XF_MAX_DIRS ((size_t)1 << 22)     /* directories waiting at most */
#define XF_EOC 0xFFFFFFFFu                /* the FAT's end-of-chain mark */

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
        if (le_get32(sec + i) != sum)
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
    uint64_t vol_sec = le_get64(b + 72);
    uint64_t fat_sec = le_get32(b + 80), fat_n = le_get32(b + 84);
    uint64_t heap_sec = le_get32(b + 88);
    v->clusters = le_get32(b + 92);
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
    return le_get32(e);
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
                    first[which] = le_get32(clu + i + 20);
                    len[which] = le_get64(clu + i + 24);
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

/* A directory to read: its allocation (len UINT64_MAX: the root, to its
 * chain's end). */
struct xf_dir {
    uint32_t first;
    bool nofat;
    uint64_t len;
};

/* The second reading's state. */
struct xf_walk {
    struct xf_vol *v;
    struct lay_used *u;
    struct lay_cache fat; /* the active FAT */
    struct lay_seen seen; /* cluster c is bit c - 2 */
    struct lay_run run;
    struct xf_dir *dirs; /* a stack */
    size_t ndirs, cap;
    uint32_t *list; /* the clusters of the directory being read */
    size_t nlist, listcap;
    uint8_t *chunk; /* XF_CHUNK bytes */
    size_t chunk_len;
    unsigned set_n, set_want; /* entries of the set gathered, and in it */
    uint8_t set[256 * 32];
    char *why;
    size_t wn;
};

/* The FAT entry of cluster c, through the cache: 0, or -1 unreadable. */
static int xf_fat(struct xf_walk *w, uint32_t c, uint32_t *next)
{
    const uint8_t *p = lay_cache_get(&w->fat, (uint64_t)c * 4, 4);
    if (p == NULL)
        return -1;
    *next = le_get32(p);
    return 0;
}

/* Claim clusters [c, c + k) for one allocation and reference them; listed
 * when list.  1, 0 (why), -1. */
static int xf_claim(struct xf_walk *w, uint32_t c, uint64_t k, bool list)
{
    struct xf_vol *v = w->v;
    if (!lay_seen_claim(&w->seen, c - 2, k)) {
        snprintf(w->why, w->wn, "its allocations loop, cross or leave the heap at cluster %u "
                 "(run fsck.exfat)", c);
        return 0;
    }
    if (lay_run_ref(w->u, &w->run, v->heap_off + (uint64_t)(c - 2) * v->cluster, k * v->cluster) != 0)
        return -1;
    for (uint64_t i = 0; list && i < k; i++) {
        if (w->nlist == w->listcap) {
            size_t cap = w->listcap ? w->listcap * 2 : 64;
            uint32_t *l = realloc(w->list, cap * sizeof *l);
            if (l == NULL)
                return -1;
            w->list = l;
            w->listcap = cap;
        }
        w->list[w->nlist++] = c + (uint32_t)i;
    }
    return 1;
}

static int xf_fat_broken(struct xf_walk *w, const char *whose, uint32_t c, uint32_t next)
{
    snprintf(w->why, w->wn, "its FAT is damaged: %s cluster chain %s at cluster %u "
             "(run fsck.exfat)", whose, next == XF_EOC ? "ends early" : "breaks", c);
    return 0;
}

/* An allocation: len bytes from cluster first, contiguous (nofat) or along
 * the FAT; len UINT64_MAX follows the chain to its end (at most a
 * directory's size).  Its clusters listed when list.  1, 0 (why), -1. */
static int xf_alloc(struct xf_walk *w, uint32_t first, uint64_t len, bool nofat, bool list,
                    const char *whose)
{
    struct xf_vol *v = w->v;
    if (len == 0)
        return 1;
    bool to_end = len == UINT64_MAX;
    uint64_t count = to_end ? XF_DIR_MAX / v->cluster : (len - 1) / v->cluster + 1;
    if (!xf_valid(v, first) || (nofat && count > v->clusters - (first - 2))) {
        snprintf(w->why, w->wn, "%s allocation lies outside the cluster heap (run fsck.exfat)",
                 whose);
        return 0;
    }
    if (nofat)
        return xf_claim(w, first, count, list);
    uint32_t c = first;
    int rc = xf_claim(w, c, 1, list);
    for (uint64_t i = 1; rc == 1 && (to_end || i < count); i++) {
        uint32_t next;
        if (xf_fat(w, c, &next) != 0) {
            snprintf(w->why, w->wn, "its FAT cannot be read");
            return 0;
        }
        if (to_end && next == XF_EOC)
            return 1;
        if (to_end && i == count) {
            snprintf(w->why, w->wn, "its root directory is larger than exFAT allows");
            return 0;
        }
        if (!xf_valid(v, next))
            return xf_fat_broken(w, whose, c, next);
        rc = xf_claim(w, c = next, 1, list);
    }
    return rc;
}

/* The set's checksum (the specification's EntrySetChecksum). */
static bool xf_set_sum_ok(const struct xf_walk *w)
{
    uint16_t sum = 0;
    for (size_t i = 0; i < (size_t)w->set_n * 32; i++)
        if (i != 2 && i != 3)
            sum = (uint16_t)(((sum & 1) ? 0x8000 : 0) + (sum >> 1) + w->set[i]);
    return sum == le_get16(w->set + 2);
}

static int xf_push(struct xf_walk *w, uint32_t first, uint64_t len, bool nofat)
{
    if (len == 0 || len > XF_DIR_MAX) {
        snprintf(w->why, w->wn, "a directory's size is outside exFAT's bounds (run fsck.exfat)");
        return 0;
    }
    if (w->ndirs == w->cap) {
        if (w->cap >= XF_MAX_DIRS) {
            snprintf(w->why, w->wn, "it has more directories than spigz follows");
            return 0;
        }
        size_t cap = w->cap ? w->cap * 2 : 64;
        struct xf_dir *d = realloc(w->dirs, cap * sizeof *d);
        if (d == NULL)
            return -1;
        w->dirs = d;
        w->cap = cap;
    }
    w->dirs[w->ndirs++] = (struct xf_dir){first, nofat, len};
    return 1;
}

/* A whole entry set, gathered: checked, its allocations referenced, a
 * directory's pushed. */
static int xf_set(struct xf_walk *w)
{
    const uint8_t *p = w->set;
    bool file = p[0] == 0x85, dir = file && (le_get16(p + 4) & 0x10);
    if (!xf_set_sum_ok(w) || (file && (w->set_n < 3 || p[32] != 0xC0))) {
        snprintf(w->why, w->wn, "a directory entry set is damaged (%s; run fsck.exfat)",
                 file && w->set_n < 3 ? "too short" : "its checksum or its stream entry");
        return 0;
    }
    /* a benign primary (not a File entry) may hold an allocation itself */
    if (!file && (le_get16(p + 4) & 1)) {
        int rc = xf_alloc(w, le_get32(p + 20), le_get64(p + 24), le_get16(p + 4) & 2, false,
                          "an entry's");
        if (rc != 1)
            return rc;
    }
    for (unsigned i = 1; i < w->set_n; i++) {
        const uint8_t *e = p + 32 * i;
        if ((e[0] & 0xC0) != 0xC0 || (!(e[0] & 0x20) && e[0] != 0xC0 && e[0] != 0xC1)) {
            snprintf(w->why, w->wn, "a directory entry set holds an entry of type 0x%02x "
                     "(run fsck.exfat)", e[0]);
            return 0;
        }
        if (!(e[1] & 1))
            continue;
        uint32_t first = le_get32(e + 20);
        uint64_t len = le_get64(e + 24);
        int rc = dir && i == 1 ? xf_push(w, first, len, e[1] & 2)
                               : xf_alloc(w, first, len, e[1] & 2, false, "a file's");
        if (rc != 1)
            return rc;
    }
    return 1;
}

/* One 32-byte directory entry: a primary starts a set, a secondary joins
 * the set being gathered; 0x00 sets *ended. */
static int xf_entry(struct xf_walk *w, const uint8_t *e, bool *ended)
{
    uint8_t t = e[0];
    if (w->set_want > 0) {
        memcpy(w->set + 32 * w->set_n++, e, 32);
        if (w->set_n < w->set_want)
            return 1;
        w->set_want = 0;
        return xf_set(w);
    }
    if (t == 0x00) {
        *ended = true;
        return 1;
    }
    if (!(t & 0x80) || t == 0x83) /* not in use; the volume label */
        return 1;
    if (t == 0x81 || t == 0x82)
        return xf_alloc(w, le_get32(e + 20), le_get64(e + 24), false, false,
                        t == 0x81 ? "the allocation bitmap's" : "the up-case table's");
    if ((t & 0x40) || (!(t & 0x20) && t != 0x85)) {
        snprintf(w->why, w->wn, "a directory entry of type 0x%02x %s (run fsck.exfat)", t,
                 t & 0x40 ? "stands outside an entry set" : "is not known");
        return 0;
    }
    memcpy(w->set, e, 32);
    w->set_n = 1;
    w->set_want = 1u + e[1];
    if (w->set_want > 1)
        return 1;
    w->set_want = 0;
    return xf_set(w);
}

/* Read one directory: claim its allocation, then its entries up to the end
 * mark or its length. */
static int xf_dir(struct xf_walk *w, struct xf_dir dir)
{
    struct xf_vol *v = w->v;
    w->nlist = 0;
    int rc = xf_alloc(w, dir.first, dir.len, dir.nofat, true, "a directory's");
    bool ended = false;
    uint64_t left = dir.len;
    for (size_t i = 0; rc == 1 && i < w->nlist && !ended; i++) {
        uint64_t base = v->heap_off + (uint64_t)(w->list[i] - 2) * v->cluster;
        for (uint64_t at = 0; rc == 1 && at < v->cluster && left > 0 && !ended; at += w->chunk_len) {
            size_t n = left < w->chunk_len ? (size_t)left : w->chunk_len;
            if (lay_dev_read(v->d, base + at, w->chunk, n) != 0) {
                snprintf(w->why, w->wn, "a directory cannot be read");
                return 0;
            }
            left -= n;
            for (size_t j = 0; rc == 1 && j + 32 <= n && !ended; j += 32)
                rc = xf_entry(w, w->chunk + j, &ended);
        }
    }
    if (rc == 1 && w->set_want > 0) {
        snprintf(w->why, w->wn, "a directory entry set runs past its directory's end "
                 "(run fsck.exfat)");
        rc = 0;
    }
    return rc;
}

/* The second reading, from the root.  seen: ceil(clusters / 8) bytes.
 * 1, 0 (why), -1. */
static int xf_tree(struct xf_vol *v, struct lay_used *u, unsigned active, uint32_t root,
                   uint8_t *seen, char *why, size_t wn)
{
    struct xf_walk *w = calloc(1, sizeof *w);
    if (w == NULL)
        return -1;
    *w = (struct xf_walk){.v = v, .u = u, .seen = {seen, v->clusters}, .why = why, .wn = wn};
    w->chunk_len = v->cluster < XF_CHUNK ? (size_t)v->cluster : XF_CHUNK;
    w->chunk = malloc(w->chunk_len);
    int rc = -1;
    if (w->chunk != NULL &&
        lay_cache_init(&w->fat, v->d, v->fat_off + active * v->fat_len,
                       ((uint64_t)v->clusters + 2) * 4) == 0) {
        rc = xf_dir(w, (struct xf_dir){root, false, UINT64_MAX});
        while (rc == 1 && w->ndirs > 0)
            rc = xf_dir(w, w->dirs[--w->ndirs]);
        if (rc == 1 && lay_run_flush(u, &w->run) != 0)
            rc = -1;
    }
    lay_cache_free(&w->fat);
    free(w->chunk);
    free(w->dirs);
    free(w->list);
    free(w);
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
    uint32_t flags = le_get16(b + 106), root = le_get32(b + 96);
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
    uint64_t heap_end = v.heap_off + (uint64_t)v.clusters * v.cluster;
    if (rc == 1 && (lay_used_add(u, 0, v.heap_off) != 0 ||
                    lay_used_add(u, heap_end, v.vol_len - heap_end) != 0 || lay_used_seal(u) != 0))
        rc = -1;
    free(bm[1]);
    /* the first bitmap, read, becomes the set of clusters claimed */
    if (rc == 1) {
        memset(bm[0], 0, (size_t)need);
        rc = xf_tree(&v, u, v.nfats == 2 ? (flags & XF_ACTIVE_FAT) : 0, root, bm[0], why, wn);
    }
    free(bm[0]);
    if (rc == 1)
        *fs_len = v.vol_len;
    return rc;
}
