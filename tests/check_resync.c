/* check_resync.c — unit tests for the block finder (resync.h) and for the
 * salvage path of the sequential decoder (unz.h, opts.salvage).
 *
 * zlib is the referee throughout: inflate with Z_TREES stops after each
 * block header (its verdict and end bit against rs_header()), Z_BLOCK after
 * each block (the real block starts, the walker's counts and end bits), and
 * a 32 KiB dictionary makes every distance legal, so its verdict is purely
 * structural, as the walker's is.  Streams come from zlib at several
 * levels and strategies, with full and sync flushes, and from spigz's own
 * compressor (cmp_run, spliced pieces and canonical zero runs); damage is
 * bit flips, random bytes and cuts, at positions drawn from fixed seeds.
 *
 * What each test shows:
 *  - header_matches_zlib, walk_matches_zlib: rs_header() and the walker
 *    accept exactly what zlib accepts, with the same end bits and lengths;
 *  - finder_after_flips: from the start of the damaged block, the search
 *    returns the first real stored or dynamic block after it (zlib's own
 *    list), never a false one;
 *  - finder_on_noise: random bytes, zeros and patterns end the search
 *    without a hit, and a small budget stops it;
 *  - dual_marks_lost_window: decoding from a block in the middle of a
 *    stream, bytes not marked are the original's, marked ones are zero,
 *    some are marked, and a piece start marks none;
 *  - salvage_*: unz_run with salvage on damaged gzip and spigz files, from
 *    a file and from a pipe: outside the damaged ranges the output is the
 *    original, inside zeros; a spigz file's offsets are recovered; a cut
 *    file keeps its prefix; salvage off still fails as gzip does.
 */
#include "check_util.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "compress.h"
#include "osink.h"
#include "resync.h"
#include "unz.h"

static uint8_t zero_dict[RS_WIN];

/* ---- content ---- */

/* n bytes like a disk image: text-like runs, random runs and zero runs
 * (some long enough to be zero pieces), drawn from the seed. */
static uint8_t *make_content(size_t n, uint64_t seed)
{
    static const char *words[] = {"sector ", "inode ", "block ", "superblock ", "journal ",
                                  "\n", "0123456789", "lost+found ", "/usr/lib/ "};
    uint8_t *p = malloc(n);
    EXPECT(p != NULL);
    rnd_seed(seed | 1);
    for (size_t i = 0; i < n;) {
        size_t run = 1 + rnd_below(i % 3 == 0 ? 200000 : 30000);
        if (run > n - i)
            run = n - i;
        unsigned kind = (unsigned)rnd_below(4);
        for (size_t k = 0; k < run; k++) {
            if (kind == 0)
                p[i + k] = 0;
            else if (kind == 1)
                p[i + k] = (uint8_t)rnd();
            else {
                const char *w = words[rnd_below(9)];
                for (; *w && k < run; w++, k++)
                    p[i + k] = (uint8_t)*w;
                k--;
            }
        }
        i += run;
    }
    return p;
}

/* ---- streams and zlib's view of them ---- */

struct stream {
    uint8_t *p;        /* the bytes: deflate from bit `start`, 8 trailer bytes */
    size_t n;
    uint64_t start;
    uint64_t *blk;     /* block start bits (zlib's), and the output before each */
    uint64_t *blk_out;
    size_t nblk;
};

/* zlib's block starts of the raw deflate stream at bit s->start. */
static void stream_blocks(struct stream *s)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    EXPECT(inflateInit2(&z, -15) == Z_OK);
    size_t cap = 64;
    s->blk = malloc(cap * sizeof *s->blk);
    s->blk_out = malloc(cap * sizeof *s->blk_out);
    s->nblk = 0;
    s->blk[0] = s->start;
    s->blk_out[0] = 0;
    s->nblk = 1;
    static uint8_t out[1 << 16];
    size_t q = (size_t)(s->start >> 3);
    z.next_in = s->p + q;
    z.avail_in = (uInt)(s->n - q);
    uint64_t total = 0;
    for (;;) {
        z.next_out = out;
        z.avail_out = sizeof out;
        int rc = inflate(&z, Z_BLOCK);
        total += sizeof out - z.avail_out;
        if (rc == Z_STREAM_END)
            break;
        EXPECT(rc == Z_OK || rc == Z_BUF_ERROR);
        if ((z.data_type & 128) && !(z.data_type & 64)) {
            uint64_t bit = 8 * (uint64_t)(s->n - z.avail_in) - (unsigned)(z.data_type & 7);
            if (bit == s->blk[s->nblk - 1])
                continue;
            if (s->nblk == cap) {
                cap *= 2;
                s->blk = realloc(s->blk, cap * sizeof *s->blk);
                s->blk_out = realloc(s->blk_out, cap * sizeof *s->blk_out);
                EXPECT(s->blk != NULL && s->blk_out != NULL);
            }
            s->blk[s->nblk] = bit;
            s->blk_out[s->nblk++] = total;
        }
    }
    inflateEnd(&z);
}

