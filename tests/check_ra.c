/* Unit tests for ra: random access to a spigz file through its index.
 *
 * Real spigz files are made with cmp_run (64 KiB chunks) on content of
 * data runs and zero runs, so that they hold dozens of data and zero
 * pieces.  Every read is compared with the content: random offsets and
 * lengths (across pieces, in zero pieces, at the end), len 0, offsets at
 * and past the end, with the default cache and with one smaller than a
 * piece.  Extents partition the content, zero ones being zeros.  Then the
 * file is damaged: a byte of a data piece's or of a zero piece's deflate
 * flipped makes every read touching that piece fail, naming its range, and
 * reads elsewhere still succeed; the file cut after ra_open makes reads of
 * the lost pieces fail, never zeros.  A plain gzip file has no index (0 and
 * a reason).  Four threads read at random with a small cache (evictions,
 * shared decodes), compared with the content; run under ThreadSanitizer
 * too.  A sequential reader, with read-ahead threads and without, reads
 * the content, and meets a damaged piece exactly where it lies. */
#define CU_CHEAP_CK_ASSERT
#include "check_util.h"

#include <check.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "compress.h"
#include "idx.h"
#include "piece.h"
#include "ra.h"

#define CHUNK (64u << 10)

/* Data runs of [dmin, dmax) bytes (text-like: compressible, no zero 4 KiB
 * block) and zero runs of [zmin, zmax) bytes, alternating. */
static size_t make_content(uint8_t *p, size_t cap, unsigned seed)
{
    lcg_seed(seed);
    size_t n = 0;
    bool zero = false;
    while (n < cap) {
        size_t len = zero ? 20000 + lcg() % 150000 : 3000 + lcg() % 200000;
        if (len > cap - n)
            len = cap - n;
        if (zero)
            memset(p + n, 0, len);
        else
            for (size_t i = 0; i < len; i++)
                p[n + i] = (uint8_t)("random access test "[lcg() % 19] + (i % 53 == 0));
        n += len;
        zero = !zero;
    }
    return n;
}

/* A spigz file (a scratch file) of c[0..n). */
static int spigz_file(const uint8_t *c, size_t n)
{
    int in = file_with(c, n), out = tmpfile_fd();
    struct cmp_opts o;
    cmp_opts_default(&o);
    o.threads = 2;
    o.chunk = CHUNK;
    struct cmp_stats st;
    struct sp_err err = {0};
    ck_assert_msg(cmp_run(in, out, &o, &st, &err) == 0, "cmp_run: %s", err.msg);
    close(in);
    return out;
}

struct sample {
    uint8_t *c;
    size_t n;
    int fd;
    struct idx x; /* the file's own index, to find pieces */
};

static void sample_new(struct sample *s, size_t cap)
{
    s->c = malloc(cap);
    ck_assert_ptr_nonnull(s->c);
    s->n = make_content(s->c, cap, 24);
    s->fd = spigz_file(s->c, s->n);
    struct stat st;
    ck_assert_int_eq(fstat(s->fd, &st), 0);
    char why[160];
    struct sp_err err = {0};
    ck_assert_int_eq(idx_load(s->fd, 0, (uint64_t)st.st_size, &s->x, why, sizeof why, &err), 1);
    unsigned data = 0, zero = 0;
    for (uint64_t k = 0; k < s->x.n; k++)
        s->x.p[k].data ? data++ : zero++;
    ck_assert_uint_ge(data, 10);
    ck_assert_uint_ge(zero, 5);
}

static void sample_free(struct sample *s)
{
    idx_free(&s->x);
    close(s->fd);
    free(s->c);
}

static struct ra *open_ra(int fd, uint64_t cache)
{
    struct ra_opts o = {.cache_bytes = cache};
    struct ra *r = NULL;
    char why[160];
    struct sp_err err = {0};
    int rc = ra_open(fd, &o, &r, why, sizeof why, &err);
    ck_assert_msg(rc == 1, "ra_open: %d, %s %s", rc, why, err.msg);
    return r;
}

/* Read [off, off + len) and compare it with the content: what ra_pread
 * must return is what the content has there. */
