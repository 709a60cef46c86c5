/* check_splice.c — unit tests for splice_walk() / splice_fix().
 *
 * zlib is the referee: it inflates with Z_BLOCK one block at a time, which
 * yields every block's end bit, and a 32 KiB zero dictionary makes every
 * distance legal, so its verdict is purely structural like splice_walk()'s.
 * Streams come from libdeflate at every level, from a small deflate writer of
 * our own (random complete Huffman codes up to 15 bits, every block type), and
 * from damaging those (truncation, trailing bytes, bit flips, random bytes).
 */
#include "check_util.h"

#include <check.h>
#include <libdeflate.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "splice.h"

/* ---- helpers: randomness, data, compression ------------------------------ */

enum kind { K_RANDOM, K_TEXT, K_ZERO, K_RUNS, K_SMALLALPHA, K_MIXED, K_NKINDS };

static void gen_text(uint8_t *buf, size_t n)
{
    static char vocab[256][12];
    static int ready;
    if (!ready) {
        for (int i = 0; i < 256; i++) {
            int len = 2 + (int)rnd_below(9);
            for (int j = 0; j < len; j++)
                vocab[i][j] = (char)('a' + rnd_below(26));
            vocab[i][len] = 0;
        }
        ready = 1;
    }
    size_t k = 0;
    while (k < n) {
        /* skewed choice: low indexes are common, like real words */
        const char *w = vocab[rnd_below(rnd_below(256) + 1)];
        for (size_t j = 0; w[j] && k < n; j++)
            buf[k++] = (uint8_t)w[j];
        if (k < n)
            buf[k++] = rnd_below(12) ? ' ' : rnd_below(2) ? '\n' : '.';
    }
}

static void gen(uint8_t *buf, size_t n, enum kind kind)
{
    size_t k = 0;
    switch (kind) {
    case K_RANDOM:
        rnd_bytes(buf, n);
        break;
    case K_TEXT:
        gen_text(buf, n);
        break;
    case K_ZERO:
        memset(buf, 0, n);
        break;
    case K_RUNS:
        while (k < n) {
            size_t run = 1 + rnd_below(rnd_below(2) ? 8 : 2000);
            uint8_t v = (uint8_t)rnd();
            for (size_t j = 0; j < run && k < n; j++)
                buf[k++] = v;
        }
        break;
    case K_SMALLALPHA: /* 2..4 symbols: very short codes, many literals per lookup */
    {
        unsigned m = 2 + rnd_below(3);
        for (k = 0; k < n; k++)
            buf[k] = (uint8_t)('a' + rnd_below(rnd_below(m) + 1));
        break;
    }
    default: /* segments of everything, so blocks of every type meet */
        while (k < n) {
            size_t seg = 1 + rnd_below(rnd_below(2) ? 3000 : 200000);
            if (seg > n - k)
                seg = n - k;
            gen(buf + k, seg, (enum kind)rnd_below(K_MIXED));
            k += seg;
        }
    }
}

static struct libdeflate_compressor *compressors[13];

/* Compress at level; the buffer has room for splice_fix(). */
static uint8_t *deflate_chunk(int level, const uint8_t *in, size_t n, size_t *zlen, size_t *cap)
{
    if (compressors[level] == NULL)
        compressors[level] = libdeflate_alloc_compressor(level);
    EXPECT(compressors[level] != NULL);
    *cap = libdeflate_deflate_compress_bound(compressors[level], n) + SPLICE_EXTRA;
    uint8_t *out = malloc(*cap);
    EXPECT(out != NULL);
    *zlen = libdeflate_deflate_compress(compressors[level], in, n, out, *cap - SPLICE_EXTRA);
    EXPECT(*zlen > 0);
    return out;
}

/* ---- zlib as referee ------------------------------------------------------ */

struct zinfo {
    int complete;      /* zlib reached the end of the final block */
    uint32_t nblocks;
    uint64_t last_hdr, end;
    uint64_t *ends;    /* optional: end bit of each block */
    size_t maxends;
    unsigned types;    /* bit t set when a block of type t was seen */
};

static unsigned bits_at(const uint8_t *buf, uint64_t bit, unsigned n)
{
    unsigned v = 0;
    for (unsigned i = 0; i < n; i++, bit++)
        v |= ((buf[bit >> 3] >> (bit & 7)) & 1u) << i;
    return v;
}

/* Inflate block by block.  data_type's low 6 bits are the bits zlib holds but
 * has not used, +64 in the final block, +128 right after an end of block. */
static void zlib_walk(const uint8_t *buf, size_t len, struct zinfo *z)
{
    static uint8_t dict[32768], scratch[65536];
    z_stream s;
    uint64_t start = 0;

    memset(&s, 0, sizeof s);
    z->complete = 0;
    z->nblocks = 0;
    z->types = 0;
    EXPECT_INT(inflateInit2(&s, -15), Z_OK);
    EXPECT_INT(inflateSetDictionary(&s, dict, sizeof dict), Z_OK);
    s.next_in = (uint8_t *)buf;
    s.avail_in = (uInt)len;
    for (;;) {
        s.next_out = scratch;
        s.avail_out = sizeof scratch;
        int ret = inflate(&s, Z_BLOCK);
        if (ret == Z_STREAM_END) {
            z->complete = 1;
            break;
        }
        if (ret != Z_OK)
            break;
        if (s.data_type & 128) {
            uint64_t end = (uint64_t)s.total_in * 8 - (unsigned)(s.data_type & 63);
            if (z->ends != NULL && z->nblocks < z->maxends)
                z->ends[z->nblocks] = end;
            z->types |= 1u << bits_at(buf, start + 1, 2);
            z->nblocks++;
            if (s.data_type & 64) {
                z->last_hdr = start;
                z->end = end;
            }
            start = end;
        }
    }
    inflateEnd(&s);
}

