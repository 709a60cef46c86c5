/* splice.c — walk a raw deflate stream's block structure without inflating it.
 *
 * Nothing is output, so a literal's value, a length's value and every extra
 * bit are irrelevant: only how many bits each step spends matters.  That lets
 * one table lookup swallow more than one symbol, and lets two decoders share
 * the work of one block (see "the fast path" below).
 *
 * Table entries (uint32_t):
 *   bits  0-7   NBITS: bits the entry consumes, extra bits included (<= 28);
 *               for a SUB entry, the width of its subtable
 *   bits  8-15  SPAN: how many low index bits the entry's codes occupy; extra
 *               bits lie beyond and need not be known.  0x80+ for SUB/BAD.
 *   bits 16-19  flags MATCH (a distance follows), EOB, SUB, BAD
 *   bits 20-31  SUB: subtable offset past the primary table (<= 570).
 *               Code-length-code entries hold their symbol here instead.
 *
 * Literal/length table: SPLICE_LL_BITS = 12 primary bits, 13..15-bit codes
 * through one level of subtables.  Besides single symbols, a primary entry
 * may be folded:
 *   - a whole match: length code + its extra bits + distance code all within
 *     the 12 index bits, then the distance extra bits (NBITS <= 12 + 13 = 25);
 *     nearly every match of level 6 output folds, so a match usually costs
 *     one lookup and no branch;
 *   - a literal followed by whatever entry fits the remaining index bits
 *     (literal, EOB, length, whole match), when splice_fold_pays().
 * Distance table: SPLICE_D_BITS = 10 primary bits, extra bits counted in
 * (NBITS <= 15 + 13 = 28).  12 and 10 keep the hot tables (~20 KiB) in L1d
 * while covering nearly all codes that level 1-9 output uses, and make the
 * per-block build (~4096 + 1024 entries, a few microseconds) cheap next to a
 * block of several thousand steps (a 10- or 11-bit lit/len table measured
 * no better).
 *
 * Subtable space: under a complete code (the only kind with long codes), the
 * codes sharing a primary prefix form a complete subtree of depth D <= 15 - r
 * holding >= D + 1 codes, and its subtable has 2^D entries.  With n symbols the
 * worst case spends the codes on as many depth-(15 - r) subtrees as possible,
 * which SPLICE_SUB_BOUND counts: 570 entries for r = 12, n = 286 and 160 for
 * r = 10, n = 30 (the builder still checks the bound, defensively).
 *
 * End of input: the fast path runs only while SPLICE_MARGIN bytes remain;
 * near the end bytes come one at a time and zero "ghost" bytes stand in past
 * len (never read).  Consuming a ghost bit is caught at the next refill or
 * block end, and every step consumes >= 1 bit, so garbage fails fast and
 * never loops.  All state lives on the stack (~40 KiB); no allocation.
 */
#include "splice.h"
#include "le.h"

#include <string.h>

#define SPLICE_LL_BITS 12
#define SPLICE_D_BITS 10
#define SPLICE_CL_BITS 7 /* code-length codes are at most 7 bits: no subtables */
#define SPLICE_LL_MASK ((1u << SPLICE_LL_BITS) - 1)
#define SPLICE_D_MASK ((1u << SPLICE_D_BITS) - 1)

#define SPLICE_SUB_BOUND(r, n)                                                 \
    ((((n) / (16 - (r))) << (15 - (r))) +                                      \
     ((n) % (16 - (r)) >= 2 ? 1 << ((n) % (16 - (r)) - 1) : 0))
#define SPLICE_LL_SIZE ((1u << SPLICE_LL_BITS) + SPLICE_SUB_BOUND(SPLICE_LL_BITS, 286))
#define SPLICE_D_SIZE ((1u << SPLICE_D_BITS) + SPLICE_SUB_BOUND(SPLICE_D_BITS, 30))

#define SPLICE_NBITS(e) ((e) & 0xffu)
#define SPLICE_SPAN(e) (((e) >> 8) & 0xffu)
#define SPLICE_F_MATCH 0x10000u
#define SPLICE_F_EOB 0x20000u
#define SPLICE_F_SUB 0x40000u
#define SPLICE_F_BAD 0x80000u
#define SPLICE_FLAGS 0xf0000u
#define SPLICE_BAD_ENTRY (SPLICE_F_BAD | 0xff00u) /* holes of an incomplete code */

/* The decode step is used in four loops; each must get its own copy with the
 * decoder state in registers, not a call through memory. */
#if defined(__GNUC__)
#define splice_likely(x) __builtin_expect(!!(x), 1)
#define splice_unlikely(x) __builtin_expect(!!(x), 0)
#define SPLICE_INLINE inline __attribute__((always_inline))
#else
#define splice_likely(x) (x)
#define splice_unlikely(x) (x)
#define SPLICE_INLINE inline
#endif

enum splice_alpha { SPLICE_CL, SPLICE_LL, SPLICE_D };

/* Per-walk state besides the bit reader. */
struct splice_tables {
    uint32_t ll[SPLICE_LL_SIZE];
    uint32_t d[SPLICE_D_SIZE];
    uint32_t cl[1u << SPLICE_CL_BITS];
    int fixed;          /* ll/d hold the fixed code: reuse for the next fixed block */
    uint64_t last_bits; /* size of the last block: the next is guessed alike */
};

