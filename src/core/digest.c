/* digest.c — see digest.h and doc/FORMAT.md §2.3. */
#include "digest.h"
#include "le.h"

#include <openssl/evp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dg_leafer {
    EVP_MD_CTX *ctx;
};

struct dg {
    EVP_MD_CTX *leaf;        /* the partial block's hash, and one-offs */
    EVP_MD_CTX *group;       /* the open group: its leaves so far */
    EVP_MD_CTX *top;         /* the groups so far */
    uint8_t part[DG_BLOCK];  /* the content's last, partial block */
    size_t fill;             /* its bytes */
    unsigned leaves;         /* leaves in the open group */
    uint64_t length;
    uint8_t zleaf[DG_LEN];   /* SHA-256 of a zero block */
    uint8_t zgroup[DG_LEN];  /* of a group of DG_GROUP zero leaves */
};

/* SHA-256 of p[0..n) with ctx, into out. */
static int dg_sha(EVP_MD_CTX *ctx, const void *p, size_t n, uint8_t *out)
{
    unsigned len = 0;
    return EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 &&
                   EVP_DigestUpdate(ctx, p, n) == 1 &&
                   EVP_DigestFinal_ex(ctx, out, &len) == 1 && len == DG_LEN
               ? 0
               : -1;
}

struct dg_leafer *dg_leafer_new(void)
{
    struct dg_leafer *l = calloc(1, sizeof *l);
    if (l != NULL && (l->ctx = EVP_MD_CTX_new()) == NULL) {
        free(l);
        l = NULL;
    }
    return l;
}

void dg_leafer_free(struct dg_leafer *l)
{
    if (l == NULL)
        return;
    EVP_MD_CTX_free(l->ctx);
    free(l);
}

int dg_leaves(struct dg_leafer *l, const uint8_t *buf, size_t len, uint8_t *out)
{
    for (size_t i = 0; i + DG_BLOCK <= len; i += DG_BLOCK, out += DG_LEN)
        if (dg_sha(l->ctx, buf + i, DG_BLOCK, out) != 0)
            return -1;
    return 0;
}

static int dg_open_group(struct dg *d)
{
    return EVP_DigestInit_ex(d->group, EVP_sha256(), NULL) == 1 ? 0 : -1;
}

/* Close the open group (it holds at least one leaf) into the top hash. */
static int dg_close_group(struct dg *d)
{
    uint8_t g[DG_LEN];
    unsigned len = 0;
    if (EVP_DigestFinal_ex(d->group, g, &len) != 1 || len != DG_LEN ||
        EVP_DigestUpdate(d->top, g, DG_LEN) != 1)
        return -1;
    d->leaves = 0;
    return dg_open_group(d);
}

/* One more leaf. */
static int dg_leaf(struct dg *d, const uint8_t leaf[DG_LEN])
{
    if (EVP_DigestUpdate(d->group, leaf, DG_LEN) != 1)
        return -1;
    return ++d->leaves == DG_GROUP ? dg_close_group(d) : 0;
}

struct dg *dg_new(void)
{
    struct dg *d = calloc(1, sizeof *d);
    if (d == NULL)
        return NULL;
    d->leaf = EVP_MD_CTX_new();
    d->group = EVP_MD_CTX_new();
    d->top = EVP_MD_CTX_new();
    uint8_t *z = calloc(DG_GROUP, DG_LEN);
    bool ok = d->leaf != NULL && d->group != NULL && d->top != NULL && z != NULL &&
              dg_sha(d->leaf, d->part, DG_BLOCK, d->zleaf) == 0; /* part: zeros */
    for (size_t i = 0; ok && i < DG_GROUP; i++)
        memcpy(z + i * DG_LEN, d->zleaf, DG_LEN);
    ok = ok && dg_sha(d->leaf, z, (size_t)DG_GROUP * DG_LEN, d->zgroup) == 0 &&
         dg_open_group(d) == 0 && EVP_DigestInit_ex(d->top, EVP_sha256(), NULL) == 1;
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
    EVP_MD_CTX_free(d->leaf);
    EVP_MD_CTX_free(d->group);
    EVP_MD_CTX_free(d->top);
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
    return dg_sha(d->leaf, d->part, DG_BLOCK, leaf) == 0 ? dg_leaf(d, leaf) : -1;
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
    size_t whole = len / DG_BLOCK;
    for (size_t i = 0; i < whole; i++)
        if (dg_leaf(d, leaves + i * DG_LEN) != 0)
            return -1;
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
                if (EVP_DigestUpdate(d->top, d->zgroup, DG_LEN) != 1)
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
    unsigned len = 0;
    if (d->fill > 0 && (dg_sha(d->leaf, d->part, d->fill, leaf) != 0 || dg_leaf(d, leaf) != 0))
        return -1;
    d->fill = 0;
    if (d->leaves > 0 && dg_close_group(d) != 0)
        return -1;
    le_put64(len8, d->length);
    return EVP_DigestUpdate(d->top, len8, sizeof len8) == 1 &&
                   EVP_DigestFinal_ex(d->top, out, &len) == 1 && len == DG_LEN
               ? 0
               : -1;
}

char *dg_text(const uint8_t d[DG_LEN], char *b)
{
    int at = sprintf(b, "sha256-tree:");
    for (size_t i = 0; i < DG_LEN; i++)
        at += sprintf(b + at, "%02x", d[i]);
    return b;
}
