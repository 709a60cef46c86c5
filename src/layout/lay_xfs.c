/* lay_xfs.c — an XFS filesystem's used extents (lay_fs.h).
 *
 * Format: the XFS Algorithms & Data Structures document (xfsprogs' and the
 * kernel's doc): the superblock at byte 0; the data device cut into
 * allocation groups of agblocks blocks, each with its AGF one sector in,
 * which roots two B+trees of the AG's free extents, one by block number
 * (bnobt) and one by size (cntbt); the log inside the data device when
 * logstart is set.  Integers are big-endian; v5 filesystems checksum each
 * metadata block with CRC-32C (stored little-endian), stamp it with the
 * filesystem's UUID and, for B+tree blocks, their own address and owner.
 *
 * What is free: the extents the bnobt lists, nothing else.  Everything
 * else (AG headers, the free list, B+tree and inode blocks, the log, files)
 * is data, and so are the bytes past dblocks.  Two readings of the free
 * space must agree before any of it is trusted: the bnobt and the cntbt
 * must list the same extents (an order-free digest of each: count, sum and
 * a mixed sum), each AG's total must equal its AGF's freeblks, and the
 * superblock's free-block count (exact on a clean unmount) must equal the
 * AGFs' freeblks + flcount + btreeblks summed.  Then the second reading
 * (lay_fs.h): every allocated inode of every AG's inode B+tree, its chunk,
 * both forks' extents (in the inode or in its extent-map B+tree, whose
 * blocks count too), the inode trees' blocks, the AG headers and the log
 * are referenced through lay_used_ref(): what the bnobt calls free but a
 * file uses is read, and counted as disputed.  A file on the realtime
 * device, an inode whose magic, version, CRC or number is wrong, an extent
 * leaving the filesystem: read whole.
 *
 * Read whole (0) when: not a v4 or v5 superblock, its geometry does not
 * add up, a CRC or an address or owner stamp is wrong, mkfs did not finish,
 * the filesystem needs repair or has incompatible features spigz does not
 * know, the log is on another device (whether it is clean is unknown),
 * the log needs recovery (its last record before the head is not a lone
 * unmount record: the kernel's test for a clean log, xlog_check_unmount_rec), the trees do not parse, are deeper than XFS allows,
 * disagree or disagree with the counters.
 *
 * Bounds: blocks up to 64 KiB, at most 8 tree levels, each tree's walk at
 * most as many blocks as its AG has, records strictly ascending (a block
 * named twice fails there); the log head search reads O(log n) sectors and
 * a window of at most XFS_LOG_WINDOW around the head.
 */
#include "config.h"
#include "lay_fs.h"
#include "crc32c.h"
#include "le.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XFS_SB_MAGIC 0x58465342u  /* "XFSB" */
#define XFS_AGF_MAGIC 0x58414746u /* "XAGF" */
#define XFS_ABTB 0x41425442u      /* "ABTB": bnobt, v4 */
#define XFS_AB3B 0x41423342u      /* "AB3B": bnobt, v5 */
#define XFS_ABTC 0x41425443u      /* "ABTC": cntbt, v4 */
#define XFS_AB3C 0x41423343u      /* "AB3C": cntbt, v5 */
#define XFS_LOG_MAGIC 0xFEEDBABEu
#define XFS_MAX_LEVELS 8
#define XFS_BB 512
#define XFS_LOG_WINDOW 8192 /* basic blocks (4 MiB) checked before the head */

/* v5 incompatible features spigz knows: ftype, sparse inodes, meta UUID,
 * bigtime, large extent counters; NEEDSREPAIR (16) is refused apart. */
#define XFS_INCOMPAT_KNOWN (1u | 2u | 4u | 8u | 32u)
#define XFS_INCOMPAT_NEEDSREPAIR 16u
/* read-only-compatible: free inode btree, rmap, reflink, inode btree counts */
#define XFS_RO_COMPAT_KNOWN (1u | 2u | 4u | 8u)

struct xfs {
    struct lay_dev *d;
    bool v5;
    uint32_t bs, ss;          /* block and sector size */
    uint64_t dblocks;
    uint32_t agblocks, agcount;
    unsigned agblklog;
    uint8_t uuid[16];         /* the metadata UUID */
    uint64_t logstart;        /* fsblock */
    uint32_t logblocks;
    uint64_t fdblocks;
    uint16_t isize;           /* inode size */
    unsigned inopblog;        /* log2 of inodes per block */
    bool sparse_inodes, nrext64;
    uint8_t *blk;             /* one block */
    struct lay_used *u;       /* where references go (the second reading) */
    uint64_t budget;          /* blocks a tree walk may still read */
    char *why;
    size_t wn;
};