/* src compressed raw by zlib: level, strategy, a flush (Z_FULL_FLUSH or
 * Z_SYNC_FLUSH) every `every` bytes (0: none), 8 trailer bytes after. */
static void make_zlib(struct stream *s, const uint8_t *src, size_t n, int level, int strategy,
                      size_t every, int flush)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    EXPECT(deflateInit2(&z, level, Z_DEFLATED, -15, 8, strategy) == Z_OK);
    size_t cap = deflateBound(&z, n) + 64 + (every ? n / every * 8 : 0);
    s->p = malloc(cap);
    z.next_out = s->p;
    z.avail_out = (uInt)cap;
    for (size_t i = 0; i < n || i == 0;) {
        size_t k = every ? every : n;
        if (k > n - i)
            k = n - i;
        z.next_in = (Bytef *)src + i;
        z.avail_in = (uInt)k;
        i += k;
        int rc = deflate(&z, i < n ? flush : Z_FINISH);
        EXPECT(rc == (i < n ? Z_OK : Z_STREAM_END));
        if (n == 0)
            break;
    }
    size_t len = cap - z.avail_out;
    deflateEnd(&z);
    memset(s->p + len, 0, 8); /* a trailer: its values do not matter here */
    s->n = len + 8;
    s->start = 0;
    stream_blocks(s);
}

/* src as a spigz file without an index (cmp_run): chunk bytes per data
 * piece, zero runs of 16 KiB and more as zero pieces. */
static uint8_t *make_spigz(const uint8_t *src, size_t n, size_t chunk, int level, size_t *len)
{
    int in = memfd_with(src, n);
    int out = memfd_create("check-resync-out", MFD_CLOEXEC);
    struct cmp_opts o;
    cmp_opts_default(&o);
    o.threads = 2;
    o.chunk = chunk;
    o.zmin = 16384;
    o.level = level;
    o.index = false;
    struct cmp_stats st;
    memset(&st, 0, sizeof st);
    struct sp_err err = {0};
    EXPECT(cmp_run(in, out, &o, &st, &err) == 0);
    free(st.bad);
    struct buf b = slurp(out);
    uint8_t *p = b.p;
    *len = b.n;
    close(in);
    close(out);
    return p;
}

static void stream_from_gzip(struct stream *s, uint8_t *p, size_t n)
{
    s->p = p;
    s->n = n;
    size_t hl = rs_member(p, n, 0);
    EXPECT(hl > 0);
    s->start = 8 * (uint64_t)hl;
    stream_blocks(s);
}

static void stream_free(struct stream *s)
{
    free(s->p);
    free(s->blk);
    free(s->blk_out);
}

/* The block kind from its two BTYPE bits, read directly. */
static unsigned btype(const uint8_t *p, uint64_t bit)
{
    uint64_t b1 = bit + 1, b2 = bit + 2;
    return (unsigned)((p[b1 >> 3] >> (b1 & 7)) & 1) | (unsigned)((p[b2 >> 3] >> (b2 & 7)) & 1) << 1;
}

/* A few streams of different kinds over one content. */
#define NKIND 7
static void make_kind(struct stream *s, unsigned kind, const uint8_t *src, size_t n)
{
    switch (kind) {
    case 0: make_zlib(s, src, n, 6, Z_DEFAULT_STRATEGY, 0, Z_NO_FLUSH); break;
    case 1: make_zlib(s, src, n, 1, Z_DEFAULT_STRATEGY, 50000, Z_FULL_FLUSH); break;
    case 2: make_zlib(s, src, n, 9, Z_DEFAULT_STRATEGY, 12345, Z_SYNC_FLUSH); break;
    case 3: make_zlib(s, src, n, 0, Z_DEFAULT_STRATEGY, 0, Z_NO_FLUSH); break; /* stored */
    case 4: make_zlib(s, src, n, 6, Z_FIXED, 40000, Z_FULL_FLUSH); break;
    case 5: make_zlib(s, src, n, 4, Z_HUFFMAN_ONLY, 0, Z_NO_FLUSH); break;
    default: {
        size_t len;
        uint8_t *p = make_spigz(src, n, 65536, 6, &len);
        stream_from_gzip(s, p, len);
    }
    }
}

/* ---- zlib's verdicts ---- */

static void z_start(z_stream *z, const uint8_t *p, size_t n, uint64_t bit)
{
    memset(z, 0, sizeof *z);
    EXPECT(inflateInit2(z, -15) == Z_OK);
    size_t q = (size_t)(bit >> 3);
    unsigned k = (unsigned)(bit & 7);
    if (k != 0)
        EXPECT(inflatePrime(z, (int)(8 - k), p[q] >> k) == Z_OK);
    EXPECT(inflateSetDictionary(z, zero_dict, sizeof zero_dict) == Z_OK);
    z->next_in = (Bytef *)p + q + (k != 0);
    z->avail_in = (uInt)(n - q - (k != 0));
}

