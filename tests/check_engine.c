/* Unit tests for engine: at every level this build has, each piece is raw
 * deflate that inflates (zlib) to exactly its chunk, consumes all its bytes,
 * ends byte-aligned at a block boundary with no final block (so that pieces
 * concatenate), fits in eng_bound() for incompressible data too, and is the
 * same bytes every time.  eng_size() agrees with eng_compress(). */
/* this test's own sequence (check_util.h, rnd) */
#define CU_RNG_SEED 88172645463325252u
#include "check_util.h"

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "engine.h"
#include "isal_home.h"

/* Inflate piece p[0..n) block by block: true when it decodes to want[0..wn),
 * uses all n bytes, never meets a final block and stops byte-aligned at a
 * block boundary; then a final empty static block ends the stream. */
static bool piece_ok(const uint8_t *p, size_t n, const uint8_t *want, size_t wn)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    ck_assert_int_eq(inflateInit2(&zs, -15), Z_OK);
    uint8_t *out = malloc(wn + 1);
    zs.next_in = (Bytef *)p;
    zs.avail_in = (uInt)n;
    zs.next_out = out;
    zs.avail_out = (uInt)wn + 1;
    bool ok = true;
    while (ok && zs.avail_in > 0) {
        int rc = inflate(&zs, Z_BLOCK);
        if (rc != Z_OK || (zs.data_type & 64) != 0) /* error, end, or a final block */
            ok = false;
    }
    /* At a block boundary (128) with no bits left over in the last byte. */
    ok = ok && (zs.data_type & 128) != 0 && (zs.data_type & 7) == 0 && zs.total_out == wn &&
         memcmp(out, want, wn) == 0;
    static const uint8_t end[2] = {0x03, 0x00};
    zs.next_in = (Bytef *)end;
    zs.avail_in = 2;
    ok = ok && inflate(&zs, Z_FINISH) == Z_STREAM_END && zs.total_out == wn;
    inflateEnd(&zs);
    free(out);
    return ok;
}

/* Inputs: 1 byte, short text, incompressible bytes, zeros, a mixture. */
#define NIN 5
static size_t make_input(int kind, uint8_t *p, size_t cap)
{
    static const char text[] = "the quick brown fox jumps over the lazy dog; ";
    switch (kind) {
    case 0: p[0] = 'x'; return 1;
    case 1:
        for (size_t i = 0; i < 5000; i++)
            p[i] = (uint8_t)text[i % (sizeof text - 1)];
        return 5000;
    case 2:
        rnd_bytes(p, cap);
        return cap;
    case 3: memset(p, 0, cap); return cap;
    default:
        for (size_t i = 0; i < cap; i++)
            p[i] = (i / 70000) % 2 ? (uint8_t)rnd() : (uint8_t)text[(i * 7 + i / 3) % 40];
        return cap;
    }
}

/* How many levels the configuration promises (engine.h's map): 0 to 12 with
 * libdeflate, 0 to 9 with zlib, less 1 to 3 without ISA-L. */
static int levels_built(void)
{
#ifdef HAVE_LIBDEFLATE
    int n = 13;
#else
    int n = 10;
#endif
#ifndef HAVE_ISAL
    n -= 3;
#endif
    return n;
}