static int xfs_no(struct xfs *x, const char *what)
{
    snprintf(x->why, x->wn, "%s", what);
    return 0;
}

/* Whether the CRC-32C of n bytes, with the 4 at off taken as zero, is
 * what those 4 bytes hold (little-endian). */
static bool xfs_crc_ok(const uint8_t *b, size_t n, size_t off)
{
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    return true; /* scripts/fuzz.sh: mutations reach past the checksums */
#endif
    static const uint8_t zero[4];
    uint32_t c = crc32c(0, b, off);
    c = crc32c(c, zero, 4);
    c = crc32c(c, b + off + 4, n - off - 4);
    return c == le_get32(b + off);
}

/* The byte offset of AG block agbno of AG agno. */
static uint64_t xfs_agb(const struct xfs *x, uint32_t agno, uint32_t agbno)
{
    return ((uint64_t)agno * x->agblocks + agbno) * x->bs;
}

/* Read the B+tree block at byte at into b (x->bs bytes) and check it is
 * what its parent says: its magic and level and, on v5, its self-address,
 * the filesystem's UUID, its owner (the AG for the short-form trees, the
 * inode for an extent map's long form) and its CRC.  what names it in why
 * ("a free-space tree block").  1, or 0. */
static int xfs_btblock(struct xfs *x, uint64_t at, uint32_t magic, unsigned level, bool lng,
                       uint64_t owner, uint8_t *b, const char *what)
{
    if (lay_dev_read(x->d, at, b, x->bs) != 0 || be_get32(b) != magic ||
        be_get16(b + 4) != level) {
        snprintf(x->why, x->wn, "%s is not what its parent says", what);
        return 0;
    }
    size_t o = lng ? 24 : 16; /* blkno, then lsn, uuid, owner, crc */
    uint64_t own = lng ? be_get64(b + 56) : be_get32(b + 48);
    if (x->v5 && (be_get64(b + o) != at / XFS_BB || memcmp(b + o + 16, x->uuid, 16) != 0 ||
                  own != owner || !xfs_crc_ok(b, x->bs, lng ? 64 : 52))) {
        snprintf(x->why, x->wn, "%s's checksum or stamp is wrong", what);
        return 0;
    }
    return 1;
}

/* ---- the superblock ---- */

static unsigned xfs_log2(uint64_t v)
{
    unsigned l = 0;
    while (((uint64_t)1 << l) < v)
        l++;
    return l;
}

static int xfs_super(struct xfs *x)
{
    uint8_t sb[XFS_BB];
    if (lay_dev_read(x->d, 0, sb, sizeof sb) != 0 || be_get32(sb) != XFS_SB_MAGIC)
        return xfs_no(x, "cannot read its superblock");
    unsigned ver = be_get16(sb + 100) & 0xf;
    x->v5 = ver == 5;
    x->bs = be_get32(sb + 4);
    x->ss = be_get16(sb + 102);
    x->dblocks = be_get64(sb + 8);
    x->agblocks = be_get32(sb + 84);
    x->agcount = be_get32(sb + 88);
    x->agblklog = sb[124];
    x->logstart = be_get64(sb + 48);
    x->logblocks = be_get32(sb + 96);
    x->fdblocks = be_get64(sb + 144);
    x->isize = (uint16_t)be_get16(sb + 104);
    x->inopblog = sb[123];
    if (ver != 4 && ver != 5)
        return xfs_no(x, "an XFS version spigz does not read");
    if (x->bs < 512 || x->bs > 65536 || (x->bs & (x->bs - 1)) || sb[120] != xfs_log2(x->bs) ||
        x->ss < 512 || x->ss > x->bs || (x->ss & (x->ss - 1)) || x->agblocks < 8 ||
        x->agcount == 0 || x->agblklog != xfs_log2(x->agblocks) || x->dblocks == 0 ||
        x->dblocks > (uint64_t)x->agcount * x->agblocks ||
        x->dblocks <= (uint64_t)(x->agcount - 1) * x->agblocks)
        return xfs_no(x, "its superblock's geometry does not add up");
    if (x->dblocks > x->d->len / x->bs)
        return xfs_no(x, "the filesystem is larger than its partition");
    if (x->isize < 256 || x->isize > 2048 || (x->isize & (x->isize - 1)) ||
        (1u << x->inopblog) != x->bs / x->isize || x->isize > x->bs)
        return xfs_no(x, "its superblock's inode geometry does not add up");
    if (sb[126] != 0)
        return xfs_no(x, "mkfs did not finish (sb_inprogress)");
    memcpy(x->uuid, sb + 32, 16);
    if (x->v5) {
        uint8_t *full = malloc(x->ss);
        if (full == NULL)
            return -1;
        bool ok = lay_dev_read(x->d, 0, full, x->ss) == 0 && xfs_crc_ok(full, x->ss, 224);
        free(full);
        if (!ok)
            return xfs_no(x, "its superblock's checksum is wrong");
        uint32_t incompat = be_get32(sb + 216);
        if (incompat & XFS_INCOMPAT_NEEDSREPAIR)
            return xfs_no(x, "it is marked as needing repair (xfs_repair)");
        if ((incompat & ~XFS_INCOMPAT_KNOWN) || (be_get32(sb + 212) & ~XFS_RO_COMPAT_KNOWN))
            return xfs_no(x, "it has features spigz does not know");
        if (be_get32(sb + 220) != 0)
            return xfs_no(x, "its log holds items of a newer kind (log incompat features): "
                             "it was not cleanly unmounted");
        x->sparse_inodes = incompat & 2u;
        x->nrext64 = incompat & 32u;
        if (incompat & 4u) /* META_UUID: blocks carry the metadata UUID */
            memcpy(x->uuid, sb + 248, 16);
    }
    if (x->logstart == 0)
        return xfs_no(x, "its log is on another device (whether it is clean is unknown)");
    return 1;
}