/* What splice_walk() must say: a complete stream whose final block ends in the
 * last byte with zero padding. */
static int zlib_accepts(const uint8_t *buf, size_t len, struct zinfo *z)
{
    zlib_walk(buf, len, z);
    if (!z->complete || len == 0 || (z->end + 7) / 8 != len)
        return 0;
    return (z->end & 7) == 0 || (buf[len - 1] >> (z->end & 7)) == 0;
}

static void check_agrees(const uint8_t *buf, size_t len)
{
    struct zinfo z = {0};
    struct splice_info si;
    int ok = zlib_accepts(buf, len, &z);
    int r = splice_walk(buf, len, &si);
    EXPECT_INT(r, ok ? 0 : -1);
    if (ok) {
        EXPECT_U(si.nblocks, z.nblocks);
        EXPECT_U(si.last_hdr_bit, z.last_hdr);
        EXPECT_U(si.end_bit, z.end);
    }
}

/* Make blocks 0..k of z a stream of their own: BFINAL on block k, cut after
 * it.  The walker must then report exactly that block's boundaries. */
static void check_block_prefix(const uint8_t *zbuf, uint64_t start, uint64_t end, uint32_t k)
{
    size_t n = (size_t)((end + 7) / 8);
    uint8_t *b = malloc(n + 1);
    struct splice_info si;
    memcpy(b, zbuf, n);
    if (end & 7)
        b[n - 1] &= (uint8_t)((1u << (end & 7)) - 1);
    b[start >> 3] |= (uint8_t)(1u << (start & 7));
    EXPECT_INT(splice_walk(b, n, &si), 0);
    EXPECT_U(si.nblocks, k + 1);
    EXPECT_U(si.last_hdr_bit, start);
    EXPECT_U(si.end_bit, end);
    free(b);
}

static unsigned types_seen; /* block types check_level() met; tests reset it */

/* Compress, then compare the walk with zlib, whole and block by block. */
static void check_level(const uint8_t *in, size_t n, int level)
{
    size_t zlen, cap;
    uint8_t *zbuf = deflate_chunk(level, in, n, &zlen, &cap);
    uint64_t ends[4096];
    struct zinfo z = {0};
    struct splice_info si;

    z.ends = ends;
    z.maxends = 4096;
    EXPECT(zlib_accepts(zbuf, zlen, &z));
    types_seen |= z.types;
    EXPECT_INT(splice_walk(zbuf, zlen, &si), 0);
    EXPECT_U(si.nblocks, z.nblocks);
    EXPECT_U(si.last_hdr_bit, z.last_hdr);
    EXPECT_U(si.end_bit, z.end);
    /* every block of small streams, the first and last few of big ones */
    for (uint32_t k = 0; k + 1 < z.nblocks && k < z.maxends; k++)
        if (zlen < 65536 || k < 3 || k + 4 > z.nblocks)
            check_block_prefix(zbuf, k ? ends[k - 1] : 0, ends[k], k);
    free(zbuf);
}

static void check_all_levels(enum kind kind, size_t n, int lo, int hi)
{
    uint8_t *in = malloc(n + 1);
    gen(in, n, kind);
    for (int level = lo; level <= hi; level++)
        check_level(in, n, level);
    free(in);
}

/* ---- a small deflate writer ---------------------------------------------- */

struct bw {
    uint8_t buf[1 << 18];
    uint64_t bits;
};

/* n low bits of v, LSB first; bits past the 32 of v are zeros. */
static void bw_put(struct bw *w, uint32_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++, w->bits++) {
        unsigned bit = i < 32 ? (v >> i) & 1u : 0;
        EXPECT(w->bits >> 3 < sizeof w->buf);
        if ((w->bits & 7) == 0)
            w->buf[w->bits >> 3] = 0;
        w->buf[w->bits >> 3] |= (uint8_t)(bit << (w->bits & 7));
    }
}

static void bw_code(struct bw *w, uint32_t code, unsigned len) /* Huffman codes go MSB first */
{
    while (len-- > 0)
        bw_put(w, (code >> len) & 1u, 1);
}

static size_t bw_bytes(struct bw *w)
{
    while (w->bits & 7)
        bw_put(w, 0, 1);
    return (size_t)(w->bits >> 3);
}

/* RFC 1951 3.2.2: canonical codes from lengths. */
static void canon(const uint8_t *lens, unsigned n, uint16_t *codes)
{
    unsigned count[16] = {0}, next[16];
    for (unsigned i = 0; i < n; i++)
        count[lens[i]]++;
    count[0] = 0;
    unsigned code = 0;
    for (unsigned b = 1; b < 16; b++) {
        code = (code + count[b - 1]) << 1;
        next[b] = code;
    }
    for (unsigned i = 0; i < n; i++)
        if (lens[i])
            codes[i] = (uint16_t)next[lens[i]]++;
}

/* A random complete code on k of the n symbols, lengths <= 15: split leaves
 * of a tree, often the deepest one, so long codes are common. */
