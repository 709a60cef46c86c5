/* lay_btrfs.c — a single-device btrfs filesystem's used extents (lay_fs.h).
 *
 * Format: btrfs's on-disk format documentation (btrfs.readthedocs.io,
 * "On-disk format"): the superblock at 64 KiB (mirrors at 64 MiB and
 * 256 GiB), the chunk tree mapping logical addresses onto device ranges
 * (bootstrapped by the superblock's system chunk array), the root tree
 * naming the other trees' roots, B+trees of 101-byte-headed nodes whose
 * CRC-32C covers everything after the checksum field.  Integers are
 * little-endian.
 *
 * What is free:
 *   - device space that no chunk's stripe covers, when the chunk tree's
 *     stripes and the device tree's dev extents (two readings) list exactly
 *     the same ranges of this device; never its first 1 MiB nor a
 *     superblock mirror;
 *   - inside a block group of any type (data, metadata, system; single or
 *     DUP), the free-space tree's free ranges (extents and bitmaps) when
 *     the tree is present and marked valid and the group has its info
 *     item; the extent tree is the second reading: every tree block
 *     (METADATA_ITEM) and data extent (EXTENT_ITEM) is in it, and a free
 *     range that overlaps one means a stale tree, and the filesystem is
 *     read whole; each block group's extents must also sum to its item's
 *     used count.  (A log tree's blocks are not in the extent tree: a log
 *     to replay reads the filesystem whole.)
 * Everything else is data: every block group when the free-space tree is
 * missing or not valid, the bytes past the device's total size.
 *
 * Read whole (0): a bad magic, checksum (CRC-32C only: other checksum types
 * are not read) or address; a mirror superblock newer than the primary;
 * more than one device; incompatible or read-only-compatible features
 * spigz does not know (RAID5/6, zoned, extent tree v2); a log tree to
 * replay; a chunk profile other than single or DUP; a tree node whose
 * checksum, fsid, address, owner, level, generation or key order is wrong;
 * the two readings of the device's allocation disagreeing.
 *
 * Bounds: nodes up to 64 KiB; tree depth at most BTRFS_MAX_LEVEL; each
 * tree walk at most (total bytes / nodesize) nodes; at most BTRFS_MAX_CHUNKS
 * chunks; free-space bitmaps read bit by bit within their block group.
 */
#include "config.h"
#include "lay_fs.h"
#include "crc32c.h"
#include "le.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BTRFS_SB_OFF 0x10000u
#define BTRFS_SB_SIZE 4096u
#define BTRFS_MAX_LEVEL 8
#define BTRFS_MAX_CHUNKS 1048576
#define BTRFS_HDR 101
#define BTRFS_KEY 17
#define BTRFS_ITEM 25
#define BTRFS_KPTR 33

/* item types */
#define BT_ROOT_ITEM 132
#define BT_EXTENT_ITEM 168
#define BT_METADATA_ITEM 169
#define BT_BLOCK_GROUP_ITEM 192
#define BT_FREE_SPACE_INFO 198
#define BT_FREE_SPACE_EXTENT 199
#define BT_FREE_SPACE_BITMAP 200
#define BT_DEV_EXTENT 204
#define BT_CHUNK_ITEM 228

/* tree ids (owners) */
#define BT_ROOT_TREE 1
#define BT_EXTENT_TREE 2
#define BT_CHUNK_TREE 3
#define BT_DEV_TREE 4
#define BT_FST_TREE 10
#define BT_BG_TREE 11

/* chunk types */
#define BT_DUP 32u
#define BT_PROFILES (8u | 16u | 32u | 64u | 128u | 256u | 512u | 1024u)

/* incompat flags known: mixed backref, default subvol, mixed groups, lzo,
 * zstd, big metadata, extended iref, skinny metadata, no holes, metadata
 * uuid, raid1c34 (chunks are checked apart); not raid56, zoned, extent
 * tree v2 */
#define BT_INCOMPAT_KNOWN (0x1u | 0x2u | 0x4u | 0x8u | 0x10u | 0x20u | 0x40u | 0x100u | \
                           0x200u | 0x400u | 0x800u)