/* ---- the log ---- */

struct xlog {
    struct xfs *x;
    uint64_t off;  /* byte offset of the log */
    uint64_t nbb;  /* its basic blocks */
};

/* The cycle number basic block b carries (a record header's h_cycle, or
 * the data block's stamped first word); -1 unreadable. */
static int64_t xlog_cycle(struct xlog *l, uint64_t b, uint8_t *bb)
{
    if (lay_dev_read(l->x->d, l->off + b * XFS_BB, bb, XFS_BB) != 0)
        return -1;
    return be_get32(bb) == XFS_LOG_MAGIC ? be_get32(bb + 4) : be_get32(bb);
}

/* The head: the first block that does not carry block 0's cycle cyc (the
 * log's newest: a pass starts at block 0), by binary search as the
 * kernel's xlog_find_cycle_start() does; the log's size when every block
 * carries it.  Blocks after the head may hold any older cycle or none:
 * xfs_repair -L writes an unmount record and zeros after it.  1, or 0. */
static int xlog_head(struct xlog *l, uint64_t *head, uint32_t *cyc)
{
    uint8_t bb[XFS_BB];
    int64_t first = xlog_cycle(l, 0, bb), last = xlog_cycle(l, l->nbb - 1, bb);
    if (first <= 0 || last < 0 || last > first)
        return xfs_no(l->x, "its log cannot be read, was never written, or its cycle numbers "
                            "are inconsistent");
    *cyc = (uint32_t)first;
    if (first == last) {
        *head = l->nbb;
        return 1;
    }
    uint64_t lo = 0, hi = l->nbb - 1; /* cycle(lo) == first, cycle(hi) != first */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        int64_t c = xlog_cycle(l, mid, bb);
        if (c < 0)
            return xfs_no(l->x, "its log cannot be read");
        if (c == first)
            lo = mid;
        else
            hi = mid;
    }
    *head = hi;
    return 1;
}

/* Whether the log is clean, as the kernel judges it (xlog_find_head, then
 * xlog_check_unmount_rec): the window before the head all of the head's
 * cycle (at the log's end, past a wrap, of an older one), the window after
 * it none of the head's cycle (no write in flight beyond a gap), and the
 * last record header before the head one unmount operation that ends at
 * the head.  1 clean, 0 (why) not, or cannot tell. */