static void read_ok(struct ra *r, const struct sample *s, uint64_t off, size_t len, uint8_t *buf)
{
    struct sp_err err = {0};
    int64_t got = ra_pread(r, buf, len, off, &err);
    uint64_t want = off >= s->n ? 0 : (len < s->n - off ? len : s->n - off);
    if (got < 0)
        ck_abort_msg("ra_pread(%llu, %zu): %s", (unsigned long long)off, len, err.msg);
    EXPECT_U(got, want);
    EXPECT(want == 0 || memcmp(buf, s->c + off, (size_t)want) == 0);
}

/* Random reads: any offset, lengths from 1 byte to 300 KiB, some ending
 * past the end. */
static void random_reads(struct ra *r, const struct sample *s, unsigned count)
{
    uint8_t *buf = malloc(300 << 10);
    for (unsigned i = 0; i < count; i++) {
        uint64_t off = rnd_below(s->n + 100);
        size_t len = (size_t)(rnd() % 4 == 0 ? 1 + rnd_below(300 << 10) : 1 + rnd_below(9000));
        read_ok(r, s, off, len, buf);
    }
    free(buf);
}

START_TEST(reads_match_the_content)
{
    struct sample s;
    sample_new(&s, 3u << 20);
    struct ra *r = open_ra(s.fd, 0);
    ck_assert_uint_eq(ra_size(r), s.n);
    uint8_t *buf = malloc(s.n + 10);
    read_ok(r, &s, 0, s.n + 10, buf); /* all of it, short at the end */
    read_ok(r, &s, 5, 0, buf);        /* len 0 */
    read_ok(r, &s, s.n, 10, buf);     /* at the end: 0 */
    read_ok(r, &s, s.n + 12345, 10, buf);
    read_ok(r, &s, UINT64_MAX, 10, buf);
    read_ok(r, &s, s.n - 1, 10, buf);
    for (uint64_t k = 0; k < s.x.n; k++) { /* each piece's edges, across them */
        uint64_t a = s.x.p[k].uoff, b = s.x.p[k + 1].uoff;
        read_ok(r, &s, a, (size_t)(b - a), buf);
        read_ok(r, &s, b - 1, 2, buf);
        read_ok(r, &s, a > 100 ? a - 100 : 0, 200, buf);
    }
    random_reads(r, &s, 3000);
    free(buf);
    ra_close(r);
    sample_free(&s);
}
END_TEST

START_TEST(extents_partition_the_content)
{
    struct sample s;
    sample_new(&s, 3u << 20);
    struct ra *r = open_ra(s.fd, 0);
    uint64_t at = 0, len = 0;
    unsigned runs = 0;
    bool zero, last = false;
    while (at < s.n) {
        ck_assert_int_eq(ra_extent(r, at, &len, &zero), 0);
        ck_assert_uint_gt(len, 0);
        ck_assert_uint_le(len, s.n - at);
        ck_assert(runs == 0 || zero != last); /* maximal runs alternate */
        for (uint64_t i = at; zero && i < at + len; i++)
            EXPECT(s.c[i] == 0);
        /* from inside the run: its end is the same */
        uint64_t mid = at + len / 2, l2;
        bool z2;
        ck_assert_int_eq(ra_extent(r, mid, &l2, &z2), 0);
        ck_assert(z2 == zero && mid + l2 == at + len);
        last = zero;
        at += len;
        runs++;
    }
    ck_assert_uint_ge(runs, 10);
    ck_assert_int_eq(ra_extent(r, s.n, &len, &zero), -1);
    ra_close(r);
    sample_free(&s);
}
END_TEST

START_TEST(cache_smaller_than_a_piece)
{
    struct sample s;
    sample_new(&s, 2u << 20);
    uint64_t caches[] = {1, 1000, CHUNK + 1};
    for (size_t i = 0; i < sizeof caches / sizeof *caches; i++) {
        struct ra *r = open_ra(s.fd, caches[i]);
        random_reads(r, &s, 600);
        ra_close(r);
    }
    sample_free(&s);
}
END_TEST

/* The first piece of the kind asked for that lies between others (so that
 * reads before and after it exist). */
static uint64_t piece_of(const struct idx *x, bool data)
{
    for (uint64_t k = 1; k + 1 < x->n; k++)
        if (x->p[k].data == data && pc_ulen(x, k) > 1000 && pc_clen(x, k) > 20)
            return k;
    ck_abort_msg("no piece of that kind");
    return 0;
}

/* Piece k is damaged: every read touching it fails and names its range;
 * reads away from it return the content. */
