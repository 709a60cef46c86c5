/* resync.c — see resync.h. */
#include "resync.h"
#include "le.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- bits ---- */

/* At least 57 bits from bit `bit` of p[0..n), least significant first;
 * bits past n read as zero (callers check that they have enough). */
static uint64_t rs_peek(const uint8_t *p, size_t n, uint64_t bit)
{
    size_t i = (size_t)(bit >> 3);
    uint64_t v = 0;
    if (i + 8 <= n) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        memcpy(&v, p + i, 8);
#else
        for (unsigned k = 0; k < 8; k++)
            v |= (uint64_t)p[i + k] << (8 * k);
#endif
    } else {
        for (unsigned k = 0; k < 8 && i + k < n; k++)
            v |= (uint64_t)p[i + k] << (8 * k);
    }
    return v >> (bit & 7);
}

/* ---- canonical Huffman codes, decoded a bit at a time (as RFC 1951
 * describes them); no table to build, which matters for the many false
 * candidates a search meets ---- */

enum rs_set { RS_OVER = -1, RS_COMPLETE = 0, RS_INCOMPLETE = 1 };

/* Build from len[0..n) (each <= 15).  *maxlen is the longest length used. */
static enum rs_set rs_build(struct rs_huff *h, const uint8_t *len, unsigned n,
                            unsigned *maxlen)
{
    uint16_t offs[16];
    memset(h->count, 0, sizeof h->count);
    for (unsigned s = 0; s < n; s++)
        h->count[len[s]]++;
    *maxlen = 0;
    int left = 1;
    for (unsigned l = 1; l <= 15; l++) {
        left <<= 1;
        left -= h->count[l];
        if (left < 0)
            return RS_OVER;
        if (h->count[l] != 0)
            *maxlen = l;
    }
    offs[1] = 0;
    for (unsigned l = 1; l < 15; l++)
        offs[l + 1] = (uint16_t)(offs[l] + h->count[l]);
    for (unsigned s = 0; s < n; s++)
        if (len[s] != 0)
            h->sym[offs[len[s]]++] = (uint16_t)s;
    return left == 0 ? RS_COMPLETE : RS_INCOMPLETE;
}

/* zlib's rule (inftrees.c): a literal/length or distance code may be
 * incomplete only when it is a single code of length 1; no code at all is
 * allowed (for distances: the block then has no matches). */
static bool rs_zlib_ok(enum rs_set s, unsigned maxlen)
{
    return s == RS_COMPLETE || (s == RS_INCOMPLETE && maxlen <= 1);
}

/* The symbol whose code starts v, or -1 when v starts no code; *used is
 * the code's length. */
static int rs_decode(const struct rs_huff *h, uint64_t v, unsigned *used)
{
    int code = 0, first = 0, index = 0;
    for (unsigned len = 1; len <= 15; len++) {
        code |= (int)(v & 1);
        v >>= 1;
        int count = h->count[len];
        if (code - count < first) {
            *used = len;
            return h->sym[index + (code - first)];
        }
        index += count;
        first += count;
        first <<= 1;
        code <<= 1;
    }
    return -1;
}

/* ---- block headers ---- */

static const uint8_t rs_cl_order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5,
                                        11, 4, 12, 3, 13, 2, 14, 1, 15};

/* The code lengths of a dynamic header from bit *bit (just past HCLEN's
 * field: lens gets nlen + ndist lengths).  RS_DYNAMIC, RS_BAD or RS_SHORT. */
