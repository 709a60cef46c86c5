/* lay_lvm.c — an LVM2 physical volume's used extents (lay_fs.h).
 *
 * Format: lvm2's on-disk label and metadata area (lib/format_text's
 * layout.h, documented in lvm2's doc and lvm(8)): in one of the PV's first
 * four sectors a label "LABELONE" (its sector number, a CRC of the rest of
 * it, the offset of the PV header, "LVM2 001"); the PV header (its UUID,
 * its size, the data area's offset: pe_start; the metadata areas); each
 * metadata area starts with a header (a CRC, a magic, its place and size,
 * then the location, size and CRC of the current metadata text in its
 * circular buffer).  The text (lay_cfg.h) lists the volume group's PVs
 * (pe_start, pe_count) and logical volumes, each a list of segments
 * mapping logical extents onto PVs' physical extents.  All integers are
 * little-endian; CRCs are lvm2's (CRC-32's polynomial, initial value
 * 0xf597a6cf, no final inversion).
 *
 * What is free (doc/DESIGN.md §12):
 *   - a physical extent no segment of any LV allocates;
 *   - inside an LV whose every segment is "striped" (linear is striped
 *     over one area) with all its areas on this PV, that is visible and
 *     that no other LV names (a snapshot's origin, a pool's data, a RAID
 *     image): what its filesystem calls free, read through the segment map
 *     (lay_vol_map());
 * everything else is used: the label, the metadata areas, the bytes
 * before pe_start and after the last extent, every other LV's extents
 * (thin pools, snapshots, RAID, mirrors, cache, pvmove: read whole, said).
 *
 * The whole PV is read whole (0) when any of this is in doubt: no label or
 * a bad CRC, no metadata area on it (the VG's metadata lives on another
 * PV), a damaged metadata copy, two copies whose texts differ, a
 * half-written change (a precommitted copy), a text that does not parse
 * or lacks a field, this PV missing from its own metadata, a PV larger
 * than its region, extents allocated twice or outside the PV, a segment
 * of another type laid directly on this PV.
 *
 * Bounds: the text at most LVM_TEXT_MAX bytes, at most LVM_MAX_LVS LVs,
 * LVM_MAX_SEGS segments in all, 128 stripes a segment (lvm2's own bound).
 */
#include "config.h"
#include "lay_fs.h"
#include "lay_cfg.h"
#include "le.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define LVM_SECTOR 512
#define LVM_TEXT_MAX ((uint64_t)64 << 20)
#define LVM_MAX_LVS 4096
#define LVM_MAX_SEGS 65536
#define LVM_MAX_STRIPES 128
#define LVM_MAX_MDAS 8

static const char LVM_MDA_MAGIC[16] = " LVM2 x[5A%r0N*>";

/* lvm2's CRC: CRC-32's table, the given initial value, no final xor;
 * zlib's crc32() inverts before and after, so invert around it. */
static uint32_t lvm_crc(const void *p, size_t n, uint32_t init)
{
    return (uint32_t)crc32(init ^ 0xffffffffu, p, (uInt)n) ^ 0xffffffffu;
}
#define LVM_CRC_INIT 0xf597a6cfu

struct lvm_pv {
    char uuid[33];
    uint64_t dev_size;           /* the header's, bytes */
    uint64_t da_off;             /* the first data area: pe_start in bytes */
    uint64_t mda[LVM_MAX_MDAS][2]; /* offset, size */
    size_t nmda;
};

/* One segment: logical extents [start, start + count) over nareas areas
 * (stripes) of count / nareas extents each, interleaved by stripe bytes. */
struct lvm_seg {
    uint64_t start, count;
    uint64_t stripe;  /* bytes; 0 for one area */
    size_t area0;     /* its areas: pe[area0, area0 + nareas) */
    unsigned nareas;
};

struct lvm_lv {
    const char *name;
    size_t node;
    size_t seg0, nsegs; /* in the segment list, sorted by start */
    uint64_t extents;
    bool on_pv;          /* some area of it lies on this PV */
    const char *whole;   /* why it is not read apart, or NULL */
};

