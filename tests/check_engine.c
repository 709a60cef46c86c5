/* Unit tests for engine: at every level this build has, each piece is raw
 * deflate that inflates (zlib) to exactly its chunk, consumes all its bytes,
 * ends byte-aligned at a block boundary with no final block (so that pieces
 * concatenate), fits in eng_bound() for incompressible data too, and is the
 * same bytes every time.  eng_size() agrees with eng_compress(). */
#include "config.h"

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "engine.h"

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

static uint64_t rng = 88172645463325252u;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
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
        for (size_t i = 0; i < cap; i++)
            p[i] = (uint8_t)rnd();
        return cap;
    case 3: memset(p, 0, cap); return cap;
    default:
        for (size_t i = 0; i < cap; i++)
            p[i] = (i / 70000) % 2 ? (uint8_t)rnd() : (uint8_t)text[(i * 7 + i / 3) % 40];
        return cap;
    }
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
    ck_assert_int_ge(levels, 10);
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

/* The map of engine.h, as -V prints it. */
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

START_TEST(level_map)
{
#ifdef HAVE_ISAL
    for (int level = 1; level <= 3; level++)
        ck_assert_ptr_nonnull(strstr(eng_level_desc(level), "ISA-L"));
#else
    struct sp_err err = {0};
    for (int level = 1; level <= 3; level++) {
        ck_assert_ptr_null(eng_level_desc(level));
        ck_assert_ptr_null(eng_new(level, &err));
    }
#endif
    ck_assert_ptr_null(strstr(eng_level_desc(4), "ISA-L"));
    ck_assert_ptr_null(eng_level_desc(-1));
    ck_assert_ptr_null(eng_level_desc(eng_max_level() + 1));
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
    tcase_add_test(t, level_map);
    tcase_add_test(t, crc32_matches_zlib);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed == 0 ? 0 : 1;
}
