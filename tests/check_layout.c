/* Unit tests for the layout readers' extent list (lay_fs.h): its memory
 * bound, and that coarsening it only ever adds used bytes. */
#include "config.h"

#include <check.h>
#include <stdlib.h>

#include "lay.h"
#include "lay_fs.h"

/* Whether [off, off + len) lies inside one extent of the sorted list. */
static int covered(const struct lay_used *u, uint64_t off, uint64_t len)
{
    size_t lo = 0, hi = u->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (u->e[mid].off + u->e[mid].len <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < u->n && u->e[lo].off <= off && off + len <= u->e[lo].off + u->e[lo].len;
}

/* A bitmap alternating used and free 4 KiB blocks over 40 GB: five million
 * extents, more than the bound; the list stays bounded and still covers
 * every block reported used. */
START_TEST(test_bounded_and_safe)
{
    struct lay_used u = {0};
    const uint64_t n = 5000000;
    for (uint64_t i = 0; i < n; i++)
        ck_assert_int_eq(lay_used_add(&u, i * 8192, 4096), 0);
    ck_assert(u.coarsened);
    ck_assert_uint_le(u.n, (size_t)1 << 22);
    for (size_t i = 1; i < u.n; i++)
        ck_assert_uint_gt(u.e[i].off, u.e[i - 1].off + u.e[i - 1].len);
    for (uint64_t i = 0; i < n; i += 997)
        ck_assert_msg(covered(&u, i * 8192, 4096), "block %llu lost", (unsigned long long)i);
    ck_assert(covered(&u, (n - 1) * 8192, 4096));
    free(u.e);
}
END_TEST

/* Below the bound nothing is coarsened: every gap stays free. */
START_TEST(test_small_lists_kept)
{
    struct lay_used u = {0};
    for (uint64_t i = 0; i < 1000; i++)
        ck_assert_int_eq(lay_used_add(&u, i * 8192, 4096), 0);
    ck_assert(!u.coarsened);
    ck_assert_uint_eq(u.n, 1000);
    free(u.e);
}
END_TEST

/* The second reading: references the map covers cost nothing; the parts
 * it calls free become used and are counted, each byte once however many
 * files name it (lay.c finishes the count; here the running count, which
 * may only over-count). */
START_TEST(test_ref_disputes)
{
    struct lay_used u = {0};
    ck_assert_int_eq(lay_used_add(&u, 8192, 4096), 0);
    ck_assert_int_eq(lay_used_add(&u, 0, 4096), 0);
    ck_assert_int_eq(lay_used_add(&u, 20480, 4096), 0);
    ck_assert_int_eq(lay_used_seal(&u), 0);
    ck_assert_uint_eq(u.sealed, 3);
    ck_assert_int_eq(lay_used_ref(&u, 0, 4096), 0); /* covered */
    ck_assert_int_eq(lay_used_ref(&u, 8192 + 100, 50), 0);
    ck_assert_uint_eq(u.disputed, 0);
    ck_assert_uint_eq(u.n, 3);
    /* [2048, 24576): free parts 4096-8192 and 12288-20480 */
    ck_assert_int_eq(lay_used_ref(&u, 2048, 22528), 0);
    ck_assert_uint_eq(u.disputed, 4096 + 8192);
    ck_assert_uint_eq(u.n, 5);
    /* past the map's end */
    ck_assert_int_eq(lay_used_ref(&u, 24576, 1000), 0);
    ck_assert_uint_eq(u.disputed, 4096 + 8192 + 1000);
    free(u.e);
}
END_TEST

/* Before the seal a reference is a plain used extent, not a dispute. */
START_TEST(test_ref_before_seal)
{
    struct lay_used u = {0};
    ck_assert_int_eq(lay_used_ref(&u, 4096, 4096), 0);
    ck_assert_uint_eq(u.disputed, 0);
    ck_assert_uint_eq(u.n, 1);
    free(u.e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("layout");
    TCase *tc = tcase_create("extents");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_bounded_and_safe);
    tcase_add_test(tc, test_small_lists_kept);
    tcase_add_test(tc, test_ref_disputes);
    tcase_add_test(tc, test_ref_before_seal);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