/* zlib on the header at `bit`: -1 bad, 0 short, 1 valid with *end. */
static int z_header(const uint8_t *p, size_t n, uint64_t bit, uint64_t *end)
{
    z_stream z;
    z_start(&z, p, n, bit);
    uint8_t out[64];
    z.next_out = out;
    z.avail_out = sizeof out;
    int rc = inflate(&z, Z_TREES);
    int v = rc == Z_DATA_ERROR ? -1 : (z.data_type & 256) ? 1 : 0;
    *end = 8 * (uint64_t)(n - z.avail_in) - (unsigned)(z.data_type & 7);
    inflateEnd(&z);
    return v;
}

/* zlib from the block at `bit` to the stream's end: 1 with the output and
 * the (byte-aligned) end, 0 on an error or the input's end. */
static int z_walk(const uint8_t *p, size_t n, uint64_t bit, uint64_t *out, uint64_t *end)
{
    z_stream z;
    z_start(&z, p, n, bit);
    static uint8_t buf[1 << 16];
    uint64_t total = 0;
    int v;
    for (;;) {
        z.next_out = buf;
        z.avail_out = sizeof buf;
        int rc = inflate(&z, Z_NO_FLUSH);
        total += sizeof buf - z.avail_out;
        if (rc == Z_STREAM_END) {
            v = 1;
            break;
        }
        if (rc != Z_OK || (z.avail_in == 0 && z.avail_out != 0)) {
            v = 0;
            break;
        }
    }
    *out = total;
    *end = 8 * (uint64_t)(n - z.avail_in);
    inflateEnd(&z);
    return v;
}

static int my_walk(const uint8_t *p, size_t n, uint64_t bit, uint64_t *out, uint64_t *end)
{
    struct rs_walk w;
    rs_walk_start(&w, bit, 0);
    enum rs_ev ev;
    while ((ev = rs_walk_run(&w, p, n, true)) == RS_EV_BLOCK)
        ;
    *out = w.out;
    *end = (w.bit + 7) & ~(uint64_t)7;
    return ev == RS_EV_END;
}

static void flip_bits(uint8_t *p, size_t n, uint64_t at, unsigned count)
{
    for (unsigned i = 0; i < count; i++) {
        uint64_t b = at + rnd_below(64);
        if ((b >> 3) < n)
            p[b >> 3] ^= (uint8_t)(1u << (b & 7));
    }
}

/* ---- the validator and the walker against zlib ---- */

START_TEST(header_matches_zlib)
{
    size_t n = 300000;
    uint8_t *src = make_content(n, 11);
    long valid[5] = {0};
    for (unsigned kind = 0; kind < NKIND; kind++) {
        struct stream s;
        make_kind(&s, kind, src, n);
        /* every real start, and random positions in the stream and in noise */
        for (int round = 0; round < 2; round++) {
            uint8_t *p = s.p;
            size_t len = s.n;
            if (round == 1) {
                p = malloc(len);
                rnd_bytes(p, len);
            }
            for (unsigned t = 0; t < 40000 + s.nblk; t++) {
                uint64_t bit = t < s.nblk && round == 0 ? s.blk[t] : rnd_below(8 * (len - RS_HDR_MAX));
                struct rs_hdr h;
                enum rs_kind k = rs_header(p, len, bit, &h);
                uint64_t zend;
                int z = z_header(p, len, bit, &zend);
                EXPECT(k != RS_SHORT && z != 0);
                if (z < 0) {
                    EXPECT(k == RS_BAD);
                    continue;
                }
                EXPECT(k == RS_STORED || k == RS_FIXED || k == RS_DYNAMIC);
                EXPECT_U(h.data_bit, zend);
                valid[k]++;
            }
            if (round == 1)
                free(p);
        }
        stream_free(&s);
    }
    /* the test saw every kind */
    EXPECT(valid[RS_STORED] > 0 && valid[RS_FIXED] > 0 && valid[RS_DYNAMIC] > 0);
    free(src);
}
END_TEST

START_TEST(walk_matches_zlib)
{
    size_t n = 200000;
    uint8_t *src = make_content(n, 12);
    long ends = 0, errors = 0;
    for (unsigned kind = 0; kind < NKIND; kind++) {
        struct stream s;
        make_kind(&s, kind, src, n);
        for (unsigned t = 0; t < 300; t++) {
            uint8_t *p = malloc(s.n);
            memcpy(p, s.p, s.n);
            size_t len = s.n;
            if (t % 3 != 0)
                flip_bits(p, len, rnd_below(8 * len), 1 + (unsigned)rnd_below(3));
            if (t % 5 == 0)
                len = 1 + rnd_below(len);
            /* from a real block start, or from anywhere */
            uint64_t bit = t % 2 ? s.blk[rnd_below(s.nblk)] : rnd_below(8 * len);
            if (bit >= 8 * len)
                bit = s.start;
            uint64_t zo, ze, mo, me;
            int z = z_walk(p, len, bit, &zo, &ze);
            int m = my_walk(p, len, bit, &mo, &me);
            EXPECT_U(m, z);
            if (z) {
                EXPECT_U(mo, zo);
                EXPECT_U(me, ze);
                ends++;
            } else {
                errors++;
            }
            free(p);
        }
        stream_free(&s);
    }
    EXPECT(ends > 100 && errors > 100);
    free(src);
}
END_TEST

