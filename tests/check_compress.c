/* Unit tests for compress: whole runs of the pipeline on files, sparse files
 * and pipes, at several thread counts: the output is one gzip member that
 * zlib inflates to the input, and the bytes are identical whatever the
 * thread count and the kind of input. */
#include "check_util.h"

#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "compress.h"
#include "engine.h"

/* Inflate the first gzip member and check it holds all of want; every
 * member after it (the index) must decode to nothing. */
static void check_gzip(const struct buf *gz, const uint8_t *want, size_t n)
{
    z_stream s;
    memset(&s, 0, sizeof s);
    ck_assert_int_eq(inflateInit2(&s, 31), Z_OK);
    uint8_t *out = malloc(n + 1);
    s.next_in = gz->p;
    s.avail_in = (uInt)gz->n;
    s.next_out = out;
    s.avail_out = (uInt)n + 1;
    ck_assert_int_eq(inflate(&s, Z_FINISH), Z_STREAM_END);
    ck_assert_uint_eq(s.total_out, n);
    ck_assert(memcmp(out, want, n) == 0);
    while (s.avail_in > 0) {
        ck_assert_int_eq(inflateReset(&s), Z_OK);
        s.next_out = out;
        s.avail_out = 1;
        ck_assert_int_eq(inflate(&s, Z_FINISH), Z_STREAM_END);
        ck_assert_uint_eq(s.total_out, 0);
    }
    inflateEnd(&s);
    free(out);
}

/* Write content to a file; with sparse, leave aligned zero blocks as holes. */
static int make_file(const uint8_t *p, size_t n, bool sparse)
{
    int fd = tmpfile_fd();
    for (size_t i = 0; i < n; i += 4096) {
        size_t len = n - i < 4096 ? n - i : 4096;
        bool zero = true;
        for (size_t k = 0; k < len && zero; k++)
            zero = p[i + k] == 0;
        if (sparse && zero && len == 4096)
            continue;
        ck_assert_int_eq(pwrite(fd, p + i, len, (off_t)i), (ssize_t)len);
    }
    ck_assert_int_eq(ftruncate(fd, (off_t)n), 0);
    return fd;
}

struct feeder {
    int fd;
    const uint8_t *p;
    size_t n;
};

/* Write to a pipe in odd-sized pieces, so reads come back short. */
static void *feed(void *arg)
{
    struct feeder *f = arg;
    size_t i = 0, step = 1;
    while (i < f->n) {
        size_t len = f->n - i < step ? f->n - i : step;
        ssize_t w = write(f->fd, f->p + i, len);
        if (w <= 0)
            break;
        i += (size_t)w;
        step = step * 7 % 100003 + 1;
    }
    close(f->fd);
    return NULL;
}

enum kind { K_DENSE, K_SPARSE, K_PIPE };

static struct buf compress_as(const uint8_t *p, size_t n, enum kind k, unsigned threads,
                              int level, struct cmp_stats *st)
{
    struct cmp_opts o;
    cmp_opts_default(&o);
    o.threads = threads;
    o.level = level;
    o.chunk = 64 << 10;   /* small chunks: many of them in small tests */
    o.zmin = 16 << 10;
    int in, out = tmpfile_fd();
    pthread_t th;
    struct feeder f;
    if (k == K_PIPE) {
        int fds[2];
        ck_assert_int_eq(pipe(fds), 0);
        f = (struct feeder){fds[1], p, n};
        pthread_create(&th, NULL, feed, &f);
        in = fds[0];
    } else {
        in = make_file(p, n, k == K_SPARSE);
    }
    struct sp_err err = {0};
    int rc = cmp_run(in, out, &o, st, &err);
    ck_assert_msg(rc == 0, "cmp_run: %s", err.msg);
    if (k == K_PIPE)
        pthread_join(th, NULL);
    close(in);
    struct buf b = slurp(out);
    close(out);
    return b;
}