/* The codes that fit a primary table, in canonical order, for the folds. */
struct splice_codes {
    unsigned n;
    uint16_t rev[288], sym[288];
    uint8_t len[288];
};

struct splice_br {
    const uint8_t *start, *p, *end;
    uint64_t bb;    /* unconsumed bits, next bit lowest */
    unsigned cnt;   /* valid bits in bb, < 64 */
    unsigned ghost; /* zero bytes supplied past end */
};

/* ---- bit reader ----------------------------------------------------------- */

static inline uint64_t splice_load64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static uint64_t splice_pos(const struct splice_br *b)
{
    return ((uint64_t)(b->p - b->start) + b->ghost) * 8 - b->cnt;
}

/* Byte-wise refill for the last 7 bytes.  Ghost bytes only appear once p hit
 * end, so ghost * 8 > cnt means bits past the end were already consumed. */
static int splice_refill_slow(struct splice_br *b)
{
    if (b->ghost * 8 > b->cnt)
        return -1;
    while (b->cnt < 56) {
        if (b->p < b->end)
            b->bb |= (uint64_t)*b->p++ << b->cnt;
        else
            b->ghost++;
        b->cnt += 8;
    }
    return 0;
}

/* Needs 8 bytes at p.  Leaves cnt in [56, 63].  Bits of bb above cnt are
 * either zero or the very bytes the next load brings, so OR-ing them in again
 * is harmless. */
static inline void splice_refill_fast(struct splice_br *b)
{
    b->bb |= splice_load64(b->p) << b->cnt;
    b->p += (63 - b->cnt) >> 3;
    b->cnt |= 56;
}

static inline int splice_refill(struct splice_br *b)
{
    if (splice_likely(b->end - b->p >= 8)) {
        splice_refill_fast(b);
        return 0;
    }
    return splice_refill_slow(b);
}

static inline uint32_t splice_take(struct splice_br *b, unsigned n)
{
    uint32_t v = (uint32_t)b->bb & ((1u << n) - 1);
    b->bb >>= n;
    b->cnt -= n;
    return v;
}

/* ---- table building ------------------------------------------------------- */

/* What a symbol's entry holds besides its code length: flags and extra-bit
 * count.  BAD symbols get span 0x80+, past any fold's limit. */
#define SPLICE_BAD_BASE (SPLICE_F_BAD | 0x8000u)
#define SPLICE_M SPLICE_F_MATCH
static const uint32_t splice_ll_base[288] = {
    [256] = SPLICE_F_EOB,
    [257] = SPLICE_M,     [258] = SPLICE_M,     [259] = SPLICE_M,     [260] = SPLICE_M,
    [261] = SPLICE_M,     [262] = SPLICE_M,     [263] = SPLICE_M,     [264] = SPLICE_M,
    [265] = SPLICE_M + 1, [266] = SPLICE_M + 1, [267] = SPLICE_M + 1, [268] = SPLICE_M + 1,
    [269] = SPLICE_M + 2, [270] = SPLICE_M + 2, [271] = SPLICE_M + 2, [272] = SPLICE_M + 2,
    [273] = SPLICE_M + 3, [274] = SPLICE_M + 3, [275] = SPLICE_M + 3, [276] = SPLICE_M + 3,
    [277] = SPLICE_M + 4, [278] = SPLICE_M + 4, [279] = SPLICE_M + 4, [280] = SPLICE_M + 4,
    [281] = SPLICE_M + 5, [282] = SPLICE_M + 5, [283] = SPLICE_M + 5, [284] = SPLICE_M + 5,
    [285] = SPLICE_M,     [286] = SPLICE_BAD_BASE, [287] = SPLICE_BAD_BASE,
};
static const uint32_t splice_d_base[32] = {
    0,  0,  0,  0,  1,  1,  2,  2,  3,  3,  4,  4,  5,  5,  6,  6,
    7,  7,  8,  8,  9,  9,  10, 10, 11, 11, 12, 12, 13, 13, SPLICE_BAD_BASE, SPLICE_BAD_BASE,
};
#undef SPLICE_M

/* Single-symbol entry for a code of len bits: NBITS len + extra, SPAN len. */
static SPLICE_INLINE uint32_t splice_entry(enum splice_alpha a, unsigned sym, unsigned len)
{
    uint32_t code = len * 0x101u;
    if (a == SPLICE_CL)
        return code | (uint32_t)sym << 20;
    return code + (a == SPLICE_LL ? splice_ll_base : splice_d_base)[sym];
}

/* The low len bits of code, in reverse order: deflate sends codes MSB first,
 * we index LSB first.  Each code's reversal is independent of the last, so
 * the table builder's loop has no chain through it. */
static inline unsigned splice_reverse(unsigned code, unsigned len)
{
    unsigned x = code;
    x = (x & 0x5555u) << 1 | (x >> 1 & 0x5555u);
    x = (x & 0x3333u) << 2 | (x >> 2 & 0x3333u);
    x = (x & 0x0f0fu) << 4 | (x >> 4 & 0x0f0fu);
    x = (x & 0x00ffu) << 8 | (x >> 8 & 0x00ffu);
    return x >> (16 - len);
}

/* Index of the highest set bit of x != 0. */
static inline unsigned splice_top_bit(unsigned x)
{
#if defined(__GNUC__)
    return 31u - (unsigned)__builtin_clz(x);
#else
    unsigned h = 0;
    while (x >>= 1)
        h++;
    return h;
#endif
}