struct lvm_vg {
    struct lay_cfg t;
    size_t vg;            /* its section */
    const char *vgname, *pvname;
    uint64_t ext;         /* extent size, bytes */
    uint64_t pe_start, pe_count;
    struct lvm_lv *lv;
    size_t nlv;
    struct lvm_seg *seg;
    size_t nseg, segcap;
    uint64_t *pe;         /* first physical extent of each area on this PV,
                             UINT64_MAX for an area elsewhere */
    size_t npe, pecap;
};

/* ---- the label and the PV header ---- */

static int lvm_label(struct lay_dev *d, struct lvm_pv *pv, char *why, size_t wn)
{
    uint8_t s[4 * LVM_SECTOR];
    if (lay_dev_read(d, 0, s, sizeof s) != 0) {
        snprintf(why, wn, "cannot read its LVM label");
        return 0;
    }
    const uint8_t *l = NULL;
    for (unsigned i = 0; i < 4 && l == NULL; i++)
        if (memcmp(s + i * LVM_SECTOR, "LABELONE", 8) == 0 && le_get64(s + i * LVM_SECTOR + 8) == i)
            l = s + i * LVM_SECTOR;
    if (l == NULL || memcmp(l + 24, "LVM2 001", 8) != 0 ||
        lvm_crc(l + 20, LVM_SECTOR - 20, LVM_CRC_INIT) != le_get32(l + 16)) {
        snprintf(why, wn, "its LVM label is damaged (no LABELONE with a good CRC)");
        return 0;
    }
    uint32_t at = le_get32(l + 20);
    if (at < 32 || at > LVM_SECTOR - 72) {
        snprintf(why, wn, "its LVM label points outside itself");
        return 0;
    }
    const uint8_t *h = l + at, *end = l + LVM_SECTOR;
    memcpy(pv->uuid, h, 32);
    pv->uuid[32] = '\0';
    pv->dev_size = le_get64(h + 32);
    const uint8_t *q = h + 40;
    /* data areas, then metadata areas, each list ending with a zero entry */
    size_t nda = 0;
    for (; q + 16 <= end && le_get64(q) != 0; q += 16)
        if (nda++ == 0)
            pv->da_off = le_get64(q);
    q += 16;
    for (; q + 16 <= end && le_get64(q) != 0; q += 16) {
        if (pv->nmda == LVM_MAX_MDAS)
            break;
        pv->mda[pv->nmda][0] = le_get64(q);
        pv->mda[pv->nmda++][1] = le_get64(q + 8);
    }
    if (q + 16 > end || nda != 1) {
        snprintf(why, wn, nda != 1 ? "its LVM header lists %zu data areas, not one"
                                   : "its LVM header's lists do not end", nda);
        return 0;
    }
    return 1;
}

/* ---- the metadata areas ---- */

/* The current text of metadata area k into *text (malloc'd), its length.
 * 1, 0 skipped (an ignored area), or -1 damaged (why set); -2 out of memory. */
static int lvm_mda_text(struct lay_dev *d, const struct lvm_pv *pv, size_t k, char **text,
                        size_t *len, char *why, size_t wn)
{
    uint64_t off = pv->mda[k][0], size = pv->mda[k][1];
    uint8_t h[LVM_SECTOR];
    if (size <= LVM_SECTOR || lay_dev_read(d, off, h, sizeof h) != 0 ||
        memcmp(h + 4, LVM_MDA_MAGIC, 16) != 0 || le_get32(h + 20) != 1 || le_get64(h + 24) != off ||
        le_get64(h + 32) != size || lvm_crc(h + 4, LVM_SECTOR - 4, LVM_CRC_INIT) != le_get32(h)) {
        snprintf(why, wn, "its LVM metadata area %zu is damaged", k + 1);
        return -1;
    }
    uint64_t to = le_get64(h + 40), tn = le_get64(h + 48);
    uint32_t tcrc = le_get32(h + 56), flags = le_get32(h + 60);
    if (flags & 1)
        return 0; /* RAW_LOCN_IGNORED: lvm2 keeps no metadata there */
    if (le_get64(h + 64) != 0) {
        snprintf(why, wn, "a metadata change was in progress (a precommitted copy)");
        return -1;
    }
    if (to < LVM_SECTOR || to >= size || tn == 0 || tn > size - LVM_SECTOR || tn > LVM_TEXT_MAX) {
        snprintf(why, wn, "its LVM metadata area %zu points outside itself", k + 1);
        return -1;
    }
    char *t = malloc((size_t)tn);
    if (t == NULL)
        return -2;
    /* a circular buffer: the text may wrap to just after the header */
    uint64_t first = tn < size - to ? tn : size - to;
    if (lay_dev_read(d, off + to, t, (size_t)first) != 0 ||
        (first < tn && lay_dev_read(d, off + LVM_SECTOR, t + first, (size_t)(tn - first)) != 0) ||
        lvm_crc(t, (size_t)tn, LVM_CRC_INIT) != tcrc) {
        free(t);
        snprintf(why, wn, "its LVM metadata text %zu is damaged (CRC)", k + 1);
        return -1;
    }
    *text = t;
    *len = (size_t)tn;
    return 1;
}