START_TEST(pieces_at_every_level)
{
    size_t cap = (3u << 20) + 12345;
    uint8_t *in = malloc(cap);
    int levels = 0;
    for (int level = 0; level <= eng_max_level(); level++) {
        if (eng_level_desc(level) == NULL)
            continue;
        levels++;
        struct sp_err err = {0};
        struct eng *e = eng_new(level, &err);
        ck_assert_msg(e != NULL, "level %d: %s", level, err.msg);
        for (int k = 0; k < NIN; k++) {
            size_t n = make_input(k, in, cap);
            size_t bound = eng_bound(e, n);
            uint8_t *a = malloc(bound), *b = malloc(bound);
            size_t alen = 0, blen = 0, slen = 0;
            ck_assert_int_eq(eng_compress(e, in, n, a, bound, &alen, &err), 0);
            ck_assert_msg(piece_ok(a, alen, in, n), "level %d input %d: bad piece", level, k);
            /* the same bytes again, and eng_size within the splice bytes */
            ck_assert_int_eq(eng_compress(e, in, n, b, bound, &blen, &err), 0);
            ck_assert_msg(alen == blen && memcmp(a, b, alen) == 0, "level %d input %d: "
                          "two runs differ", level, k);
            ck_assert_int_eq(eng_size(e, in, n, b, bound, &slen, &err), 0);
            ck_assert_msg(slen <= alen && alen - slen <= 5, "level %d input %d: size %zu "
                          "vs piece %zu", level, k, slen, alen);
            free(a);
            free(b);
        }
        eng_free(e);
    }
    ck_assert_int_eq(levels, levels_built());
    free(in);
}
END_TEST

/* Fill the stack below the caller with one 16-bit value, so that a callee's
 * uninitialised locals hold it (noinline, and the volatile array keeps the
 * compiler from dropping the fill). */
static __attribute__((noinline)) void dirty_stack(uint16_t v)
{
    volatile uint16_t junk[256 << 10];
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++)
        junk[i] = v;
}

/* A piece is a function of its chunk alone: not of what the same engine
 * compressed before (a pool's workers take chunks in any order), nor of what
 * the stack held.  ISA-L's stateless call reads fields of its stream that
 * isal_deflate_stateless_init() leaves alone (ISA-L 2.30: hist_bits, the log
 * of the longest distance, where a value from 1 to 15 shortens the window),
 * so a -1 backup's bytes depended on what a worker thread's stack held before
 * (found by check_compress in CI: one run in a few hundred differed with 3
 * threads). */
START_TEST(pieces_have_no_history)
{
    const size_t n = 256u << 10;
    uint8_t *a = malloc(n), *b = malloc(n);
    make_input(4, a, n);
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)("abcdefgh"[rnd() % 8] + (i % 89 == 0));
    for (int level = 0; level <= eng_max_level(); level++) {
        if (eng_level_desc(level) == NULL)
            continue;
        struct sp_err err = {0};
        struct eng *fresh = eng_new(level, &err), *used = eng_new(level, &err);
        ck_assert_msg(fresh != NULL && used != NULL, "level %d: %s", level, err.msg);
        size_t bound = eng_bound(fresh, n);
        uint8_t *ref = malloc(bound), *out = malloc(bound);
        size_t rlen = 0, olen = 0;
        dirty_stack(0);
        ck_assert_int_eq(eng_compress(fresh, b, n, ref, bound, &rlen, &err), 0);
        /* 9, 1, 15: a small 16-bit field (ISA-L's hist_bits: a window of
         * 2^v bytes) */
        static const uint16_t fills[] = {9, 1, 15, 0xffff, 0};
        for (size_t f = 0; f < sizeof fills / sizeof fills[0]; f++) {
            dirty_stack(fills[f]);
            ck_assert_int_eq(eng_compress(used, a, n, out, bound, &olen, &err), 0);
            dirty_stack(fills[f]);
            ck_assert_int_eq(eng_compress(used, b, n, out, bound, &olen, &err), 0);
            ck_assert_msg(olen == rlen && memcmp(out, ref, rlen) == 0,
                          "level %d: the piece depends on the engine's past or the stack "
                          "(fill 0x%04x: %zu bytes, fresh %zu)", level, fills[f], olen, rlen);
        }
        free(ref);
        free(out);
        eng_free(fresh);
        eng_free(used);
    }
    free(a);
    free(b);
}
END_TEST

/* ---- a deflate token walk, to see which match a piece chose ---- */

struct tw_bits {
    const uint8_t *p;
    size_t n, i; /* bytes, next byte */
    uint32_t b;  /* bits not yet used, low first */
    int k;       /* how many */
};

