/* scan.c — see scan.h for the chunking rules. */
#include "scan.h"

#include <assert.h>
#include <string.h>

bool scan_is_zero(const uint8_t *p, size_t n)
{
    /* Data blocks usually differ from zero in their first word; zero blocks
     * must be read whole, 64 bytes per step so the compiler can vectorize. */
    size_t i = 0;
    uint64_t w[8], acc = 0;
    if (n >= 8) {
        memcpy(&acc, p, 8);
        if (acc != 0)
            return false;
    }
    for (; i + 512 <= n; i += 512) {
        uint64_t a = 0;
        for (size_t j = 0; j < 512; j += 64) {
            memcpy(w, p + i + j, 64);
            a |= w[0] | w[1] | w[2] | w[3] | w[4] | w[5] | w[6] | w[7];
        }
        if (a != 0)
            return false;
    }
    uint8_t b = 0;
    for (; i < n; i++)
        b |= p[i];
    return b == 0;
}

size_t scan_run(const uint8_t *p, size_t n, bool *zero)
{
    size_t j = n < SCAN_BLOCK ? n : SCAN_BLOCK;
    *zero = scan_is_zero(p, j);
    while (j < n) {
        size_t b = n - j < SCAN_BLOCK ? n - j : SCAN_BLOCK;
        if (scan_is_zero(p + j, b) != *zero)
            break;
        j += b;
    }
    return j;
}

void seg_init(struct seg *s, size_t chunk, uint64_t zmin, uint64_t zmax,
              const struct seg_sink *sink)
{
    memset(s, 0, sizeof *s);
    s->chunk = chunk;
    s->zmin = zmin;
    s->zmax = zmax;
    s->sink = *sink;
}

static int seg_flush_chunk(struct seg *s)
{
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
        if (s->fill == s->chunk && seg_flush_chunk(s) != 0)
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