static int xfs_log_clean(struct xfs *x)
{
    uint32_t agno = (uint32_t)(x->logstart >> x->agblklog);
    uint32_t agbno = (uint32_t)(x->logstart & (((uint64_t)1 << x->agblklog) - 1));
    struct xlog l = {.x = x, .off = xfs_agb(x, agno, agbno),
                     .nbb = (uint64_t)x->logblocks * (x->bs / XFS_BB)};
    if (agno >= x->agcount || agbno >= x->agblocks || x->logblocks == 0 ||
        l.off / x->bs + x->logblocks > x->dblocks)
        return xfs_no(x, "its log lies outside the filesystem");
    uint64_t head;
    uint32_t cyc;
    if (!xlog_head(&l, &head, &cyc))
        return 0;
    uint8_t bb[XFS_BB];
    uint64_t win = l.nbb < XFS_LOG_WINDOW ? l.nbb : XFS_LOG_WINDOW;
    uint64_t rec = UINT64_MAX;
    for (uint64_t i = 1; i <= win; i++) { /* before the head, newest first */
        bool wrapped = i > head;
        uint64_t b = wrapped ? l.nbb - (i - head) : head - i;
        int64_t c = xlog_cycle(&l, b, bb);
        if (c < 0 || (wrapped ? c >= (int64_t)cyc : c != (int64_t)cyc))
            return xfs_no(x, "its log has writes in flight near its head: it needs recovery");
        if (!wrapped && be_get32(bb) == XFS_LOG_MAGIC && rec == UINT64_MAX)
            rec = b;
    }
    for (uint64_t b = head; b < l.nbb && b < head + win; b++) { /* after it */
        int64_t c = xlog_cycle(&l, b, bb);
        if (c < 0 || c >= (int64_t)cyc)
            return xfs_no(x, "its log has writes past its head: it needs recovery");
    }
    if (rec == UINT64_MAX)
        return xfs_no(x, "no log record found before its log's head");
    if (xlog_cycle(&l, rec, bb) < 0)
        return 0;
    uint32_t version = be_get32(bb + 8), len = be_get32(bb + 12), nops = be_get32(bb + 40);
    uint64_t lsn = be_get64(bb + 16);
    uint32_t hsize = be_get32(bb + 320);
    uint64_t hblks = version == 2 && hsize > 32768 ? (hsize + 32767) / 32768 : 1;
    if ((version != 1 && version != 2) || lsn != ((uint64_t)cyc << 32 | rec) ||
        rec + hblks + (len + XFS_BB - 1) / XFS_BB != head)
        return xfs_no(x, "its last log record does not end at its head: it needs recovery");
    if (nops != 1)
        return xfs_no(x, "its log needs recovery (transactions after the last unmount)");
    /* the operation header: its flags say unmount (its first word, the
     * transaction id, is stamped with the cycle) */
    if (xlog_cycle(&l, rec + hblks, bb) < 0 || bb[8] != 0xAA || !(bb[9] & 0x20))
        return xfs_no(x, "its log needs recovery (the last record is not an unmount record)");
    return 1;
}

/* ---- the free-space trees ---- */

/* An order-free digest of a multiset of extents. */
struct xfs_sum {
    uint64_t n, blocks, mix;
};

static uint64_t xfs_mix(uint64_t v)
{
    v += 0x9E3779B97F4A7C15u;
    v = (v ^ (v >> 30)) * 0xBF58476D1CE4E5B9u;
    v = (v ^ (v >> 27)) * 0x94D049BB133111EBu;
    return v ^ (v >> 31);
}

struct xfs_walk {
    struct xfs *x;
    uint32_t agno, aglen;
    uint32_t magic;
    bool bno;           /* the bnobt: records ascending by start, reported */
    uint64_t next;      /* bnobt: the first block the next record may start at */
    struct xfs_sum sum;
    struct lay_used *u; /* bnobt: the gaps between free extents, used */
    uint64_t ag_off;
};

/* One record. */
static int xfs_rec(struct xfs_walk *w, uint32_t start, uint32_t count, uint64_t *prev)
{
    if (count == 0 || start >= w->aglen || count > w->aglen - start)
        return xfs_no(w->x, "a free-space record leaves its AG");
    uint64_t key = w->bno ? start : (uint64_t)count << 32 | start;
    if (*prev != UINT64_MAX && key <= *prev)
        return xfs_no(w->x, "free-space records out of order");
    *prev = key;
    w->sum.n++;
    w->sum.blocks += count;
    w->sum.mix += xfs_mix((uint64_t)start << 32 | count);
    if (w->bno) {
        if (start < w->next)
            return xfs_no(w->x, "free extents overlap");
        uint64_t bs = w->x->bs;
        if (lay_used_add(w->u, w->ag_off + w->next * bs, (start - w->next) * bs) != 0)
            return -1;
        w->next = (uint64_t)start + count;
    }
    return 1;
}