static void random_code(uint8_t *lens, unsigned n, unsigned k, int need_eob)
{
    uint8_t depth[288];
    unsigned leaves = 1, deepest = 0;
    depth[0] = 0;
    while (leaves < k) {
        unsigned i = rnd_below(2) ? deepest : rnd_below(leaves);
        if (depth[i] == 15)
            i = rnd_below(leaves);
        if (depth[i] == 15)
            continue;
        depth[i]++;
        depth[leaves] = depth[i];
        deepest = rnd_below(2) ? i : leaves;
        leaves++;
    }
    memset(lens, 0, n);
    for (unsigned i = 0; i < k; i++) {
        unsigned s;
        do
            s = (i == 0 && need_eob) ? 256 : rnd_below(n);
        while (lens[s]);
        lens[s] = depth[i];
    }
}

static unsigned len_extra(unsigned sym)
{
    return sym < 265 || sym == 285 ? 0 : (sym - 261) / 4;
}

static unsigned dist_extra(unsigned sym)
{
    return sym < 4 ? 0 : sym / 2 - 1;
}

static unsigned pick_used(const uint8_t *lens, unsigned n, unsigned lo)
{
    for (;;) {
        unsigned s = lo + rnd_below(n - lo);
        if (lens[s])
            return s;
    }
}

/* nsym random symbols then end of block, with lit/len codes ll (nlit) and
 * distance codes dl (ndist, maybe none). */
static void put_symbols(struct bw *w, const uint8_t *ll, unsigned nlit, const uint8_t *dl,
                        unsigned ndist, unsigned nsym)
{
    uint16_t llc[288], dc[32];
    int have_dist = 0, have_lit = 0;
    canon(ll, nlit, llc);
    canon(dl, ndist, dc);
    for (unsigned i = 0; i < ndist; i++)
        have_dist |= dl[i] != 0;
    for (unsigned i = 0; i < nlit; i++)
        have_lit |= ll[i] != 0 && i != 256 && i < 286;
    for (unsigned i = 0; have_lit && i < nsym; i++) {
        unsigned s = pick_used(ll, nlit < 286 ? nlit : 286, 0);
        if (s == 256 || (s > 256 && !have_dist))
            continue;
        bw_code(w, llc[s], ll[s]);
        if (s < 256)
            continue;
        bw_put(w, (uint32_t)rnd(), len_extra(s));
        unsigned d = pick_used(dl, ndist < 30 ? ndist : 30, 0);
        bw_code(w, dc[d], dl[d]);
        bw_put(w, (uint32_t)rnd(), dist_extra(d));
    }
    bw_code(w, llc[256], ll[256]);
}

/* Dynamic header sending every length with a flat 4-bit code-length code. */
static void put_dynamic_header(struct bw *w, const uint8_t *ll, unsigned nlit,
                               const uint8_t *dl, unsigned ndist)
{
    static const uint8_t order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5,
                                      11, 4, 12, 3, 13, 2, 14, 1, 15};
    bw_put(w, nlit - 257, 5);
    bw_put(w, ndist - 1, 5);
    bw_put(w, 19 - 4, 4);
    for (int i = 0; i < 19; i++)
        bw_put(w, order[i] < 16 ? 4 : 0, 3);
    for (unsigned i = 0; i < nlit; i++)
        bw_code(w, ll[i], 4);
    for (unsigned i = 0; i < ndist; i++)
        bw_code(w, dl[i], 4);
}

static void fixed_lens(uint8_t *ll, uint8_t *dl)
{
    memset(ll, 8, 144);
    memset(ll + 144, 9, 112);
    memset(ll + 256, 7, 24);
    memset(ll + 280, 8, 8);
    memset(dl, 5, 30);
}

static void put_block(struct bw *w, int final)
{
    uint8_t ll[288], dl[32];
    unsigned type = rnd_below(3), nsym = rnd_below(4) ? rnd_below(300) : rnd_below(4000);
    bw_put(w, (unsigned)final | type << 1, 3);
    if (type == 0) {
        unsigned n = rnd_below(4) ? rnd_below(40) : rnd_below(2000);
        bw_bytes(w);
        bw_put(w, n, 16);
        bw_put(w, n ^ 0xffffu, 16);
        for (unsigned i = 0; i < n; i++)
            bw_put(w, (uint32_t)rnd(), 8);
    } else if (type == 1) {
        fixed_lens(ll, dl);
        put_symbols(w, ll, 288, dl, 30, nsym);
    } else {
        unsigned nlit = 257 + rnd_below(30), ndist = 1 + rnd_below(30);
        unsigned klit = rnd_below(4) ? 2 + rnd_below(nlit - 1) : 1;
        random_code(ll, nlit, klit, 1);
        if (klit == 1)
            ll[256] = 1; /* the lone 1-bit code zlib allows */
        unsigned kd = ndist == 1 || rnd_below(8) == 0 ? rnd_below(2) : 2 + rnd_below(ndist - 1);
        if (kd == 1) {
            memset(dl, 0, ndist);
            dl[rnd_below(ndist)] = 1;
        } else if (kd == 0) {
            memset(dl, 0, ndist);
        } else {
            random_code(dl, ndist, kd, 0);
        }
        put_dynamic_header(w, ll, nlit, dl, ndist);
        put_symbols(w, ll, nlit, dl, ndist, nsym);
    }
}

static size_t random_stream(struct bw *w)
{
    unsigned nblocks = 1 + rnd_below(5);
    w->bits = 0;
    for (unsigned i = 0; i < nblocks; i++)
        put_block(w, i + 1 == nblocks);
    return bw_bytes(w);
}