static enum rs_kind rs_lengths(const uint8_t *p, size_t n, uint64_t *bit, unsigned ncode,
                               unsigned total, uint8_t *lens)
{
    uint64_t end = 8 * (uint64_t)n, b = *bit;
    uint8_t cl[19] = {0};
    if (b + 3 * ncode > end)
        return RS_SHORT;
    uint64_t v = rs_peek(p, n, b);
    for (unsigned i = 0; i < ncode; i++) /* 3 * 19 = 57 bits: one peek */
        cl[rs_cl_order[i]] = (uint8_t)((v >> (3 * i)) & 7);
    b += 3 * ncode;
    struct rs_huff h;
    unsigned maxlen;
    /* the code-length code must be complete (zlib: "invalid code lengths
     * set"); none at all decodes every length as 0 and then lacks
     * end-of-block */
    if (rs_build(&h, cl, 19, &maxlen) != RS_COMPLETE)
        return RS_BAD;
    /* Bits past n read as zero; a code and its extra bits that end by n
     * depend on none of them (prefix codes), so the test comes after. */
    for (unsigned have = 0; have < total;) {
        v = rs_peek(p, n, b);
        unsigned used;
        int s = rs_decode(&h, v, &used);
        if (s < 0) /* cannot happen: the code is complete */
            return RS_BAD;
        v >>= used;
        b += used;
        if (s < 16) {
            if (b > end)
                return RS_SHORT;
            lens[have++] = (uint8_t)s;
            continue;
        }
        unsigned rep, val = 0;
        if (s == 16) {
            if (have == 0)
                return RS_BAD; /* nothing to repeat */
            val = lens[have - 1];
            rep = 3 + (unsigned)(v & 3);
            b += 2;
        } else if (s == 17) {
            rep = 3 + (unsigned)(v & 7);
            b += 3;
        } else {
            rep = 11 + (unsigned)(v & 127);
            b += 7;
        }
        if (b > end)
            return RS_SHORT;
        if (have + rep > total)
            return RS_BAD;
        memset(lens + have, (int)val, rep);
        have += rep;
    }
    *bit = b;
    return RS_DYNAMIC;
}

/* A dynamic header from bit `bit` (BFINAL and BTYPE read); the codes are
 * built into lit and dist. */
static enum rs_kind rs_dynamic(const uint8_t *p, size_t n, uint64_t bit, struct rs_hdr *h,
                               struct rs_huff *lit, struct rs_huff *dist)
{
    if (bit + 17 > 8 * (uint64_t)n)
        return RS_SHORT;
    uint64_t v = rs_peek(p, n, bit);
    unsigned nlen = 257 + (unsigned)((v >> 3) & 31), ndist = 1 + (unsigned)((v >> 8) & 31);
    unsigned ncode = 4 + (unsigned)((v >> 13) & 15);
    if (nlen > 286 || ndist > 30) /* zlib: "too many length or distance symbols" */
        return RS_BAD;
    uint8_t lens[286 + 30];
    uint64_t b = bit + 17;
    enum rs_kind k = rs_lengths(p, n, &b, ncode, nlen + ndist, lens);
    if (k != RS_DYNAMIC)
        return k;
    if (lens[256] == 0) /* "invalid code -- missing end-of-block" */
        return RS_BAD;
    unsigned lmax, dmax;
    enum rs_set ls = rs_build(lit, lens, nlen, &lmax);
    enum rs_set ds = rs_build(dist, lens + nlen, ndist, &dmax);
    if (!rs_zlib_ok(ls, lmax) || !rs_zlib_ok(ds, dmax))
        return RS_BAD;
    h->data_bit = b;
    return RS_DYNAMIC;
}

/* The fixed codes (RFC 1951 3.2.6); distance codes 30 and 31 exist in the
 * code but are invalid, as are literal/lengths 286 and 287. */
static void rs_fixed_codes(struct rs_huff *lit, struct rs_huff *dist)
{
    uint8_t len[RS_NSYM];
    unsigned maxlen;
    memset(len, 8, 144);
    memset(len + 144, 9, 112);
    memset(len + 256, 7, 24);
    memset(len + 280, 8, 8);
    rs_build(lit, len, RS_NSYM, &maxlen);
    memset(len, 5, 32);
    rs_build(dist, len, 32, &maxlen);
}