/* The one metadata text every area on the PV agrees on.  1, 0 (why set),
 * -1 out of memory. */
static int lvm_metadata(struct lay_dev *d, const struct lvm_pv *pv, char **text, size_t *len,
                        char *why, size_t wn)
{
    *text = NULL;
    *len = 0;
    for (size_t k = 0; k < pv->nmda; k++) {
        char *t;
        size_t n;
        int rc = lvm_mda_text(d, pv, k, &t, &n, why, wn);
        if (rc == -2) {
            free(*text);
            return -1;
        }
        if (rc == -1) {
            free(*text);
            return 0;
        }
        if (rc == 0)
            continue;
        if (*text != NULL && (n != *len || memcmp(t, *text, n) != 0)) {
            free(t);
            free(*text);
            snprintf(why, wn, "its two LVM metadata copies differ");
            return 0;
        }
        if (*text == NULL) {
            *text = t;
            *len = n;
        } else {
            free(t);
        }
    }
    if (*text == NULL) {
        snprintf(why, wn, "no LVM metadata on this PV (its volume group's lies on another)");
        return 0;
    }
    return 1;
}

/* ---- the volume group ---- */

static int lvm_uint(const struct lay_cfg *t, size_t s, const char *name, uint64_t max,
                    uint64_t *v)
{
    int64_t x;
    if (lay_cfg_int(t, s, name, &x) != 0 || x < 0 || (uint64_t)x > max)
        return -1;
    *v = (uint64_t)x;
    return 0;
}

/* The physical_volumes entry whose id (dashes dropped) is uuid: its name. */
static size_t lvm_find_pv(const struct lay_cfg *t, size_t pvs, const char *uuid)
{
    for (size_t k = t->n[pvs].child; k != 0; k = t->n[k].next) {
        const char *id = t->n[k].kind == LAY_CFG_SECTION ? lay_cfg_str(t, k, "id") : NULL;
        if (id == NULL)
            continue;
        char flat[40];
        size_t n = 0;
        for (; *id != '\0' && n < sizeof flat - 1; id++)
            if (*id != '-')
                flat[n++] = *id;
        flat[n] = '\0';
        if (strcmp(flat, uuid) == 0)
            return k;
    }
    return 0;
}

static bool lvm_is_pv(const struct lvm_vg *g, const char *name)
{
    size_t pvs = lay_cfg_get(&g->t, g->vg, "physical_volumes");
    return pvs != 0 && lay_cfg_get(&g->t, pvs, name) != 0 &&
           g->t.n[lay_cfg_get(&g->t, pvs, name)].kind == LAY_CFG_SECTION;
}

/* Whether any value of section s (its settings, lists, subsections) is the
 * string v. */
static bool lvm_names(const struct lay_cfg *t, size_t s, const char *v, unsigned depth)
{
    for (size_t k = t->n[s].child; k != 0 && depth < LAY_CFG_DEPTH; k = t->n[k].next) {
        const struct lay_cfg_node *n = &t->n[k];
        if (n->kind == LAY_CFG_STR && strcmp(n->str, v) == 0)
            return true;
        if ((n->kind == LAY_CFG_SECTION || n->kind == LAY_CFG_LIST) && lvm_names(t, k, v, depth + 1))
            return true;
    }
    return false;
}

