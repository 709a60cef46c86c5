/* lay_clu.c — see lay_clu.h: claimed clusters, referenced runs, a table cache. */
#include "config.h"
#include "lay_clu.h"

#include <stdlib.h>
#include <string.h>

/* Whether any bit of [c, c + k) is set (claim false) or, set true, set them
 * all.  Byte by byte in the middle: a contiguous file of a million clusters
 * is a million bits. */
static bool lay_seen_scan(struct lay_seen *s, uint64_t c, uint64_t k, bool claim)
{
    uint64_t end = c + k;
    while (c < end && (c & 7) != 0) {
        if (claim)
            s->bits[c >> 3] |= (uint8_t)(1u << (c & 7));
        else if (s->bits[c >> 3] >> (c & 7) & 1)
            return true;
        c++;
    }
    uint64_t whole = (end - c) >> 3;
    if (claim) {
        memset(s->bits + (c >> 3), 0xFF, (size_t)whole);
    } else {
        for (uint64_t i = 0; i < whole; i++)
            if (s->bits[(c >> 3) + i] != 0)
                return true;
    }
    for (c += whole << 3; c < end; c++) {
        if (claim)
            s->bits[c >> 3] |= (uint8_t)(1u << (c & 7));
        else if (s->bits[c >> 3] >> (c & 7) & 1)
            return true;
    }
    return false;
}

bool lay_seen_claim(struct lay_seen *s, uint64_t c, uint64_t k)
{
    if (c > s->n || k > s->n - c || lay_seen_scan(s, c, k, false))
        return false;
    lay_seen_scan(s, c, k, true);
    return true;
}

int lay_run_flush(struct lay_used *u, struct lay_run *r)
{
    int rc = r->len > 0 ? lay_used_ref(u, r->off, r->len) : 0;
    r->len = 0;
    return rc;
}

int lay_run_ref(struct lay_used *u, struct lay_run *r, uint64_t off, uint64_t len)
{
    if (r->len > 0 && r->off + r->len == off) {
        r->len += len;
        return 0;
    }
    if (lay_run_flush(u, r) != 0)
        return -1;
    r->off = off;
    r->len = len;
    return 0;
}

int lay_cache_init(struct lay_cache *c, struct lay_dev *d, uint64_t base, uint64_t len)
{
    uint64_t need = len / LAY_SLOT + 1;
    c->d = d;
    c->base = base;
    c->len = len;
    c->nslots = need < LAY_CACHE_MAX / LAY_SLOT ? (size_t)need : LAY_CACHE_MAX / LAY_SLOT;
    c->data = malloc(c->nslots * LAY_SLOT);
    c->tag = calloc(c->nslots, sizeof *c->tag);
    if (c->data == NULL || c->tag == NULL) {
        lay_cache_free(c);
        return -1;
    }
    return 0;
}

void lay_cache_free(struct lay_cache *c)
{
    free(c->data);
    free(c->tag);
    c->data = NULL;
    c->tag = NULL;
    c->nslots = 0;
}

void lay_cache_put(struct lay_cache *c, uint64_t off, const uint8_t *buf, size_t n)
{
    uint64_t idx = off / LAY_SLOT;
    size_t s = (size_t)(idx % c->nslots);
    if (off % LAY_SLOT != 0 || off >= c->len || n > LAY_SLOT ||
        (n < LAY_SLOT && n != c->len - off))
        return;
    memcpy(c->data + s * LAY_SLOT, buf, n);
    c->tag[s] = idx + 1;
}

const uint8_t *lay_cache_get(struct lay_cache *c, uint64_t off, size_t n)
{
    if (off >= c->len || n > c->len - off || n > LAY_SLOT - off % LAY_SLOT)
        return NULL;
    uint64_t idx = off / LAY_SLOT;
    size_t s = (size_t)(idx % c->nslots);
    uint8_t *slot = c->data + s * LAY_SLOT;
    if (c->tag[s] != idx + 1) {
        uint64_t at = idx * LAY_SLOT;
        size_t got = c->len - at < LAY_SLOT ? (size_t)(c->len - at) : LAY_SLOT;
        c->tag[s] = 0;
        if (lay_dev_read(c->d, c->base + at, slot, got) != 0)
            return NULL;
        c->tag[s] = idx + 1;
    }
    return slot + off % LAY_SLOT;
}