/* Next code of the same length, kept bit-reversed (deflate sends codes MSB
 * first, we index LSB first).  Adding 1 turns the code's trailing ones to
 * zeros and its lowest zero to one; reversed, that is the highest zero below
 * bit len.  A longer code's reversal is the same value, so lengthening needs
 * no work. */
static inline unsigned splice_rev_inc(unsigned rev, unsigned len)
{
    unsigned zeros = ~rev & ((1u << len) - 1), h;
    if (zeros == 0)
        return 0; /* that was the last code */
    h = splice_top_bit(zeros);
    return (rev & ((1u << h) - 1)) | 1u << h;
}

/* Codes of 1..15 bits: zlib's rules.  Over-subscribed is always wrong; an
 * incomplete code passes only for lit/len and distances with max length <= 1
 * (a lone 1-bit code, or no distance codes at all); its holes decode as BAD. */
static int splice_check_lengths(const unsigned count[16], enum splice_alpha a,
                                unsigned *maxlen)
{
    int left = 1;
    *maxlen = 0;
    for (unsigned len = 1; len <= 15; len++) {
        left = 2 * left - (int)count[len];
        if (left < 0)
            return -1;
        if (count[len])
            *maxlen = len;
    }
    return left > 0 && (a == SPLICE_CL || *maxlen > 1) ? -1 : 0;
}

/* Width of the subtable for the prefix starting at a len-bit code: the depth of
 * that prefix's complete subtree, found from the codes still to be placed. */
static unsigned splice_sub_bits(const unsigned remain[16], unsigned len, unsigned r)
{
    unsigned sb = len - r;
    int left = 1 << sb;
    while (r + sb < 15) {
        left -= (int)remain[r + sb];
        if (left <= 0)
            break;
        sb++;
        left <<= 1;
    }
    return sb;
}

/* Codes longer than r bits, sorted[k..] on: one subtable per r-bit prefix. */
static int splice_build_subtables(uint32_t *tab, unsigned cap, unsigned r,
                                  const uint16_t *sorted, unsigned k, unsigned rev,
                                  unsigned count[16], unsigned maxlen, enum splice_alpha a)
{
    unsigned prefix = ~0u, sub = 0, next = 1u << r, sb = 0;
    for (unsigned len = r + 1; len <= maxlen; len++) {
        for (; count[len] > 0; count[len]--, k++) {
            if ((rev & ((1u << r) - 1)) != prefix) {
                prefix = rev & ((1u << r) - 1);
                sb = splice_sub_bits(count, len, r);
                if (next + (1u << sb) > cap)
                    return -1;
                tab[prefix] = SPLICE_F_SUB | 0xff00u | sb | (next - (1u << r)) << 20;
                sub = next;
                next += 1u << sb;
            }
            uint32_t e = splice_entry(a, sorted[k], len);
            for (unsigned i = rev >> r; i < 1u << sb; i += 1u << (len - r))
                tab[sub + i] = e;
            rev = splice_rev_inc(rev, len);
        }
    }
    return 0;
}

/* tab[n..2n) = tab[0..n) for n a power of 2, in 64-byte pieces once n allows
 * (memcpy of a variable size costs more than these small copies). */
static void splice_double(uint32_t *tab, unsigned n)
{
    if (n < 16) {
        for (unsigned i = 0; i < n; i++)
            tab[n + i] = tab[i];
        return;
    }
    for (unsigned i = 0; i < n; i += 16)
        memcpy(tab + n + i, tab + i, 16 * sizeof *tab);
}

/* count[l] = how many of lens[0..n) are l (count[0] cleared), and the
 * symbols of lengths 1..15 sorted by length, then symbol, at sorted[0..).
 * Both halves of the symbols go at once: runs of equal lengths make a chain
 * of increments to one counter, and two independent chains run twice as
 * fast. */
static void splice_count_sort(const uint8_t *lens, unsigned n, unsigned count[16],
                              uint16_t *sorted)
{
    unsigned h = n / 2, lo[16] = {0}, hi[16] = {0}, at_lo[16], at_hi[16], s, at = 0;
    for (s = 0; s < h; s++) {
        lo[lens[s]]++;
        hi[lens[s + h]]++;
    }
    if (h + s < n)
        hi[lens[h + s]]++;
    for (unsigned l = 1; l < 16; l++) {
        count[l] = lo[l] + hi[l];
        at_lo[l] = at, at_hi[l] = at + lo[l];
        at += count[l];
    }
    count[0] = 0; /* unused symbols go after the rest, out of the way */
    at_lo[0] = at, at_hi[0] = at + lo[0];
    for (s = 0; s < h; s++) {
        sorted[at_lo[lens[s]]++] = (uint16_t)s;
        sorted[at_hi[lens[s + h]]++] = (uint16_t)(s + h);
    }
    if (h + s < n)
        sorted[at_hi[lens[h + s]]++] = (uint16_t)(h + s);
}

/* Canonical Huffman decode table with one subtable level.  Codes up to r bits
 * are placed by doubling: with the table covering len - 1 bits, copy it to
 * cover len bits (a shorter code ignores the new bit), then drop in the len-bit
 * codes.  Slots that end up unclaimed are holes of an incomplete code and keep
 * the BAD entry seeded at [0]; for a complete code every slot is claimed.
 * The primary codes are listed in *pc when asked, for the folds. */