static enum rs_kind rs_header_codes(const uint8_t *p, size_t n, uint64_t bit,
                                    struct rs_hdr *h, struct rs_huff *lit,
                                    struct rs_huff *dist)
{
    uint64_t end = 8 * (uint64_t)n;
    if (bit + 3 > end)
        return RS_SHORT;
    uint64_t v = rs_peek(p, n, bit);
    h->final = v & 1;
    switch ((v >> 1) & 3) {
    case 0: { /* stored: to the byte boundary, LEN, NLEN */
        size_t q = (size_t)((bit + 3 + 7) >> 3);
        if (q + 4 > n)
            return RS_SHORT;
        uint32_t len = le_get16(p + q), nlen = le_get16(p + q + 2);
        if ((len ^ nlen) != 0xffff)
            return RS_BAD;
        h->stored_len = len;
        h->data_bit = 8 * (uint64_t)(q + 4);
        return RS_STORED;
    }
    case 1:
        if (lit != NULL)
            rs_fixed_codes(lit, dist);
        h->data_bit = bit + 3;
        return RS_FIXED;
    case 2: {
        struct rs_huff l, d;
        return rs_dynamic(p, n, bit, h, lit != NULL ? lit : &l, dist != NULL ? dist : &d);
    }
    default:
        return RS_BAD;
    }
}

enum rs_kind rs_header(const uint8_t *p, size_t n, uint64_t bit, struct rs_hdr *h)
{
    return rs_header_codes(p, n, bit, h, NULL, NULL);
}

bool rs_gzip_no_lengths(const uint8_t *p, size_t n, uint64_t bit)
{
    uint64_t end = 8 * (uint64_t)n;
    if (bit + 17 > end)
        return false;
    uint64_t v = rs_peek(p, n, bit);
    unsigned nlen = 257 + (unsigned)((v >> 3) & 31), ndist = 1 + (unsigned)((v >> 8) & 31);
    unsigned ncode = 4 + (unsigned)((v >> 13) & 15);
    if (((v >> 1) & 3) != 2 || nlen > 286 || ndist > 30) /* both refuse these at once */
        return false;
    uint64_t b = bit + 17;
    if (b + 3 * (uint64_t)ncode > end) /* gzip too reads them all first */
        return false;
    for (unsigned i = 0; i < ncode; i++)
        if ((rs_peek(p, n, b + 3 * i) & 7) != 0)
            return false;
    return true;
}

bool rs_empty(const uint8_t *p, size_t n, uint64_t bit, uint64_t *next)
{
    struct rs_hdr h;
    enum rs_kind k = rs_header(p, n, bit, &h);
    if ((k != RS_STORED && k != RS_FIXED) || h.final)
        return false;
    if (k == RS_STORED) {
        *next = h.data_bit;
        return h.stored_len == 0;
    }
    /* fixed: end-of-block is the 7-bit code 0000000 */
    if (bit + 10 > 8 * (uint64_t)n || (rs_peek(p, n, bit + 3) & 127) != 0)
        return false;
    *next = bit + 10;
    return true;
}

/* ---- the walker ---- */

enum { RS_W_HEAD, RS_W_CODES, RS_W_STORED, RS_W_DONE };