/* Walk the subtree at AG block agbno, of the given level. */
static int xfs_tree(struct xfs_walk *w, uint32_t agbno, unsigned level, uint64_t *prev)
{
    struct xfs *x = w->x;
    if (w->x->budget-- == 0 || agbno == 0 || agbno >= w->aglen)
        return xfs_no(x, "a free-space tree points outside its AG");
    uint8_t *b = malloc(x->bs);
    if (b == NULL)
        return -1;
    size_t hdr = x->v5 ? 56 : 16;
    int rc = xfs_btblock(x, xfs_agb(x, w->agno, agbno), w->magic, level, false, w->agno, b,
                         "a free-space tree block");
    uint32_t n = rc == 1 ? be_get16(b + 6) : 0;
    if (rc == 1 && level == 0) {
        if (n > (x->bs - hdr) / 8)
            rc = xfs_no(x, "a free-space tree block holds too many records");
        for (uint32_t i = 0; i < n && rc == 1; i++)
            rc = xfs_rec(w, be_get32(b + hdr + 8 * i), be_get32(b + hdr + 8 * i + 4), prev);
    } else if (rc == 1) {
        size_t maxrecs = (x->bs - hdr) / 12;
        if (n == 0 || n > maxrecs)
            rc = xfs_no(x, "a free-space tree node holds a wrong number of keys");
        for (uint32_t i = 0; i < n && rc == 1; i++)
            rc = xfs_tree(w, be_get32(b + hdr + maxrecs * 8 + 4 * i), level - 1, prev);
    }
    free(b);
    return rc;
}

/* One AG: its AGF, both trees, their agreement.  1, 0 (why), -1. */
static int xfs_ag(struct xfs *x, uint32_t agno, struct lay_used *u, uint64_t *fd)
{
    uint8_t *agf = x->blk;
    uint64_t off = xfs_agb(x, agno, 0);
    uint32_t aglen = agno + 1 < x->agcount ? x->agblocks
                                           : (uint32_t)(x->dblocks - (uint64_t)agno * x->agblocks);
    if (lay_dev_read(x->d, off + x->ss, agf, x->ss) != 0 || be_get32(agf) != XFS_AGF_MAGIC ||
        be_get32(agf + 4) != 1 || be_get32(agf + 8) != agno || be_get32(agf + 12) != aglen)
        return xfs_no(x, "an AG's header (AGF) is damaged");
    if (x->v5 && (memcmp(agf + 64, x->uuid, 16) != 0 || !xfs_crc_ok(agf, x->ss, 216)))
        return xfs_no(x, "an AG header's checksum is wrong");
    uint32_t lv[2] = {be_get32(agf + 28), be_get32(agf + 32)};
    uint32_t root[2] = {be_get32(agf + 16), be_get32(agf + 20)};
    uint32_t freeblks = be_get32(agf + 52);
    *fd += (uint64_t)freeblks + be_get32(agf + 48) + be_get32(agf + 60);
    struct xfs_sum s[2];
    for (int t = 0; t < 2; t++) {
        if (lv[t] == 0 || lv[t] > XFS_MAX_LEVELS)
            return xfs_no(x, "a free-space tree is deeper than XFS allows");
        struct xfs_walk w = {.x = x, .agno = agno, .aglen = aglen, .bno = t == 0, .u = u,
                             .ag_off = off};
        w.magic = t == 0 ? (x->v5 ? XFS_AB3B : XFS_ABTB) : (x->v5 ? XFS_AB3C : XFS_ABTC);
        x->budget = aglen;
        uint64_t prev = UINT64_MAX;
        int rc = xfs_tree(&w, root[t], lv[t] - 1, &prev);
        if (rc != 1)
            return rc;
        /* after the last free extent, the AG's end is used */
        if (t == 0 && lay_used_add(u, off + w.next * x->bs, (aglen - w.next) * (uint64_t)x->bs) != 0)
            return -1;
        s[t] = w.sum;
    }
    if (s[0].n != s[1].n || s[0].blocks != s[1].blocks || s[0].mix != s[1].mix)
        return xfs_no(x, "its two free-space trees (by block and by size) disagree");
    if (s[0].blocks != freeblks)
        return xfs_no(x, "an AG's free-block count disagrees with its free-space tree");
    return 1;
}


/* ---- the second reading: every inode's extents ---- */