static int splice_build(uint32_t *tab, unsigned cap, unsigned r, const uint8_t *lens,
                        unsigned n, enum splice_alpha a, struct splice_codes *pc)
{
    unsigned count[16], maxlen, rev = 0, k = 0, code = 0;
    uint16_t sorted[288];

    splice_count_sort(lens, n, count, sorted);
    if (splice_check_lengths(count, a, &maxlen))
        return -1;

    tab[0] = SPLICE_BAD_ENTRY;
    for (unsigned len = 1; len <= r; len++, code <<= 1) {
        splice_double(tab, 1u << (len - 1));
        for (unsigned c = 0; c < count[len]; c++, k++, code++) {
            rev = splice_reverse(code, len);
            tab[rev] = splice_entry(a, sorted[k], len);
            if (pc != NULL) {
                pc->rev[k] = (uint16_t)rev;
                pc->sym[k] = sorted[k];
                pc->len[k] = (uint8_t)len;
            }
        }
    }
    rev = splice_reverse(code >> 1, r); /* where the subtables' codes start */
    if (pc != NULL)
        pc->n = k;
    return maxlen <= r ? 0
                       : splice_build_subtables(tab, cap, r, sorted, k, rev, count, maxlen, a);
}

/* A length code's slots become whole matches where the distance code also
 * lies in the index, after the length's extra bits (whose values we skip).
 * Adding (len + extra) to both NBITS and SPAN of a distance entry gives the
 * whole match: neither field can carry (<= 25, <= 12). */
static void splice_fold_match(uint32_t *ll, const uint32_t *d, unsigned rev, unsigned len,
                              unsigned extra)
{
    const unsigned r = SPLICE_LL_BITS;
    const uint32_t single = ll[rev], add = (len + extra) * 0x101u;
    const uint32_t lim = (r - len - extra) << 8;
    if (len + extra >= r)
        return;
    for (unsigned j = 0, i = rev; j < 1u << (r - len); j++, i += 1u << len) {
        uint32_t de = d[(j >> extra) & SPLICE_D_MASK];
        ll[i] = (de & 0xff00u) <= lim ? de + add : single;
    }
}

/* A literal's slots take on the entry that follows it when that entry's codes
 * lie in the rest of the index (its span fits): literal + literal, + EOB,
 * + length, or + whole match.  snap is the table before any literal fold, so
 * each slot is combined with a single-symbol or whole-match entry; SUB and BAD
 * entries never fit.  NBITS stays <= 25: the codes fit 12 bits, and only a
 * whole match adds extra bits beyond them (<= 13). */
static void splice_fold_literal(uint32_t *ll, const uint32_t *snap, unsigned rev, unsigned len)
{
    const unsigned r = SPLICE_LL_BITS;
    const uint32_t single = ll[rev], add = len * 0x101u, lim = (r - len) << 8;
    for (unsigned j = 0, i = rev; j < 1u << (r - len); j++, i += 1u << len) {
        uint32_t nx = snap[j];
        ll[i] = (nx & 0xff00u) <= lim ? nx + add : single;
    }
}

/* Whether folding literals pays for itself in this block.  It visits every
 * slot of each literal short enough to have a follower, yet only some of
 * those fold (about 1 in 5 at level 6), so in a block of few steps it costs
 * more than it saves.  Taking a code of length l to be used with chance
 * 2^-l, a step folds with chance p = sum over literals of 2^-l times the
 * share of codes no longer than r - l.  The block is guessed to be as long as
 * the last one; SPLICE_FOLD_K = 10 stands for ~10 bits a step and a step
 * costing ~1 visited slot (measured: 5 to 20 do about as well). */
#define SPLICE_FOLD_K 10
static int splice_fold_pays(const struct splice_codes *c, unsigned minlen, uint64_t est_bits)
{
    const unsigned r = SPLICE_LL_BITS;
    uint64_t lit[16] = {0}, upto[16] = {0}, p = 0, visits = 0;
    for (unsigned k = 0; k < c->n; k++) {
        upto[c->len[k]] += 1u << (r - c->len[k]); /* in 2^-r units */
        if (c->sym[k] < 256)
            lit[c->len[k]] += 1u << (r - c->len[k]);
    }
    for (unsigned l = 1; l <= r; l++)
        upto[l] += upto[l - 1];
    for (unsigned l = 1; l + minlen <= r; l++) {
        p += lit[l] * upto[r - l]; /* in 2^-2r units */
        visits += lit[l];
    }
    return est_bits * p > visits * SPLICE_FOLD_K << (2 * r); /* < 2^52 both */
}

/* Folding costs one pass over the folded slots (<= 4096).  Whole matches
 * nearly always fold and pay; literals are folded when splice_fold_pays().
 * A literal only folds when some code is short enough to follow it, which
 * spares flat literal codes (poorly compressible data) nearly all of it. */