static const uint16_t rs_lbase[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,
                                      15, 17, 19, 23, 27, 31, 35, 43, 51,  59,
                                      67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t rs_lext[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                    2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint8_t rs_dext[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                    6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

void rs_walk_start(struct rs_walk *w, uint64_t bit, uint64_t limit)
{
    w->bit = bit;
    w->out = 0;
    w->walked = 0;
    w->limit = limit;
    w->blocks = 0;
    w->state = RS_W_HEAD;
    w->final = false;
    w->left = 0;
}

void rs_walk_rebase(struct rs_walk *w, size_t bytes)
{
    w->bit -= 8 * (uint64_t)bytes;
}

/* A block ended at w->bit. */
static enum rs_ev rs_walk_ended(struct rs_walk *w)
{
    w->blocks++;
    if (w->final) {
        w->state = RS_W_DONE;
        return RS_EV_END;
    }
    w->state = RS_W_HEAD;
    return RS_EV_BLOCK;
}

/* The symbols of a fixed or dynamic block.  A match needs at most 48 bits
 * (15 + 5 + 15 + 13), so with 48 bits in hand one peek decodes it. */
static enum rs_ev rs_walk_codes(struct rs_walk *w, const uint8_t *p, size_t n, bool eof)
{
    uint64_t end = 8 * (uint64_t)n, bit = w->bit, out = w->out, b0 = w->bit;
    enum rs_ev ev;
    for (;;) {
        if (bit + 48 > end && !eof) {
            ev = RS_EV_MORE;
            break;
        }
        if (w->limit != 0 && w->walked + (bit - b0) > w->limit) {
            ev = RS_EV_LIMIT;
            break;
        }
        uint64_t v = rs_peek(p, n, bit);
        unsigned used;
        int s = rs_decode(&w->lit, v, &used);
        if (s < 0 || s > 285) { /* 286, 287: "invalid literal/length code" */
            ev = RS_EV_BAD;
            break;
        }
        v >>= used;
        unsigned adv = used;
        if (s < 256) {
            out++;
        } else if (s > 256) {
            s -= 257;
            unsigned eb = rs_lext[s];
            out += rs_lbase[s] + (v & ((1u << eb) - 1));
            v >>= eb;
            adv += eb;
            int d = rs_decode(&w->dist, v, &used);
            if (d < 0 || d > 29) { /* "invalid distance code" */
                ev = RS_EV_BAD;
                break;
            }
            adv += used + rs_dext[d];
        }
        bit += adv;
        if (bit > end) { /* ran off the end of the input (eof) */
            ev = RS_EV_BAD;
            break;
        }
        if (s == 256) {
            w->walked += bit - b0;
            w->bit = bit;
            w->out = out;
            return rs_walk_ended(w);
        }
    }
    w->walked += bit - b0;
    w->bit = bit;
    w->out = out;
    return ev;
}

static enum rs_ev rs_walk_stored(struct rs_walk *w, size_t n, bool eof)
{
    size_t at = (size_t)(w->bit >> 3);
    size_t have = n > at ? n - at : 0;
    size_t take = have < w->left ? have : w->left;
    w->bit += 8 * (uint64_t)take;
    w->walked += 8 * (uint64_t)take;
    w->out += take;
    w->left -= (uint32_t)take;
    if (w->left > 0)
        return eof ? RS_EV_BAD : RS_EV_MORE;
    if (w->limit != 0 && w->walked > w->limit)
        return RS_EV_LIMIT;
    return rs_walk_ended(w);
}

enum rs_ev rs_walk_run(struct rs_walk *w, const uint8_t *p, size_t n, bool eof)
{
    for (;;) {
        switch (w->state) {
        case RS_W_HEAD: {
            struct rs_hdr h;
            enum rs_kind k = rs_header_codes(p, n, w->bit, &h, &w->lit, &w->dist);
            if (k == RS_SHORT)
                return eof ? RS_EV_BAD : RS_EV_MORE;
            if (k == RS_BAD)
                return RS_EV_BAD;
            w->walked += h.data_bit - w->bit;
            w->bit = h.data_bit;
            w->final = h.final;
            w->left = h.stored_len;
            w->state = k == RS_STORED ? RS_W_STORED : RS_W_CODES;
            break;
        }
        case RS_W_STORED:
            return rs_walk_stored(w, n, eof);
        case RS_W_CODES:
            return rs_walk_codes(w, p, n, eof);
        default:
            return RS_EV_END;
        }
    }
}

/* ---- the finder ---- */

/* After a final block ending at bit `bit`: byte alignment, the 8-byte
 * trailer, then the end of the input, a gzip member or zero padding (up to
 * RS_FINAL_LOOK bytes of it are looked at). */
static enum rs_verdict rs_after_final(const uint8_t *p, size_t n, uint64_t bit, bool eof)
{
    size_t q = (size_t)((bit + 7) >> 3) + 8;
    if (q > n)
        return eof ? RS_NO : RS_MORE;
    if (q == n)
        return eof ? RS_YES : RS_MORE;
    if (n - q >= 3 && p[q] == 0x1f && p[q + 1] == 0x8b && p[q + 2] == 8)
        return RS_YES;
    if (n - q < 3 && !eof && p[q] == 0x1f)
        return RS_MORE;
    size_t look = n - q < RS_FINAL_LOOK ? n - q : RS_FINAL_LOOK;
    for (size_t i = 0; i < look; i++)
        if (p[q + i] != 0)
            return RS_NO;
    return look == RS_FINAL_LOOK || eof ? RS_YES : RS_MORE;
}

enum rs_verdict rs_confirm(const uint8_t *p, size_t n, uint64_t bit, bool eof,
                           uint64_t limit, uint64_t *work)
{
    struct rs_walk w;
    rs_walk_start(&w, bit, limit);
    enum rs_verdict v = RS_NO;
    for (;;) {
        enum rs_ev ev = rs_walk_run(&w, p, n, eof);
        if (ev == RS_EV_BLOCK) {
            struct rs_hdr h;
            enum rs_kind k = rs_header(p, n, w.bit, &h);
            if (k == RS_FIXED) /* a weak link: walk it to what follows */
                continue;
            v = k == RS_STORED || k == RS_DYNAMIC ? RS_YES
              : k == RS_SHORT && !eof ? RS_MORE : RS_NO;
        } else if (ev == RS_EV_END) {
            v = rs_after_final(p, n, w.bit, eof);
        } else {
            v = ev == RS_EV_MORE ? RS_MORE : RS_NO;
        }
        break;
    }
    *work += w.walked;
    return v;
}

/* gzip header flags (RFC 1952) */
#define RS_FHCRC 0x02
#define RS_FEXTRA 0x04
#define RS_FNAME 0x08
#define RS_FCOMMENT 0x10

/* The end of a NUL-terminated field from q, at most 64 KiB, else 0. */
static size_t rs_zstring(const uint8_t *p, size_t n, size_t q)
{
    size_t lim = n - q < 65536 ? n : q + 65536;
    const uint8_t *z = memchr(p + q, 0, lim - q);
    return z == NULL ? 0 : (size_t)(z - p) + 1;
}

size_t rs_member(const uint8_t *p, size_t n, size_t q)
{
    if (q > n || n - q < 10 || p[q] != 0x1f || p[q + 1] != 0x8b || p[q + 2] != 8 ||
        (p[q + 3] & 0xe0) != 0)
        return 0;
    unsigned flg = p[q + 3];
    size_t e = q + 10;
    if (flg & RS_FEXTRA) {
        if (n - e < 2 || n - e - 2 < le_get16(p + e))
            return 0;
        e += 2 + le_get16(p + e);
    }
    if ((flg & RS_FNAME) && (e = rs_zstring(p, n, e)) == 0)
        return 0;
    if ((flg & RS_FCOMMENT) && (e = rs_zstring(p, n, e)) == 0)
        return 0;
    if (flg & RS_FHCRC) {
        if (n - e < 2 || (crc32(0, p + q, (uInt)(e - q)) & 0xffff) != le_get16(p + e))
            return 0;
        e += 2;
    }
    return e - q;
}

/* rs_kraft4[x]: the Kraft sum, in 1/128ths, of the four 3-bit code
 * lengths in the 12 bits x (a length 0 counts nothing). */
static uint16_t rs_kraft4[4096];
static pthread_once_t rs_once = PTHREAD_ONCE_INIT;

static void rs_tables(void)
{
    for (unsigned x = 0; x < 4096; x++) {
        unsigned sum = 0;
        for (unsigned i = 0; i < 4; i++) {
            unsigned l = (x >> (3 * i)) & 7;
            sum += l != 0 ? 1u << (7 - l) : 0;
        }
        rs_kraft4[x] = (uint16_t)sum;
    }
}

/* Whether the code-length code of a dynamic header (its HCLEN field's
 * value ncode, its lengths in cl) is complete: most random bits fail here,
 * before any code is built. */
static bool rs_cl_complete(unsigned ncode, uint64_t cl)
{
    unsigned sum = 0, i = 0;
    for (; i + 4 <= ncode; i += 4, cl >>= 12)
        sum += rs_kraft4[cl & 4095];
    sum += rs_kraft4[cl & ((1u << (3 * (ncode - i))) - 1)];
    return sum == 128;
}

/* Whether the header at bit b is a candidate: stored or dynamic. */
static bool rs_candidate(const uint8_t *p, size_t n, uint64_t b)
{
    uint64_t v = rs_peek(p, n, b);
    unsigned type = (unsigned)(v >> 1) & 3;
    if (type == 0) { /* quick LEN/NLEN test first */
        size_t q = (size_t)((b + 10) >> 3);
        return q + 4 <= n && (le_get16(p + q) ^ le_get16(p + q + 2)) == 0xffff;
    }
    /* dynamic, HLIT <= 29, HDIST <= 29 (tested without branches: they are
     * random), a complete code-length code, then the full header */
    if (!((type == 2) & (((v >> 3) & 31) <= 29) & (((v >> 8) & 31) <= 29)))
        return false;
    if (!rs_cl_complete(4 + (unsigned)((v >> 13) & 15), rs_peek(p, n, b + 17)))
        return false;
    struct rs_hdr h;
    return rs_header(p, n, b, &h) == RS_DYNAMIC;
}

enum rs_found rs_search(struct rs_search *s, const uint8_t *p, size_t n, bool eof,
                        uint64_t from, uint64_t *at)
{
    pthread_once(&rs_once, rs_tables);
    uint64_t end = eof ? 8 * (uint64_t)n : n > s->look ? 8 * (uint64_t)(n - s->look) : 0;
    for (uint64_t b = from; b < end; b++) {
        if (s->work > s->budget)
            return RS_FOUND_GIVEUP;
        size_t hl;
        enum rs_found kind = RS_FOUND_BLOCK;
        uint64_t start = b;
        if ((b & 7) == 0 && s->members && p[b >> 3] == 0x1f &&
            (hl = rs_member(p, n, (size_t)(b >> 3))) != 0) {
            kind = RS_FOUND_MEMBER;
            start = b + 8 * (uint64_t)hl;
        } else if (!rs_candidate(p, n, b)) {
            continue;
        }
        enum rs_verdict v = rs_confirm(p, n, start, eof, s->limit, &s->work);
        if (v == RS_NO)
            continue;
        *at = b;
        return v == RS_YES ? kind : RS_FOUND_NONE; /* RS_MORE: again from b */
    }
    *at = end > from ? end : from;
    return RS_FOUND_NONE;
}

/* ---- decoding from a block start ---- */

int rs_dual_open(struct rs_dual *d)
{
    memset(d, 0, sizeof *d);
    if ((d->scratch = malloc(RS_STEP)) == NULL)
        return -1;
    for (int i = 0; i < 2; i++) {
        if (inflateInit2(&d->z[i], -15) != Z_OK)
            return -1;
        d->live[i] = true;
    }
    return 0;
}

int rs_dual_member(struct rs_dual *d, const uint8_t *dict, unsigned dlen)
{
    d->two = false;
    d->same = 0;
    if (inflateReset(&d->z[0]) != Z_OK)
        return -1;
    return dlen == 0 || inflateSetDictionary(&d->z[0], dict, dlen) == Z_OK ? 0 : -1;
}

int rs_dual_resume(struct rs_dual *d, unsigned nbits, unsigned value)
{
    for (int i = 0; i < 2; i++) {
        /* 0x00 and 0xff differ at every position (the scratch buffer is
         * free between calls) */
        memset(d->scratch, i == 0 ? 0x00 : 0xff, RS_WIN);
        if (inflateReset(&d->z[i]) != Z_OK ||
            (nbits > 0 && inflatePrime(&d->z[i], (int)nbits, (int)value) != Z_OK) ||
            inflateSetDictionary(&d->z[i], d->scratch, RS_WIN) != Z_OK)
            return -1;
    }
    d->two = true;
    d->same = 0;
    return 0;
}

/* Compare the two outputs of one step: mark and clear what differs. */
static int rs_dual_compare(struct rs_dual *d, uint8_t *out, size_t n, rs_mark_fn mark,
                           void *ctx)
{
    size_t i = 0;
    while (i < n) {
        if (out[i] == d->scratch[i]) {
            size_t j = i + 1;
            while (j < n && out[j] == d->scratch[j])
                j++;
            d->same += j - i;
            i = j;
            continue;
        }
        size_t j = i + 1;
        while (j < n && out[j] != d->scratch[j])
            j++;
        memset(out + i, 0, j - i); /* already 0: the first dictionary is zeros */
        if (mark(ctx, i, j - i) != 0)
            return -1;
        d->same = 0;
        i = j;
    }
    /* The window is all a decoder remembers: once the last 32 KiB agree,
     * the two decoders are in the same state. */
    if (d->same >= RS_WIN)
        d->two = false;
    return 0;
}

int rs_dual_inflate(struct rs_dual *d, const uint8_t **in, size_t *avail, uint8_t *out,
                    size_t cap, size_t *got, rs_mark_fn mark, void *ctx)
{
    uInt ain = *avail > UINT32_MAX ? UINT32_MAX : (uInt)*avail;
    uInt aout = (uInt)(cap < RS_STEP ? cap : RS_STEP);
    z_stream *a = &d->z[0], *b = &d->z[1];
    a->next_in = (Bytef *)*in;
    a->avail_in = ain;
    a->next_out = out;
    a->avail_out = aout;
    int rc = inflate(a, Z_BLOCK);
    size_t used = ain - a->avail_in;
    *got = aout - a->avail_out;
    *in += used;
    *avail -= used;
    if (!d->two)
        return rc;
    b->next_in = (Bytef *)*in - used;
    b->avail_in = ain;
    b->next_out = d->scratch;
    b->avail_out = aout;
    int rc2 = inflate(b, Z_BLOCK);
    if (rc2 != rc || b->avail_in != a->avail_in || b->avail_out != a->avail_out)
        return Z_STREAM_ERROR; /* decoding depends on bits only: cannot happen */
    return rs_dual_compare(d, out, *got, mark, ctx) == 0 ? rc : Z_STREAM_ERROR;
}

int rs_dual_data_type(const struct rs_dual *d)
{
    return d->z[0].data_type;
}

int rs_dual_window(struct rs_dual *d, uint8_t *dict, unsigned *len)
{
    uInt n = RS_WIN;
    int rc = inflateGetDictionary(&d->z[0], dict, &n);
    *len = n;
    return rc == Z_OK ? 0 : -1;
}

void rs_dual_close(struct rs_dual *d)
{
    for (int i = 0; i < 2; i++)
        if (d->live[i])
            inflateEnd(&d->z[i]);
    free(d->scratch);
    memset(d, 0, sizeof *d);
}

/* ---- GNU gzip's look-ahead at the end of a cut stream ---- */

/* gzip 1.12 decodes a code by table lookups: before each lookup it asks
 * for as many bits as the table is wide (NEEDBITS), and at the end of the
 * input that request fails even when the code itself is shorter.  Its root
 * table is l bits wide, l being 9 for literal/lengths (6 for distances)
 * kept within the code's shortest and longest lengths; a code longer than
 * l goes on into a sub-table, whose width follows from the counts of the
 * lengths still to place when it is made (its first code's length beyond
 * the root, widened while longer codes remain to fill it, to at most l).
 * need[s] gets, for every symbol s with a code, how many bits gzip asks
 * for before it knows the code: l, or l per level passed plus the last
 * table's width.  *width gets l.  The walk over the codes in canonical
 * order is the one gzip's table builder makes, tables left out. */
static void rs_gzip_needs(const struct rs_huff *hf, unsigned lbits, uint8_t *need,
                          unsigned *width)
{
    unsigned shortest = 1, longest = 15;
    while (shortest <= 15 && hf->count[shortest] == 0)
        shortest++;
    if (shortest > 15) { /* no codes: gzip's table is 1 bit, every entry invalid */
        *width = 1;
        return;
    }
    while (hf->count[longest] == 0)
        longest--;
    unsigned l = lbits < shortest ? shortest : lbits > longest ? longest : lbits;
    *width = l;
    unsigned code = 0, prefix[16] = {0}, tw[16] = {0}, idx = 0;
    int h = -1, w = -(int)l;
    for (unsigned k = shortest; k <= longest; k++) {
        for (unsigned a = hf->count[k]; a-- > 0;) {
            while ((int)k > w + (int)l) { /* a new table for this code */
                h++;
                w += (int)l;
                unsigned room = longest - (unsigned)w, most = room < l ? room : l;
                unsigned j = k - (unsigned)w, free_slots = 1u << j;
                if (free_slots > a + 1 && j < most) { /* more slots than codes of
                                                          length k left: widen */
                    free_slots -= a + 1;
                    unsigned len = k;
                    while (++j < most) { /* ends at `most` unless filled first */
                        free_slots <<= 1;
                        if (free_slots <= hf->count[++len])
                            break;
                        free_slots -= hf->count[len];
                    }
                }
                tw[h] = j;
                prefix[h] = code;
            }
            need[hf->sym[idx++]] = (uint8_t)(h == 0 ? l : (unsigned)h * l + tw[h]);
            /* the next code of length k, its bits reversed (as deflate sends them) */
            unsigned bit = 1u << (k - 1);
            while (code & bit) {
                code ^= bit;
                bit >>= 1;
            }
            code ^= bit;
            while (h > 0 && (code & ((1u << w) - 1)) != prefix[h]) { /* left that table */
                h--;
                w -= (int)l;
            }
        }
    }
}

uint64_t rs_gzip_cut(const uint8_t *p, size_t n, uint64_t bit)
{
    uint64_t end = 8 * (uint64_t)n, out = 0;
    struct rs_huff lit, dist;
    uint8_t lneed[RS_NSYM], dneed[32];
    unsigned lw, dw;
    for (;;) {
        struct rs_hdr h;
        if (bit + 3 > end)
            return out;
        enum rs_kind k = rs_header_codes(p, n, bit, &h, &lit, &dist);
        if (k == RS_STORED) { /* every whole byte there is written */
            uint64_t have = h.data_bit < end ? (end - h.data_bit) / 8 : 0;
            if (have < h.stored_len)
                return out + have;
            out += h.stored_len;
            bit = h.data_bit + 8 * (uint64_t)h.stored_len;
            if (h.final)
                return out;
            continue;
        }
        if (k != RS_FIXED && k != RS_DYNAMIC) /* cut inside the header: nothing of it */
            return out;
        memset(lneed, 0, sizeof lneed);
        memset(dneed, 0, sizeof dneed);
        rs_gzip_needs(&lit, k == RS_FIXED ? 7 : 9, lneed, &lw);
        rs_gzip_needs(&dist, k == RS_FIXED ? 5 : 6, dneed, &dw);
        bit = h.data_bit;
        for (;;) {
            uint64_t v = rs_peek(p, n, bit);
            unsigned used;
            int s = rs_decode(&lit, v, &used);
            if (s < 0 || s > 285 || bit + lneed[s] > end || bit + used > end)
                return out;
            bit += used;
            v >>= used;
            if (s < 256) {
                out++;
                continue;
            }
            if (s == 256)
                break;
            s -= 257;
            unsigned eb = rs_lext[s];
            if (bit + eb > end)
                return out;
            unsigned len = rs_lbase[s] + (unsigned)(v & ((1u << eb) - 1));
            bit += eb;
            v >>= eb;
            int d = rs_decode(&dist, v, &used);
            if (d < 0 || d > 29 || bit + dneed[d] > end || bit + used + rs_dext[d] > end)
                return out;
            bit += used + rs_dext[d];
            out += len;
        }
        if (h.final)
            return out;
    }
}