static void expect_piece_fails(struct ra *r, const struct sample *s, uint64_t k)
{
    uint64_t a = s->x.p[k].uoff, b = s->x.p[k + 1].uoff;
    uint8_t *buf = malloc(s->n);
    char range[64];
    snprintf(range, sizeof range, "bytes %llu to %llu", (unsigned long long)a,
             (unsigned long long)b);
    uint64_t offs[][2] = {{a, 1}, {b - 1, 1}, {a + (b - a) / 2, 10}, {a - 1, 2}, {a - 500, 1000},
                          {b - 1, 5000}, {0, s->n}};
    for (int round = 0; round < 2; round++) /* a failure is not remembered as content */
        for (size_t i = 0; i < sizeof offs / sizeof *offs; i++) {
            struct sp_err err = {0};
            int64_t got = ra_pread(r, buf, (size_t)offs[i][1], offs[i][0], &err);
            ck_assert_int_eq(got, -1);
            ck_assert_msg(err.kind == SP_ERR_DATA || err.kind == SP_ERR_CHECK, "%s", err.msg);
            ck_assert_msg(strstr(err.msg, range) != NULL, "%s lacks %s", err.msg, range);
        }
    read_ok(r, s, 0, (size_t)a, buf);
    read_ok(r, s, b, (size_t)(s->n - b), buf);
    read_ok(r, s, a - 100, 100, buf);
    read_ok(r, s, b, 100, buf);
    free(buf);
}

/* Flip a byte at file offset at (all ones of its bits). */
static void flip(int fd, uint64_t at)
{
    uint8_t v;
    ck_assert_int_eq(pread(fd, &v, 1, (off_t)at), 1);
    v ^= 0xff;
    pwrite_all(fd, &v, 1, at);
}

START_TEST(damaged_data_piece)
{
    struct sample s;
    sample_new(&s, 2u << 20);
    uint64_t k = piece_of(&s.x, true);
    uint64_t offs[] = {0, pc_clen(&s.x, k) / 2, pc_clen(&s.x, k) - 1};
    for (size_t i = 0; i < 3; i++) {
        uint64_t at = pc_file_off(&s.x, k) + offs[i];
        flip(s.fd, at);
        struct ra *r = open_ra(s.fd, 0);
        expect_piece_fails(r, &s, k);
        ra_close(r);
        flip(s.fd, at); /* mended: it reads again */
        r = open_ra(s.fd, 0);
        random_reads(r, &s, 50);
        uint8_t *buf = malloc(s.n);
        read_ok(r, &s, 0, s.n, buf);
        free(buf);
        ra_close(r);
    }
    sample_free(&s);
}
END_TEST

START_TEST(damaged_zero_piece)
{
    struct sample s;
    sample_new(&s, 2u << 20);
    uint64_t k = piece_of(&s.x, false);
    uint64_t offs[] = {0, pc_clen(&s.x, k) / 2, pc_clen(&s.x, k) - 1};
    for (size_t i = 0; i < 3; i++) {
        uint64_t at = pc_file_off(&s.x, k) + offs[i];
        flip(s.fd, at);
        struct ra *r = open_ra(s.fd, 0);
        /* extents: the damaged zero piece is no hole (a client skipping
         * holes would take zeros the file does not hold); a zero run
         * before it ends where it starts */
        uint64_t len;
        bool zero;
        ck_assert_int_eq(ra_extent(r, s.x.p[k].uoff, &len, &zero), 0);
        ck_assert_msg(!zero && len == pc_ulen(&s.x, k), "zero %d len %llu", zero,
                      (unsigned long long)len);
        if (k > 0 && !s.x.p[k - 1].data) {
            ck_assert_int_eq(ra_extent(r, s.x.p[k - 1].uoff, &len, &zero), 0);
            ck_assert(zero && s.x.p[k - 1].uoff + len == s.x.p[k].uoff);
        }
        expect_piece_fails(r, &s, k);
        ra_close(r);
        flip(s.fd, at);
    }
    sample_free(&s);
}
END_TEST

/* A sequential reader, in reads of 1 to 64 KiB, with read-ahead (one and
 * three threads, a cache of a few pieces and the default) and without:
 * the content, in order; and a damaged data piece met on the way fails
 * exactly when the reader reaches it (a read-ahead thread that met it first
 * reports nothing), naming its range, and the reads after it succeed. */
