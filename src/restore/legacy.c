/* legacy.c — see legacy.h. */
#include "config.h"
#include "legacy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>


/* ---- output, buffered ---- */

struct lg_out {
    const struct lg_io *io;
    uint8_t buf[LG_OUT];
    size_t n;
    uint64_t total;
    bool failed;
};

static int lg_flush(struct lg_out *o)
{
    if (o->n > 0 && !o->failed && o->io->put(o->io->ctx, o->buf, o->n) != 0)
        o->failed = true;
    o->total += o->n;
    o->n = 0;
    return o->failed ? -1 : 0;
}

static int lg_byte(struct lg_out *o, uint8_t b)
{
    o->buf[o->n++] = b;
    return o->n == LG_OUT ? lg_flush(o) : 0;
}

/* ==== pack(1) ====
 *
 * After the magic: the original length (4 bytes, big-endian), the longest
 * code's length L (1..25), for each length 1..L the number of leaves of that
 * length (the count for L less 2), then the leaves' bytes, shortest codes
 * first, the last leaf of length L left out: it is the end of the data.
 * Codes are read most significant bit first.  At each length the codes of
 * internal nodes are the smallest values, then the leaves in order. */

#define PK_MAXLEN 25
#define PK_PEEK 12 /* bits looked up at once */

struct pk {
    int maxlen;
    int leaves[PK_MAXLEN + 1];
    int parents[PK_MAXLEN + 1]; /* internal nodes at each length */
    int base[PK_MAXLEN + 1];    /* literal index of a length's code 0 */
    int nlit;
    uint8_t lit[256];
    uint8_t len_of[1 << PK_PEEK]; /* code length of a PK_PEEK-bit prefix; 0: longer */
    int peek;
};

static int pk_fail(struct sp_err *err, const char *msg)
{
    sp_err_set(err, SP_ERR_DATA, 0, "%s", msg);
    return -1;
}

/* A byte of the stream; -1 (err set) at its end or on a read error. */
static int pk_get(const struct lg_io *io, struct sp_err *err)
{
    int c = io->getc(io->ctx);
    if (c == -1)
        sp_err_set(err, SP_ERR_DATA, 0, "unexpected end of file");
    else if (c < 0)
        sp_err_set(err, SP_ERR_READ, EIO, "read error");
    return c < 0 ? -1 : c;
}

/* The header and the tree, checked as gzip checks them. */
static int pk_tree(const struct lg_io *io, struct pk *t, uint32_t *orig, struct sp_err *err)
{
    uint32_t n = 0;
    for (int i = 0; i < 4; i++) {
        int c = pk_get(io, err);
        if (c < 0)
            return -1;
        n = n << 8 | (uint32_t)c;
    }
    *orig = n;
    if ((t->maxlen = pk_get(io, err)) < 0)
        return -1;
    if (t->maxlen < 1 || t->maxlen > PK_MAXLEN)
        return pk_fail(err, "invalid compressed data -- Huffman code bit length out of range");
    /* room: the codes of this length less one (for the last length, the
     * stored count is 2 short of the leaves there) */
    int room = 1, total = 0;
    for (int len = 1; len <= t->maxlen; len++) {
        int c = pk_get(io, err);
        if (c < 0)
            return -1;
        if (c > room - (len == t->maxlen))
            return pk_fail(err, "too many leaves in Huffman tree");
        t->leaves[len] = c;
        room = (room - c + 1) * 2 - 1;
        total += c;
    }
    if (total >= 256)
        return pk_fail(err, "too many leaves in Huffman tree");
    t->leaves[t->maxlen]++; /* the leaves sent: all but the end code */
    t->nlit = 0;
    for (int len = 1; len <= t->maxlen; len++) {
        t->base[len] = t->nlit;
        for (int k = 0; k < t->leaves[len]; k++) {
            int c = pk_get(io, err);
            if (c < 0)
                return -1;
            t->lit[t->nlit++] = (uint8_t)c;
        }
    }
    t->leaves[t->maxlen]++; /* and the end code */
    /* internal nodes at each length, from the longest codes up */
    int nodes = 0;
    for (int len = t->maxlen; len >= 1; len--) {
        nodes >>= 1;
        t->parents[len] = nodes;
        t->base[len] -= nodes;
        nodes += t->leaves[len];
    }
    if (nodes >> 1 != 1)
        return pk_fail(err, "too few leaves in Huffman tree");
    /* prefixes of the short codes: the leaves hold the largest values of
     * each length, shorter codes above longer ones */
    t->peek = t->maxlen < PK_PEEK ? t->maxlen : PK_PEEK;
    int pos = 1 << t->peek;
    for (int len = 1; len <= t->peek; len++)
        for (int k = t->leaves[len] << (t->peek - len); k > 0 && pos > 0; k--)
            t->len_of[--pos] = (uint8_t)len;
    while (pos > 0)
        t->len_of[--pos] = 0;
    return 0;
}