static void splice_fold(uint32_t *ll, const uint32_t *d, const struct splice_codes *c,
                        uint32_t *snap, uint64_t est_bits)
{
    const unsigned r = SPLICE_LL_BITS;
    unsigned minlen = c->n ? c->len[0] : r, minlit = r;

    for (unsigned k = 0; k < c->n; k++) {
        if (c->sym[k] > 256 && c->sym[k] < 286)
            splice_fold_match(ll, d, c->rev[k], c->len[k], splice_ll_base[c->sym[k]] & 0xff);
        if (c->sym[k] < 256 && c->len[k] < minlit)
            minlit = c->len[k];
    }
    if (minlit + minlen > r || !splice_fold_pays(c, minlen, est_bits))
        return;
    memcpy(snap, ll, sizeof *snap << (r - minlit)); /* minlit >= 1: fits */
    for (unsigned k = 0; k < c->n; k++)
        if (c->sym[k] < 256 && c->len[k] + minlen <= r)
            splice_fold_literal(ll, snap, c->rev[k], c->len[k]);
}

/* lens: nlit lit/len code lengths, then ndist distance code lengths. */
static int splice_build_ll_d(struct splice_tables *t, const uint8_t *lens,
                             unsigned nlit, unsigned ndist)
{
    struct splice_codes c;
    uint32_t snap[1u << (SPLICE_LL_BITS - 1)];
    if (splice_build(t->d, SPLICE_D_SIZE, SPLICE_D_BITS, lens + nlit, ndist, SPLICE_D,
                     NULL) ||
        splice_build(t->ll, SPLICE_LL_SIZE, SPLICE_LL_BITS, lens, nlit, SPLICE_LL, &c))
        return -1;
    splice_fold(t->ll, t->d, &c, snap, t->last_bits);
    return 0;
}

static int splice_build_fixed(struct splice_tables *t)
{
    uint8_t lens[288 + 32];
    memset(lens, 8, 144);
    memset(lens + 144, 9, 112);
    memset(lens + 256, 7, 24);
    memset(lens + 280, 8, 8);
    memset(lens + 288, 5, 32);
    return splice_build_ll_d(t, lens, 288, 32);
}

/* ---- the fast path: two decoders at once ------------------------------------
 *
 * Decoding is one long dependency chain (look up, shift, look up...), so a
 * lone decoder leaves the core mostly idle.  Huffman codes resynchronize: a
 * decoder started at an arbitrary bit soon falls onto the true symbol
 * boundaries.  So while decoder A walks a block, decoder B starts a gap ahead
 * and records where its first steps start.  When A gets there and finds
 * itself at one of those positions, B's walk from there is exactly what A's
 * would have been (same table, same bits, deterministic), and A jumps to B's
 * current state.  If A passes them all, B's work is dropped.  B never reports
 * anything A did not confirm, so the result is the plain walk's, and a round
 * costs at most what A alone would (B runs beside it).  Every round moves A
 * forward (B starts >= 64 bytes past A's load pointer), so rounds end.  On
 * level 6 output of compressible data A meets B in ~99% of rounds within ~20
 * steps; flat codes (poorly compressible data, nearly fixed lengths) take
 * hundreds of steps and miss more often, hence the long record.  Measured:
 * ~1.1x faster on compressible data (short blocks), ~1.4x on flat codes. */

#define SPLICE_MARGIN 24       /* fast-path bytes: a step moves p <= 2 x 7, loads 8 */
#define SPLICE_GAP_MIN 512     /* bits; below this a round costs more than it saves */
#define SPLICE_GAP_MAX 65536   /* bits; longer only delays B's help at a block's end */
#define SPLICE_FIRST_BITS 65536 /* guess for a stream's first block */
#define SPLICE_REC 1024        /* B steps recorded */

/* Blocks of a stream tend to be alike: aim for about four rounds per block,
 * and leave B room (room >= 2 * SPLICE_GAP_MIN bits ahead of A). */
static uint64_t splice_gap(uint64_t last_block_bits, uint64_t room)
{
    uint64_t g = last_block_bits / 4;
    g = g < SPLICE_GAP_MIN ? SPLICE_GAP_MIN : g > SPLICE_GAP_MAX ? SPLICE_GAP_MAX : g;
    return g < room / 2 ? g : room / 2;
}

/* A decoder in the fast region: bb holds cnt valid bits (low 8 bits of cnt
 * meaningful, see splice_step), w preloads the 8 bytes at p. */
struct splice_chain {
    const uint8_t *p;
    uint64_t bb, w;
    uint32_t cnt;
};

/* Decoder B: its state, how it stopped (if it did), and where its first
 * SPLICE_REC steps started, in bits past x (rec: an array the round owns, so
 * that copying this struct into registers stays cheap). */
enum splice_bstate { SPLICE_B_RUN, SPLICE_B_EOB, SPLICE_B_BAD, SPLICE_B_END };
struct splice_b {
    struct splice_chain c;
    enum splice_bstate state;
    unsigned n;
    uint64_t x;
    uint32_t *rec;
};

enum splice_res { SPLICE_R_BAD = -1, SPLICE_R_END, SPLICE_R_EOB, SPLICE_R_SYNC, SPLICE_R_MISS };

static inline uint64_t splice_chain_pos(const struct splice_chain *c, const uint8_t *start)
{
    return (uint64_t)(c->p - start) * 8 - (c->cnt & 63);
}

/* Start a decoder at bit x; reads 15 bytes from x / 8.  The bits above cnt
 * are the very bits the next refill brings, as the refill requires. */
static inline void splice_chain_at(struct splice_chain *c, const uint8_t *start, uint64_t x)
{
    const uint8_t *q = start + (x >> 3);
    c->bb = splice_load64(q) >> (x & 7);
    c->cnt = 56 - (unsigned)(x & 7);
    c->p = q + 7;
    c->w = splice_load64(c->p);
}