#define BT_INCOMPAT_METADATA_UUID 0x400u
/* compat_ro: free space tree, its valid flag, verity, block group tree */
#define BT_RO_FST 1u
#define BT_RO_FST_VALID 2u
#define BT_RO_BGT 8u
#define BT_RO_KNOWN (1u | 2u | 4u | 8u)

struct bt_chunk {
    uint64_t logical, len, type;
    uint64_t phys[2]; /* its stripes on this device; nstripes of them */
    unsigned nstripes;
};

struct bt_bg {
    uint64_t start, len, used, flags;
    uint64_t ext;      /* the extent tree's bytes in it */
    bool fst_info;     /* the free-space tree has its info item */
};

struct btrfs {
    struct lay_dev *d;
    uint8_t fsid[16];
    uint64_t gen, total, devid;
    uint32_t ss, ns;         /* sector size, node size */
    uint64_t budget;         /* nodes a walk may still read */
    struct bt_chunk *ch;
    size_t nch, chcap;
    struct bt_bg *bg;
    size_t nbg, bgcap;
    struct sp_range *free;   /* logical free ranges (free-space tree) */
    size_t nfree, freecap;
    struct sp_range *alloc;  /* device ranges from the dev tree */
    size_t nalloc, alloccap;
    uint64_t root[16];       /* tree id -> root bytenr (0 unknown) */
    uint64_t rgen[16];       /* ... its generation */
    uint8_t rlevel[16];
    uint64_t ro;             /* compat_ro flags */
    char *why;
    size_t wn;
};

static int bt_no(struct btrfs *b, const char *what)
{
    snprintf(b->why, b->wn, "%s", what);
    return 0;
}

static bool bt_csum_ok(const uint8_t *p, size_t n)
{
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    return true; /* scripts/fuzz.sh: mutations reach past the checksums */
#endif
    return crc32c(0, p + 32, n - 32) == le_get32(p);
}

/* ---- the superblock ---- */

static int bt_super(struct btrfs *b, uint8_t *sb)
{
    if (lay_dev_read(b->d, BTRFS_SB_OFF, sb, BTRFS_SB_SIZE) != 0 ||
        memcmp(sb + 0x40, "_BHRfS_M", 8) != 0 || le_get64(sb + 0x30) != BTRFS_SB_OFF)
        return bt_no(b, "cannot read its superblock");
    if (le_get16(sb + 0xc4) != 0)
        return bt_no(b, "its checksums are not CRC-32C (spigz reads only those)");
    if (!bt_csum_ok(sb, BTRFS_SB_SIZE))
        return bt_no(b, "its superblock's checksum is wrong");
    uint64_t incompat = le_get64(sb + 0xbc);
    b->ro = le_get64(sb + 0xb4);
    if ((incompat & ~(uint64_t)BT_INCOMPAT_KNOWN) || (b->ro & ~(uint64_t)BT_RO_KNOWN))
        return bt_no(b, "it has features spigz does not know (RAID5/6, zoned, extent tree v2 "
                        "or newer)");
    if (le_get64(sb + 0x88) != 1)
        return bt_no(b, "a filesystem of several devices (only single-device btrfs is mapped)");
    if (le_get64(sb + 0x60) != 0)
        return bt_no(b, "its log tree holds writes to replay (not cleanly unmounted)");
    b->gen = le_get64(sb + 0x48);
    b->total = le_get64(sb + 0x70);
    b->ss = le_get32(sb + 0x90);
    b->ns = le_get32(sb + 0x94);
    b->devid = le_get64(sb + 0xc9);
    memcpy(b->fsid, incompat & BT_INCOMPAT_METADATA_UUID ? sb + 0x23b : sb + 0x20, 16);
    if (b->ss < 4096 || b->ss > 65536 || (b->ss & (b->ss - 1)) || b->ns < b->ss ||
        b->ns > 65536 || (b->ns & (b->ns - 1)) || le_get32(sb + 0xa0) > 2048)
        return bt_no(b, "its superblock's geometry does not add up");
    if (b->total > b->d->len || le_get64(sb + 0xd1) > b->d->len)
        return bt_no(b, "the filesystem is larger than its partition");
    if (le_get64(sb + 0xd1) != b->total)
        return bt_no(b, "its device and filesystem sizes differ");
    /* the mirrors: a valid one newer than the primary means the primary is
     * stale (a torn write), which btrfs check would take up */
    static const uint64_t mirror[2] = {(uint64_t)64 << 20, (uint64_t)256 << 30};
    uint8_t *m = malloc(BTRFS_SB_SIZE);
    if (m == NULL)
        return -1;
    int rc = 1;
    for (int i = 0; i < 2 && rc == 1; i++)
        if (mirror[i] + BTRFS_SB_SIZE <= b->total &&
            lay_dev_read(b->d, mirror[i], m, BTRFS_SB_SIZE) == 0 &&
            memcmp(m + 0x40, "_BHRfS_M", 8) == 0 && le_get64(m + 0x30) == mirror[i] &&
            memcmp(m + 0x20, sb + 0x20, 16) == 0 && /* this filesystem's, not an older one's */
            bt_csum_ok(m, BTRFS_SB_SIZE) && le_get64(m + 0x48) > b->gen)
            rc = bt_no(b, "a mirror superblock is newer than the primary");
    free(m);
    return rc;
}

