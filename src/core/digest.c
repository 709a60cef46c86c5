/* digest.c — see digest.h and doc/FORMAT.md §2.3.  XXH3-128 (libxxhash),
 * each hash in its canonical form (16 bytes, big-endian: as xxhsum -H2
 * prints it). */
#include "digest.h"
#include "le.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

struct dg {
    uint8_t group[DG_GROUP * DG_LEN]; /* the open group's leaves, hashed in
                                         one call when it closes (a 16-byte
                                         streaming update each cost more) */
    XXH3_state_t *top;       /* the groups so far */
    uint8_t part[DG_BLOCK];  /* the content's last, partial block */
    size_t fill;             /* its bytes */
    unsigned leaves;         /* leaves in the open group */
    uint64_t length;
    uint8_t zleaf[DG_LEN];   /* the hash of a zero block */
    uint8_t zgroup[DG_LEN];  /* of a group of DG_GROUP zero leaves */
};

/* XXH3-128 of p[0..n), canonical, into out. */
static void dg_hash(const void *p, size_t n, uint8_t out[DG_LEN])
{
    XXH128_canonicalFromHash((XXH128_canonical_t *)(void *)out, XXH3_128bits(p, n));
}

static void dg_state_out(XXH3_state_t *s, uint8_t out[DG_LEN]) /* the top's */
{
    XXH128_canonicalFromHash((XXH128_canonical_t *)(void *)out, XXH3_128bits_digest(s));
}

void dg_leaves(const uint8_t *buf, size_t len, uint8_t *out)
{
    for (size_t i = 0; i + DG_BLOCK <= len; i += DG_BLOCK, out += DG_LEN)
        dg_hash(buf + i, DG_BLOCK, out);
}

/* Close the open group (it holds at least one leaf) into the top hash. */
static int dg_close_group(struct dg *d)
{
    uint8_t g[DG_LEN];
    dg_hash(d->group, (size_t)d->leaves * DG_LEN, g);
    d->leaves = 0;
    return XXH3_128bits_update(d->top, g, DG_LEN) == XXH_OK ? 0 : -1;
}

/* One more leaf. */
static int dg_leaf(struct dg *d, const uint8_t leaf[DG_LEN])
{
    memcpy(d->group + (size_t)d->leaves * DG_LEN, leaf, DG_LEN);
    return ++d->leaves == DG_GROUP ? dg_close_group(d) : 0;
}

struct dg *dg_new(void)
{
    struct dg *d = calloc(1, sizeof *d);
    if (d == NULL)
        return NULL;
    d->top = XXH3_createState();
    uint8_t *z = calloc(DG_GROUP, DG_LEN);
    bool ok = d->top != NULL && z != NULL && XXH3_128bits_reset(d->top) == XXH_OK;
    if (ok) {
        dg_hash(d->part, DG_BLOCK, d->zleaf); /* part: zeros */
        for (size_t i = 0; i < DG_GROUP; i++)
            memcpy(z + i * DG_LEN, d->zleaf, DG_LEN);
        dg_hash(z, (size_t)DG_GROUP * DG_LEN, d->zgroup);
    }
    free(z);
    if (!ok) {
        dg_free(d);
        return NULL;
    }
    return d;
}

void dg_free(struct dg *d)
{
    if (d == NULL)
        return;
    XXH3_freeState(d->top);
    free(d);
}

uint64_t dg_length(const struct dg *d)
{
    return d->length;
}

/* Bytes into the partial block; a block filled becomes a leaf. */
static int dg_fill(struct dg *d, const uint8_t *p, size_t n)
{
    memcpy(d->part + d->fill, p, n);
    d->fill += n;
    if (d->fill < DG_BLOCK)
        return 0;
    uint8_t leaf[DG_LEN];
    d->fill = 0;
    dg_hash(d->part, DG_BLOCK, leaf);
    return dg_leaf(d, leaf);
}

int dg_add(struct dg *d, const uint8_t *buf, size_t len, const uint8_t *leaves)
{
    d->length += len;
    if (d->fill > 0 || leaves == NULL) {
        while (len > 0) {
            size_t k = DG_BLOCK - d->fill < len ? DG_BLOCK - d->fill : len;
            if (dg_fill(d, buf, k) != 0)
                return -1;
            buf += k;
            len -= k;
        }
        return 0;
    }
    for (size_t whole = len / DG_BLOCK; whole > 0;) { /* in runs up to the group's end */
        size_t k = DG_GROUP - d->leaves < whole ? DG_GROUP - d->leaves : whole;
        memcpy(d->group + (size_t)d->leaves * DG_LEN, leaves, k * DG_LEN);
        d->leaves += (unsigned)k;
        leaves += k * DG_LEN;
        whole -= k;
        if (d->leaves == DG_GROUP && dg_close_group(d) != 0)
            return -1;
    }
    size_t whole = len / DG_BLOCK;
    memcpy(d->part, buf + whole * DG_BLOCK, len % DG_BLOCK);
    d->fill = len % DG_BLOCK;
    return 0;
}

int dg_zeros(struct dg *d, uint64_t n)
{
    static const uint8_t zero[DG_BLOCK];
    d->length += n;
    if (d->fill > 0) {
        size_t k = DG_BLOCK - d->fill < n ? DG_BLOCK - d->fill : (size_t)n;
        if (dg_fill(d, zero, k) != 0)
            return -1;
        n -= k;
    }
    while (n >= DG_BLOCK) {
        if (d->leaves == 0 && n >= (uint64_t)DG_BLOCK * DG_GROUP) {
            uint64_t groups = n / ((uint64_t)DG_BLOCK * DG_GROUP);
            for (uint64_t g = 0; g < groups; g++)
                if (XXH3_128bits_update(d->top, d->zgroup, DG_LEN) != XXH_OK)
                    return -1;
            n -= groups * DG_BLOCK * DG_GROUP;
            continue;
        }
        if (dg_leaf(d, d->zleaf) != 0)
            return -1;
        n -= DG_BLOCK;
    }
    memset(d->part, 0, (size_t)n);
    d->fill = (size_t)n;
    return 0;
}

int dg_final(struct dg *d, uint8_t out[DG_LEN])
{
    uint8_t leaf[DG_LEN], len8[8];
    if (d->fill > 0) {
        dg_hash(d->part, d->fill, leaf);
        if (dg_leaf(d, leaf) != 0)
            return -1;
    }
    d->fill = 0;
    if (d->leaves > 0 && dg_close_group(d) != 0)
        return -1;
    le_put64(len8, d->length);
    if (XXH3_128bits_update(d->top, len8, sizeof len8) != XXH_OK)
        return -1;
    dg_state_out(d->top, out);
    return 0;
}

char *dg_text(const uint8_t d[DG_LEN], char *b)
{
    int at = sprintf(b, "xxh3-128-tree:");
    for (size_t i = 0; i < DG_LEN; i++)
        at += sprintf(b + at, "%02x", d[i]);
    return b;
}