/* Refill from w, loaded one step early so the load is off the critical path,
 * then preload the next 8 bytes: moves p <= 7 bytes, loads 8 past it. */
static SPLICE_INLINE void splice_chain_refill(struct splice_chain *c)
{
    c->bb |= c->w << (c->cnt & 63);
    c->p += 7 - ((c->cnt >> 3) & 7);
    c->cnt |= 56;
    c->w = splice_load64(c->p);
}

/* One lookup and, for a length, its distance.  Each index is taken from bb
 * before the refill that goes with it, so the refill runs beside the lookup
 * rather than before it: >= 12 bits are always left (31 after a primary
 * entry, 36 before a distance, 28 after it), and the chain per step is just
 * mask, load, shift.  cnt -= e subtracts the other fields too; only cnt's low
 * 8 bits mean anything and they never borrow.  Returns the lit/len entry
 * (flags EOB or BAD for the caller), or a BAD entry for a bad distance. */
static SPLICE_INLINE uint32_t splice_step(struct splice_chain *c, const uint32_t *ll,
                                          const uint32_t *d)
{
    uint32_t e = ll[c->bb & SPLICE_LL_MASK];
    splice_chain_refill(c);
    if (splice_unlikely(e & SPLICE_F_SUB))
        e = ll[(1u << SPLICE_LL_BITS) + (e >> 20) +
               ((c->bb >> SPLICE_LL_BITS) & ((1u << (e & 0xff)) - 1))];
    c->bb >>= e & 63;
    c->cnt -= e;
    if (splice_unlikely(e & SPLICE_F_MATCH)) {
        uint32_t de = d[c->bb & SPLICE_D_MASK];
        splice_chain_refill(c);
        if (splice_unlikely(de & (SPLICE_F_SUB | SPLICE_F_BAD))) {
            if (de & SPLICE_F_BAD)
                return SPLICE_BAD_ENTRY;
            de = d[(1u << SPLICE_D_BITS) + (de >> 20) +
                   ((c->bb >> SPLICE_D_BITS) & ((1u << (de & 0xff)) - 1))];
        }
        c->bb >>= de & 63;
        c->cnt -= de;
    }
    return e;
}

static inline enum splice_res splice_stop(uint32_t e)
{
    return e & SPLICE_F_BAD ? SPLICE_R_BAD : SPLICE_R_EOB;
}

/* A alone until the block ends or p reaches lim. */
static enum splice_res splice_run_one(struct splice_chain *pa, const uint8_t *lim,
                                      const struct splice_tables *t)
{
    struct splice_chain a = *pa; /* a local copy stays in registers */
    enum splice_res r = SPLICE_R_END;
    while (splice_likely(a.p < lim)) {
        uint32_t e = splice_step(&a, t->ll, t->d);
        if (splice_unlikely(e & (SPLICE_F_EOB | SPLICE_F_BAD))) {
            r = splice_stop(e);
            break;
        }
    }
    *pa = a;
    return r;
}

/* One step of B, which stops at an EOB or BAD, or at lim.  B records where
 * each of its steps starts: A at such a position will take the same steps,
 * so everything B saw from there on, its stop included, is A's too.  (Where
 * a step ends says nothing about how B got there: no position after a stop
 * is recorded.) */
static SPLICE_INLINE void splice_b_step(struct splice_b *b, const uint8_t *start,
                                        const uint8_t *lim, const struct splice_tables *t)
{
    if (splice_unlikely(b->state != SPLICE_B_RUN))
        return;
    if (splice_unlikely(b->c.p >= lim)) {
        b->state = SPLICE_B_END;
        return;
    }
    uint32_t e = splice_step(&b->c, t->ll, t->d);
    if (splice_unlikely(e & (SPLICE_F_EOB | SPLICE_F_BAD)))
        b->state = e & SPLICE_F_BAD ? SPLICE_B_BAD : SPLICE_B_EOB;
    else if (splice_unlikely(b->n < SPLICE_REC))
        b->rec[b->n++] = (uint32_t)(splice_chain_pos(&b->c, start) - b->x);
}

/* Both decoders step until A's load pointer reaches meet, near B's start. */
static enum splice_res splice_run_two(struct splice_chain *pa, struct splice_b *pb,
                                      const uint8_t *start, const uint8_t *meet,
                                      const uint8_t *lim, const struct splice_tables *t)
{
    struct splice_chain a = *pa; /* local copies stay in registers */
    struct splice_b b = *pb;
    enum splice_res r = SPLICE_R_END;
    while (splice_likely(a.p < meet)) {
        uint32_t e = splice_step(&a, t->ll, t->d);
        if (splice_unlikely(e & (SPLICE_F_EOB | SPLICE_F_BAD))) {
            r = splice_stop(e);
            break;
        }
        splice_b_step(&b, start, lim, t);
    }
    *pa = a, *pb = b;
    return r;
}

/* Both step on while A looks for a position where a step of B started.
 * Once A is past them all, B is on a path of its own: a miss. */