/* ---- 1. walk agrees with zlib on libdeflate output ------------------------ */

START_TEST(walk_tiny_inputs)
{
    uint8_t in[301];
    types_seen = 0;
    for (size_t n = 0; n <= 300; n++) {
        gen(in, n, (enum kind)(n % K_NKINDS));
        for (int level = 0; level <= 12; level++)
            check_level(in, n, level);
    }
    EXPECT_U(types_seen, 7u); /* tiny inputs make all three block types */
}
END_TEST

START_TEST(walk_medium_inputs)
{
    static const size_t sizes[] = {4096, 65536, 300000};
    types_seen = 0;
    for (int kind = 0; kind < K_NKINDS; kind++)
        for (size_t i = 0; i < 3; i++)
            check_all_levels((enum kind)kind, sizes[i] + rnd_below(1000), 0, 12);
    EXPECT_U(types_seen, 5u); /* stored and dynamic blocks */
}
END_TEST

START_TEST(walk_large_inputs)
{
    static const int levels[] = {0, 1, 3, 6, 9, 10, 12};
    types_seen = 0;
    for (size_t i = 0; i < sizeof levels / sizeof *levels; i++) {
        int l = levels[i];
        check_all_levels(K_TEXT, 3u << 20, l, l);
        check_all_levels(K_MIXED, 2u << 20, l, l);
        if (l < 10) {
            check_all_levels(K_RANDOM, 1u << 20, l, l);
            check_all_levels(K_RUNS, 1u << 20, l, l);
            check_all_levels(K_SMALLALPHA, 1u << 20, l, l);
        }
    }
    EXPECT_U(types_seen, 5u); /* stored and dynamic blocks */
}
END_TEST

START_TEST(walk_own_writer)
{
    static struct bw w;
    for (int i = 0; i < 3000; i++) {
        size_t n = random_stream(&w);
        struct zinfo z = {0};
        EXPECT(zlib_accepts(w.buf, n, &z)); /* the writer is right... */
        check_agrees(w.buf, n);                /* ...and so is the walker */
    }
}
END_TEST

/* ---- 2. spliced chunks form one stream ------------------------------------ */

static uint8_t *inflate_all(const uint8_t *z, size_t zlen, size_t outcap, size_t *outlen)
{
    uint8_t *out = malloc(outcap + 1);
    z_stream s;
    memset(&s, 0, sizeof s);
    EXPECT_INT(inflateInit2(&s, -15), Z_OK);
    s.next_in = (uint8_t *)z;
    s.avail_in = (uInt)zlen;
    s.next_out = out;
    s.avail_out = (uInt)outcap + 1;
    EXPECT_INT(inflate(&s, Z_FINISH), Z_STREAM_END);
    EXPECT_U(s.avail_in, 0);
    *outlen = s.total_out;
    inflateEnd(&s);
    return out;
}

/* A fixed chunk alone must decode to its data and stop at a byte boundary
 * between blocks, waiting for more. */
static void check_open_end(const uint8_t *z, size_t zlen, const uint8_t *in, size_t n)
{
    uint8_t *out = malloc(n + 1);
    z_stream s;
    int ret;
    memset(&s, 0, sizeof s);
    EXPECT_INT(inflateInit2(&s, -15), Z_OK);
    s.next_in = (uint8_t *)z;
    s.avail_in = (uInt)zlen;
    s.next_out = out;
    s.avail_out = (uInt)n + 1;
    do
        ret = inflate(&s, Z_BLOCK);
    while (ret == Z_OK && s.avail_in > 0);
    EXPECT_INT(ret, Z_OK);
    EXPECT_U(s.avail_in, 0);
    EXPECT_INT(s.data_type & (128 | 64 | 63), 128);
    EXPECT_U(s.total_out, n);
    EXPECT(n == 0 || memcmp(out, in, n) == 0);
    inflateEnd(&s);
    free(out);
}

/* nchunks chunks of assorted data and levels, each fixed, concatenated and
 * closed with an empty final fixed block (03 00): one stream of it all. */
static void splice_many(unsigned nchunks)
{
    size_t total_in = 0, total_z = 0, zcap = 1 << 20, icap = 1 << 20, newlen;
    uint8_t *all_in = malloc(icap), *all_z = malloc(zcap);
    unsigned residues = 0;

    for (unsigned c = 0; c < nchunks; c++) {
        size_t n = rnd_below(8) ? rnd_below(20000) : rnd_below(300000), zlen, cap;
        int level = (int)rnd_below(13);
        uint8_t *in = malloc(n + 1);
        gen(in, n, (enum kind)rnd_below(K_NKINDS));
        uint8_t *z = deflate_chunk(level, in, n, &zlen, &cap);
        struct splice_info si;
        EXPECT_INT(splice_walk(z, zlen, &si), 0);
        residues |= 1u << (si.end_bit & 7);
        EXPECT_INT(splice_fix(z, zlen, cap, &newlen), 0);
        EXPECT_U(newlen - zlen, (si.end_bit & 7) == 0 || (si.end_bit & 7) > 5 ? 5 : 4);
        EXPECT_INT(memcmp(z + newlen - 4, "\0\0\377\377", 4), 0);
        check_open_end(z, newlen, in, n);
        while (total_z + newlen + 2 > zcap)
            all_z = realloc(all_z, zcap *= 2);
        while (total_in + n > icap)
            all_in = realloc(all_in, icap *= 2);
        EXPECT(all_z != NULL && all_in != NULL);
        memcpy(all_z + total_z, z, newlen);
        memcpy(all_in + total_in, in, n);
        total_z += newlen;
        total_in += n;
        free(z);
        free(in);
    }
    all_z[total_z++] = 3;
    all_z[total_z++] = 0;
    size_t outlen;
    uint8_t *out = inflate_all(all_z, total_z, total_in, &outlen);
    EXPECT_U(outlen, total_in);
    EXPECT(total_in == 0 || memcmp(out, all_in, total_in) == 0);
    if (nchunks >= 200)
        EXPECT_U(residues, 0xffu); /* every end-bit alignment met */
    free(out);
    free(all_in);
    free(all_z);
}