struct pk_bits {
    uint64_t buf;
    int valid;
};

static int pk_need(const struct lg_io *io, struct pk_bits *b, int n, struct sp_err *err)
{
    while (b->valid < n) {
        int c = pk_get(io, err);
        if (c < 0)
            return -1;
        b->buf = b->buf << 8 | (uint64_t)c;
        b->valid += 8;
    }
    return 0;
}

/* The next code: its length and value.  As gzip, PK_PEEK bits (or the
 * longest code's length) are taken first, whatever the code's own length. */
static int pk_code(const struct lg_io *io, const struct pk *t, struct pk_bits *b, int *len,
                   uint32_t *val, struct sp_err *err)
{
    if (pk_need(io, b, t->peek, err) != 0)
        return -1;
    uint32_t mask = (1u << t->peek) - 1;
    uint32_t v = (uint32_t)(b->buf >> (b->valid - t->peek)) & mask;
    int l = t->len_of[v];
    if (l > 0) {
        v >>= t->peek - l;
    } else {
        l = t->peek;
        while ((int)v < t->parents[l]) { /* an internal node: one bit more */
            l++;
            mask = mask << 1 | 1;
            if (pk_need(io, b, l, err) != 0)
                return -1;
            v = (uint32_t)(b->buf >> (b->valid - l)) & mask;
        }
    }
    *len = l;
    *val = v;
    return 0;
}

int lg_unpack(const struct lg_io *io, uint64_t *out_len, struct sp_err *err)
{
    struct pk *t = calloc(1, sizeof *t);
    struct lg_out *o = calloc(1, sizeof *o);
    int rc = -1;
    uint32_t orig;
    if (t == NULL || o == NULL) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
        goto done;
    }
    o->io = io;
    if (pk_tree(io, t, &orig, err) != 0)
        goto done;
    struct pk_bits b = {0, 0};
    uint32_t eob = (uint32_t)t->leaves[t->maxlen] - 1;
    for (;;) {
        int len;
        uint32_t v;
        if (pk_code(io, t, &b, &len, &v, err) != 0)
            goto done;
        if (len == t->maxlen && v == eob)
            break;
        int i = (int)v + t->base[len];
        if (i < 0 || i >= t->nlit) { /* a code no leaf has (a tree not full) */
            pk_fail(err, "invalid compressed data--format violated");
            goto done;
        }
        if (lg_byte(o, t->lit[i]) != 0)
            goto done;
        b.valid -= len;
    }
    if (lg_flush(o) != 0)
        goto done;
    if ((uint32_t)o->total != orig) {
        pk_fail(err, "invalid compressed data--length error");
        goto done;
    }
    rc = 0;
done:
    if (o != NULL) {
        if (rc != 0)
            (void)lg_flush(o); /* what was decoded goes out, as gzip's */
        *out_len = o->total;
    }
    free(t);
    free(o);
    return rc;
}

/* ==== compress(1)'s LZW ====
 *
 * Written here rather than taken from libarchive's compress filter: spigz
 * must reach gzip's verdict on every input, and libarchive's differs (it
 * refuses the reserved flag bits gzip only warns about, and when its header
 * check fails it falls back to passing the bytes through).  The rules are
 * compress(1)'s and gzip's unlzw: after the magic, a flags byte (the largest
 * code width, 9..16, in bits 0-4; block mode, where code 256 clears the
 * table, in bit 7); then codes of 9 bits and up, least significant bit
 * first, read in groups of `width` bytes (8 codes): when the width grows or
 * the table is cleared, the rest of the group is skipped, and groups are
 * counted from there.  The stream ends where the input does (fewer bits than
 * a code are left over). */

#define LZW_BITS 16
#define LZW_CLEAR 256

struct lzw {
    uint16_t prefix[1 << LZW_BITS];
    uint8_t suffix[1 << LZW_BITS];
    uint8_t stack[1 << LZW_BITS];
};

struct lzw_in {
    const struct lg_io *io;
    uint64_t bitpos;      /* bits since the groups' origin: the first code,
                             then the end of each skipped group (compress(1)
                             starts its groups afresh there) */
    uint32_t buf;         /* bits not yet consumed, lowest first */
    int have;
    bool eof;
};

/* The next code of n bits, or -1 at the end of the input, -2 read error. */
static int lzw_code(struct lzw_in *in, int n)
{
    while (in->have < n && !in->eof) {
        int c = in->io->getc(in->io->ctx);
        if (c == -2)
            return -2;
        if (c < 0) {
            in->eof = true;
            break;
        }
        in->buf |= (uint32_t)c << in->have;
        in->have += 8;
    }
    if (in->have < n)
        return -1;
    int code = (int)(in->buf & ((1u << n) - 1));
    in->buf >>= n;
    in->have -= n;
    in->bitpos += (uint64_t)n;
    return code;
}