/* The walker is resumable: the same counts through a window that slides. */
START_TEST(walk_in_windows)
{
    size_t n = 400000;
    uint8_t *src = make_content(n, 13);
    for (unsigned kind = 0; kind < NKIND; kind++) {
        struct stream s;
        make_kind(&s, kind, src, n);
        uint64_t zo, ze;
        EXPECT(z_walk(s.p, s.n, s.start, &zo, &ze) == 1);
        struct rs_walk w;
        rs_walk_start(&w, s.start, 0);
        size_t base = 0, win = 1500 + (size_t)rnd_below(3000);
        enum rs_ev ev;
        for (;;) {
            size_t len = s.n - base < win ? s.n - base : win;
            ev = rs_walk_run(&w, s.p + base, len, base + len == s.n);
            if (ev == RS_EV_BLOCK)
                continue;
            if (ev != RS_EV_MORE)
                break;
            size_t drop = (size_t)(w.bit >> 3);
            rs_walk_rebase(&w, drop);
            base += drop;
        }
        EXPECT(ev == RS_EV_END);
        EXPECT_U(w.out, n);
        EXPECT_U(8 * base + ((w.bit + 7) & ~(uint64_t)7), ze);
        stream_free(&s);
    }
    free(src);
}
END_TEST

/* ---- the finder ---- */

static struct rs_search search_opts(void)
{
    struct rs_search r = {.limit = 8u << 21, .budget = UINT64_MAX, .look = 0, .members = false};
    r.look = (size_t)(r.limit / 8) + RS_HDR_MAX + RS_FINAL_LOOK;
    return r;
}

static bool strong_at(const struct stream *s, size_t i)
{
    unsigned t = btype(s->p, s->blk[i]);
    return t == 0 || t == 2;
}

/* Whether the confirmation of block i can meet the damage [d, dend): its
 * block, the fixed blocks after it and the next stored or dynamic header
 * (the stream's end for the last). */
static bool chain_damaged(const struct stream *s, size_t i, uint64_t d, uint64_t dend)
{
    size_t j = i + 1;
    while (j < s->nblk && !strong_at(s, j))
        j++;
    uint64_t end = j < s->nblk ? s->blk[j] + 8 * RS_HDR_MAX : 8 * (uint64_t)s->n;
    return s->blk[i] < dend && d < end;
}

/* Two bit positions name the same block when they are the same, or are
 * both stored headers before the same LEN (the padding is free). */
static bool same_block(const uint8_t *p, uint64_t a, uint64_t b)
{
    if (a == b)
        return true;
    return btype(p, a) == 0 && btype(p, b) == 0 && (a + 10) >> 3 == (b + 10) >> 3;
}

START_TEST(finder_after_flips)
{
    size_t n = 600000;
    uint8_t *src = make_content(n, 14);
    long found = 0, none = 0;
    for (unsigned kind = 0; kind < NKIND; kind++) {
        struct stream s;
        make_kind(&s, kind, src, n);
        for (unsigned t = 0; t < 60; t++) {
            uint8_t *p = malloc(s.n);
            memcpy(p, s.p, s.n);
            uint64_t d = s.start + rnd_below(8 * (s.n - 8) - s.start), dend = d + 64;
            size_t b = 0; /* the block holding the damage */
            while (b + 1 < s.nblk && s.blk[b + 1] <= d)
                b++;
            if (t % 4 == 0) { /* random bytes over 1..600 bytes */
                size_t len = 1 + rnd_below(600), q = (size_t)(d >> 3);
                for (size_t i = q; i < q + len && i < s.n - 8; i++)
                    p[i] = (uint8_t)rnd();
                dend = 8 * (uint64_t)(q + len);
            } else {
                flip_bits(p, s.n - 8, d, 1 + (unsigned)rnd_below(4));
            }
            /* from just after the damaged block's start, as salvage does
             * (past a stored block's LEN: it would be found again) */
            struct rs_search opt = search_opts();
            struct rs_hdr h;
            uint64_t at, from = s.blk[b] + 1;
            if (rs_header(s.p, s.n, s.blk[b], &h) == RS_STORED)
                from = h.data_bit;
            enum rs_found f = rs_search(&opt, p, s.n, true, from, &at);
            /* The hit must be a real stored or dynamic block after the
             * damaged one, and every such block before it must be one whose
             * confirmation meets the damage. */
            size_t i = b + 1;
            for (; i < s.nblk; i++) {
                if (!strong_at(&s, i))
                    continue;
                if (f == RS_FOUND_BLOCK && same_block(s.p, at, s.blk[i]))
                    break;
                if (!chain_damaged(&s, i, d, dend))
                    ck_abort_msg("kind %u try %u: damage at bit %llu..%llu (block %zu at %llu): "
                                 "found %d at %llu, but block %zu at %llu is intact", kind, t,
                                 (unsigned long long)d, (unsigned long long)dend, b,
                                 (unsigned long long)s.blk[b], (int)f, (unsigned long long)at, i,
                                 (unsigned long long)s.blk[i]);
            }
            if (i == s.nblk) {
                EXPECT(f == RS_FOUND_NONE);
                none++;
            } else {
                found++;
            }
            free(p);
        }
        stream_free(&s);
    }
    EXPECT(found > 200);
    free(src);
}
END_TEST