/* ---- chunks: logical to physical ---- */

/* Add the chunk whose item (len bytes at p) starts at logical. 1, 0, -1. */
static int bt_add_chunk(struct btrfs *b, uint64_t logical, const uint8_t *p, size_t len)
{
    if (len < 48)
        return bt_no(b, "a chunk item is truncated");
    unsigned ns = le_get16(p + 44);
    if (ns == 0 || len < 48 + (size_t)ns * 32)
        return bt_no(b, "a chunk item is truncated");
    struct bt_chunk c = {.logical = logical, .len = le_get64(p), .type = le_get64(p + 24)};
    uint64_t prof = c.type & BT_PROFILES;
    if ((prof != 0 && prof != BT_DUP) || ns != (prof == BT_DUP ? 2u : 1u))
        return bt_no(b, "a chunk profile other than single or DUP");
    for (unsigned i = 0; i < ns; i++) {
        if (le_get64(p + 48 + 32 * i) != b->devid)
            return bt_no(b, "a chunk lies on another device");
        c.phys[i] = le_get64(p + 48 + 32 * i + 8);
        if (c.len == 0 || c.phys[i] > b->total || c.len > b->total - c.phys[i])
            return bt_no(b, "a chunk leaves the device");
    }
    c.nstripes = ns;
    for (size_t i = 0; i < b->nch; i++)
        if (b->ch[i].logical == logical) { /* the array's copy, then the tree's */
            const struct bt_chunk *o = &b->ch[i];
            if (o->len != c.len || o->type != c.type || o->nstripes != c.nstripes ||
                o->phys[0] != c.phys[0] || (c.nstripes > 1 && o->phys[1] != c.phys[1]))
                return bt_no(b, "the chunk tree and the superblock's chunk array disagree");
            return 1;
        }
    if (b->nch == BTRFS_MAX_CHUNKS)
        return bt_no(b, "too many chunks");
    if (b->nch == b->chcap) {
        size_t cap = b->chcap ? b->chcap * 2 : 64;
        struct bt_chunk *n = realloc(b->ch, cap * sizeof *n);
        if (n == NULL)
            return -1;
        b->ch = n;
        b->chcap = cap;
    }
    b->ch[b->nch++] = c;
    return 1;
}

static const struct bt_chunk *bt_chunk_of(const struct btrfs *b, uint64_t logical)
{
    for (size_t i = 0; i < b->nch; i++)
        if (logical >= b->ch[i].logical && logical - b->ch[i].logical < b->ch[i].len)
            return &b->ch[i];
    return NULL;
}

static int bt_sys_array(struct btrfs *b, const uint8_t *sb)
{
    uint32_t n = le_get32(sb + 0xa0);
    const uint8_t *a = sb + 0x32b;
    for (uint32_t at = 0; at < n;) {
        if (n - at < BTRFS_KEY + 48 || a[at + 8] != BT_CHUNK_ITEM)
            return bt_no(b, "its system chunk array is malformed");
        uint64_t logical = le_get64(a + at + 9);
        const uint8_t *c = a + at + BTRFS_KEY;
        size_t clen = 48 + (size_t)le_get16(c + 44) * 32;
        if (clen > n - at - BTRFS_KEY)
            return bt_no(b, "its system chunk array is malformed");
        int rc = bt_add_chunk(b, logical, c, clen);
        if (rc != 1)
            return rc;
        at += BTRFS_KEY + (uint32_t)clen;
    }
    return 1;
}