#define XFS_IAB3 0x49414233u /* "IAB3": inode btree, v5 */
#define XFS_IABT 0x49414254u /* "IABT": inode btree, v4 */
#define XFS_BMA3 0x424D4133u /* "BMA3": extent map btree, v5 */
#define XFS_BMAP 0x424D4150u /* "BMAP": extent map btree, v4 */

/* The filesystem block fsb (agno << agblklog | agbno) and count blocks
 * from it, referenced: 1, 0 outside the filesystem, -1. */
static int xfs_ref(struct xfs *x, uint64_t fsb, uint64_t count)
{
    uint64_t agno = fsb >> x->agblklog, agbno = fsb & (((uint64_t)1 << x->agblklog) - 1);
    if (agno >= x->agcount || agbno >= x->agblocks || count > x->agblocks - agbno ||
        (agno * x->agblocks + agbno + count) > x->dblocks)
        return xfs_no(x, "a file's extent leaves the filesystem");
    return lay_used_ref(x->u, xfs_agb(x, (uint32_t)agno, (uint32_t)agbno), count * x->bs) == 0
               ? 1 : -1;
}

/* n packed extent records (16 bytes each) at p. */
static int xfs_extents(struct xfs *x, const uint8_t *p, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        uint64_t l0 = be_get64(p + 16 * i), l1 = be_get64(p + 16 * i + 8);
        uint64_t start = (l0 & 0x1ff) << 43 | l1 >> 21, count = l1 & 0x1fffff;
        int rc = count == 0 ? xfs_no(x, "a file's extent is empty") : xfs_ref(x, start, count);
        if (rc != 1)
            return rc;
    }
    return 1;
}

/* An extent map B+tree block at fsb, of the given level, owned by ino. */
static int xfs_bmbt(struct xfs *x, uint64_t fsb, unsigned level, uint64_t ino)
{
    if (x->budget-- == 0)
        return xfs_no(x, "a file's extent tree is larger than the filesystem");
    int rc = xfs_ref(x, fsb, 1);
    if (rc != 1)
        return rc;
    uint64_t agno = fsb >> x->agblklog, agbno = fsb & (((uint64_t)1 << x->agblklog) - 1);
    uint64_t at = xfs_agb(x, (uint32_t)agno, (uint32_t)agbno);
    uint8_t *b = malloc(x->bs);
    if (b == NULL)
        return -1;
    size_t hdr = x->v5 ? 72 : 24;
    rc = xfs_btblock(x, at, x->v5 ? XFS_BMA3 : XFS_BMAP, level, true, ino, b,
                     "a file's extent tree block");
    uint32_t n = rc == 1 ? be_get16(b + 6) : 0;
    if (rc == 1 && level == 0)
        rc = n > (x->bs - hdr) / 16 ? xfs_no(x, "a file's extent tree block is overfull")
                                    : xfs_extents(x, b + hdr, n);
    else if (rc == 1) {
        size_t maxrecs = (x->bs - hdr) / 16;
        if (n == 0 || n > maxrecs)
            rc = xfs_no(x, "a file's extent tree node holds a wrong number of keys");
        for (uint32_t i = 0; i < n && rc == 1; i++)
            rc = xfs_bmbt(x, be_get64(b + hdr + maxrecs * 8 + 8 * i), level - 1, ino);
    }
    free(b);
    return rc;
}

/* One fork of an inode: format fmt, n extents, its bytes [p, p + size). */
static int xfs_fork(struct xfs *x, const uint8_t *p, size_t size, int fmt, uint64_t n,
                    uint64_t ino)
{
    if (fmt == 2) /* extents */
        return n > size / 16 ? xfs_no(x, "an inode lists more extents than it holds")
                             : xfs_extents(x, p, n);
    if (fmt != 3) /* device, local: no blocks */
        return fmt == 0 || fmt == 1 ? 1 : xfs_no(x, "an inode's fork has an unknown format");
    if (size < 4)
        return xfs_no(x, "an inode's extent tree root is truncated");
    unsigned level = be_get16(p), nr = be_get16(p + 2);
    size_t maxrecs = (size - 4) / 16;
    if (level == 0 || level > XFS_MAX_LEVELS || nr == 0 || nr > maxrecs)
        return xfs_no(x, "an inode's extent tree root is malformed");
    for (unsigned i = 0; i < nr; i++) {
        int rc = xfs_bmbt(x, be_get64(p + 4 + maxrecs * 8 + 8 * i), level - 1, ino);
        if (rc != 1)
            return rc;
    }
    return 1;
}

