/* Unit tests for range.h: sp_ranges_normalize() and sp_ranges_subtract(),
 * the differences --compare keeps once a --free=zero backup's free map is
 * taken out of them (checked against a byte map). */
#include "check_util.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "range.h"

#define N 4096

/* A byte map of the ranges (shifted left by shift, clipped to N). */
static void paint(uint8_t *m, const struct sp_range *r, size_t n, uint64_t shift)
{
    for (size_t i = 0; i < n; i++)
        for (uint64_t b = r[i].off; b < r[i].off + r[i].len; b++)
            if (b >= shift && b - shift < N)
                m[b - shift] = 1;
}

/* Random sorted, disjoint, not touching ranges in [0, N). */
static size_t rnd_ranges(struct sp_range *r, unsigned *seed)
{
    size_t n = 0;
    uint64_t at = (uint64_t)(rand_r(seed) % 8);
    while (at < N - 2) {
        uint64_t len = 1 + (uint64_t)(rand_r(seed) % 40);
        if (at + len > N)
            len = N - at;
        r[n++] = (struct sp_range){at, len};
        at += len + 1 + (uint64_t)(rand_r(seed) % 60);
    }
    return n;
}

START_TEST(subtract_random)
{
    static struct sp_range a[N], b[N];
    unsigned seed = 7;
    for (int round = 0; round < 300; round++) {
        size_t na = rnd_ranges(a, &seed), nb = rnd_ranges(b, &seed);
        uint64_t shift = round % 3 == 0 ? 0 : (uint64_t)(rand_r(&seed) % 100);
        for (size_t i = 0; i < nb; i++) /* b in the content: a's offsets + shift */
            b[i].off += shift;
        struct sp_range *out;
        size_t n;
        uint64_t removed;
        ck_assert_int_eq(sp_ranges_subtract(a, na, b, nb, shift, &out, &n, &removed), 0);
        static uint8_t ma[N], mb[N], mo[N];
        memset(ma, 0, N);
        memset(mb, 0, N);
        memset(mo, 0, N);
        paint(ma, a, na, 0);
        paint(mb, b, nb, shift);
        paint(mo, out, n, 0);
        uint64_t want_removed = 0;
        for (size_t i = 0; i < N; i++) {
            ck_assert_int_eq(mo[i], ma[i] && !mb[i]);
            want_removed += ma[i] && mb[i];
        }
        ck_assert_uint_eq(removed, want_removed);
        for (size_t i = 0; i < n; i++) /* sorted, disjoint, non-empty */
            ck_assert(out[i].len > 0 && (i == 0 || out[i].off >= out[i - 1].off + out[i - 1].len));
        free(out);
    }
}
END_TEST

START_TEST(subtract_edges)
{
    struct sp_range a[] = {{0, 10}, {20, 10}};
    struct sp_range b[] = {{0, 100}};
    struct sp_range *out;
    size_t n;
    uint64_t removed;
    ck_assert_int_eq(sp_ranges_subtract(a, 2, b, 1, 0, &out, &n, &removed), 0);
    ck_assert_uint_eq(n, 0);
    ck_assert_uint_eq(removed, 20);
    free(out);
    ck_assert_int_eq(sp_ranges_subtract(a, 2, NULL, 0, 0, &out, &n, &removed), 0);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(removed, 0);
    free(out);
    /* b wholly before the shift: nothing removed */
    struct sp_range c[] = {{5, 10}};
    ck_assert_int_eq(sp_ranges_subtract(a, 2, c, 1, 50, &out, &n, &removed), 0);
    ck_assert_uint_eq(n, 2);
    free(out);
    ck_assert_int_eq(sp_ranges_subtract(NULL, 0, c, 1, 0, &out, &n, &removed), 0);
    ck_assert_uint_eq(n, 0);
    free(out);
}
END_TEST

START_TEST(normalize)
{
    struct sp_range r[] = {{30, 5}, {0, 10}, {10, 5}, {32, 10}, {100, 1}};
    ck_assert_uint_eq(sp_ranges_normalize(r, 5), 3);
    ck_assert(r[0].off == 0 && r[0].len == 15 && r[1].off == 30 && r[1].len == 12 &&
              r[2].off == 100 && r[2].len == 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("range");
    TCase *t = tcase_create("core");
    tcase_add_test(t, subtract_random);
    tcase_add_test(t, subtract_edges);
    tcase_add_test(t, normalize);
    suite_add_tcase(s, t);
    return run_suite(s);
}
