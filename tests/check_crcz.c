/* Unit tests for crcz: CRC-32 combination and zero runs against zlib's crc32. */
#define _LARGEFILE64_SOURCE 1 /* zlib.h declares crc32_combine64() only then */
#include "check_util.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "crcz.h"

static uint32_t zcrc(uint32_t c, const unsigned char *p, size_t n)
{
    return (uint32_t)crc32(c, p, (uInt)n);
}

START_TEST(combine_matches_whole)
{
    enum { N = 1 << 16 };
    unsigned char *buf = malloc(N);
    srand(1234);
    for (int i = 0; i < N; i++)
        buf[i] = (unsigned char)rand();
    uint32_t whole = zcrc(0, buf, N);
    for (size_t cut = 0; cut <= N; cut += 1 + (size_t)rand() % 997) {
        uint32_t a = zcrc(0, buf, cut), b = zcrc(0, buf + cut, N - cut);
        ck_assert_uint_eq(crcz_combine(a, b, N - cut), whole);
    }
    free(buf);
}
END_TEST

START_TEST(zeros_match_real_zeros)
{
    static const size_t sizes[] = {0, 1, 2, 3, 7, 8, 9, 255, 256, 257, 4095, 4096,
                                   4097, 65535, 65536, 65537, 1 << 20, (1 << 20) + 1,
                                   16u << 20};
    unsigned char *z = calloc(16u << 20, 1);
    const unsigned char pre[] = "some data before the run";
    uint32_t c0 = zcrc(0, pre, sizeof pre);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        ck_assert_uint_eq(crcz_zeros(0, sizes[i]), zcrc(0, z, sizes[i]));
        ck_assert_uint_eq(crcz_zeros(c0, sizes[i]), zcrc(c0, z, sizes[i]));
    }
    free(z);
}
END_TEST

START_TEST(huge_lengths_compose)
{
    /* Beyond what we can materialize: the shift must compose additively and
     * agree with zlib's own 64-bit combination. */
    const uint64_t a = 3ull << 32, b = (5ull << 33) + 12345;
    uint32_t c = 0xdeadbeef;
    ck_assert_uint_eq(crcz_zeros(crcz_zeros(c, a), b), crcz_zeros(c, a + b));
    uint32_t za = crcz_zeros(0, a), zb = crcz_zeros(0, b);
    ck_assert_uint_eq(crcz_combine(za, zb, b), crcz_zeros(0, a + b));
    ck_assert_uint_eq(crcz_combine(za, zb, b),
                      (uint32_t)crc32_combine64(za, zb, (z_off64_t)b));
    ck_assert_uint_eq(crcz_combine(c, 0x12345678u, UINT64_MAX / 3),
                      (uint32_t)crc32_combine64(c, 0x12345678u, (z_off64_t)(UINT64_MAX / 3)));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("crcz");
    TCase *t = tcase_create("core");
    tcase_add_test(t, combine_matches_whole);
    tcase_add_test(t, zeros_match_real_zeros);
    tcase_add_test(t, huge_lengths_compose);
    suite_add_tcase(s, t);
    return run_suite(s);
}
