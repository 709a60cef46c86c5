/* Unit tests for what the FAT and exFAT readers share (lay_clu.h): the
 * claimed-cluster set against a bit-by-bit model (ranges of any alignment,
 * nothing outside the set), runs joined only when contiguous, and the table
 * cache against the bytes of a file (slots across its end, collisions). */
#include "check_util.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lay_clu.h"

/* Random ranges claimed in a 1000-cluster set; a model says which claims
 * must succeed (none of the range claimed before, all inside). */
START_TEST(test_seen_against_model)
{
    enum { N = 1000 };
    uint8_t bits[(N + 7) / 8] = {0};
    bool model[N] = {false};
    struct lay_seen s = {bits, N};
    srand(22);
    for (int t = 0; t < 3000; t++) {
        uint64_t c = (uint64_t)(rand() % (N + 20)), k = (uint64_t)(rand() % 70);
        bool want = c <= N && k <= N - c;
        for (uint64_t i = c; want && i < c + k; i++)
            want = !model[i];
        ck_assert_int_eq(lay_seen_claim(&s, c, k), want);
        for (uint64_t i = c; want && i < c + k; i++)
            model[i] = true;
        for (int i = 0; i < N; i++)
            ck_assert_int_eq(bits[i / 8] >> (i % 8) & 1, model[i]);
    }
}
END_TEST

START_TEST(test_runs_joined_when_contiguous)
{
    struct lay_used u = {0};
    struct lay_run r = {0};
    ck_assert_int_eq(lay_run_ref(&u, &r, 4096, 512), 0);
    ck_assert_int_eq(lay_run_ref(&u, &r, 4608, 512), 0);
    ck_assert_int_eq(lay_run_ref(&u, &r, 5120, 1024), 0);
    ck_assert_uint_eq(u.n, 0); /* still one run, not given yet */
    ck_assert_int_eq(lay_run_ref(&u, &r, 8192, 512), 0);
    ck_assert_uint_eq(u.n, 1);
    ck_assert_uint_eq(u.e[0].off, 4096);
    ck_assert_uint_eq(u.e[0].len, 2048);
    ck_assert_int_eq(lay_run_flush(&u, &r), 0);
    ck_assert_int_eq(lay_run_flush(&u, &r), 0); /* empty: nothing more */
    ck_assert_uint_eq(u.n, 2);
    ck_assert_uint_eq(u.e[1].off, 8192);
    ck_assert_uint_eq(u.e[1].len, 512);
    free(u.e);
}
END_TEST

/* A 40,000-byte table at offset 100 of a memfd, read through the cache (a
 * slot for each 4 KiB of it), bytes compared with the file's; reads past
 * the table's end, or across a slot's end, refused. */
START_TEST(test_cache_reads_the_table)
{
    enum { BASE = 100, LEN = 40000 };
    uint8_t *img = malloc(BASE + LEN + 50);
    for (size_t i = 0; i < BASE + LEN + 50; i++)
        img[i] = (uint8_t)(i * 7 + i / 251);
    int fd = memfd_with(img, BASE + LEN + 50);
    struct lay_dev d = {.fd = fd, .off = 0, .len = BASE + LEN + 50};
    struct lay_cache c;
    ck_assert_int_eq(lay_cache_init(&c, &d, BASE, LEN), 0);
    ck_assert_uint_eq(c.nslots, LEN / LAY_SLOT + 1);
    srand(7);
    for (int t = 0; t < 5000; t++) {
        uint64_t off = (uint64_t)(rand() % LEN);
        size_t n = 1 + (size_t)(rand() % 4);
        const uint8_t *p = lay_cache_get(&c, off, n);
        if (off + n > LEN || off % LAY_SLOT + n > LAY_SLOT) {
            ck_assert_ptr_null(p);
        } else {
            ck_assert_ptr_nonnull(p);
            ck_assert_mem_eq(p, img + BASE + off, n);
        }
    }
    /* every slot read once: 40000 bytes, not 5000 reads */
    ck_assert_uint_eq(d.read, LEN);
    /* a slot filled from elsewhere is served without a read */
    uint8_t mark[LAY_SLOT];
    memset(mark, 0xAB, sizeof mark);
    lay_cache_free(&c);
    ck_assert_int_eq(lay_cache_init(&c, &d, BASE, LEN), 0);
    lay_cache_put(&c, LAY_SLOT, mark, LAY_SLOT);
    lay_cache_put(&c, 9 * LAY_SLOT, mark, LEN - 9 * LAY_SLOT); /* the short last slot */
    lay_cache_put(&c, 100, mark, 10);                         /* not a slot: ignored */
    uint64_t before = d.read;
    ck_assert_uint_eq(lay_cache_get(&c, LAY_SLOT + 5, 1)[0], 0xAB);
    ck_assert_uint_eq(lay_cache_get(&c, LEN - 1, 1)[0], 0xAB);
    ck_assert_uint_eq(d.read, before);
    ck_assert_uint_eq(lay_cache_get(&c, 100, 1)[0], img[BASE + 100]);
    lay_cache_free(&c);
    close(fd);
    free(img);
}
END_TEST

/* A table larger than the cache's bound: two offsets on one slot, read in
 * turn, each gives its own bytes. */
START_TEST(test_cache_slots_collide)
{
    uint64_t len = LAY_CACHE_MAX + 2 * LAY_SLOT, far = LAY_CACHE_MAX;
    int fd = memfd_create("clu", 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, (off_t)len), 0);
    ck_assert_int_eq(pwrite(fd, "near", 4, 8), 4);
    ck_assert_int_eq(pwrite(fd, "far!", 4, (off_t)far + 8), 4);
    struct lay_dev d = {.fd = fd, .off = 0, .len = len};
    struct lay_cache c;
    ck_assert_int_eq(lay_cache_init(&c, &d, 0, len), 0);
    ck_assert_uint_eq(c.nslots, LAY_CACHE_MAX / LAY_SLOT);
    for (int t = 0; t < 4; t++) {
        ck_assert_mem_eq(lay_cache_get(&c, 8, 4), "near", 4);
        ck_assert_mem_eq(lay_cache_get(&c, far + 8, 4), "far!", 4);
    }
    lay_cache_free(&c);
    close(fd);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("layclu");
    TCase *tc = tcase_create("clusters");
    tcase_add_test(tc, test_seen_against_model);
    tcase_add_test(tc, test_runs_joined_when_contiguous);
    tcase_add_test(tc, test_cache_reads_the_table);
    tcase_add_test(tc, test_cache_slots_collide);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