static void sequential(const struct sample *s, struct ra_opts o, uint64_t bad)
{
    struct ra *r = NULL;
    char why[160];
    struct sp_err err = {0};
    ck_assert_int_eq(ra_open(s->fd, &o, &r, why, sizeof why, &err), 1);
    uint8_t *buf = malloc(64 << 10);
    uint64_t off = 0;
    bool met = false;
    while (off < s->n) {
        size_t len = 1 + (size_t)rnd_below(64 << 10);
        struct sp_err e = {0};
        int64_t got = ra_pread(r, buf, len, off, &e);
        uint64_t end = off + len < s->n ? off + len : s->n;
        bool touches = bad != UINT64_MAX && off < s->x.p[bad + 1].uoff && s->x.p[bad].uoff < end;
        if (touches) {
            ck_assert_msg(got == -1, "a read of the damaged piece returned %lld", (long long)got);
            met = true;
            off = s->x.p[bad + 1].uoff;
            continue;
        }
        ck_assert_msg(got == (int64_t)(end - off), "read at %llu: %lld %s",
                      (unsigned long long)off, (long long)got, e.msg);
        EXPECT(memcmp(buf, s->c + off, (size_t)got) == 0);
        off = end;
    }
    ck_assert(bad == UINT64_MAX || met);
    free(buf);
    ra_close(r);
}

START_TEST(sequential_read_ahead)
{
    struct sample s;
    sample_new(&s, 4u << 20);
    struct ra_opts opts[] = {{.no_ahead = true}, {.ahead_threads = 1},
                             {.ahead_threads = 3, .cache_bytes = 3 * CHUNK}, {0}};
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
        sequential(&s, opts[i], UINT64_MAX);
    uint64_t k = piece_of(&s.x, true) + 4;
    while (k + 1 < s.x.n && !s.x.p[k].data)
        k++;
    ck_assert(k + 1 < s.x.n && s.x.p[k].data);
    uint64_t at = pc_file_off(&s.x, k) + pc_clen(&s.x, k) / 2;
    flip(s.fd, at);
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
        sequential(&s, opts[i], k);
    flip(s.fd, at);
    sample_free(&s);
}
END_TEST

/* A sequential reader whose reads arrive out of order, as a 4 MiB direct
 * read through FUSE does (several requests at once, on several threads):
 * each read near the previous one's end is taken as sequential.  One read
 * a piece, in the order 1 0 2 3 5 4 7 6 8...; then a read far away is not. */
START_TEST(sequential_out_of_order)
{
    struct sample s;
    sample_new(&s, 4u << 20);
    ck_assert(s.x.n > 12);
    struct ra *r = NULL;
    char why[160];
    struct sp_err err = {0};
    struct ra_opts o = {.ahead_threads = 1};
    ck_assert_int_eq(ra_open(s.fd, &o, &r, why, sizeof why, &err), 1);
    static const uint64_t order[] = {1, 0, 2, 3, 5, 4, 7, 6, 8, 9};
    uint8_t buf[64];
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        uint64_t k = order[i], at = s.x.p[k].uoff;
        struct sp_err e = {0};
        ck_assert_int_eq(ra_pread(r, buf, 1, at, &e), 1);
        EXPECT(buf[0] == s.c[at]);
    }
    ck_assert_uint_eq(ra_seq_reads(r), sizeof order / sizeof *order - 1);
    struct sp_err e = {0};
    uint64_t far = s.x.p[s.x.n - 1].uoff;
    ck_assert_int_eq(ra_pread(r, buf, 1, far, &e), 1);
    ck_assert_uint_eq(ra_seq_reads(r), sizeof order / sizeof *order - 1);
    ra_close(r);
    sample_free(&s);
}
END_TEST

START_TEST(truncated_after_open)
{
    struct sample s;
    sample_new(&s, 2u << 20);
    struct ra *r = open_ra(s.fd, 0);
    uint64_t k = s.x.n / 2; /* the file ends inside piece k from now on */
    uint64_t cut = pc_file_off(&s.x, k) + pc_clen(&s.x, k) / 2;
    ck_assert_int_eq(ftruncate(s.fd, (off_t)cut), 0);
    uint8_t *buf = malloc(s.n);
    for (uint64_t j = k; j < s.x.n; j++) {
        uint64_t a = s.x.p[j].uoff, b = s.x.p[j + 1].uoff;
        struct sp_err err = {0};
        ck_assert_int_eq(ra_pread(r, buf, (size_t)(b - a), a, &err), -1);
        ck_assert_int_eq(err.kind, SP_ERR_DATA);
        err = (struct sp_err){0};
        ck_assert_int_eq(ra_pread(r, buf, 1, b - 1, &err), -1);
    }
    struct sp_err err = {0};
    ck_assert_int_eq(ra_pread(r, buf, s.n, 0, &err), -1);
    ra_close(r);
    free(buf);
    sample_free(&s);
}
END_TEST