/* ---- trees ---- */

typedef int (*bt_item_fn)(struct btrfs *b, const uint8_t *key, const uint8_t *data,
                          uint32_t len);

/* Read the node at logical, check it, and walk it. */
static int bt_walk(struct btrfs *b, uint64_t logical, int level, uint64_t owner, uint64_t gen,
                   uint8_t *prev, bt_item_fn fn)
{
    if (b->budget-- == 0)
        return bt_no(b, "a tree has more nodes than the filesystem could hold");
    const struct bt_chunk *c = bt_chunk_of(b, logical);
    if (c == NULL || logical - c->logical > c->len - b->ns)
        return bt_no(b, "a tree points outside its chunks");
    uint8_t *n = malloc(b->ns);
    if (n == NULL)
        return -1;
    int rc = 1;
    uint32_t nr = 0;
    if (lay_dev_read(b->d, c->phys[0] + (logical - c->logical), n, b->ns) != 0 ||
        !bt_csum_ok(n, b->ns) || memcmp(n + 32, b->fsid, 16) != 0 ||
        le_get64(n + 48) != logical || n[100] != level || le_get64(n + 80) > b->gen ||
        (owner != 0 && le_get64(n + 88) != owner))
        rc = bt_no(b, "a tree block's checksum, address, owner or level is wrong");
    else if (le_get64(n + 80) != gen) /* the kernel's "parent transid verify failed" */
        rc = bt_no(b, "a tree block is not of the generation its parent names (a lost write)");
    else
        nr = le_get32(n + 96);
    size_t per = level == 0 ? BTRFS_ITEM : BTRFS_KPTR;
    if (rc == 1 && ((nr == 0 && level > 0) || nr > (b->ns - BTRFS_HDR) / per))
        rc = bt_no(b, "a tree block holds a wrong number of items");
    for (uint32_t i = 0; i < nr && rc == 1; i++) {
        const uint8_t *e = n + BTRFS_HDR + i * per;
        /* keys ascending across the whole tree: objectid, type, offset */
        uint8_t k[BTRFS_KEY]; /* big-endian-comparable copy */
        be_put64(k, le_get64(e));
        k[8] = e[8];
        be_put64(k + 9, le_get64(e + 9));
        if (level == 0 && prev[BTRFS_KEY] != 0 && memcmp(k, prev, BTRFS_KEY) <= 0)
            rc = bt_no(b, "a tree's keys are out of order");
        if (rc != 1)
            break;
        if (level == 0) {
            memcpy(prev, k, BTRFS_KEY);
            prev[BTRFS_KEY] = 1;
            uint32_t off = le_get32(e + 17), len = le_get32(e + 21);
            if (off > b->ns - BTRFS_HDR || len > b->ns - BTRFS_HDR - off)
                rc = bt_no(b, "a tree item leaves its block");
            else
                rc = fn(b, e, n + BTRFS_HDR + off, len);
        } else {
            rc = bt_walk(b, le_get64(e + 17), level - 1, owner, le_get64(e + 25), prev, fn);
        }
    }
    free(n);
    return rc;
}

/* Walk the tree rooted at root (of the given level and generation). */
static int bt_tree(struct btrfs *b, uint64_t root, int level, uint64_t gen, uint64_t owner,
                   bt_item_fn fn)
{
    if (level < 0 || level > BTRFS_MAX_LEVEL)
        return bt_no(b, "a tree is deeper than btrfs allows");
    b->budget = b->total / b->ns + 1;
    uint8_t prev[BTRFS_KEY + 1] = {0};
    return bt_walk(b, root, level, owner, gen, prev, fn);
}

/* The tree the root tree names by id. */
static int bt_named(struct btrfs *b, unsigned id, bt_item_fn fn)
{
    return bt_tree(b, b->root[id], b->rlevel[id], b->rgen[id], id, fn);
}

static int bt_on_chunk(struct btrfs *b, const uint8_t *k, const uint8_t *d, uint32_t n)
{
    if (k[8] != BT_CHUNK_ITEM)
        return 1;
    return bt_add_chunk(b, le_get64(k + 9), d, n);
}