/* One allocated inode: both forks' blocks referenced. */
static int xfs_inode(struct xfs *x, const uint8_t *in, uint64_t ino)
{
    if (be_get16(in) != 0x494e || (in[4] != 1 && in[4] != 2 && in[4] != 3) ||
        (x->v5 != (in[4] == 3)))
        return xfs_no(x, "an allocated inode is not one");
    if (x->v5 && (be_get64(in + 152) != ino || !xfs_crc_ok(in, x->isize, 100)))
        return xfs_no(x, "an inode's checksum or number is wrong");
    if (be_get16(in + 90) & 1) /* XFS_DIFLAG_REALTIME: its data is on the realtime device */
        return xfs_no(x, "a file on the realtime device (its extents are not this device's)");
    size_t hdr = in[4] == 3 ? 176 : 100;
    size_t forkoff = (size_t)in[82] * 8;
    if (hdr + forkoff > x->isize)
        return xfs_no(x, "an inode's attribute fork leaves it");
    bool big = x->nrext64 && in[4] == 3 && (be_get64(in + 120) & 16u); /* DIFLAG2_NREXT64 */
    uint64_t dn = big ? be_get64(in + 24) : be_get32(in + 76);
    uint64_t an = big ? be_get32(in + 76) : be_get16(in + 80);
    size_t dsize = forkoff ? forkoff : x->isize - hdr;
    int rc = xfs_fork(x, in + hdr, dsize, in[5], dn, ino);
    if (rc == 1 && forkoff)
        rc = xfs_fork(x, in + hdr + forkoff, x->isize - hdr - forkoff, (int8_t)in[83], an, ino);
    return rc;
}

/* One inode btree record: its chunk referenced, its allocated inodes read. */
static int xfs_chunk(struct xfs *x, uint32_t agno, const uint8_t *r)
{
    uint32_t agino = be_get32(r);
    uint64_t freemask = be_get64(r + 8);
    uint32_t holes = x->sparse_inodes ? be_get16(r + 4) : 0;
    uint32_t ipb = 1u << x->inopblog;
    if ((agino >> x->inopblog) >= x->agblocks)
        return xfs_no(x, "an inode chunk lies outside its AG");
    size_t bytes = (size_t)64 * x->isize;
    uint8_t *c = malloc(bytes);
    if (c == NULL)
        return -1;
    int rc = 1;
    /* a sparse chunk's holes (16 bits, 4 inodes each) are not its blocks */
    for (uint32_t i = 0; i < 64 && rc == 1; i += ipb < 4 ? 4 : ipb) {
        uint32_t n = ipb < 4 ? 4 : ipb;
        uint32_t bits = n >= 64 ? 0xffffu : ((1u << (n / 4)) - 1) << (i / 4);
        if ((holes & bits) == bits)
            continue;
        if ((holes & bits) != 0) { /* holes come in whole inode clusters */
            rc = xfs_no(x, "a sparse inode chunk's holes split a block");
            break;
        }
        uint64_t agbno = (agino + i) >> x->inopblog;
        uint64_t at = xfs_agb(x, agno, (uint32_t)agbno);
        uint64_t len = (uint64_t)n * x->isize;
        if (agbno + (len + x->bs - 1) / x->bs > x->agblocks)
            rc = xfs_no(x, "an inode chunk lies outside its AG");
        else if (lay_used_ref(x->u, at - at % x->bs, ((len + x->bs - 1) / x->bs) * x->bs) != 0)
            rc = -1;
        else if (lay_dev_read(x->d, at + (uint64_t)((agino + i) % ipb) * x->isize,
                              c + (size_t)i * x->isize, (size_t)len) != 0)
            rc = xfs_no(x, "cannot read an inode chunk");
    }
    for (uint32_t i = 0; i < 64 && rc == 1; i++)
        if (!(holes >> (i / 4) & 1) && !(freemask >> i & 1))
            rc = xfs_inode(x, c + (size_t)i * x->isize,
                           (uint64_t)agno << (x->agblklog + x->inopblog) | (agino + i));
    free(c);
    return rc;
}