/* Data with zero runs of every interesting length in between. */
static size_t make_mixed(uint8_t *p, size_t cap, unsigned seed)
{
    srand(seed);
    size_t n = 0;
    while (n < cap) {
        size_t len = (size_t)rand() % (200 << 10);
        if (n + len > cap)
            len = cap - n;
        if (rand() % 2) {
            memset(p + n, 0, len);
        } else {
            for (size_t i = 0; i < len; i++) /* compressible but not trivial */
                p[n + i] = (uint8_t)("abcdefgh"[rand() % 8] + (i % 97 == 0));
        }
        n += len;
    }
    return n;
}

/* Say where two outputs part and whether the second still inflates to the
 * input (a difference that decodes right is a determinism bug; one that
 * decodes wrong is a wrong backup), then fail. */
static void report_difference(const struct buf *ref, const struct buf *b, const uint8_t *p,
                              size_t n, int k, unsigned threads)
{
    size_t at = 0;
    while (at < ref->n && at < b->n && ref->p[at] == b->p[at])
        at++;
    z_stream s;
    memset(&s, 0, sizeof s);
    uint8_t *out = malloc(n + 1);
    inflateInit2(&s, 31);
    s.next_in = b->p;
    s.avail_in = (uInt)b->n;
    s.next_out = out;
    s.avail_out = (uInt)n + 1;
    int rc = inflate(&s, Z_FINISH);
    size_t bad = 0;
    while (bad < s.total_out && bad < n && out[bad] == p[bad])
        bad++;
    inflateEnd(&s);
    free(out);
    ck_abort_msg("kind %d, %u threads: output differs at byte %zu of %zu (ref %zu); "
                 "it inflates (rc %d) to %lu bytes, equal to the input for %zu",
                 k, threads, at, b->n, ref->n, rc, s.total_out, bad);
}

static void same_everywhere(const uint8_t *p, size_t n, int level)
{
    struct cmp_stats st0, st;
    struct buf ref = compress_as(p, n, K_DENSE, 1, level, &st0);
    check_gzip(&ref, p, n);
    ck_assert_uint_eq(st0.in_bytes, n);
    ck_assert_uint_eq(st0.out_bytes, ref.n);
    ck_assert_uint_eq(st0.crc, (uint32_t)crc32(0, p, (uInt)n));
    static const unsigned threads[] = {1, 2, 3, 8};
    for (int k = K_DENSE; k <= K_PIPE; k++)
        for (size_t t = 0; t < 4; t++) {
            struct buf b = compress_as(p, n, (enum kind)k, threads[t], level, &st);
            if (b.n != ref.n || memcmp(b.p, ref.p, b.n) != 0)
                report_difference(&ref, &b, p, n, k, threads[t]);
            check_gzip(&b, p, n);
            ck_assert_uint_eq(st.zero_bytes, st0.zero_bytes);
            free(b.p);
        }
    free(ref.p);
}

START_TEST(edge_sizes)
{
    static const size_t sizes[] = {0, 1, 4095, 4096, 4097, (64 << 10) - 1, 64 << 10,
                                   (64 << 10) + 1};
    uint8_t *p = malloc(128 << 10);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int fill = 0; fill < 3; fill++) {
            for (size_t k = 0; k < sizes[i]; k++)
                p[k] = fill == 0 ? 0 : fill == 1 ? (uint8_t)rand() : (uint8_t)(k % 3);
            same_everywhere(p, sizes[i], 6);
        }
    free(p);
}
END_TEST

START_TEST(mixed_layouts)
{
    size_t cap = 3u << 20;
    uint8_t *p = malloc(cap);
    for (unsigned seed = 1; seed <= 4; seed++) {
        /* the last at level 1: ISA-L's pieces, where the build has them */
        int level = seed == 4 ? 1 : 6;
        if (eng_level_desc(level) == NULL) {
            printf("NOTE: no level %d in this build (%s): mixed layouts not checked at it\n",
                   level, eng_name());
            continue;
        }
        size_t n = make_mixed(p, cap - seed * 999, seed);
        same_everywhere(p, n, level);
    }
    free(p);
}
END_TEST