static int bt_on_root(struct btrfs *b, const uint8_t *k, const uint8_t *d, uint32_t n)
{
    uint64_t id = le_get64(k);
    if (k[8] != BT_ROOT_ITEM || id >= 16)
        return 1;
    if (n < 239)
        return bt_no(b, "a root item is truncated");
    b->root[id] = le_get64(d + 176);
    b->rgen[id] = le_get64(d + 160);
    b->rlevel[id] = d[238];
    return 1;
}

static int bt_on_dev(struct btrfs *b, const uint8_t *k, const uint8_t *d, uint32_t n)
{
    if (k[8] != BT_DEV_EXTENT)
        return 1;
    if (le_get64(k) != b->devid)
        return bt_no(b, "a dev extent of another device");
    if (n < 32)
        return bt_no(b, "a dev extent is truncated");
    return sp_ranges_push(&b->alloc, &b->nalloc, &b->alloccap, le_get64(k + 9), le_get64(d + 24)) == 0
               ? 1 : -1;
}

static struct bt_bg *bt_bg_of(struct btrfs *b, uint64_t logical)
{
    size_t lo = 0, hi = b->nbg; /* sorted by start: items come in key order */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->bg[mid].start + b->bg[mid].len <= logical)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < b->nbg && b->bg[lo].start <= logical ? &b->bg[lo] : NULL;
}

static int bt_on_bg(struct btrfs *b, const uint8_t *k, const uint8_t *d, uint32_t n)
{
    if (k[8] != BT_BLOCK_GROUP_ITEM)
        return 1;
    if (n < 24)
        return bt_no(b, "a block group item is truncated");
    struct bt_bg g = {.start = le_get64(k), .len = le_get64(k + 9), .used = le_get64(d),
                      .flags = le_get64(d + 16)};
    const struct bt_chunk *c = bt_chunk_of(b, g.start);
    if (c == NULL || c->logical != g.start || c->len != g.len || c->type != g.flags ||
        (b->nbg > 0 && b->bg[b->nbg - 1].start + b->bg[b->nbg - 1].len > g.start))
        return bt_no(b, "a block group and its chunk disagree");
    if (b->nbg == b->bgcap) {
        size_t cap = b->bgcap ? b->bgcap * 2 : 64;
        struct bt_bg *nb = realloc(b->bg, cap * sizeof *nb);
        if (nb == NULL)
            return -1;
        b->bg = nb;
        b->bgcap = cap;
    }
    b->bg[b->nbg++] = g;
    return 1;
}

/* The extent tree's block group items (unless in their own tree). */
static int bt_on_extent_bg(struct btrfs *b, const uint8_t *k, const uint8_t *d, uint32_t n)
{
    return k[8] == BT_BLOCK_GROUP_ITEM ? bt_on_bg(b, k, d, n) : 1;
}

/* The free-space tree: free logical ranges of data block groups. */
static int bt_on_fst(struct btrfs *b, const uint8_t *k, const uint8_t *d, uint32_t n)
{
    uint64_t start = le_get64(k), len = le_get64(k + 9);
    if (k[8] != BT_FREE_SPACE_INFO && k[8] != BT_FREE_SPACE_EXTENT && k[8] != BT_FREE_SPACE_BITMAP)
        return 1;
    struct bt_bg *g = bt_bg_of(b, start);
    /* mkfs.btrfs leaves items of the temporary groups it removed: no free
     * space is taken from a range that is in no group (it is in no chunk:
     * free or not, bt_used() goes by the chunks) */
    if (g == NULL)
        return 1;
    if (len == 0 || len > g->start + g->len - start)
        return bt_no(b, "a free-space tree item lies across its block group's end");
    if (k[8] == BT_FREE_SPACE_INFO) {
        g->fst_info = g->start == start && g->len == len;
        return g->fst_info ? 1 : bt_no(b, "a free-space info item does not match its group");
    }
    if (k[8] == BT_FREE_SPACE_EXTENT)
        return sp_ranges_push(&b->free, &b->nfree, &b->freecap, start, len) == 0 ? 1 : -1;
    uint64_t bits = len / b->ss;
    if (len % b->ss != 0 || n < (bits + 7) / 8)
        return bt_no(b, "a free-space bitmap is malformed");
    for (uint64_t i = 0; i < bits;) {
        if (!(d[i / 8] >> (i % 8) & 1)) {
            i++;
            continue;
        }
        uint64_t j = i;
        while (j < bits && (d[j / 8] >> (j % 8) & 1))
            j++;
        if (sp_ranges_push(&b->free, &b->nfree, &b->freecap, start + i * b->ss, (j - i) * b->ss) != 0)
            return -1;
        i = j;
    }
    return 1;
}