START_TEST(splice_chunks)
{
    splice_many(50);
    splice_many(200);
    splice_many(500);
}
END_TEST

START_TEST(splice_chunk_alone)
{
    /* each fixed chunk followed by 03 00 is a complete stream */
    for (int i = 0; i < 300; i++) {
        size_t n = rnd_below(5000), zlen, cap, newlen, outlen;
        uint8_t *in = malloc(n + 1);
        gen(in, n, (enum kind)rnd_below(K_NKINDS));
        uint8_t *z = deflate_chunk((int)rnd_below(13), in, n, &zlen, &cap);
        EXPECT_INT(splice_fix(z, zlen, cap, &newlen), 0);
        uint8_t *zz = malloc(newlen + 2);
        memcpy(zz, z, newlen);
        zz[newlen] = 3;
        zz[newlen + 1] = 0;
        uint8_t *out = inflate_all(zz, newlen + 2, n, &outlen);
        EXPECT_U(outlen, n);
        EXPECT(n == 0 || memcmp(out, in, n) == 0);
        free(out);
        free(zz);
        free(z);
        free(in);
    }
}
END_TEST

/* ---- 3. robustness ---------------------------------------------------------- */

START_TEST(robust_truncated)
{
    static const enum kind kinds[] = {K_TEXT, K_MIXED, K_RANDOM, K_SMALLALPHA};
    for (int i = 0; i < 4; i++) {
        size_t n = 3000 + rnd_below(3000), zlen, cap;
        uint8_t *in = malloc(n);
        gen(in, n, kinds[i]);
        uint8_t *z = deflate_chunk(i == 3 ? 12 : 1 + 4 * i, in, n, &zlen, &cap);
        for (size_t k = 0; k < zlen; k++) {
            struct splice_info si;
            /* an exact-size copy, so ASan sees any read past the prefix */
            uint8_t *cut = malloc(k ? k : 1);
            memcpy(cut, z, k);
            EXPECT_INT(splice_walk(cut, k, &si), -1);
            free(cut);
        }
        free(z);
        free(in);
    }
}
END_TEST

START_TEST(robust_trailing)
{
    for (int i = 0; i < 200; i++) {
        size_t n = rnd_below(20000), zlen, cap;
        uint8_t *in = malloc(n + 1);
        gen(in, n, (enum kind)rnd_below(K_NKINDS));
        uint8_t *z = deflate_chunk((int)rnd_below(13), in, n, &zlen, &cap);
        size_t extra = 1 + rnd_below(9);
        uint8_t *zz = malloc(zlen + extra);
        memcpy(zz, z, zlen);
        for (size_t k = 0; k < extra; k++)
            zz[zlen + k] = i & 1 ? 0 : (uint8_t)rnd();
        struct splice_info si;
        EXPECT_INT(splice_walk(zz, zlen + extra, &si), -1);
        check_agrees(zz, zlen + extra);
        free(zz);
        free(z);
        free(in);
    }
}
END_TEST

START_TEST(robust_random_bytes)
{
    uint8_t buf[600];
    for (int i = 0; i < 30000; i++) {
        size_t n = rnd_below(i < 15000 ? 16 : 600);
        rnd_bytes(buf, n);
        /* bias towards plausible headers: final fixed, dynamic */
        if (n && i % 3 == 0)
            buf[0] = (uint8_t)((buf[0] & ~7u) | (i % 2 ? 3u : 5u));
        uint8_t *b = malloc(n ? n : 1);
        memcpy(b, buf, n);
        check_agrees(b, n);
        free(b);
    }
}
END_TEST

static void flip_all_bits(const uint8_t *z, size_t zlen, unsigned step)
{
    uint8_t *b = malloc(zlen);
    for (uint64_t bit = rnd_below(step); bit < (uint64_t)zlen * 8; bit += step) {
        memcpy(b, z, zlen);
        b[bit >> 3] ^= (uint8_t)(1u << (bit & 7));
        check_agrees(b, zlen);
    }
    free(b);
}

START_TEST(robust_bit_flips)
{
    for (int i = 0; i < 12; i++) {
        size_t n = 300 + rnd_below(2000), zlen, cap;
        uint8_t *in = malloc(n);
        gen(in, n, (enum kind)(i % K_NKINDS));
        uint8_t *z = deflate_chunk(i, in, n, &zlen, &cap);
        flip_all_bits(z, zlen, 1);
        free(z);
        free(in);
    }
    static struct bw w;
    for (int i = 0; i < 200; i++) {
        size_t n = random_stream(&w);
        flip_all_bits(w.buf, n, 1 + (unsigned)(n / 256));
    }
    /* big streams, where decoder B runs far ahead and must be met */
    for (int i = 0; i < 2; i++) {
        size_t n = 600000, zlen, cap;
        uint8_t *in = malloc(n);
        gen(in, n, i ? K_MIXED : K_TEXT);
        uint8_t *z = deflate_chunk(i ? 1 : 6, in, n, &zlen, &cap);
        flip_all_bits(z, zlen, (unsigned)(zlen * 8 / 150));
        free(z);
        free(in);
    }
}
END_TEST