START_TEST(finder_on_noise)
{
    size_t n = 1 << 20;
    uint8_t *p = malloc(n);
    for (int pattern = 0; pattern < 5; pattern++) {
        for (size_t i = 0; i < n; i++)
            p[i] = pattern == 0 ? (uint8_t)rnd() : pattern == 1 ? 0 : pattern == 2 ? 0xff
                 : pattern == 3 ? (uint8_t)(i * 37) : (uint8_t)(rnd() & rnd() & rnd());
        struct rs_search opt = search_opts();
        opt.members = true;
        uint64_t from = 0, at;
        long hits = 0;
        for (;;) {
            enum rs_found f = rs_search(&opt, p, n, true, from, &at);
            if (f == RS_FOUND_NONE)
                break;
            EXPECT(f != RS_FOUND_GIVEUP);
            hits++;
            from = at + 1;
        }
        EXPECT_U(hits, 0);
        /* a budget stops any search */
        struct rs_search small = search_opts();
        small.budget = 1000;
        enum rs_found f = rs_search(&small, p, n, true, 0, &at);
        EXPECT(f == RS_FOUND_NONE || f == RS_FOUND_GIVEUP);
    }
    /* windows of any size, not at eof: the search asks for more or finds */
    struct rs_search opt = search_opts();
    uint64_t at;
    EXPECT(rs_search(&opt, p, opt.look / 2, false, 0, &at) == RS_FOUND_NONE && at == 0);
    free(p);
}
END_TEST

/* rs_member() reads gzip headers of every shape and no more. */
START_TEST(member_headers)
{
    uint8_t h[64] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    EXPECT_U(rs_member(h, 10, 0), 10);
    EXPECT_U(rs_member(h, 9, 0), 0);
    h[3] = 0x08 | 0x10 | 0x04 | 0x02; /* FNAME FCOMMENT FEXTRA FHCRC */
    size_t e = 10;
    h[e++] = 3;
    h[e++] = 0;
    e += 3;
    memcpy(h + e, "nm", 3);
    e += 3;
    memcpy(h + e, "c", 2);
    e += 2;
    uint32_t crc = (uint32_t)crc32(0, h, (uInt)e);
    h[e] = (uint8_t)crc;
    h[e + 1] = (uint8_t)(crc >> 8);
    EXPECT_U(rs_member(h, e + 2, 0), e + 2);
    EXPECT_U(rs_member(h, e + 1, 0), 0);
    h[e] ^= 1; /* header CRC wrong */
    EXPECT_U(rs_member(h, e + 2, 0), 0);
    h[3] = 0x20; /* a reserved flag */
    EXPECT_U(rs_member(h, 64, 0), 0);
}
END_TEST

/* ---- the unknown window ---- */

struct marks {
    uint8_t *mask;
    size_t base;
};

static int mark_cb(void *ctx, size_t off, size_t len)
{
    struct marks *m = ctx;
    memset(m->mask + m->base + off, 1, len);
    return 0;
}

/* Decode s from block i with rs_dual to the end; check against src. */
static size_t dual_from(const struct stream *s, size_t i, const uint8_t *src, size_t n)
{
    struct rs_dual d;
    EXPECT(rs_dual_open(&d) == 0);
    uint64_t bit = s->blk[i];
    size_t q = (size_t)(bit >> 3);
    unsigned k = (unsigned)(bit & 7);
    EXPECT(rs_dual_resume(&d, k ? 8 - k : 0, k ? s->p[q] >> k : 0) == 0);
    const uint8_t *in = s->p + q + (k != 0);
    size_t avail = s->n - q - (k != 0), want = n - s->blk_out[i], got_all = 0;
    uint8_t *out = malloc(want + RS_STEP);
    struct marks m = {calloc(want + RS_STEP, 1), 0};
    for (;;) {
        size_t got;
        m.base = got_all;
        int rc = rs_dual_inflate(&d, &in, &avail, out + got_all, RS_STEP, &got, mark_cb, &m);
        got_all += got;
        if (rc == Z_STREAM_END)
            break;
        EXPECT(rc == Z_OK || rc == Z_BUF_ERROR);
    }
    EXPECT_U(got_all, want);
    size_t marked = 0;
    for (size_t j = 0; j < want; j++) {
        if (m.mask[j]) {
            EXPECT(out[j] == 0);
            marked++;
        } else if (out[j] != src[s->blk_out[i] + j]) {
            ck_abort_msg("byte %zu after block %zu not marked but wrong", j, i);
        }
    }
    EXPECT(!d.two || got_all < RS_WIN); /* dropped once 32 KiB agreed */
    rs_dual_close(&d);
    free(out);
    free(m.mask);
    return marked;
}