/* One "striped" segment's areas: each (name, first extent) pair.  0, or
 * -1 with why (a malformed list: the PV is in doubt), -2 out of memory.
 * An area on another PV or on an LV makes the LV not read apart. */
static int lvm_areas(struct lvm_vg *g, struct lvm_lv *lv, size_t sn, struct lvm_seg *sg,
                     char *why, size_t wn)
{
    const struct lay_cfg *t = &g->t;
    uint64_t k;
    if (lvm_uint(t, sn, "stripe_count", LVM_MAX_STRIPES, &k) != 0 || k == 0 ||
        sg->count % k != 0) {
        snprintf(why, wn, "LV %s: a striped segment without a sound stripe_count", lv->name);
        return -1;
    }
    if (k > 1 && (lvm_uint(t, sn, "stripe_size", UINT32_MAX, &sg->stripe) != 0 ||
                  sg->stripe == 0 || (sg->stripe & (sg->stripe - 1)) != 0 ||
                  g->ext % (sg->stripe * LVM_SECTOR) != 0)) {
        snprintf(why, wn, "LV %s: a striped segment without a sound stripe_size", lv->name);
        return -1;
    }
    sg->stripe *= LVM_SECTOR;
    size_t list = lay_cfg_get(t, sn, "stripes");
    size_t e = list != 0 && t->n[list].kind == LAY_CFG_LIST ? t->n[list].child : 0;
    sg->area0 = g->npe;
    for (unsigned i = 0; i < k; i++) {
        size_t e2 = e != 0 ? t->n[e].next : 0;
        if (e == 0 || e2 == 0 || t->n[e].kind != LAY_CFG_STR || t->n[e2].kind != LAY_CFG_INT ||
            t->n[e2].num < 0) {
            snprintf(why, wn, "LV %s: a striped segment's stripes list is malformed", lv->name);
            return -1;
        }
        uint64_t pe = UINT64_MAX;
        if (strcmp(t->n[e].str, g->pvname) == 0) {
            pe = (uint64_t)t->n[e2].num;
            lv->on_pv = true;
        } else if (lv->whole == NULL) {
            lv->whole = lvm_is_pv(g, t->n[e].str) ? "it spans another PV"
                                                  : "a segment lies on another LV (pvmove?)";
        }
        if (g->npe == g->pecap) {
            size_t cap = g->pecap ? g->pecap * 2 : 64;
            uint64_t *p = realloc(g->pe, cap * sizeof *p);
            if (p == NULL)
                return -2;
            g->pe = p;
            g->pecap = cap;
        }
        g->pe[g->npe++] = pe;
        e = t->n[e2].next;
    }
    if (e != 0) {
        snprintf(why, wn, "LV %s: a striped segment lists more stripes than stripe_count",
                 lv->name);
        return -1;
    }
    sg->nareas = (unsigned)k;
    return 0;
}