static int tw_get(struct tw_bits *s, int need)
{
    while (s->k < need) {
        if (s->i == s->n)
            return -1;
        s->b |= (uint32_t)s->p[s->i++] << s->k;
        s->k += 8;
    }
    int v = (int)(s->b & ((1u << need) - 1));
    s->b >>= need;
    s->k -= need;
    return v;
}

struct tw_code {
    uint16_t count[16]; /* codes of each length */
    uint16_t sym[320];  /* symbols by code */
};

static void tw_build(struct tw_code *c, const uint8_t *len, int n)
{
    uint16_t at[16];
    memset(c->count, 0, sizeof c->count);
    for (int i = 0; i < n; i++)
        c->count[len[i]]++;
    c->count[0] = 0;
    at[1] = 0;
    for (int l = 1; l < 15; l++)
        at[l + 1] = (uint16_t)(at[l] + c->count[l]);
    for (int i = 0; i < n; i++)
        if (len[i] != 0)
            c->sym[at[len[i]]++] = (uint16_t)i;
}

/* Canonical decoding, a bit at a time: codes of one length are consecutive. */
static int tw_sym(struct tw_bits *s, const struct tw_code *c)
{
    int code = 0, first = 0, index = 0;
    for (int l = 1; l < 16; l++) {
        int bit = tw_get(s, 1);
        if (bit < 0)
            return -1;
        code |= bit;
        if (code - first < c->count[l])
            return c->sym[index + code - first];
        index += c->count[l];
        first = (first + c->count[l]) << 1;
        code <<= 1;
    }
    return -1;
}

/* The token that starts at output position pos of raw deflate p[0..n): 0 for
 * a literal, the distance for a match, -1 when none starts there. */
static long token_at(const uint8_t *p, size_t n, size_t pos)
{
    static const uint16_t lbase[29] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27,
                                       31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
    static const uint16_t dbase[30] = {1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129,
                                       193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
                                       6145, 8193, 12289, 16385, 24577};
    static const uint8_t order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
    struct tw_bits s = {p, n, 0, 0, 0};
    size_t at = 0;
    int last = 0;
    while (!last && at <= pos) {
        last = tw_get(&s, 1);
        int type = tw_get(&s, 2);
        struct tw_code lit, dist;
        uint8_t len[320];
        if (last < 0 || type < 0 || type == 3)
            return -1;
        if (type == 0) {
            s.b = 0;
            s.k = 0;
            if (s.i + 4 > n)
                return -1;
            size_t stored = p[s.i] | (size_t)p[s.i + 1] << 8;
            if (pos >= at && pos < at + stored)
                return 0;
            s.i += 4 + stored;
            at += stored;
            continue;
        }
        if (type == 1) {
            for (int i = 0; i < 288; i++)
                len[i] = i < 144 ? 8 : i < 256 ? 9 : i < 280 ? 7 : 8;
            tw_build(&lit, len, 288);
            memset(len, 5, 30);
            tw_build(&dist, len, 30);
        } else {
            int nlit = tw_get(&s, 5) + 257, ndist = tw_get(&s, 5) + 1, ncl = tw_get(&s, 4) + 4;
            uint8_t cl[19] = {0};
            for (int i = 0; i < ncl; i++)
                cl[order[i]] = (uint8_t)tw_get(&s, 3);
            struct tw_code clc;
            tw_build(&clc, cl, 19);
            for (int i = 0; i < nlit + ndist;) {
                int sym = tw_sym(&s, &clc), rep = 0, v = 0;
                if (sym < 0)
                    return -1;
                if (sym < 16) {
                    len[i++] = (uint8_t)sym;
                    continue;
                }
                if (sym == 16) {
                    if (i == 0)
                        return -1;
                    v = len[i - 1];
                    rep = 3 + tw_get(&s, 2);
                } else {
                    rep = sym == 17 ? 3 + tw_get(&s, 3) : 11 + tw_get(&s, 7);
                }
                if (i + rep > nlit + ndist)
                    return -1;
                while (rep-- > 0)
                    len[i++] = (uint8_t)v;
            }
            tw_build(&lit, len, nlit);
            tw_build(&dist, len + nlit, ndist);
        }
        for (;;) {
            int sym = tw_sym(&s, &lit);
            if (sym < 0 || sym > 285)
                return -1;
            if (sym == 256)
                break;
            if (sym < 256) {
                if (at++ == pos)
                    return 0;
                continue;
            }
            int l = lbase[sym - 257] + tw_get(&s, (sym < 265 || sym == 285) ? 0 : (sym - 261) / 4);
            int d = tw_sym(&s, &dist);
            if (d < 0 || d > 29)
                return -1;
            long distance = dbase[d] + tw_get(&s, d < 4 ? 0 : d / 2 - 1);
            if (at == pos)
                return distance;
            if (at > pos)
                return -1;
            at += (size_t)l;
        }
    }
    return -1;
}