/* ---- the device's used ranges ---- */

static int bt_cmp(const void *x, const void *y)
{
    const struct sp_range *a = x, *b = y;
    return a->off < b->off ? -1 : a->off > b->off;
}

/* The chunk stripes and the dev extents: the same ranges of the device. */
static int bt_alloc_agree(struct btrfs *b)
{
    size_t ns = 0;
    for (size_t i = 0; i < b->nch; i++)
        ns += b->ch[i].nstripes;
    if (ns != b->nalloc)
        return bt_no(b, "its chunk tree and device tree disagree on what is allocated");
    struct sp_range *s = malloc((ns ? ns : 1) * sizeof *s);
    if (s == NULL)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < b->nch; i++)
        for (unsigned j = 0; j < b->ch[i].nstripes; j++)
            s[k++] = (struct sp_range){b->ch[i].phys[j], b->ch[i].len};
    qsort(s, ns, sizeof *s, bt_cmp);
    qsort(b->alloc, b->nalloc, sizeof *b->alloc, bt_cmp);
    int rc = 1;
    for (size_t i = 0; i < ns && rc == 1; i++)
        if (s[i].off != b->alloc[i].off || s[i].len != b->alloc[i].len ||
            (i > 0 && s[i].off < s[i - 1].off + s[i - 1].len))
            rc = bt_no(b, "its chunk tree and device tree disagree on what is allocated");
    free(s);
    return rc;
}

/* Used: [0, 1 MiB), the superblock mirrors, every stripe of every chunk
 * but the free-space tree's free ranges of data groups, each group with its
 * extents summing to its used count and none overlapping a free range. */
static int bt_used(struct btrfs *b, struct lay_used *u)
{
    static const uint64_t sbs[3] = {BTRFS_SB_OFF, (uint64_t)64 << 20, (uint64_t)256 << 30};
    if (lay_used_add(u, 0, (uint64_t)1 << 20) != 0)
        return -1;
    for (int i = 0; i < 3; i++)
        if (sbs[i] < b->total && lay_used_add(u, sbs[i], BTRFS_SB_SIZE) != 0)
            return -1;
    bool fst = (b->ro & BT_RO_FST) && (b->ro & BT_RO_FST_VALID);
    for (size_t i = 0; i < b->nbg; i++)
        if (b->bg[i].ext != b->bg[i].used)
            return bt_no(b, "a block group's used count disagrees with its extents");
    for (size_t i = 0; i < b->nch; i++) {
        const struct bt_chunk *c = &b->ch[i];
        const struct bt_bg *g = bt_bg_of((struct btrfs *)b, c->logical);
        bool data = fst && g != NULL && g->fst_info; /* any type: the extent tree vouches */
        size_t f0 = 0, hi = b->nfree; /* the first free range ending past the chunk's start */
        while (f0 < hi) {
            size_t mid = f0 + (hi - f0) / 2;
            if (b->free[mid].off + b->free[mid].len <= c->logical)
                f0 = mid + 1;
            else
                hi = mid;
        }
        for (unsigned s = 0; s < c->nstripes; s++) {
            uint64_t at = c->logical; /* walk the group: used gaps between free ranges */
            for (size_t f = f0; data && f < b->nfree && b->free[f].off < c->logical + c->len; f++) {
                const struct sp_range *r = &b->free[f];
                if (r->off < at)
                    return bt_no(b, "its free-space tree's ranges overlap");
                if (lay_used_add(u, c->phys[s] + (at - c->logical), r->off - at) != 0)
                    return -1;
                at = r->off + r->len;
            }
            if (lay_used_add(u, c->phys[s] + (at - c->logical), c->logical + c->len - at) != 0)
                return -1;
        }
    }
    return 1;
}