static int lvm_seg_cmp(const void *a, const void *b)
{
    const struct lvm_seg *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* One LV's segments, sorted, tiling [0, extents).  0, -1 (why), -2 OOM. */
static int lvm_lv(struct lvm_vg *g, struct lvm_lv *lv, char *why, size_t wn)
{
    const struct lay_cfg *t = &g->t;
    uint64_t want;
    if (lvm_uint(t, lv->node, "segment_count", LVM_MAX_SEGS, &want) != 0) {
        snprintf(why, wn, "LV %s has no segment_count", lv->name);
        return -1;
    }
    lv->seg0 = g->nseg;
    for (size_t sn = t->n[lv->node].child; sn != 0; sn = t->n[sn].next) {
        if (t->n[sn].kind != LAY_CFG_SECTION || strncmp(t->n[sn].name, "segment", 7) != 0)
            continue;
        if (g->nseg == LVM_MAX_SEGS) {
            snprintf(why, wn, "more than %d LV segments", LVM_MAX_SEGS);
            return -1;
        }
        if (g->nseg == g->segcap) {
            size_t cap = g->segcap ? g->segcap * 2 : 64;
            struct lvm_seg *s = realloc(g->seg, cap * sizeof *s);
            if (s == NULL)
                return -2;
            g->seg = s;
            g->segcap = cap;
        }
        struct lvm_seg *sg = &g->seg[g->nseg];
        *sg = (struct lvm_seg){0};
        const char *type = lay_cfg_str(t, sn, "type");
        if (lvm_uint(t, sn, "start_extent", UINT32_MAX, &sg->start) != 0 ||
            lvm_uint(t, sn, "extent_count", UINT32_MAX, &sg->count) != 0 || sg->count == 0 ||
            type == NULL) {
            snprintf(why, wn, "LV %s: a segment lacks its extents or type", lv->name);
            return -1;
        }
        if (strcmp(type, "striped") == 0) {
            int rc = lvm_areas(g, lv, sn, sg, why, wn);
            if (rc != 0)
                return rc;
        } else {
            /* another type lays its areas on LVs (a RAID's images, a
             * pool's data); on this PV itself (pvmove's mirror) its extents
             * are not known here: the PV is in doubt */
            if (lvm_names(t, sn, g->pvname, 0)) {
                snprintf(why, wn, "LV %s: a %s segment lies directly on this PV", lv->name, type);
                return -1;
            }
            if (lv->whole == NULL)
                lv->whole = "not a plain LV (thin, snapshot, RAID, mirror, cache or another "
                            "kind): read whole";
        }
        g->nseg++;
    }
    lv->nsegs = g->nseg - lv->seg0;
    if (lv->nsegs != want || lv->nsegs == 0) {
        snprintf(why, wn, "LV %s: segment_count says %llu, %zu found", lv->name,
                 (unsigned long long)want, lv->nsegs);
        return -1;
    }
    /* out of order in the text is legal; a gap or an overlap is not */
    qsort(&g->seg[lv->seg0], lv->nsegs, sizeof *g->seg, lvm_seg_cmp);
    for (size_t i = 0; i < lv->nsegs; i++) {
        if (g->seg[lv->seg0 + i].start != lv->extents) {
            snprintf(why, wn, "LV %s: its segments leave a gap or overlap", lv->name);
            return -1;
        }
        lv->extents += g->seg[lv->seg0 + i].count;
    }
    return 0;
}

/* Parse the VG: 1, 0 (why), -1 out of memory. */
static int lvm_vg(struct lvm_vg *g, const struct lvm_pv *pv, uint64_t region, char *why,
                  size_t wn)
{
    const struct lay_cfg *t = &g->t;
    const char *c = lay_cfg_str(t, 0, "contents");
    int64_t ver;
    if (c == NULL || strcmp(c, "Text Format Volume Group") != 0 ||
        lay_cfg_int(t, 0, "version", &ver) != 0 || ver != 1) {
        snprintf(why, wn, "its LVM metadata is not version 1 of the text format");
        return 0;
    }
    for (size_t k = t->n[0].child; k != 0; k = t->n[k].next)
        if (t->n[k].kind == LAY_CFG_SECTION) {
            if (g->vg != 0) {
                snprintf(why, wn, "its LVM metadata holds two volume groups");
                return 0;
            }
            g->vg = k;
        }
    size_t pvs = g->vg ? lay_cfg_get(t, g->vg, "physical_volumes") : 0;
    size_t me = pvs ? lvm_find_pv(t, pvs, pv->uuid) : 0;
    uint64_t ext, pe_start, dev_size;
    if (me == 0 || lvm_uint(t, g->vg, "extent_size", UINT32_MAX, &ext) != 0 || ext == 0 ||
        lvm_uint(t, me, "pe_start", UINT64_MAX / LVM_SECTOR, &pe_start) != 0 ||
        lvm_uint(t, me, "pe_count", UINT32_MAX, &g->pe_count) != 0 ||
        lvm_uint(t, me, "dev_size", UINT64_MAX / LVM_SECTOR, &dev_size) != 0) {
        snprintf(why, wn, me == 0 ? "this PV is not in its own LVM metadata"
                                  : "its LVM metadata lacks the extent size or this PV's extents");
        return 0;
    }
    g->vgname = t->n[g->vg].name;
    g->pvname = t->n[me].name;
    g->ext = ext * LVM_SECTOR;
    g->pe_start = pe_start * LVM_SECTOR;
    if (g->pe_start != pv->da_off) {
        snprintf(why, wn, "its LVM metadata and header disagree on where the extents start");
        return 0;
    }
    /* by division: pe_count * ext could pass 2^64 (both come from the text) */
    if (dev_size > region / LVM_SECTOR || pv->dev_size > region || g->pe_start > region ||
        g->pe_count > (region - g->pe_start) / g->ext) {
        snprintf(why, wn, "the PV is larger than its partition");
        return 0;
    }
    size_t lvs = lay_cfg_get(t, g->vg, "logical_volumes");
    for (size_t k = lvs ? t->n[lvs].child : 0; k != 0; k = t->n[k].next) {
        if (t->n[k].kind != LAY_CFG_SECTION)
            continue;
        if (g->nlv == LVM_MAX_LVS) {
            snprintf(why, wn, "more than %d LVs", LVM_MAX_LVS);
            return 0;
        }
        if (g->nlv % 64 == 0) {
            struct lvm_lv *l = realloc(g->lv, (g->nlv + 64) * sizeof *l);
            if (l == NULL)
                return -1;
            g->lv = l;
        }
        struct lvm_lv *lv = &g->lv[g->nlv++];
        *lv = (struct lvm_lv){.name = t->n[k].name, .node = k};
        int rc = lvm_lv(g, lv, why, wn);
        if (rc != 0)
            return rc == -2 ? -1 : 0;
    }
    return 1;
}

/* Whether a segment of the LV at node lv names v (an origin, a COW store,
 * a pool's data or metadata, a RAID image, a stripe on an LV): its segment
 * sections only, so an LV named like a status flag or a host is no match. */
static bool lvm_segs_name(const struct lay_cfg *t, size_t lv, const char *v)
{
    for (size_t k = t->n[lv].child; k != 0; k = t->n[k].next)
        if (t->n[k].kind == LAY_CFG_SECTION && strncmp(t->n[k].name, "segment", 7) == 0 &&
            lvm_names(t, k, v, 0))
            return true;
    return false;
}

/* What makes an LV not read apart, beyond its segments' own reasons. */
static void lvm_whole_why(struct lvm_vg *g)
{
    const struct lay_cfg *t = &g->t;
    for (size_t i = 0; i < g->nlv; i++) {
        struct lvm_lv *lv = &g->lv[i];
        if (lv->whole != NULL)
            continue;
        if (!lay_cfg_has(t, lv->node, "status", "VISIBLE"))
            lv->whole = "a hidden LV (part of another: a pool's, a RAID's, a snapshot's)";
        else if (lay_cfg_has(t, lv->node, "status", "PVMOVE") ||
                 lay_cfg_has(t, lv->node, "status", "LOCKED"))
            lv->whole = "being moved (pvmove)";
        for (size_t j = 0; j < g->nlv && lv->whole == NULL; j++)
            if (j != i && lvm_segs_name(t, g->lv[j].node, lv->name))
                lv->whole = "another LV uses it (a snapshot's origin or store, a pool's part)";
    }
}

/* ---- the allocation ---- */

static int lvm_range_cmp(const void *a, const void *b)
{
    const struct sp_range *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Every extent run on this PV, as bytes of the region; disjoint and inside
 * the extents, else 0 (why). */
static int lvm_runs(const struct lvm_vg *g, struct lay_used *runs, char *why, size_t wn)
{
    for (size_t s = 0; s < g->nseg; s++) {
        const struct lvm_seg *sg = &g->seg[s];
        uint64_t per = sg->count / (sg->nareas ? sg->nareas : 1);
        for (unsigned a = 0; a < sg->nareas; a++) {
            uint64_t pe = g->pe[sg->area0 + a];
            if (pe == UINT64_MAX)
                continue;
            if (pe > g->pe_count || per > g->pe_count - pe) {
                snprintf(why, wn, "an LV's extents leave the PV");
                return 0;
            }
            if (lay_used_add(runs, g->pe_start + pe * g->ext, per * g->ext) != 0)
                return -1;
        }
    }
    /* overlaps: merging would hide them, so sort and compare first */
    qsort(runs->e, runs->n, sizeof *runs->e, lvm_range_cmp);
    for (size_t i = 1; i < runs->n; i++)
        if (runs->e[i].off < runs->e[i - 1].off + runs->e[i - 1].len) {
            snprintf(why, wn, "two LVs claim the same physical extents");
            return 0;
        }
    return 1;
}

/* ---- an LV read through its segments ---- */

struct lvm_map {
    struct lay_dev *pv;
    const struct lvm_vg *g;
    const struct lvm_lv *lv;
};

/* Where the LV's byte off lies in the region, and how many bytes from it
 * lie there contiguously.  off < the LV's size. */
static void lvm_phys(const struct lvm_map *m, uint64_t off, uint64_t *phys, uint64_t *run)
{
    const struct lvm_seg *s = &m->g->seg[m->lv->seg0];
    size_t lo = 0, hi = m->lv->nsegs;
    while (hi - lo > 1) { /* the last segment starting at or before off */
        size_t mid = (lo + hi) / 2;
        if (s[mid].start * m->g->ext <= off)
            lo = mid;
        else
            hi = mid;
    }
    s += lo;
    uint64_t rel = off - s->start * m->g->ext;
    if (s->nareas == 1) {
        *phys = m->g->pe_start + m->g->pe[s->area0] * m->g->ext + rel;
        *run = s->count * m->g->ext - rel;
        return;
    }
    uint64_t chunk = rel / s->stripe, within = rel % s->stripe;
    uint64_t area = m->g->pe[s->area0 + chunk % s->nareas];
    *phys = m->g->pe_start + area * m->g->ext + chunk / s->nareas * s->stripe + within;
    *run = s->stripe - within;
}

static int lvm_read(void *ctx, void *buf, size_t n, uint64_t off)
{
    const struct lvm_map *m = ctx;
    while (n > 0) {
        uint64_t phys, run;
        lvm_phys(m, off, &phys, &run);
        size_t k = run < n ? (size_t)run : n;
        if (lay_dev_read(m->pv, phys, buf, k) != 0)
            return -1;
        buf = (char *)buf + k;
        off += k;
        n -= k;
    }
    return 0;
}

/* [off, off + len) of the LV, used: its pieces in the region. */
static int lvm_used_lv(const struct lvm_map *m, struct lay_used *u, uint64_t off, uint64_t len)
{
    while (len > 0) {
        uint64_t phys, run;
        lvm_phys(m, off, &phys, &run);
        uint64_t k = run < len ? run : len;
        if (lay_used_add(u, phys, k) != 0)
            return -1;
        off += k;
        len -= k;
    }
    return 0;
}

/* One LV on this PV: mapped through its segments, or read whole.  0, -1. */
static int lvm_map_lv(struct lay_dev *d, const struct lvm_vg *g, const struct lvm_lv *lv,
                      struct lay_used *u)
{
    struct lvm_map m = {.pv = d, .g = g, .lv = lv};
    uint64_t size = lv->extents * g->ext;
    struct lay_dev vd = {.fd = d->fd, .len = size, .readfn = lvm_read, .ctx = &m};
    char name[128];
    snprintf(name, sizeof name, "%s/%s", g->vgname, lv->name);
    uint64_t phys, run;
    lvm_phys(&m, 0, &phys, &run);
    bool one = run >= size; /* one stretch of the region: probed in place */
    struct lay_used lu = {0};
    uint64_t fs_len = 0;
    int rc = lay_vol_map(d, &vd, one ? phys : UINT64_MAX, name, lv->whole, &lu, &fs_len);
    if (rc == 1) {
        lu.n = lay_merge(lu.e, lu.n);
        for (size_t i = 0; i < lu.n && rc == 1; i++) {
            uint64_t end = lu.e[i].off + lu.e[i].len;
            if (lu.e[i].off < fs_len &&
                lvm_used_lv(&m, u, lu.e[i].off, (end < fs_len ? end : fs_len) - lu.e[i].off) != 0)
                rc = -1;
        }
        if (rc == 1 && fs_len < size && lvm_used_lv(&m, u, fs_len, size - fs_len) != 0)
            rc = -1;
    } else if (rc == 0 && lvm_used_lv(&m, u, 0, size) != 0) {
        rc = -1;
    }
    lay_used_done(&lu);
    return rc < 0 ? -1 : 0;
}

/* An LV with some areas on this PV and others elsewhere: its areas here. */
static int lvm_used_areas(const struct lvm_vg *g, const struct lvm_lv *lv, struct lay_used *u)
{
    for (size_t s = lv->seg0; s < lv->seg0 + lv->nsegs; s++) {
        const struct lvm_seg *sg = &g->seg[s];
        for (unsigned a = 0; a < sg->nareas; a++)
            if (g->pe[sg->area0 + a] != UINT64_MAX &&
                lay_used_add(u, g->pe_start + g->pe[sg->area0 + a] * g->ext,
                             sg->count / sg->nareas * g->ext) != 0)
                return -1;
    }
    return 0;
}

static int lvm_map(struct lay_dev *d, struct lvm_vg *g, struct lay_used *u, char *why, size_t wn)
{
    struct lay_used runs = {0};
    int rc = lvm_runs(g, &runs, why, wn);
    lay_used_done(&runs);
    if (rc != 1)
        return rc;
    lvm_whole_why(g);
    /* the label, the metadata areas, the bytes before the first extent
     * and after the last: data */
    uint64_t pe_end = g->pe_start + g->pe_count * g->ext;
    if (lay_used_add(u, 0, g->pe_start) != 0 || lay_used_add(u, pe_end, d->len - pe_end) != 0)
        return -1;
    for (size_t i = 0; i < g->nlv; i++) {
        const struct lvm_lv *lv = &g->lv[i];
        if (!lv->on_pv)
            continue;
        bool all_here = true;
        for (size_t s = lv->seg0; s < lv->seg0 + lv->nsegs; s++)
            for (unsigned a = 0; a < g->seg[s].nareas; a++)
                all_here &= g->pe[g->seg[s].area0 + a] != UINT64_MAX;
        bool plain = true;
        for (size_t s = lv->seg0; s < lv->seg0 + lv->nsegs; s++)
            plain &= g->seg[s].nareas > 0;
        int r = all_here && plain ? lvm_map_lv(d, g, lv, u) : lvm_used_areas(g, lv, u);
        if (r != 0)
            return -1;
    }
    return 1;
}

int lay_lvm_used(struct lay_dev *d, struct lay_used *u, uint64_t *fs_len, char *why, size_t wn)
{
    struct lvm_pv pv = {0};
    if (!lvm_label(d, &pv, why, wn))
        return 0;
    for (size_t k = 0; k < pv.nmda; k++)
        if (pv.mda[k][0] >= d->len || pv.mda[k][1] > d->len - pv.mda[k][0]) {
            snprintf(why, wn, "the PV is larger than its partition (a metadata area lies past it)");
            return 0;
        }
    char *text;
    size_t len;
    int rc = lvm_metadata(d, &pv, &text, &len, why, wn);
    if (rc != 1)
        return rc;
    struct lvm_vg g = {0};
    int oom;
    char perr[96];
    if (lay_cfg_parse(text, len, &g.t, &oom, perr, sizeof perr) != 0) {
        free(text);
        if (oom)
            return -1;
        snprintf(why, wn, "its LVM metadata does not parse (%s)", perr);
        return 0;
    }
    free(text);
    rc = lvm_vg(&g, &pv, d->len, why, wn);
    if (rc == 1) {
        /* the metadata areas lie outside the extents */
        for (size_t k = 0; k < pv.nmda && rc == 1; k++)
            if (pv.mda[k][0] < g.pe_start + g.pe_count * g.ext &&
                pv.mda[k][0] + pv.mda[k][1] > g.pe_start) {
                snprintf(why, wn, "an LVM metadata area overlaps the extents");
                rc = 0;
            }
    }
    if (rc == 1)
        rc = lvm_map(d, &g, u, why, wn);
    free(g.lv);
    free(g.seg);
    free(g.pe);
    lay_cfg_free(&g.t);
    if (rc == 1)
        *fs_len = d->len;
    return rc;
}