/* Skip to the end of the current group of n codes of n bits (n bytes). */
static int lzw_skip_group(struct lzw_in *in, int n)
{
    uint64_t group = (uint64_t)n * 8;
    uint64_t rest = (group - in->bitpos % group) % group;
    while (rest > 0) {
        int step = rest > 8 ? 8 : (int)rest;
        int c = lzw_code(in, step);
        if (c == -2)
            return -2;
        if (c == -1)
            break; /* the end of the input inside a skipped group */
        rest -= (uint64_t)step;
    }
    in->bitpos = 0;
    return 0;
}

static int lzw_corrupt(struct sp_err *err)
{
    sp_err_set(err, SP_ERR_DATA, 0, "corrupt input.");
    return -1;
}

static int lzw_run(const struct lg_io *io, struct lzw *t, struct lg_out *o, unsigned *warn,
                   struct sp_err *err)
{
    int flags = io->getc(io->ctx);
    if (flags < 0) {
        sp_err_set(err, flags == -1 ? SP_ERR_DATA : SP_ERR_READ, 0,
                   flags == -1 ? "unexpected end of file" : "read error");
        return -1;
    }
    *warn = (unsigned)flags & 0x60; /* reserved: gzip warns and goes on */
    bool block = flags & 0x80;
    int maxbits = flags & 0x1f;
    if (maxbits > LZW_BITS) {
        sp_err_set(err, SP_ERR_FORMAT, 0, "compressed with %d bits, can only handle %d bits",
                   maxbits, LZW_BITS);
        return -1;
    }
    int32_t maxmax = 1 << maxbits;
    int n = 9;
    int32_t maxcode = (1 << n) - 1, next = block ? 257 : 256;
    int oldcode = -1;
    uint8_t fin = 0;
    for (int i = 0; i < 256; i++) {
        t->prefix[i] = 0;
        t->suffix[i] = (uint8_t)i;
    }
    struct lzw_in in = {io, 0, 0, 0, false};
    for (;;) {
        if (next > maxcode) { /* wider codes, from the next group on */
            if (lzw_skip_group(&in, n) != 0)
                return -1;
            n++;
            maxcode = n == maxbits ? maxmax : (1 << n) - 1;
        }
        int code = lzw_code(&in, n);
        if (code == -1)
            return 0;
        if (code == -2) {
            sp_err_set(err, SP_ERR_READ, EIO, "read error");
            return -1;
        }
        if (oldcode == -1) {
            if (code >= 256)
                return lzw_corrupt(err);
            fin = (uint8_t)code;
            oldcode = code;
            if (lg_byte(o, fin) != 0)
                return -1;
            continue;
        }
        if (code == LZW_CLEAR && block) {
            memset(t->prefix, 0, 256 * sizeof t->prefix[0]);
            next = 256; /* the next code added is 256, never used */
            if (lzw_skip_group(&in, n) != 0)
                return -1;
            n = 9;
            maxcode = (1 << n) - 1;
            continue;
        }
        int incode = code, sp = 1 << LZW_BITS;
        if (code >= next) { /* KwKwK: the string just being defined */
            if (code > next)
                return lzw_corrupt(err);
            t->stack[--sp] = fin;
            code = oldcode;
        }
        while (code >= 256) {
            if (sp == 0)
                return lzw_corrupt(err);
            t->stack[--sp] = t->suffix[code];
            code = t->prefix[code];
        }
        if (sp == 0)
            return lzw_corrupt(err);
        t->stack[--sp] = fin = t->suffix[code];
        for (; sp < 1 << LZW_BITS; sp++)
            if (lg_byte(o, t->stack[sp]) != 0)
                return -1;
        if (next < maxmax) {
            t->prefix[next] = (uint16_t)oldcode;
            t->suffix[next] = fin;
            next++;
        }
        oldcode = incode;
    }
}

int lg_unlzw(const struct lg_io *io, uint64_t *out_len, unsigned *warn_flags,
             struct sp_err *err)
{
    /* zeroed: a code equal to the next one, once the table is full, reads
     * an entry never written.  gzip's tables are zeroed statics that keep
     * what the previous file left (doc/GZIP.md, D-lzw-leftover); here each
     * file reads what gzip reads for that file alone. */
    struct lzw *t = calloc(1, sizeof *t);
    struct lg_out *o = calloc(1, sizeof *o);
    int rc = -1;
    *warn_flags = 0;
    if (t == NULL || o == NULL) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
    } else {
        o->io = io;
        rc = lzw_run(io, t, o, warn_flags, err);
        if (lg_flush(o) != 0)
            rc = -1;
        *out_len = o->total;
    }
    free(t);
    free(o);
    return rc;
}