static enum splice_res splice_meet(struct splice_chain *pa, struct splice_b *pb,
                                   const uint8_t *start, const uint8_t *lim,
                                   const struct splice_tables *t)
{
    struct splice_chain a = *pa;
    struct splice_b b = *pb;
    enum splice_res r;
    unsigned i = 0;
    for (;;) {
        uint64_t pos = splice_chain_pos(&a, start);
        while (i < b.n && b.x + b.rec[i] < pos)
            i++;
        if (i == b.n || b.x + b.rec[i] == pos) {
            r = i == b.n ? SPLICE_R_MISS : SPLICE_R_SYNC;
            break;
        }
        if (a.p >= lim) {
            r = SPLICE_R_END;
            break;
        }
        uint32_t e = splice_step(&a, t->ll, t->d);
        if (splice_unlikely(e & (SPLICE_F_EOB | SPLICE_F_BAD))) {
            r = splice_stop(e);
            break;
        }
        splice_b_step(&b, start, lim, t);
    }
    *pa = a, *pb = b;
    return r;
}

/* One round: launch B gap bits ahead, run both, meet.  Returns A's outcome
 * (B's, once A has met it), or SPLICE_R_MISS to go on from where A is. */
static enum splice_res splice_round(struct splice_chain *a, uint64_t gap,
                                    const uint8_t *start, const uint8_t *lim,
                                    const struct splice_tables *t)
{
    static const enum splice_res b_end[] = {SPLICE_R_MISS, SPLICE_R_EOB, SPLICE_R_BAD,
                                            SPLICE_R_END};
    uint32_t rec[SPLICE_REC];
    struct splice_b b;
    enum splice_res r;

    b.x = splice_chain_pos(a, start) + gap;
    splice_chain_at(&b.c, start, b.x);
    b.state = SPLICE_B_RUN;
    b.rec = rec;
    b.rec[0] = 0;
    b.n = 1;
    r = splice_run_two(a, &b, start, start + (b.x >> 3), lim, t);
    if (r != SPLICE_R_END)
        return r;
    r = splice_meet(a, &b, start, lim, t);
    if (r != SPLICE_R_SYNC)
        return r;
    *a = b.c;
    return b_end[b.state];
}

/* Decodes while >= SPLICE_MARGIN bytes remain.  Returns 1 at the end of the
 * block, 0 near the end of the input (state saved for the byte-wise tail),
 * -1 on error.  After a sync A may already be past lim (B checks lim before
 * each step, so by one step at most), hence the check at the top.  B starts
 * below lim, so its first 15 bytes are in bounds too. */
static int splice_huffman_fast(struct splice_br *br, const struct splice_tables *t)
{
    const uint8_t *start = br->start, *lim;
    struct splice_chain a;
    enum splice_res r;

    if (br->end - br->p < SPLICE_MARGIN)
        return 0;
    lim = br->end - SPLICE_MARGIN;
    a.p = br->p, a.bb = br->bb, a.cnt = br->cnt, a.w = splice_load64(a.p);
    do {
        uint64_t room = a.p < lim ? (uint64_t)(lim - a.p) * 8 : 0; /* bits, at least */
        if (room == 0)
            r = SPLICE_R_END;
        else if (room < 2 * SPLICE_GAP_MIN)
            r = splice_run_one(&a, lim, t);
        else
            r = splice_round(&a, splice_gap(t->last_bits, room), start, lim, t);
    } while (r == SPLICE_R_MISS);
    if (r == SPLICE_R_BAD)
        return -1;
    br->p = a.p, br->bb = a.bb, br->cnt = a.cnt & 63;
    return r == SPLICE_R_EOB;
}

/* The same decode for the last bytes, refilling byte by byte. */
static int splice_huffman_tail(struct splice_br *b, const struct splice_tables *t)
{
    for (;;) {
        if (splice_refill(b))
            return -1;
        uint32_t e = t->ll[b->bb & SPLICE_LL_MASK];
        if (e & SPLICE_F_SUB)
            e = t->ll[(1u << SPLICE_LL_BITS) + (e >> 20) +
                      ((b->bb >> SPLICE_LL_BITS) & ((1u << (e & 0xff)) - 1))];
        if (e & SPLICE_F_BAD)
            return -1;
        splice_take(b, e & 0xff);
        if (e & SPLICE_F_EOB)
            return 0;
        if (!(e & SPLICE_F_MATCH))
            continue;
        e = t->d[b->bb & SPLICE_D_MASK];
        if (e & SPLICE_F_SUB)
            e = t->d[(1u << SPLICE_D_BITS) + (e >> 20) +
                     ((b->bb >> SPLICE_D_BITS) & ((1u << (e & 0xff)) - 1))];
        if (e & SPLICE_F_BAD)
            return -1;
        splice_take(b, e & 0xff);
    }
}

/* ---- blocks --------------------------------------------------------------- */

static int splice_huffman(struct splice_br *b, const struct splice_tables *t)
{
    if (splice_refill(b))
        return -1;
    int r = splice_huffman_fast(b, t);
    return r < 0 ? -1 : r > 0 ? 0 : splice_huffman_tail(b, t);
}

/* A stored block: realign to the byte after the header and jump over LEN. */
static int splice_stored(struct splice_br *b)
{
    uint64_t byte = (splice_pos(b) + 7) >> 3;
    size_t len = (size_t)(b->end - b->start);
    if (byte > len || len - byte < 4)
        return -1;
    const uint8_t *q = b->start + byte;
    unsigned n = le_get16(q), nn = le_get16(q + 2);
    if (n != (nn ^ 0xffffu) || len - byte - 4 < n)
        return -1;
    b->p = q + 4 + n;
    b->bb = 0;
    b->cnt = 0;
    b->ghost = 0;
    return 0;
}