/* ISA-L 2.30's level-2 assembly files the third byte of its input under a
 * hash of the stream's address instead of the byte's own (isal_home.h), so
 * the bytes 2.. of a piece were found again only if the stream happened to
 * lie where that hash was right: 1 chance in 32768 (and a piece's bytes
 * depended on the worker's stack, found by check_compress in CI).  Here
 * bytes 2 to 9 come again at 1000 after zeros: the piece must match them at
 * distance 998, from position 2 (the first two bytes differ). */
enum { TB_N = 4096, TB_AT = 1000 };

/* TB_N bytes: two bytes, then 8 more that come again at TB_AT, zeros between
 * (the caller frees it). */
static uint8_t *third_byte_input(void)
{
    static const uint8_t g[8] = {0x47, 0x83, 0x5a, 0xc1, 0x3e, 0x99, 0x20, 0x7d};
    uint8_t *in = calloc(1, TB_N);
    ck_assert_ptr_nonnull(in);
    in[0] = 0x11;
    in[1] = 0x22;
    memcpy(in + 2, g, sizeof g);
    memcpy(in + TB_AT, g, sizeof g);
    return in;
}

START_TEST(third_byte_hashed_from_data)
{
    const size_t n = TB_N, at = TB_AT;
    uint8_t *in = third_byte_input();
    for (int level = 1; level <= 3; level++) {
        struct sp_err err = {0};
        struct eng *e = eng_new(level, &err);
        if (e == NULL) {
            ck_assert_ptr_null(eng_level_desc(level)); /* a build without ISA-L */
            continue;
        }
        size_t bound = eng_bound(e, n), len = 0;
        uint8_t *out = malloc(bound);
        ck_assert_int_eq(eng_compress(e, in, n, out, bound, &len, &err), 0);
        ck_assert(piece_ok(out, len, in, n));
        long d = token_at(out, len, at);
        ck_assert_msg(d == (long)(at - 2), "level %d: the token at %zu is %s %ld, not a match "
                      "at distance %zu", level, at, d == 0 ? "a literal" : "distance", d, at - 2);
        free(out);
        eng_free(e);
    }
    free(in);
}
END_TEST

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t hw_crc32c(uint32_t v)
{
    return __builtin_ia32_crc32si(0, v);
}
#endif

/* isal_home hands out zeroed streams at addresses whose bits 16..47, hashed
 * as ISA-L's body hashes them (the crc32 instruction), land in the slot of
 * the input's bytes 2 to 5. */