/* The inode btree at agbno, of the given level. */
static int xfs_inobt(struct xfs *x, uint32_t agno, uint32_t agbno, unsigned level,
                     uint64_t *prev)
{
    if (x->budget-- == 0 || agbno == 0 || agbno >= x->agblocks)
        return xfs_no(x, "the inode tree points outside its AG");
    uint64_t at = xfs_agb(x, agno, agbno);
    int rc = lay_used_ref(x->u, at, x->bs) == 0 ? 1 : -1;
    uint8_t *b = rc == 1 ? malloc(x->bs) : NULL;
    if (b == NULL)
        return -1;
    size_t hdr = x->v5 ? 56 : 16;
    rc = xfs_btblock(x, at, x->v5 ? XFS_IAB3 : XFS_IABT, level, false, agno, b,
                     "an inode tree block");
    uint32_t n = rc == 1 ? be_get16(b + 6) : 0;
    if (rc == 1 && level == 0) {
        if (n > (x->bs - hdr) / 16)
            rc = xfs_no(x, "an inode tree block is overfull");
        for (uint32_t i = 0; i < n && rc == 1; i++) {
            uint32_t ino = be_get32(b + hdr + 16 * i);
            if (*prev != UINT64_MAX && ino <= *prev)
                rc = xfs_no(x, "inode tree records out of order");
            *prev = ino;
            if (rc == 1)
                rc = xfs_chunk(x, agno, b + hdr + 16 * i);
        }
    } else if (rc == 1) {
        size_t maxrecs = (x->bs - hdr) / 8;
        if (n == 0 || n > maxrecs)
            rc = xfs_no(x, "an inode tree node holds a wrong number of keys");
        for (uint32_t i = 0; i < n && rc == 1; i++)
            rc = xfs_inobt(x, agno, be_get32(b + hdr + maxrecs * 4 + 4 * i), level - 1, prev);
    }
    free(b);
    return rc;
}

/* Every AG's inodes (its AGI roots the inode btree). */
static int xfs_files(struct xfs *x)
{
    uint8_t *agi = x->blk;
    for (uint32_t agno = 0; agno < x->agcount; agno++) {
        uint64_t off = xfs_agb(x, agno, 0);
        if (lay_dev_read(x->d, off + 2 * (uint64_t)x->ss, agi, x->ss) != 0 ||
            be_get32(agi) != 0x58414749u /* "XAGI" */ || be_get32(agi + 4) != 1 ||
            be_get32(agi + 8) != agno)
            return xfs_no(x, "an AG's inode header (AGI) is damaged");
        if (x->v5 && (memcmp(agi + 296, x->uuid, 16) != 0 || !xfs_crc_ok(agi, x->ss, 312)))
            return xfs_no(x, "an AG inode header's checksum is wrong");
        uint32_t root = be_get32(agi + 20), level = be_get32(agi + 24);
        if (level == 0 || level > XFS_MAX_LEVELS)
            return xfs_no(x, "an inode tree is deeper than XFS allows");
        x->budget = x->agblocks;
        uint64_t prev = UINT64_MAX;
        /* the AG's headers (superblock, AGF, AGI, AGFL) are in use too */
        if (lay_used_ref(x->u, off, 4 * (uint64_t)x->ss) != 0)
            return -1;
        int rc = xfs_inobt(x, agno, root, level - 1, &prev);
        if (rc != 1)
            return rc;
    }
    return 1;
}

int lay_xfs_used(struct lay_dev *d, struct lay_used *u, uint64_t *fs_len, char *why, size_t wn)
{
    struct xfs x = {.d = d, .why = why, .wn = wn};
    int rc = xfs_super(&x);
    if (rc == 1)
        rc = xfs_log_clean(&x);
    if (rc != 1)
        return rc;
    x.blk = malloc(x.bs > x.ss ? x.bs : x.ss);
    if (x.blk == NULL)
        return -1;
    uint64_t fd = 0;
    for (uint32_t ag = 0; ag < x.agcount && rc == 1; ag++)
        rc = xfs_ag(&x, ag, u, &fd);
    if (rc == 1 && fd != x.fdblocks)
        rc = xfs_no(&x, "its superblock's free-block count disagrees with its AGs'");
    /* the second reading: the blocks of every allocated inode, its chunk,
     * the inode trees and the AG headers, tested against the first */
    x.u = u;
    if (rc == 1 && lay_used_seal(u) != 0)
        rc = -1;
    if (rc == 1) {
        uint64_t sb_len = (uint64_t)x.ss;
        rc = lay_used_ref(u, 0, sb_len) == 0 ? xfs_files(&x) : -1;
        if (rc == 1) /* the internal log */
            rc = xfs_ref(&x, x.logstart, x.logblocks);
    }
    free(x.blk);
    if (rc == 1)
        *fs_len = x.dblocks * x.bs;
    return rc;
}