/* ---- 3b. hand-built adversarial streams ------------------------------------- */

static int walk_bw(struct bw *w)
{
    struct splice_info si;
    size_t n = bw_bytes(w);
    uint8_t *b = malloc(n ? n : 1);
    memcpy(b, w->buf, n);
    int r = splice_walk(b, n, &si);
    check_agrees(b, n);
    free(b);
    return r;
}

/* Dynamic header with explicit code-length-code lengths and raw CL symbols. */
static void put_raw_header(struct bw *w, unsigned nlit, unsigned ndist, const uint8_t *cl19)
{
    static const uint8_t order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5,
                                      11, 4, 12, 3, 13, 2, 14, 1, 15};
    bw_put(w, 1u | 2u << 1, 3);
    bw_put(w, nlit - 257, 5);
    bw_put(w, ndist - 1, 5);
    bw_put(w, 19 - 4, 4);
    for (int i = 0; i < 19; i++)
        bw_put(w, cl19[order[i]], 3);
}

static const uint8_t flat_cl[19] = {4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 0, 0, 0};

/* flat 4-bit CL code plus 16 (5 bits) / 17, 18 (6 bits): complete */
static const uint8_t rep_cl[19] = {4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 0, 5, 6, 6};

/* A block whose lengths are given: ll (nlit) and dl (ndist), then EOB. */
static int walk_dynamic(const uint8_t *ll, unsigned nlit, const uint8_t *dl, unsigned ndist,
                        int emit_match)
{
    static struct bw w;
    w.bits = 0;
    put_raw_header(&w, nlit, ndist, flat_cl);
    for (unsigned i = 0; i < nlit; i++)
        bw_code(&w, ll[i], 4);
    for (unsigned i = 0; i < ndist; i++)
        bw_code(&w, dl[i], 4);
    uint16_t llc[288], dc[32];
    canon(ll, nlit, llc);
    canon(dl, ndist, dc);
    if (emit_match) { /* length 3 (sym 257) at distance code 0, or its other bit */
        bw_code(&w, llc[257], ll[257]);
        if (emit_match == 2)
            bw_put(&w, 1, 1); /* the hole of a lone 1-bit distance code */
        else
            bw_code(&w, dc[0], dl[0]);
    }
    if (ll[256])
        bw_code(&w, llc[256], ll[256]);
    return walk_bw(&w);
}

START_TEST(adversarial_codes)
{
    uint8_t ll[288], dl[32];
    static struct bw w;

    /* over-subscribed code-length code: three 1-bit codes */
    uint8_t cl[19] = {1, 1, 1};
    w.bits = 0;
    put_raw_header(&w, 257, 1, cl);
    bw_put(&w, 0, 30);
    EXPECT_INT(walk_bw(&w), -1);
    /* incomplete code-length code: one 2-bit code */
    memset(cl, 0, sizeof cl);
    cl[8] = 2;
    w.bits = 0;
    put_raw_header(&w, 257, 1, cl);
    bw_put(&w, 0, 30);
    EXPECT_INT(walk_bw(&w), -1);

    /* valid baseline: one literal and EOB, 1 bit each */
    memset(ll, 0, sizeof ll);
    memset(dl, 0, sizeof dl);
    ll[65] = 1;
    ll[256] = 1;
    dl[0] = 1;
    EXPECT_INT(walk_dynamic(ll, 257, dl, 1, 0), 0);
    /* over-subscribed lit/len: three 1-bit codes */
    ll[66] = 1;
    EXPECT_INT(walk_dynamic(ll, 257, dl, 1, 0), -1);
    ll[66] = 0;
    /* no end-of-block code */
    ll[256] = 0;
    ll[66] = 1;
    EXPECT_INT(walk_dynamic(ll, 257, dl, 1, 0), -1);
    /* incomplete lit/len with a 2-bit code: rejected */
    memset(ll, 0, sizeof ll);
    ll[256] = 2;
    ll[65] = 1;
    EXPECT_INT(walk_dynamic(ll, 257, dl, 1, 0), -1);
    /* lone 1-bit lit/len code (EOB only): zlib accepts it */
    memset(ll, 0, sizeof ll);
    ll[256] = 1;
    EXPECT_INT(walk_dynamic(ll, 257, dl, 1, 0), 0);
    /* no distance codes at all: fine without matches, not with one */
    memset(ll, 0, sizeof ll);
    ll[256] = 1;
    ll[257] = 1;
    memset(dl, 0, sizeof dl);
    EXPECT_INT(walk_dynamic(ll, 258, dl, 1, 0), 0);
    EXPECT_INT(walk_dynamic(ll, 258, dl, 1, 1), -1);
    /* lone 1-bit distance code: its code is fine, its hole is not */
    dl[0] = 1;
    EXPECT_INT(walk_dynamic(ll, 258, dl, 1, 1), 0);
    EXPECT_INT(walk_dynamic(ll, 258, dl, 1, 2), -1);
    /* incomplete distance code with a 2-bit code: rejected */
    dl[0] = 2;
    EXPECT_INT(walk_dynamic(ll, 258, dl, 1, 0), -1);
    /* over-subscribed distance code */
    dl[0] = dl[1] = dl[2] = 1;
    EXPECT_INT(walk_dynamic(ll, 258, dl, 3, 0), -1);
}
END_TEST