START_TEST(every_level)
{
    size_t cap = 400u << 10;
    uint8_t *p = malloc(cap);
    size_t n = make_mixed(p, cap, 99);
    struct cmp_stats st;
    /* the levels the engine has (engine.h): 1 to 3 with ISA-L, 10 to 12
     * with libdeflate */
    for (int level = 0; level <= eng_max_level(); level++) {
        if (eng_level_desc(level) == NULL) {
            printf("NOTE: no level %d in this build (%s): not checked\n", level, eng_name());
            continue;
        }
        struct buf b = compress_as(p, n, K_PIPE, 2, level, &st);
        check_gzip(&b, p, n);
        free(b.p);
    }
    free(p);
}
END_TEST

START_TEST(holes_are_not_read)
{
    /* 256 MiB hole around a little data: the hole is skipped, counted. */
    size_t n = (256u << 20) + 10;
    int in = tmpfile_fd(), out = tmpfile_fd();
    ck_assert_int_eq(pwrite(in, "x", 1, 128 << 20), 1);
    ck_assert_int_eq(ftruncate(in, (off_t)n), 0);
    struct cmp_opts o;
    cmp_opts_default(&o);
    o.threads = 2;
    struct cmp_stats st;
    struct sp_err err = {0};
    ck_assert_int_eq(cmp_run(in, out, &o, &st, &err), 0);
    ck_assert_uint_eq(st.in_bytes, n);
    ck_assert_uint_ge(st.hole_bytes, n - (1u << 20));
    ck_assert_uint_ge(st.zero_bytes, n - (1u << 20));
    ck_assert_uint_lt(st.out_bytes, n / 1000);
    close(in);
    close(out);
}
END_TEST

START_TEST(no_index_is_one_member)
{
    uint8_t p[70000];
    for (size_t i = 0; i < sizeof p; i++)
        p[i] = (uint8_t)(i * 7 % 13);
    int in = make_file(p, sizeof p, false), out = tmpfile_fd();
    struct cmp_opts o;
    cmp_opts_default(&o);
    o.index = false;
    struct cmp_stats st;
    struct sp_err err = {0};
    ck_assert_int_eq(cmp_run(in, out, &o, &st, &err), 0);
    struct buf b = slurp(out);
    z_stream s;
    memset(&s, 0, sizeof s);
    uint8_t *dec = malloc(sizeof p);
    ck_assert_int_eq(inflateInit2(&s, 31), Z_OK);
    s.next_in = b.p;
    s.avail_in = (uInt)b.n;
    s.next_out = dec;
    s.avail_out = sizeof p;
    ck_assert_int_eq(inflate(&s, Z_FINISH), Z_STREAM_END);
    ck_assert_uint_eq(s.avail_in, 0); /* nothing after the one member */
    ck_assert_uint_eq(st.index_bytes, 0);
    ck_assert(memcmp(dec, p, sizeof p) == 0);
    inflateEnd(&s);
    free(dec);
    free(b.p);
    close(in);
    close(out);
}
END_TEST

START_TEST(write_error_is_reported)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    close(fds[0]); /* writing will fail with EPIPE (SIGPIPE ignored here) */
    signal(SIGPIPE, SIG_IGN);
    uint8_t p[5000];
    memset(p, 'a', sizeof p);
    int in = make_file(p, sizeof p, false);
    struct cmp_opts o;
    cmp_opts_default(&o);
    struct cmp_stats st;
    struct sp_err err = {0};
    ck_assert_int_eq(cmp_run(in, fds[1], &o, &st, &err), -1);
    ck_assert_int_eq(err.kind, SP_ERR_WRITE);
    ck_assert_ptr_nonnull(strstr(err.msg, "Broken pipe"));
    close(in);
    close(fds[1]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("compress");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 600);
    tcase_add_test(t, edge_sizes);
    tcase_add_test(t, mixed_layouts);
    tcase_add_test(t, every_level);
    tcase_add_test(t, holes_are_not_read);
    tcase_add_test(t, no_index_is_one_member);
    tcase_add_test(t, write_error_is_reported);
    suite_add_tcase(s, t);
    return run_suite(s);
}