START_TEST(plain_gzip_has_no_index)
{
    uint8_t c[50000], z[60000];
    make_content(c, sizeof c, 3);
    z_stream zs = {0};
    ck_assert_int_eq(deflateInit2(&zs, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
    zs.next_in = c;
    zs.avail_in = sizeof c;
    zs.next_out = z;
    zs.avail_out = sizeof z;
    ck_assert_int_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
    int fd = file_with(z, zs.total_out);
    deflateEnd(&zs);
    struct ra *r = (struct ra *)&fd; /* must be cleared */
    char why[160] = "unset";
    struct sp_err err = {0};
    ck_assert_int_eq(ra_open(fd, NULL, &r, why, sizeof why, &err), 0);
    ck_assert_ptr_null(r);
    ck_assert_msg(why[0] != 0 && strcmp(why, "unset") != 0, "no reason");
    ck_assert_int_eq(err.kind, SP_OK);
    close(fd);
    int pfd[2]; /* not a regular file */
    ck_assert_int_eq(pipe(pfd), 0);
    why[0] = 0;
    ck_assert_int_eq(ra_open(pfd[0], NULL, &r, why, sizeof why, &err), 0);
    ck_assert(why[0] != 0);
    close(pfd[0]);
    close(pfd[1]);
}
END_TEST

/* ---- concurrent readers ---- */

struct reader {
    struct ra *r;
    const struct sample *s;
    uint64_t seed;
    unsigned bad; /* reads that failed or differed (checked by the main thread) */
};

static void *reader_run(void *v)
{
    struct reader *rd = v;
    uint64_t x = rd->seed;
    uint8_t *buf = malloc(200 << 10);
    for (unsigned i = 0; i < 1500 && buf != NULL; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t off = x % rd->s->n;
        size_t len = (size_t)(1 + (x >> 32) % (i % 8 == 0 ? 200u << 10 : 10000u));
        struct sp_err err = {0};
        int64_t got = ra_pread(rd->r, buf, len, off, &err);
        uint64_t want = len < rd->s->n - off ? len : rd->s->n - off;
        if (got < 0 || (uint64_t)got != want || memcmp(buf, rd->s->c + off, (size_t)want) != 0)
            rd->bad++;
    }
    free(buf);
    return NULL;
}

START_TEST(concurrent_readers)
{
    struct sample s;
    sample_new(&s, 3u << 20);
    uint64_t caches[] = {300 << 10, 0};
    for (size_t c = 0; c < 2; c++) {
        struct ra *r = open_ra(s.fd, caches[c]);
        pthread_t t[4];
        struct reader rd[4];
        for (int i = 0; i < 4; i++) {
            rd[i] = (struct reader){r, &s, 0x1234567ull * (uint64_t)(i + 1) + c, 0};
            ck_assert_int_eq(pthread_create(&t[i], NULL, reader_run, &rd[i]), 0);
        }
        for (int i = 0; i < 4; i++) {
            pthread_join(t[i], NULL);
            ck_assert_uint_eq(rd[i].bad, 0);
        }
        ra_close(r);
    }
    sample_free(&s);
}
END_TEST

static Suite *ra_suite(void)
{
    Suite *s = suite_create("ra");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, reads_match_the_content);
    tcase_add_test(tc, extents_partition_the_content);
    tcase_add_test(tc, cache_smaller_than_a_piece);
    tcase_add_test(tc, damaged_data_piece);
    tcase_add_test(tc, damaged_zero_piece);
    tcase_add_test(tc, truncated_after_open);
    tcase_add_test(tc, plain_gzip_has_no_index);
    tcase_add_test(tc, concurrent_readers);
    tcase_add_test(tc, sequential_read_ahead);
    tcase_add_test(tc, sequential_out_of_order);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(ra_suite());
}