START_TEST(adversarial_header_fields)
{
    static struct bw w;
    uint8_t ll[288] = {0}, dl[32] = {0};
    ll[256] = 1;
    ll[65] = 1;
    dl[0] = 1;
    /* HLIT 286 and HDIST 30 are the limits; beyond them zlib refuses */
    EXPECT_INT(walk_dynamic(ll, 286, dl, 30, 0), 0);
    EXPECT_INT(walk_dynamic(ll, 287, dl, 1, 0), -1);
    EXPECT_INT(walk_dynamic(ll, 288, dl, 1, 0), -1);
    EXPECT_INT(walk_dynamic(ll, 257, dl, 31, 0), -1);
    EXPECT_INT(walk_dynamic(ll, 257, dl, 32, 0), -1);

    /* repeat 16 with nothing to repeat */
    w.bits = 0;
    put_raw_header(&w, 257, 1, rep_cl);
    bw_code(&w, 0x1e, 5); /* canonical code of 16 under rep_cl */
    bw_put(&w, 0, 2);
    bw_put(&w, 0, 40);
    EXPECT_INT(walk_bw(&w), -1);

    /* 18 (11..138 zeros) overflowing 257 + 1 lengths */
    w.bits = 0;
    put_raw_header(&w, 257, 1, rep_cl);
    bw_code(&w, 0x3f, 6); /* 18 */
    bw_put(&w, 127, 7);   /* 138 */
    bw_code(&w, 0x3f, 6);
    bw_put(&w, 127, 7); /* 276 */
    bw_put(&w, 0, 40);
    EXPECT_INT(walk_bw(&w), -1);

    /* 17 repeating past the end of the lengths by one */
    w.bits = 0;
    put_raw_header(&w, 257, 1, rep_cl);
    for (int i = 0; i < 255; i++)
        bw_code(&w, 0, 4); /* 255 zero lengths */
    bw_code(&w, 0x3e, 6);  /* 17 */
    bw_put(&w, 1, 3);      /* 4 zeros, 3 left */
    bw_put(&w, 0, 40);
    EXPECT_INT(walk_bw(&w), -1);

    /* a valid repeat crossing from lit/len into distance lengths */
    w.bits = 0;
    put_raw_header(&w, 257, 3, rep_cl);
    for (int i = 0; i < 255; i++)
        bw_code(&w, 0, 4);
    bw_code(&w, 1, 4);    /* ll[255] = 1 */
    bw_code(&w, 0x1e, 5); /* 16: repeat 1 three times: ll[256], dl[0], dl[1] */
    bw_put(&w, 0, 2);
    bw_code(&w, 0, 4); /* dl[2] = 0 */
    bw_code(&w, 1, 1); /* EOB: ll[255] = 0, ll[256] = 1 */
    EXPECT_INT(walk_bw(&w), 0);

    /* block type 3 */
    w.bits = 0;
    bw_put(&w, 7, 3);
    bw_put(&w, 0, 21);
    EXPECT_INT(walk_bw(&w), -1);
}
END_TEST

START_TEST(adversarial_fixed_and_stored)
{
    static struct bw w;
    struct splice_info si;
    uint8_t ll[288], dl[32];
    uint16_t llc[288], dc[32];
    fixed_lens(ll, dl);
    dl[30] = dl[31] = 5;
    canon(ll, 288, llc);
    canon(dl, 32, dc);

    /* final fixed block with only EOB: 03 00 */
    static const uint8_t eob[2] = {3, 0};
    EXPECT_INT(splice_walk(eob, 2, &si), 0);
    EXPECT_U(si.nblocks, 1);
    EXPECT_U(si.last_hdr_bit, 0);
    EXPECT_U(si.end_bit, 10);
    /* nonzero padding after it: zlib would not mind, the contract does */
    static const uint8_t eob_pad[2] = {3, 0x80};
    EXPECT_INT(splice_walk(eob_pad, 2, &si), -1);
    /* empty final stored block */
    static const uint8_t st[5] = {1, 0, 0, 0xff, 0xff};
    EXPECT_INT(splice_walk(st, 5, &si), 0);
    EXPECT_U(si.nblocks, 1);
    EXPECT_U(si.end_bit, 40);
    /* stored with bad NLEN, and with LEN past the end */
    static const uint8_t st_bad[5] = {1, 0, 0, 0xff, 0xfe};
    EXPECT_INT(splice_walk(st_bad, 5, &si), -1);
    static const uint8_t st_long[8] = {1, 4, 0, 0xfb, 0xff, 'a', 'b', 'c'};
    EXPECT_INT(splice_walk(st_long, 8, &si), -1);
    static const uint8_t st_ok[9] = {1, 4, 0, 0xfb, 0xff, 'a', 'b', 'c', 'd'};
    EXPECT_INT(splice_walk(st_ok, 9, &si), 0);
    /* non-final empty stored, fixed EOB-only, then final stored: 3 blocks */
    static const uint8_t three[11] = {0, 0, 0, 0xff, 0xff, 2, 4, 0, 0, 0xff, 0xff};
    EXPECT_INT(splice_walk(three, 11, &si), 0);
    EXPECT_U(si.nblocks, 3);
    EXPECT_U(si.last_hdr_bit, 50);
    EXPECT_U(si.end_bit, 88);
    check_agrees(three, 11);

    /* fixed literal/length 286 and 287, distances 30 and 31: invalid */
    for (unsigned s = 286; s < 288; s++) {
        w.bits = 0;
        bw_put(&w, 3, 3);
        bw_code(&w, llc[s], 8);
        bw_put(&w, 0, 20);
        bw_code(&w, llc[256], 7);
        EXPECT_INT(walk_bw(&w), -1);
    }
    for (unsigned dsym = 28; dsym < 32; dsym++) {
        w.bits = 0;
        bw_put(&w, 3, 3);
        bw_code(&w, llc['x'], 8);
        bw_code(&w, llc[257], 7);
        bw_code(&w, dc[dsym], 5);
        bw_put(&w, 0, dsym < 30 ? 13 : 0);
        bw_code(&w, llc[256], 7);
        EXPECT_INT(walk_bw(&w), dsym < 30 ? 0 : -1);
    }
}
END_TEST

