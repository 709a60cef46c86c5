/* lay_used.c — the readers' lists of used extents (lay_fs.h): bounded,
 * sorted and merged, and the second reading's test against the first
 * (lay_used_seal, lay_used_ref). */
#include "config.h"
#include "lay.h"
#include "lay_fs.h"

#include <stdlib.h>

/* Memory: a reader's extents are bounded by LAY_MAX_EXTENTS (64 MiB of
 * them), whatever the filesystem says: a bitmap alternating used and free
 * blocks on a large disk would otherwise ask for gigabytes.  At the bound
 * the list is coarsened: extents closer than a gap (64 KiB, doubled until
 * the list is at most half full) are joined, the space between them counted
 * used.  That only ever adds used bytes (never a free one), and depends
 * only on the reader's extents, so the output stays a function of the
 * input; real filesystems stay far below the bound. */
#define LAY_MAX_EXTENTS ((size_t)1 << 22)

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
    if (u->is_sealed) {
        u->sealed = u->n;
        u->coarsened_sealed = true; /* the disputes are in the map now */
    }
}

int lay_used_add(struct lay_used *u, uint64_t off, uint64_t len)
{
    if (len == 0)
        return 0;
    if (u->n == LAY_MAX_EXTENTS)
        lay_coarsen(u);
    if (sp_ranges_push(&u->e, &u->n, &u->cap, off, len) != 0) {
        u->oom = true;
        return -1;
    }
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
uint64_t lay_used_disputed(struct lay_used *u)
{
    if (!u->is_sealed || u->disputed == 0 || u->sealed > u->n || u->coarsened_sealed)
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
size_t lay_merge(struct sp_range *e, size_t n)
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


int lay_used_exclude(struct lay_used *u, uint64_t off, uint64_t len)
{
    if (len == 0)
        return 0;
    if (sp_ranges_push(&u->excl, &u->nexcl, &u->excl_cap, off, len) != 0) {
        u->oom = true;
        return -1;
    }
    return 0;
}

void lay_used_done(struct lay_used *u)
{
    free(u->e);
    free(u->excl);
    u->e = u->excl = NULL;
    u->n = u->nexcl = 0;
}
