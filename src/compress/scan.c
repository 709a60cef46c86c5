/* scan.c — see scan.h for the chunking rules. */
#include "scan.h"

#include <assert.h>
#include <string.h>

void seg_init(struct seg *s, size_t chunk, uint64_t zmin, uint64_t zmax,
              const struct seg_sink *sink)
{
    memset(s, 0, sizeof *s);
    s->chunk = chunk;
    s->zmin = zmin;
    s->zmax = zmax;
    s->sink = *sink;
}

void seg_rsyncable(struct seg *s, struct seg_rsync *rs)
{
    /* splitmix64 from a fixed seed: the table is part of the output format's
     * determinism and must never change */
    uint64_t x = 0x73706967797a5253ull; /* "spigyzRS" */
    for (int i = 0; i < 256; i++) {
        uint64_t z = (x += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        rs->gear[i] = z ^ (z >> 31);
    }
    rs->hash = 0;
    /* chunk/4 past the minimum on average: 1 MiB chunks average ~512 KiB and
     * reach the maximum in e^-3 (5%) of cases */
    rs->bits = 0;
    while (((size_t)2 << rs->bits) <= s->chunk / 4)
        rs->bits++;
    s->rs = rs;
}

/* How many of p[0..n) (NULL: zeros) go in the chunk being filled: up to
 * and including a content-defined end (*cut), or all n. */
static size_t seg_rs_take(struct seg *s, const uint8_t *p, size_t n, bool *cut)
{
    struct seg_rsync *rs = s->rs;
    size_t min = s->chunk / 4;
    uint64_t h = rs->hash, g0 = rs->gear[0];
    unsigned shift = 64 - rs->bits;
    *cut = false;
    for (size_t i = 0; i < n; i++) {
        h = (h << 1) + (p != NULL ? rs->gear[p[i]] : g0);
        if (s->fill + i + 1 >= min && (h >> shift) == 0) {
            *cut = true;
            return i + 1;
        }
    }
    rs->hash = h;
    return n;
}

static int seg_flush_chunk(struct seg *s)
{
    if (s->rs != NULL)
        s->rs->hash = 0;
    if (s->fill == 0)
        return 0;
    uint8_t *buf = s->buf;
    size_t len = s->fill;
    s->buf = NULL;
    s->fill = 0;
    return s->sink.data(s->sink.ctx, buf, len);
}

/* Append n bytes of data (p == NULL: zeros) to chunks, cutting at `chunk`. */
static int seg_append(struct seg *s, const uint8_t *p, size_t n)
{
    while (n > 0) {
        if (s->buf == NULL && (s->buf = s->sink.get(s->sink.ctx)) == NULL)
            return -1;
        size_t take = s->chunk - s->fill;
        if (take > n)
            take = n;
        bool cut = false;
        if (s->rs != NULL && !s->blank)
            take = seg_rs_take(s, p, take, &cut);
        if (s->blank) {
            /* shape only: lengths matter, bytes do not */
        } else if (p != NULL) {
            memcpy(s->buf + s->fill, p, take);
            p += take;
        } else {
            memset(s->buf + s->fill, 0, take);
        }
        s->fill += take;
        n -= take;
        if ((s->fill == s->chunk || cut) && seg_flush_chunk(s) != 0)
            return -1;
    }
    return 0;
}

static int seg_emit_zero(struct seg *s, uint64_t n)
{
    s->zero_bytes += n;
    return s->sink.zero(s->sink.ctx, n);
}

int seg_zeros(struct seg *s, uint64_t n)
{
    s->pos += n;
    s->zpend += n;
    if (!s->zrun && s->zpend >= s->zmin) {
        /* It is a zero run: the data before it ends here. */
        s->zrun = true;
        if (seg_flush_chunk(s) != 0)
            return -1;
    }
    while (s->zrun && s->zpend >= s->zmax) {
        s->zpend -= s->zmax;
        if (seg_emit_zero(s, s->zmax) != 0)
            return -1;
    }
    return 0;
}

/* Assign the pending zeros: the rest of a zero run, or data. */
static int seg_settle(struct seg *s)
{
    uint64_t z = s->zpend;
    bool run = s->zrun;
    s->zpend = 0;
    s->zrun = false;
    if (z == 0)
        return 0;
    if (run)
        return seg_emit_zero(s, z);
    /* z < zmin <= chunk-sized bounds, so it fits a size_t. */
    return seg_append(s, NULL, (size_t)z);
}

int seg_data(struct seg *s, const uint8_t *p, size_t n)
{
    if (seg_settle(s) != 0)
        return -1;
    s->pos += n;
    return seg_append(s, p, n);
}

int seg_blank(struct seg *s, uint64_t n)
{
    s->blank = true;
    if (seg_settle(s) != 0)
        return -1;
    s->pos += n;
    while (n > 0) { /* seg_append takes a size_t: go in chunk-sized steps */
        size_t step = n < s->chunk ? (size_t)n : s->chunk;
        if (seg_append(s, NULL, step) != 0)
            return -1;
        n -= step;
    }
    return 0;
}

int seg_feed(struct seg *s, const uint8_t *p, size_t n)
{
    assert(s->pos % SCAN_BLOCK == 0);
    for (size_t i = 0, len; i < n; i += len) {
        bool zero;
        len = scan_run(p + i, n - i, &zero);
        if ((zero ? seg_zeros(s, len) : seg_data(s, p + i, len)) != 0)
            return -1;
    }
    return 0;
}

int seg_end(struct seg *s)
{
    if (seg_settle(s) != 0)
        return -1;
    return seg_flush_chunk(s);
}