START_TEST(adversarial_api)
{
    struct splice_info si;
    uint8_t b[8] = {3, 0};
    size_t nl;
    EXPECT_INT(splice_walk(b, 0, &si), -1);
    EXPECT_INT(splice_walk(NULL, 0, &si), -1);
    EXPECT_INT(splice_walk(NULL, 2, &si), -1);
    EXPECT_INT(splice_walk(b, 2, NULL), -1);
    EXPECT_INT(splice_fix(b, 2, 8, NULL), -1);
    EXPECT_INT(splice_fix(NULL, 2, 8, &nl), -1);
    EXPECT_INT(splice_fix(b, SIZE_MAX - 1, SIZE_MAX, &nl), -1);
    EXPECT_INT(splice_fix(b, 2, 6, &nl), -1); /* cap < len + SPLICE_EXTRA */
    EXPECT_INT(splice_fix(b, 2, 7, &nl), 0);
    EXPECT_U(nl, 6); /* 10 bits used: the header fits in byte 1's padding */
    static const uint8_t want[6] = {2, 0, 0, 0, 0xff, 0xff};
    EXPECT_INT(memcmp(b, want, 6), 0);
    /* a stream ending on a byte boundary needs the extra byte */
    static uint8_t st[10] = {1, 0, 0, 0xff, 0xff};
    EXPECT_INT(splice_fix(st, 5, 10, &nl), 0);
    EXPECT_U(nl, 10);
    static const uint8_t want_st[10] = {0, 0, 0, 0xff, 0xff, 0, 0, 0, 0xff, 0xff};
    EXPECT_INT(memcmp(st, want_st, 10), 0);
}
END_TEST

/* ---- 4. cap too small ------------------------------------------------------- */

START_TEST(cap_too_small)
{
    for (int i = 0; i < 50; i++) {
        size_t n = rnd_below(3000), zlen, cap, nl = 12345;
        uint8_t *in = malloc(n + 1);
        gen(in, n, (enum kind)rnd_below(K_NKINDS));
        uint8_t *z = deflate_chunk((int)rnd_below(13), in, n, &zlen, &cap);
        memset(z + zlen, 0xa5, cap - zlen);
        uint8_t *copy = malloc(cap);
        memcpy(copy, z, cap);
        for (size_t c = zlen; c < zlen + SPLICE_EXTRA; c++) {
            EXPECT_INT(splice_fix(z, zlen, c, &nl), -1);
            EXPECT_INT(memcmp(z, copy, cap), 0);
            EXPECT_U(nl, 12345);
        }
        /* a broken stream with room to spare is left alone too */
        z[zlen - 1] ^= 0x80;
        copy[zlen - 1] ^= 0x80;
        if (splice_fix(z, zlen, cap, &nl) != 0)
            EXPECT_INT(memcmp(z, copy, cap), 0);
        free(copy);
        free(z);
        free(in);
    }
}
END_TEST

static Suite *splice_suite(void)
{
    Suite *s = suite_create("splice");
    TCase *walk = tcase_create("walk");
    TCase *spl = tcase_create("splice");
    TCase *rob = tcase_create("robust");
    TCase *adv = tcase_create("adversarial");

    tcase_set_timeout(walk, 300);
    tcase_set_timeout(spl, 300);
    tcase_set_timeout(rob, 300);
    tcase_add_test(walk, walk_tiny_inputs);
    tcase_add_test(walk, walk_medium_inputs);
    tcase_add_test(walk, walk_large_inputs);
    tcase_add_test(walk, walk_own_writer);
    tcase_add_test(spl, splice_chunks);
    tcase_add_test(spl, splice_chunk_alone);
    tcase_add_test(rob, robust_truncated);
    tcase_add_test(rob, robust_trailing);
    tcase_add_test(rob, robust_random_bytes);
    tcase_add_test(rob, robust_bit_flips);
    tcase_add_test(adv, adversarial_codes);
    tcase_add_test(adv, adversarial_header_fields);
    tcase_add_test(adv, adversarial_fixed_and_stored);
    tcase_add_test(adv, adversarial_api);
    tcase_add_test(adv, cap_too_small);
    suite_add_tcase(s, walk);
    suite_add_tcase(s, spl);
    suite_add_tcase(s, rob);
    suite_add_tcase(s, adv);
    return s;
}

int main(void)
{
    return run_suite(splice_suite());
}