START_TEST(isal_home_places_by_data)
{
#if defined(__x86_64__)
    if (__builtin_cpu_supports("sse4.2"))
        for (int i = 0; i < 100000; i++) {
            uint32_t v = (uint32_t)rnd();
            ck_assert_uint_eq(ihome_crc32c(v), hw_crc32c(v));
        }
#endif
    struct ihome h;
    const size_t size = 82384; /* ISA-L 2.30's struct isal_zstream */
    ck_assert_int_eq(ihome_init(&h, size), 0);
    for (int i = 0; i < 2000; i++) {
        uint8_t in[6];
        rnd_bytes(in, sizeof in);
        uint8_t *p = ihome_get(&h, in, sizeof in);
        ck_assert_ptr_nonnull(p);
        uint32_t data = (uint32_t)in[2] | (uint32_t)in[3] << 8 | (uint32_t)in[4] << 16 |
                        (uint32_t)in[5] << 24;
        uint32_t addr = (uint32_t)((uintptr_t)p >> 16);
        ck_assert_uint_eq(ihome_crc32c(addr) & IHOME_MASK, ihome_crc32c(data) & IHOME_MASK);
        for (size_t j = 0; j < size; j += 509)
            ck_assert_uint_eq(p[j], 0);
        memset(p, 0xa5, size); /* the next stream must be zero again */
        ck_assert_int_eq(ihome_put(&h), 0);
    }
    ihome_fini(&h);
}
END_TEST

/* ihome_fixed's stream stays put at an address whose operand hashes to slot
 * 0, is zero on every call, and outlives the steered streams around it. */
START_TEST(isal_home_fixed_slot_zero)
{
    struct ihome h;
    const size_t size = 82384; /* ISA-L 2.30's struct isal_zstream */
    ck_assert_int_eq(ihome_init(&h, size), 0);
    uint8_t *f = ihome_fixed(&h);
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(ihome_crc32c((uint32_t)((uintptr_t)f >> 16)) & IHOME_MASK, 0);
    for (int i = 0; i < 200; i++) {
        memset(f, 0x5a, size); /* the next call must zero it */
        uint8_t in[6];
        rnd_bytes(in, sizeof in);
        uint8_t *p = ihome_get(&h, in, sizeof in);
        ck_assert_ptr_nonnull(p);
        ck_assert(p + size <= f || f + size <= p); /* never the same pages */
        memset(p, 0xa5, size);
        ck_assert_int_eq(ihome_put(&h), 0);
        ck_assert_ptr_eq(ihome_fixed(&h), f);
        for (size_t j = 0; j < size; j += 257)
            ck_assert_uint_eq(f[j], 0);
    }
    ihome_fini(&h);
}
END_TEST

/* eng_size() at levels 1 to 3 gives the same bytes from every engine (each
 * has its own reservation) on input whose third byte starts a later match,
 * within a few bytes of eng_compress()'s piece; at levels 1 and 2 that byte
 * is filed under slot 0, not its own (the stream stays put), so the match
 * to it is not found where eng_compress() finds it. */
START_TEST(sizes_independent_of_engine)
{
    const size_t n = TB_N, at = TB_AT;
    uint8_t *in = third_byte_input();
    for (int level = 1; level <= 3; level++) {
        if (eng_level_desc(level) == NULL)
            continue;
        struct sp_err err = {0};
        struct eng *e[4];
        uint8_t *out[4];
        size_t len[4], whole = 0;
        for (int i = 0; i < 4; i++) {
            e[i] = eng_new(level, &err);
            ck_assert_ptr_nonnull(e[i]);
            size_t bound = eng_bound(e[i], n);
            out[i] = malloc(bound);
            ck_assert_int_eq(eng_size(e[i], in, n, out[i], bound, &len[i], &err), 0);
            ck_assert(len[i] == len[0] && memcmp(out[i], out[0], len[0]) == 0);
        }
        ck_assert(piece_ok(out[0], len[0], in, n));
        if (level <= 2)
            ck_assert_int_ne(token_at(out[0], len[0], at), (long)(at - 2));
        size_t bound = eng_bound(e[0], n);
        uint8_t *w = malloc(bound);
        ck_assert_int_eq(eng_compress(e[0], in, n, w, bound, &whole, &err), 0);
        ck_assert_int_eq(token_at(w, whole, at), (long)(at - 2));
        ck_assert_msg(len[0] <= whole + 8 && whole <= len[0] + 8, "level %d: %zu against %zu",
                      level, len[0], whole);
        free(w);
        for (int i = 0; i < 4; i++) {
            free(out[i]);
            eng_free(e[i]);
        }
    }
    free(in);
}
END_TEST