START_TEST(dual_marks_lost_window)
{
    size_t n = 500000;
    uint8_t *src = make_content(n, 15);
    size_t marked = 0;
    for (unsigned kind = 0; kind < NKIND; kind++) {
        struct stream s;
        make_kind(&s, kind, src, n);
        for (size_t i = 1; i < s.nblk; i += 1 + s.nblk / 6)
            if (btype(s.p, s.blk[i]) != 3)
                marked += dual_from(&s, i, src, n);
        stream_free(&s);
    }
    EXPECT(marked > 0); /* text refers back: some bytes were unknown */
    /* spigz pieces never refer before their start: at a piece start
     * (after an empty stored block), nothing is unknown */
    size_t len;
    struct stream s;
    uint8_t *gz = make_spigz(src, n, 32768, 9, &len);
    stream_from_gzip(&s, gz, len);
    size_t starts = 0;
    for (size_t i = 1; i < s.nblk; i++) {
        uint64_t b = s.blk[i];
        if ((b & 7) == 0 && b >= 32 && memcmp(s.p + (b >> 3) - 4, "\0\0\377\377", 4) == 0) {
            EXPECT_U(dual_from(&s, i, src, n), 0);
            starts++;
        }
    }
    EXPECT(starts > 3);
    stream_free(&s);
    free(src);
}
END_TEST

/* ---- salvage through unz_run ---- */

struct salvaged {
    int rc;
    struct sp_err err;
    struct unz_stats st;
    uint8_t *out;
    size_t n;
};

/* unz_run with salvage (or not) on p[0..n), from a memfd or a pipe. */
static void salvage(const uint8_t *p, size_t n, bool pipe_in, bool on, struct salvaged *r)
{
    int in;
    pid_t pid = -1;
    if (pipe_in) {
        int fds[2];
        EXPECT(pipe(fds) == 0);
        pid = fork();
        EXPECT(pid >= 0);
        if (pid == 0) {
            close(fds[0]);
            for (size_t i = 0; i < n;) {
                ssize_t w = write(fds[1], p + i, n - i);
                if (w <= 0)
                    _exit(1);
                i += (size_t)w;
            }
            _exit(0);
        }
        close(fds[1]);
        in = fds[0];
    } else {
        in = memfd_with(p, n);
    }
    int out = memfd_create("check-resync-out", MFD_CLOEXEC);
    struct osink o;
    memset(&r->err, 0, sizeof r->err);
    EXPECT(osink_open(&o, out, OSINK_SPARSE_AUTO, &r->err) == 0);
    struct unz_opts uo = {.threads = 2, .salvage = on};
    r->rc = unz_run(in, &o, &uo, &r->st, &r->err);
    close(in);
    if (pid > 0)
        waitpid(pid, NULL, 0);
    struct buf b = slurp(out);
    r->out = b.p;
    r->n = b.n;
    close(out);
}

/* Outside the damaged ranges the output is the original's, inside zeros
 * (but a member kept whole after its CRC-32 failed, or a shifted rest).
 * Returns the damaged bytes that lie inside the output. */
static uint64_t check_ranges(const struct salvaged *r, const uint8_t *src, size_t n,
                             bool exact_zeros)
{
    uint64_t bad = 0, prev_end = 0;
    size_t i = 0;
    for (size_t k = 0; k <= r->st.nbad; k++) {
        uint64_t off = k < r->st.nbad ? r->st.bad[k].off : r->n;
        uint64_t len = k < r->st.nbad ? r->st.bad[k].len : 0;
        /* sorted, disjoint, not adjacent, not empty */
        EXPECT(k == 0 || k == r->st.nbad || off > prev_end);
        EXPECT(len > 0 || k == r->st.nbad);
        uint64_t end = len > r->n - (off < r->n ? off : r->n) ? r->n : off + len;
        for (; i < off && i < r->n; i++)
            if (i >= n || r->out[i] != src[i])
                ck_abort_msg("byte %zu outside the damaged ranges is wrong", i);
        for (; i < end; i++) {
            if (exact_zeros && r->out[i] != 0)
                ck_abort_msg("byte %zu inside a damaged range is not zero", i);
            bad++;
        }
        prev_end = off + len;
    }
    return bad;
}

static void damage(uint8_t *p, size_t n, uint64_t off, size_t len)
{
    for (size_t i = (size_t)off; i < off + len && i < n; i++)
        p[i] = (uint8_t)rnd();
}

