/* Unit tests for progress.h: the counters, and prog_eta(), the display's
 * ETA: by the whole rate; with --free=zero by the bytes left to read at
 * the rate they are read, so that passing over free space (fast) or
 * through files (slow) does not swing it. */
#include "check_util.h"

#include <check.h>

#include "progress.h"

START_TEST(eta_plain)
{
    ck_assert(prog_eta(0, 5, 0, 0, 100, 0) == -1);        /* no total */
    ck_assert(prog_eta(1000, 1000, 0, 0, 0, 0) == 0);     /* done */
    ck_assert(prog_eta(1000, 400, 0, 0, 0, 0) == -1);     /* no rate yet */
    ck_assert(prog_eta(1000, 400, 0, 0, 100, 0) == 6.0);
}
END_TEST

/* A 100 GB disk, 90 GB free: 10 GB to read at 100 MB/s, 100 s in all. */
START_TEST(eta_free_zero)
{
    const uint64_t G = 1000000000;
    /* 5 GB of files read, 50 GB of free space passed (rate of the image's
     * bytes 1 GB/s), 45 GB free and 5 GB of files left: 50 s at the read
     * rate, not 45 s at the image rate, nor minutes */
    ck_assert(prog_eta(100 * G, 55 * G, 90 * G, 50 * G, 1e9, 1e8) == 50.0);
    /* inside files (image rate = read rate): the same 5 GB left, the same
     * answer, where the plain formula says 450 s */
    ck_assert(prog_eta(100 * G, 55 * G, 90 * G, 50 * G, 1e8, 1e8) == 50.0);
    ck_assert(prog_eta(100 * G, 55 * G, 0, 0, 1e8, 1e8) == 450.0);
    /* only free space left: done */
    ck_assert(prog_eta(100 * G, 60 * G, 90 * G, 50 * G, 1e9, 1e8) == 0);
    /* all the free space passed: the 5 GB of files left */
    ck_assert(prog_eta(100 * G, 95 * G, 90 * G, 90 * G, 1e9, 1e8) == 50.0);
}
END_TEST

START_TEST(counters)
{
    struct sp_progress p = {0};
    prog_add(&p, PROG_SKIP, 5);
    prog_add(&p, PROG_IN, 7);
    prog_add(NULL, PROG_IN, 7);
    ck_assert_uint_eq(prog_get(&p, PROG_SKIP), 5);
    ck_assert_uint_eq(prog_get(&p, PROG_IN), 7);
    ck_assert_uint_eq(prog_get(&p, PROG_BAD), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("progress");
    TCase *t = tcase_create("core");
    tcase_add_test(t, eta_plain);
    tcase_add_test(t, eta_free_zero);
    tcase_add_test(t, counters);
    suite_add_tcase(s, t);
    return run_suite(s);
}