/* The extent tree's second reading: no free range inside an extent. */
static int bt_check_free(struct btrfs *b, uint64_t start, uint64_t len)
{
    /* a free range [off, off + len) of the tree overlapping [start, start
     * + len): the free list is sorted */
    size_t lo = 0, hi = b->nfree;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->free[mid].off + b->free[mid].len <= start)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < b->nfree && b->free[lo].off < start + len)
        return bt_no(b, "its free-space tree calls free what the extent tree allocates (a "
                        "stale free-space tree: btrfs check --clear-space-cache v2)");
    return 1;
}

/* The extent tree, once the groups and free ranges are known: each extent
 * counted in its block group, none inside a free range. */
static int bt_on_extent(struct btrfs *b, const uint8_t *k, const uint8_t *d, uint32_t n)
{
    (void)d;
    (void)n;
    if (k[8] != BT_EXTENT_ITEM && k[8] != BT_METADATA_ITEM)
        return 1;
    uint64_t start = le_get64(k), len = k[8] == BT_METADATA_ITEM ? b->ns : le_get64(k + 9);
    struct bt_bg *g = bt_bg_of(b, start);
    if (g == NULL || len == 0 || len > g->start + g->len - start)
        return bt_no(b, "an extent lies outside its block group");
    g->ext += len;
    return bt_check_free(b, start, len);
}

static int bt_map(struct btrfs *b, struct lay_used *u)
{
    uint8_t *sb = malloc(BTRFS_SB_SIZE);
    if (sb == NULL)
        return -1;
    int rc = bt_super(b, sb);
    if (rc == 1)
        rc = bt_sys_array(b, sb);
    uint64_t chunk_root = le_get64(sb + 0x58), root = le_get64(sb + 0x50);
    uint64_t chunk_gen = le_get64(sb + 0xa4), gen = le_get64(sb + 0x48);
    int clevel = sb[0xc7], rlevel = sb[0xc6];
    free(sb);
    if (rc == 1)
        rc = bt_tree(b, chunk_root, clevel, chunk_gen, BT_CHUNK_TREE, bt_on_chunk);
    if (rc == 1)
        rc = bt_tree(b, root, rlevel, gen, BT_ROOT_TREE, bt_on_root);
    if (rc == 1 && (b->root[BT_EXTENT_TREE] == 0 || b->root[BT_DEV_TREE] == 0))
        rc = bt_no(b, "its root tree names no extent or device tree");
    if (rc == 1)
        rc = bt_named(b, BT_DEV_TREE, bt_on_dev);
    if (rc == 1)
        rc = bt_alloc_agree(b);
    if (rc == 1 && (b->ro & BT_RO_BGT))
        rc = b->root[BT_BG_TREE] == 0
                 ? bt_no(b, "its root tree names no block group tree")
                 : bt_named(b, BT_BG_TREE, bt_on_bg);
    if (rc == 1 && !(b->ro & BT_RO_BGT))
        rc = bt_named(b, BT_EXTENT_TREE, bt_on_extent_bg);
    if (rc == 1 && b->nbg != b->nch)
        rc = bt_no(b, "its block groups and chunks disagree");
    if (rc == 1 && (b->ro & BT_RO_FST) && (b->ro & BT_RO_FST_VALID) && b->root[BT_FST_TREE] != 0)
        rc = bt_named(b, BT_FST_TREE, bt_on_fst);
    if (rc == 1 && b->nfree > 0) {
        qsort(b->free, b->nfree, sizeof *b->free, bt_cmp);
        for (size_t i = 1; i < b->nfree && rc == 1; i++)
            if (b->free[i].off < b->free[i - 1].off + b->free[i - 1].len)
                rc = bt_no(b, "its free-space tree's ranges overlap");
    }
    if (rc == 1) /* the second reading, and each group's count */
        rc = bt_named(b, BT_EXTENT_TREE, bt_on_extent);
    if (rc == 1)
        rc = bt_used(b, u);
    return rc;
}

int lay_btrfs_used(struct lay_dev *d, struct lay_used *u, uint64_t *fs_len, char *why,
                   size_t wn)
{
    struct btrfs b = {.d = d, .why = why, .wn = wn};
    int rc = bt_map(&b, u);
    free(b.ch);
    free(b.bg);
    free(b.free);
    free(b.alloc);
    if (rc == 1)
        *fs_len = b.total;
    return rc;
}