static uint8_t *make_gzip(const uint8_t *src, size_t n, int level, size_t *len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    EXPECT(deflateInit2(&z, level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    size_t cap = deflateBound(&z, n);
    uint8_t *p = malloc(cap);
    z.next_in = (Bytef *)src;
    z.avail_in = (uInt)n;
    z.next_out = p;
    z.avail_out = (uInt)cap;
    EXPECT(deflate(&z, Z_FINISH) == Z_STREAM_END);
    *len = cap - z.avail_out;
    deflateEnd(&z);
    return p;
}

START_TEST(salvage_clean_input_unchanged)
{
    size_t n = 700000, len;
    uint8_t *src = make_content(n, 16);
    uint8_t *gz = make_gzip(src, n, 6, &len);
    struct salvaged r;
    salvage(gz, len, false, true, &r);
    EXPECT(r.rc == 0 && r.st.nbad == 0 && r.st.bad == NULL && r.st.resyncs == 0);
    EXPECT(!r.st.shifted && r.n == n && memcmp(r.out, src, n) == 0);
    free(r.out);
    /* not gzip at all: refused, with or without salvage */
    salvage(src, 1000, false, true, &r);
    EXPECT(r.rc == -1 && r.err.kind == SP_ERR_FORMAT);
    free(r.out);
    free(r.st.bad);
    free(gz);
    free(src);
}
END_TEST

/* One damaged place in a spigz file without an index: with a seekable
 * input the offsets are recovered (never shifted), the output is the
 * original outside the ranges and zeros inside; damage that decodes
 * without a zlib error and keeps the length is caught by the CRC-32 only
 * (the member kept whole, listed). */
START_TEST(salvage_spigz_offsets_recovered)
{
    size_t n = 3 << 20, len;
    uint8_t *src = make_content(n, 17);
    uint8_t *gz = make_spigz(src, n, 131072, 6, &len);
    int exact = 0, crc_only = 0;
    for (int t = 0; t < 24; t++) {
        uint8_t *p = malloc(len);
        memcpy(p, gz, len);
        size_t dl = (size_t[]){1, 16, 200, 4096}[t % 4];
        uint64_t at = 100 + rnd_below(len - 300 - dl);
        damage(p, len, at, dl);
        struct salvaged r;
        salvage(p, len, false, true, &r);
        EXPECT(r.rc == 0);
        if (r.st.shifted)
            ck_abort_msg("try %d: %zu bytes damaged at %llu of %zu: shifted at %llu", t, dl,
                         (unsigned long long)at, len, (unsigned long long)r.st.shifted_at);
        EXPECT_U(r.n, n);
        bool whole = r.st.nbad == 1 && r.st.bad[0].off == 0 && r.st.bad[0].len == n;
        uint64_t bad = check_ranges(&r, src, n, !whole);
        if (whole)
            crc_only++;
        else if (bad > 0 || r.st.resyncs > 0)
            exact++;
        free(r.st.bad);
        free(r.out);
        free(p);
    }
    EXPECT(exact >= 12); /* most damage is found and placed */
    (void)crc_only;
    free(gz);
    free(src);
}
END_TEST

/* The same from a pipe: nothing can be read ahead, so after a gap the
 * output may be shifted; before shifted_at it is exact, the ranges zeros. */
START_TEST(salvage_from_pipe)
{
    size_t n = 2 << 20, len;
    uint8_t *src = make_content(n, 18);
    uint8_t *gz = make_spigz(src, n, 65536, 6, &len);
    int resumed = 0;
    for (int t = 0; t < 10; t++) {
        uint8_t *p = malloc(len);
        memcpy(p, gz, len);
        damage(p, len, 100 + rnd_below(len - 5000), 1000);
        struct salvaged r;
        salvage(p, len, true, true, &r);
        EXPECT(r.rc == 0);
        if (r.st.shifted) {
            EXPECT(r.st.nbad > 0 && r.st.bad[r.st.nbad - 1].off <= r.st.shifted_at);
            EXPECT_U(r.st.bad[r.st.nbad - 1].len, UINT64_MAX - r.st.bad[r.st.nbad - 1].off);
            EXPECT(r.n > r.st.shifted_at);
            resumed += r.st.resyncs > 0;
        }
        bool whole = r.st.nbad == 1 && r.st.bad[0].off == 0 && r.st.bad[0].len == n;
        check_ranges(&r, src, n, !r.st.shifted && !whole);
        free(r.st.bad);
        free(r.out);
        free(p);
    }
    EXPECT(resumed > 0);
    free(gz);
    free(src);
}
END_TEST

/* A cut file keeps what decoded up to the cut; the rest is a range of
 * unknown end. */
START_TEST(salvage_cut_file)
{
    size_t n = 1 << 20, len;
    uint8_t *src = make_content(n, 19);
    uint8_t *gzs[2];
    size_t lens[2];
    gzs[0] = make_gzip(src, n, 6, &lens[0]);
    gzs[1] = make_spigz(src, n, 65536, 6, &lens[1]);
    for (int f = 0; f < 2; f++) {
        for (int t = 0; t < 8; t++) {
            len = 20 + rnd_below(lens[f] - 30);
            struct salvaged r;
            salvage(gzs[f], len, t % 2, true, &r);
            EXPECT(r.rc == 0 && r.st.nbad >= 1);
            struct sp_range last = r.st.bad[r.st.nbad - 1];
            EXPECT_U(last.len, UINT64_MAX - last.off);
            EXPECT(last.off == r.n);
            check_ranges(&r, src, n, true);
            free(r.st.bad);
            free(r.out);
        }
        free(gzs[f]);
    }
    free(src);
}
END_TEST

/* gzip files, and two members where the first is damaged: the second is
 * restored; without salvage the same files fail as gzip fails. */
START_TEST(salvage_gzip_and_members)
{
    size_t n = 1 << 20, l1, l2;
    uint8_t *src = make_content(n, 20);
    uint8_t *a = make_gzip(src, n / 2, 6, &l1), *b = make_gzip(src + n / 2, n - n / 2, 6, &l2);
    uint8_t *p = malloc(l1 + l2);
    int resumed = 0;
    for (int t = 0; t < 10; t++) {
        memcpy(p, a, l1);
        memcpy(p + l1, b, l2);
        damage(p, l1, 100 + rnd_below(l1 / 2), 3000);
        struct salvaged r;
        salvage(p, l1 + l2, false, true, &r);
        EXPECT(r.rc == 0 && r.st.nbad > 0);
        bool whole = r.st.bad[0].off == 0 && r.st.bad[0].len >= n / 2;
        check_ranges(&r, src, n, !whole && !r.st.shifted);
        /* the second member's bytes are there, at the end */
        EXPECT(r.n >= n - n / 2 && memcmp(r.out + r.n - (n - n / 2), src + n / 2, n - n / 2) == 0);
        resumed += r.st.resyncs > 0;
        free(r.st.bad);
        free(r.out);
        /* salvage off: gzip's verdict */
        salvage(p, l1 + l2, false, false, &r);
        EXPECT(r.rc == -1 && (r.err.kind == SP_ERR_DATA || r.err.kind == SP_ERR_CHECK));
        EXPECT(r.st.bad == NULL && r.st.nbad == 0);
        free(r.out);
    }
    EXPECT(resumed > 0);
    free(p);
    free(a);
    free(b);
    free(src);
}
END_TEST

/* Findings of fuzz_resync, made unit tests: a trailer that disagrees
 * must never pass unreported, even where no byte can be listed. */
START_TEST(salvage_trailer_cases)
{
    /* an empty member whose CRC-32 is not 0: nothing to list, unverified */
    static const uint8_t empty_bad_crc[] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 3, 0,
                                            0, 0, 0, 0x73, 0, 0, 0, 0};
    struct salvaged r;
    salvage(empty_bad_crc, sizeof empty_bad_crc, false, true, &r);
    EXPECT(r.rc == 0 && r.n == 0 && r.st.nbad == 0 && r.st.unverified == 1);
    free(r.out);
    salvage(empty_bad_crc, sizeof empty_bad_crc, false, false, &r);
    EXPECT(r.rc == -1 && r.err.kind == SP_ERR_CHECK);
    free(r.out);

    /* a spigz file whose trailer describes all but its last piece: on the
     * grid the last piece is the damaged one, its length 0 by ISIZE, and
     * the CRC-32 then confirms what is left: repaired, nothing listed */
    size_t n = 5 * 65536 + 1000, len;
    uint8_t *src = make_content(n, 21);
    memset(src, 'x', n - 1000); /* data: no zero piece, so 5 pieces on the grid */
    uint8_t *gz = make_spigz(src, n, 65536, 6, &len);
    uint32_t crc = (uint32_t)crc32(0, src, (uInt)(n - 1000)), isize = (uint32_t)(n - 1000);
    for (int k = 0; k < 4; k++) {
        gz[len - 8 + k] = (uint8_t)(crc >> (8 * k));
        gz[len - 4 + k] = (uint8_t)(isize >> (8 * k));
    }
    salvage(gz, len, false, true, &r);
    EXPECT(r.rc == 0 && r.st.repaired == 1 && r.st.nbad == 0 && !r.st.shifted);
    EXPECT(r.n == n - 1000 && memcmp(r.out, src, r.n) == 0);
    free(r.out);
    free(r.st.bad);
    free(gz);
    free(src);
}
END_TEST

static Suite *resync_suite(void)
{
    Suite *s = suite_create("resync");
    TCase *t = tcase_create("finder");
    tcase_set_timeout(t, 600);
    tcase_add_test(t, header_matches_zlib);
    tcase_add_test(t, walk_matches_zlib);
    tcase_add_test(t, walk_in_windows);
    tcase_add_test(t, finder_after_flips);
    tcase_add_test(t, finder_on_noise);
    tcase_add_test(t, member_headers);
    tcase_add_test(t, dual_marks_lost_window);
    suite_add_tcase(s, t);
    TCase *u = tcase_create("salvage");
    tcase_set_timeout(u, 600);
    tcase_add_test(u, salvage_clean_input_unchanged);
    tcase_add_test(u, salvage_spigz_offsets_recovered);
    tcase_add_test(u, salvage_from_pipe);
    tcase_add_test(u, salvage_cut_file);
    tcase_add_test(u, salvage_gzip_and_members);
    tcase_add_test(u, salvage_trailer_cases);
    suite_add_tcase(s, u);
    return s;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    return run_suite(resync_suite());
}