/* Code lengths for lit/len then distance codes, run-length coded by the
 * code-length code; repeats may cross from one set into the other. */
static int splice_read_lengths(struct splice_br *b, const uint32_t *cl, uint8_t *lens,
                               unsigned total)
{
    struct splice_br r = *b; /* a local copy stays in registers */
    unsigned k = 0;
    while (k < total) {
        if (splice_likely(r.end - r.p >= 8)) {
            splice_refill_fast(&r);
        } else {
            *b = r;
            if (splice_refill_slow(b))
                return -1;
            r = *b;
        }
        uint32_t e = cl[r.bb & ((1u << SPLICE_CL_BITS) - 1)];
        splice_take(&r, e & 0xff);
        unsigned sym = e >> 20, rep;
        uint8_t v = 0;
        if (sym < 16) {
            lens[k++] = (uint8_t)sym;
            continue;
        }
        if (sym == 16) {
            if (k == 0)
                return -1;
            v = lens[k - 1];
            rep = 3 + splice_take(&r, 2);
        } else {
            rep = sym == 17 ? 3 + splice_take(&r, 3) : 11 + splice_take(&r, 7);
        }
        if (rep > total - k)
            return -1;
        memset(lens + k, v, rep);
        k += rep;
    }
    *b = r;
    return 0;
}

static int splice_dynamic(struct splice_br *b, struct splice_tables *t)
{
    static const uint8_t order[19] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                      11, 4,  12, 3, 13, 2, 14, 1, 15};
    uint8_t cl[19] = {0}, lens[286 + 30];

    if (splice_refill(b))
        return -1;
    unsigned nlit = 257 + splice_take(b, 5), ndist = 1 + splice_take(b, 5);
    unsigned ncl = 4 + splice_take(b, 4);
    if (nlit > 286 || ndist > 30)
        return -1;
    for (unsigned i = 0; i < ncl; i++) { /* 19 * 3 = 57 bits: more than a refill */
        if (b->cnt < 3 && splice_refill(b))
            return -1;
        cl[order[i]] = (uint8_t)splice_take(b, 3);
    }
    t->fixed = 0;
    if (splice_build(t->cl, 1u << SPLICE_CL_BITS, SPLICE_CL_BITS, cl, 19, SPLICE_CL, NULL) ||
        splice_read_lengths(b, t->cl, lens, nlit + ndist))
        return -1;
    if (lens[256] == 0)
        return -1; /* a block that cannot end */
    return splice_build_ll_d(t, lens, nlit, ndist);
}

static int splice_block(struct splice_br *b, struct splice_tables *t, unsigned type)
{
    switch (type) {
    case 0:
        return splice_stored(b);
    case 1:
        if (!t->fixed) {
            if (splice_build_fixed(t))
                return -1;
            t->fixed = 1;
        }
        return splice_huffman(b, t);
    case 2:
        return splice_dynamic(b, t) ? -1 : splice_huffman(b, t);
    default:
        return -1;
    }
}

/* ---- public --------------------------------------------------------------- */

int splice_walk(const uint8_t *buf, size_t len, struct splice_info *info)
{
    struct splice_tables t;
    struct splice_br b;
    uint64_t hdr, end;
    uint32_t nblocks = 0;
    unsigned h;

    if (buf == NULL || len == 0 || info == NULL)
        return -1;
    b.start = b.p = buf, b.end = buf + len;
    b.bb = 0, b.cnt = 0, b.ghost = 0;
    t.fixed = 0;
    t.last_bits = SPLICE_FIRST_BITS;
    do {
        if (splice_refill(&b) || nblocks == UINT32_MAX)
            return -1;
        hdr = splice_pos(&b);
        h = splice_take(&b, 3);
        nblocks++;
        if (splice_block(&b, &t, h >> 1))
            return -1;
        t.last_bits = splice_pos(&b) - hdr;
    } while (!(h & 1));

    end = splice_pos(&b);
    if (b.ghost * 8 > b.cnt || (end + 7) >> 3 != len)
        return -1; /* ran past the end, or bytes follow the final block */
    if ((end & 7) && (buf[len - 1] >> (end & 7)) != 0)
        return -1; /* padding must be zero: splice_fix writes zeros there */
    info->last_hdr_bit = hdr;
    info->end_bit = end;
    info->nblocks = nblocks;
    return 0;
}

int splice_fix(uint8_t *buf, size_t len, size_t cap, size_t *newlen)
{
    struct splice_info in;

    if (newlen == NULL || len > SIZE_MAX - SPLICE_EXTRA || cap < len + SPLICE_EXTRA ||
        splice_walk(buf, len, &in))
        return -1;
    buf[in.last_hdr_bit >> 3] &= (uint8_t) ~(1u << (in.last_hdr_bit & 7));
    /* Empty stored block: header 000 goes into the zero padding if 3 bits
     * remain there, else into a fresh zero byte; then LEN = 0, NLEN = ~0. */
    unsigned used = (unsigned)(in.end_bit & 7);
    size_t n = len;
    if (used == 0 || used > 5)
        buf[n++] = 0;
    buf[n++] = 0;
    buf[n++] = 0;
    buf[n++] = 0xff;
    buf[n++] = 0xff;
    *newlen = n;
    return 0;
}