/* Two pieces one after the other are one stream of both chunks. */
START_TEST(pieces_concatenate)
{
    const size_t n = 300000;
    uint8_t *in = malloc(2 * n);
    make_input(4, in, 2 * n);
    for (int level = 1; level <= 3; level++) {
        if (eng_level_desc(level) == NULL)
            continue;
        struct sp_err err = {0};
        struct eng *e = eng_new(level, &err);
        ck_assert_ptr_nonnull(e);
        size_t bound = eng_bound(e, n), l1 = 0, l2 = 0;
        uint8_t *out = malloc(2 * bound);
        ck_assert_int_eq(eng_compress(e, in, n, out, bound, &l1, &err), 0);
        ck_assert_int_eq(eng_compress(e, in + n, n, out + l1, bound, &l2, &err), 0);
        ck_assert_msg(piece_ok(out, l1 + l2, in, 2 * n), "level %d", level);
        free(out);
        eng_free(e);
    }
    free(in);
}
END_TEST

/* eng_crc32 (ISA-L's, libdeflate's or zlib's, whichever is linked) is the
 * CRC-32 zlib computes, from any start value, at every alignment and at the
 * lengths where folding implementations change paths (0 to 300 bytes, then
 * around the 64- and 256-byte steps up to 70 KiB). */
START_TEST(crc32_matches_zlib)
{
    size_t cap = 70000 + 64;
    uint8_t *p = malloc(cap);
    ck_assert_ptr_nonnull(p);
    uint32_t x = 12345;
    for (size_t i = 0; i < cap; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (uint8_t)(x >> 24);
    }
    for (size_t off = 0; off < 64; off += 7)
        for (size_t n = 0; n + off < cap; n = n < 300 ? n + 1 : n * 5 / 4 + 3) {
            uint32_t start = (uint32_t)(n * 2654435761u);
            ck_assert_uint_eq(eng_crc32(start, p + off, n),
                              (uint32_t)crc32(start, p + off, (uInt)n));
        }
    free(p);
}
END_TEST

/* The map of engine.h, as -V prints it: the levels the configuration
 * promises, each made by the library it names, and none other. */
START_TEST(level_map)
{
    struct sp_err err = {0};
#ifdef HAVE_ISAL
    for (int level = 1; level <= 3; level++)
        ck_assert_ptr_nonnull(strstr(eng_level_desc(level), "ISA-L"));
#else
    for (int level = 1; level <= 3; level++) {
        ck_assert_ptr_null(eng_level_desc(level));
        ck_assert_ptr_null(eng_new(level, &err));
    }
#endif
    /* 0 and 4 up: the data engine, to 12 with libdeflate and 9 with zlib */
#ifdef HAVE_LIBDEFLATE
    ck_assert_int_eq(eng_max_level(), 12);
    const char *data = "libdeflate";
#else
    ck_assert_int_eq(eng_max_level(), 9);
    const char *data = "zlib";
#endif
    for (int level = 0; level <= eng_max_level(); level++)
        if (level == 0 || level >= 4)
            ck_assert_msg(eng_level_desc(level) != NULL && strstr(eng_level_desc(level), data),
                          "level %d: %s, not %s", level, eng_level_desc(level), data);
    ck_assert_ptr_null(eng_level_desc(-1));
    ck_assert_ptr_null(eng_level_desc(eng_max_level() + 1));
    ck_assert_ptr_null(eng_new(eng_max_level() + 1, &err));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, pieces_at_every_level);
    tcase_add_test(t, pieces_concatenate);
    tcase_add_test(t, pieces_have_no_history);
    tcase_add_test(t, third_byte_hashed_from_data);
    tcase_add_test(t, isal_home_places_by_data);
    tcase_add_test(t, isal_home_fixed_slot_zero);
    tcase_add_test(t, sizes_independent_of_engine);
    tcase_add_test(t, level_map);
    tcase_add_test(t, crc32_matches_zlib);
    suite_add_tcase(s, t);
    return run_suite(s);
}
