/* Unit tests for osink, the decompressor's output: sparse sequential writes
 * (zero 4 KiB blocks on the file's grid left as holes, checked with
 * SEEK_DATA/SEEK_HOLE and st_blocks; the content read back identical; the
 * size right when the end is a hole), unaligned and partial writes, the
 * osink_zeros fast path, windows, positioned writes from several threads at
 * once in random order, never-sparse mode, pipes, O_APPEND files, files not
 * positioned at their end, discard mode, and write errors.
 *
 * Expected holes follow the contract in osink.h: in a sparse sink, an
 * aligned 4 KiB block lying wholly inside one call's range and all zero is
 * not written; every other byte is. */
/* per-block checks: ck_assert*() that cost nothing when they pass */
#define CU_CHEAP_CK_ASSERT
#include "check_util.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "osink.h"

#define BLK 4096

/* ---- helpers ---- */

/* Content of n bytes: data and zero runs of [1, maxrun] bytes, some runs
 * block-aligned and block-sized so there are whole zero blocks. */
static uint8_t *make_content(size_t n, unsigned seed, size_t maxrun)
{
    uint8_t *p = malloc(n + 1);
    lcg_seed(seed);
    bool zero = lcg() % 2;
    for (size_t i = 0; i < n;) {
        size_t len = lcg() % 3 == 0 ? (1 + lcg() % 8) * BLK : 1 + lcg() % maxrun;
        if (len > n - i)
            len = n - i;
        for (size_t k = 0; k < len; k++)
            p[i + k] = zero ? 0 : (uint8_t)(1 + lcg() % 255);
        i += len;
        zero = !zero;
    }
    return p;
}

/* Does this file system report holes?  (Else the hole maps are not checked,
 * only the content and the counts.) */
static bool fs_has_holes(void)
{
    static int known = -1;
    if (known < 0) {
        int fd = tmpfile_fd();
        ck_assert_int_eq(pwrite(fd, "x", 1, 1 << 20), 1);
        known = lseek(fd, 0, SEEK_DATA) >= BLK;
        close(fd);
    }
    return known == 1;
}

/* For each 4 KiB block of the file's [0, size): is it wholly a hole? */
static bool *hole_map(int fd, uint64_t size)
{
    size_t nb = (size_t)((size + BLK - 1) / BLK);
    bool *h = malloc(nb + 1);
    for (size_t b = 0; b < nb; b++)
        h[b] = true;
    uint64_t pos = 0;
    while (pos < size) {
        off_t d = lseek(fd, (off_t)pos, SEEK_DATA);
        if (d < 0) {
            ck_assert_int_eq(errno, ENXIO);
            break;
        }
        off_t e = lseek(fd, d, SEEK_HOLE);
        ck_assert_int_gt(e, d);
        for (uint64_t b = (uint64_t)d / BLK; b * BLK < (uint64_t)e && b < nb; b++)
            h[b] = false;
        pos = (uint64_t)e;
    }
    return h;
}

/* The expected holes: calls[] are the output ranges of the calls (file
 * offsets); a block is a hole when it lies wholly in one call's range and
 * the content there is zero. */
struct range {
    uint64_t off, len;
};

static bool *expect_holes(const uint8_t *file_content, uint64_t size, const struct range *calls,
                          size_t ncalls)
{
    size_t nb = (size_t)((size + BLK - 1) / BLK);
    bool *h = calloc(nb + 1, 1);
    for (size_t c = 0; c < ncalls; c++) {
        uint64_t a = calls[c].off, e = calls[c].off + calls[c].len;
        for (uint64_t b = (a + BLK - 1) / BLK; (b + 1) * BLK <= e; b++) {
            bool zero = true;
            for (size_t k = 0; k < BLK && zero; k++)
                zero = file_content[b * BLK + k] == 0;
            h[b] = zero;
        }
    }
    return h;
}

static uint64_t count_holes(const bool *h, uint64_t size)
{
    uint64_t n = 0;
    for (size_t b = 0; b * BLK < size; b++)
        if (h[b])
            n += BLK;
    return n;
}

static void check_content(int fd, uint64_t at, const uint8_t *want, size_t n)
{
    uint8_t *got = malloc(n + 1);
    ck_assert_int_eq(pread(fd, got, n, (off_t)at), (ssize_t)n);
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i])
            ck_abort_msg("byte %zu of %zu at %ju: %u, want %u", i, n, (uintmax_t)at, got[i],
                         want[i]);
    free(got);
}

static void check_size(int fd, uint64_t size)
{
    struct stat st;
    ck_assert_int_eq(fstat(fd, &st), 0);
    ck_assert_uint_eq((uint64_t)st.st_size, size);
}

/* The file's hole map is exactly `want` (when the file system says). */
static void check_holes(int fd, uint64_t size, const bool *want)
{
    if (!fs_has_holes())
        return;
    bool *got = hole_map(fd, size);
    for (size_t b = 0; b * BLK < size; b++)
        ck_assert_msg(got[b] == want[b], "block %zu (file offset %zu): %s, want %s", b, b * BLK,
                      got[b] ? "hole" : "data", want[b] ? "hole" : "data");
    free(got);
}

static uint64_t allocated(int fd)
{
    struct stat st;
    ck_assert_int_eq(fstat(fd, &st), 0);
    return (uint64_t)st.st_blocks * 512;
}

/* ---- sequential ---- */

/* Write content c[0..n) to a fresh sparse file in calls of the given sizes
 * (cycled; a negative size means osink_zeros for that many bytes, which must
 * be zero in c).  Check everything. */
static void seq_case(const uint8_t *c, size_t n, const long *sizes, size_t nsizes)
{
    int fd = tmpfile_fd();
    struct osink o;
    struct sp_err err = {0};
    ck_assert_int_eq(osink_open(&o, fd, OSINK_SPARSE_AUTO, &err), 0);
    ck_assert(o.sparse);
    ck_assert(o.seekable);
    ck_assert_uint_eq(o.base, 0);
    struct range *calls = malloc((n + 1) * sizeof *calls);
    size_t nc = 0;
    for (size_t i = 0, k = 0; i < n; k++) {
        long s = sizes[k % nsizes];
        size_t len = (size_t)(s < 0 ? -s : s);
        if (len > n - i)
            len = n - i;
        bool zeros = s < 0;
        for (size_t j = 0; zeros && j < len; j++)
            zeros = c[i + j] == 0;
        if (zeros)
            ck_assert_int_eq(osink_zeros(&o, len), 0);
        else
            ck_assert_int_eq(osink_write(&o, c + i, len), 0);
        calls[nc++] = (struct range){i, len};
        i += len;
    }
    ck_assert_uint_eq(o.pos, n);
    ck_assert_int_eq(osink_finish(&o, 12345 /* ignored: sequential */), 0);
    check_size(fd, n);
    check_content(fd, 0, c, n);
    bool *want = expect_holes(c, n, calls, nc);
    ck_assert_uint_eq(o.holes, count_holes(want, n));
    ck_assert_uint_eq(o.written + o.holes, n);
    check_holes(fd, n, want);
    if (fs_has_holes())
        ck_assert_uint_le(allocated(fd), o.written + 64 * BLK);
    free(want);
    free(calls);
    close(fd);
}

START_TEST(sparse_sequential_blocks)
{
    /* data, two zero blocks, data, then zeros to the end: a hole at the end */
    size_t n = 7 * BLK;
    uint8_t *c = calloc(1, n);
    memset(c, 'a', BLK);
    memset(c + 3 * BLK, 'b', BLK);
    static const long whole[] = {7 * BLK};
    seq_case(c, n, whole, 1);
    static const long blocks[] = {BLK};
    seq_case(c, n, blocks, 1);
    /* the last zero block partial: written, and the size right */
    seq_case(c, n - 100, whole, 1);
    /* one byte of data at the very end */
    c[n - 1] = 1;
    seq_case(c, n, whole, 1);
    /* all zeros */
    memset(c, 0, n);
    seq_case(c, n, whole, 1);
    free(c);
}
END_TEST

START_TEST(sparse_sequential_unaligned)
{
    size_t n = 3u << 20;
    uint8_t *c = make_content(n, 7, 3 * BLK);
    static const long odd[] = {1, 4095, 4097, 12288, 100, 65536, 3, 8191, 20000};
    seq_case(c, n, odd, sizeof odd / sizeof odd[0]);
    static const long big[] = {1 << 20, (1 << 20) + 1};
    seq_case(c, n, big, 2);
    for (unsigned seed = 1; seed <= 4; seed++) {
        long sizes[64];
        lcg_seed(seed * 77);
        for (size_t i = 0; i < 64; i++)
            sizes[i] = 1 + (long)(lcg() % (seed * 30000));
        seq_case(c, n, sizes, 64);
    }
    free(c);
}
END_TEST

START_TEST(zeros_fast_path)
{
    /* 1 GiB of zeros at an aligned position: skipped without writing, and
     * the size set by osink_finish */
    int fd = tmpfile_fd();
    struct osink o;
    struct sp_err err = {0};
    ck_assert_int_eq(osink_open(&o, fd, OSINK_SPARSE_AUTO, &err), 0);
    ck_assert_int_eq(osink_write(&o, (const uint8_t *)"head", 4), 0);
    ck_assert_int_eq(osink_zeros(&o, BLK - 4), 0);
    ck_assert_int_eq(osink_zeros(&o, (uint64_t)1 << 30), 0);
    ck_assert_uint_eq(o.holes, (uint64_t)1 << 30);
    ck_assert_int_eq(osink_zeros(&o, 10), 0);
    uint64_t n = BLK + ((uint64_t)1 << 30) + 10;
    ck_assert_uint_eq(o.pos, n);
    ck_assert_uint_eq(o.written, BLK + 10);
    ck_assert_int_eq(osink_finish(&o, n), 0);
    check_size(fd, n);
    uint8_t b[16];
    ck_assert_int_eq(pread(fd, b, 4, 0), 4);
    ck_assert(memcmp(b, "head", 4) == 0);
    ck_assert_int_eq(pread(fd, b, 16, (off_t)n - 16), 16);
    for (int i = 0; i < 16; i++)
        ck_assert_uint_eq(b[i], 0);
    if (fs_has_holes())
        ck_assert_uint_le(allocated(fd), 16 * BLK);
    close(fd);

    /* ending in a hole */
    fd = tmpfile_fd();
    ck_assert_int_eq(osink_open(&o, fd, OSINK_SPARSE_AUTO, &err), 0);
    ck_assert_int_eq(osink_zeros(&o, 10 * BLK), 0);
    ck_assert_uint_eq(o.written, 0);
    ck_assert_int_eq(osink_finish(&o, 0), 0);
    check_size(fd, 10 * BLK);
    close(fd);
}
END_TEST

START_TEST(zeros_unaligned)
{
    /* osink_zeros from an unaligned position: the blocks wholly inside the
     * run are holes, the edges written (osink.h: an aligned zero block is
     * not written) */
    size_t n = 100 + 300000 + 50;
    uint8_t *c = calloc(1, n);
    memset(c, 'x', 100);
    memset(c + 100 + 300000, 'y', 50);
    static const long calls[] = {100, -300000, 50};
    seq_case(c, n, calls, 3);
    static const long small[] = {100, -5000, -BLK, -(2 * BLK + 1), -300000};
    seq_case(c, n, small, 5);
    free(c);
}
END_TEST

START_TEST(sparse_after_existing_data)
{
    /* a file holding 1000 bytes, positioned at its end: sparse, and the
     * blocks are on the file's grid, not the output's */
    int fd = tmpfile_fd();
    uint8_t old[1000];
    memset(old, 'o', sizeof old);
    ck_assert_int_eq(write(fd, old, sizeof old), 1000);
    struct osink o;
    struct sp_err err = {0};
    ck_assert_int_eq(osink_open(&o, fd, OSINK_SPARSE_AUTO, &err), 0);
    ck_assert(o.sparse);
    ck_assert_uint_eq(o.base, 1000);
    size_t n = 40 * BLK;
    uint8_t *c = make_content(n, 3, 5 * BLK);
    uint8_t *file = malloc(1000 + n);
    memcpy(file, old, 1000);
    memcpy(file + 1000, c, n);
    struct range calls[64];
    size_t nc = 0;
    for (size_t i = 0; i < n;) {
        size_t len = n - i < 9000 ? n - i : 9000;
        ck_assert_int_eq(osink_write(&o, c + i, len), 0);
        calls[nc++] = (struct range){1000 + i, len};
        i += len;
    }
    ck_assert_int_eq(osink_finish(&o, n), 0);
    check_size(fd, 1000 + n);
    check_content(fd, 0, file, 1000 + n);
    bool *want = expect_holes(file, 1000 + n, calls, nc);
    ck_assert_uint_eq(o.holes, count_holes(want, 1000 + n));
    check_holes(fd, 1000 + n, want);
    free(want);
    free(file);
    free(c);
    close(fd);
}
END_TEST

/* ---- windows ---- */

static void window_case(const uint8_t *c, size_t n, uint64_t off, uint64_t len, size_t step,
                        enum osink_sparse mode)
{
    int fd = tmpfile_fd();
    struct osink o;
    struct sp_err err = {0};
    ck_assert_int_eq(osink_open(&o, fd, mode, &err), 0);
    osink_window(&o, off, len);
    for (size_t i = 0; i < n;) {
        size_t k = n - i < step ? n - i : step;
        bool zero = true;
        for (size_t j = 0; j < k && zero; j++)
            zero = c[i + j] == 0;
        int rc = zero && (i / step) % 2 ? osink_zeros(&o, k) : osink_write(&o, c + i, k);
        ck_assert_int_eq(rc, 0);
        i += k;
    }
    uint64_t a = off < n ? off : n;
    uint64_t want = n - a < len ? n - a : len;
    ck_assert_uint_eq(o.pos, want);
    ck_assert_int_eq(osink_finish(&o, n), 0);
    check_size(fd, want);
    check_content(fd, 0, c + a, (size_t)want);
    ck_assert_uint_eq(o.written + o.holes, want);
    close(fd);
}

START_TEST(windows)
{
    size_t n = 1u << 20;
    uint8_t *c = make_content(n, 11, 6 * BLK);
    static const uint64_t offs[] = {0, 1, 4095, 4096, 100000, (1u << 20) - 1, 1u << 20,
                                    (1u << 20) + 5};
    static const uint64_t lens[] = {0, 1, 4096, 12345, 500000, 1u << 20, UINT64_MAX};
    static const size_t steps[] = {1000, 4096, 65536, 1u << 20};
    for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++)
        for (size_t j = 0; j < sizeof lens / sizeof lens[0]; j++)
            for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++)
                if (offs[i] < n && lens[j] > 0) /* empty windows: below */
                    window_case(c, n, offs[i], lens[j], steps[k],
                                k % 2 ? OSINK_SPARSE_NEVER : OSINK_SPARSE_AUTO);
    /* a window in a long run of zeros: written at output offset 0, holes
     * on the output file's grid */
    uint8_t *z = calloc(1, 10 * BLK);
    window_case(z, 10 * BLK, 100, 5 * BLK, 10 * BLK, OSINK_SPARSE_AUTO);
    free(z);
    free(c);
}
END_TEST

START_TEST(empty_windows)
{
    /* Nothing of the stream falls in the window (it starts at or after the
     * end, or is empty): the output is empty, whatever total osink_finish is
     * given (unz_run passes the whole decoded length), sparse or not. */
    size_t n = 1u << 20;
    uint8_t *c = make_content(n, 12, 6 * BLK);
    static const uint64_t offs[] = {0, 4096, 1u << 20, (1u << 20) + 5};
    for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++)
        for (int mode = 0; mode < 2; mode++) {
            window_case(c, n, offs[i], 0, 65536, mode ? OSINK_SPARSE_NEVER : OSINK_SPARSE_AUTO);
            if (offs[i] >= n)
                window_case(c, n, offs[i], 100, 65536,
                            mode ? OSINK_SPARSE_NEVER : OSINK_SPARSE_AUTO);
        }
    free(c);
}
END_TEST

/* ---- positioned writes, from several threads ---- */

struct job {
    uint64_t off, len;
    bool zeros;
};

struct pctx {
    const struct osink *o;
    const uint8_t *c;
    struct job *jobs;
    size_t njobs;
    size_t next;
    pthread_mutex_t mu;
    int failures;
};

struct worker {
    struct pctx *p;
    struct osink_acc acc;
};

static void *pworker(void *arg)
{
    struct worker *w = arg;
    struct pctx *p = w->p;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        size_t k = p->next++;
        pthread_mutex_unlock(&p->mu);
        if (k >= p->njobs)
            return NULL;
        const struct job *j = &p->jobs[k];
        int rc = j->zeros ? osink_pzeros(p->o, j->off, j->len, &w->acc)
                          : osink_pwrite(p->o, j->off, p->c + j->off, (size_t)j->len, &w->acc);
        if (rc != 0) {
            pthread_mutex_lock(&p->mu);
            p->failures++;
            pthread_mutex_unlock(&p->mu);
        }
    }
}

/* Write c[0..n) with positioned calls in random order from `threads`
 * threads into fd (whose sink starts at base). */
static void positioned(int fd, enum osink_sparse mode, const uint8_t *c, size_t n,
                       unsigned threads, unsigned seed, struct osink *o, struct job **jobs_out,
                       size_t *njobs_out)
{
    struct sp_err err = {0};
    ck_assert_int_eq(osink_open(o, fd, mode, &err), 0);
    ck_assert(o->seekable);
    /* pieces: runs of zeros become pzeros calls (most of them), the rest
     * pwrite calls of random sizes */
    struct job *jobs = malloc((n / 64 + 64) * sizeof *jobs);
    size_t nj = 0;
    lcg_seed(seed);
    for (size_t i = 0; i < n;) {
        size_t len = 1 + lcg() % 200000;
        if (len > n - i)
            len = n - i;
        bool zero = true;
        for (size_t k = 0; k < len && zero; k++)
            zero = c[i + k] == 0;
        if (!zero && c[i] == 0) { /* cut at the end of the zeros instead */
            size_t k = 0;
            while (c[i + k] == 0)
                k++;
            len = k;
            zero = true;
        }
        jobs[nj++] = (struct job){i, len, zero && lcg() % 4 != 0};
        i += len;
    }
    for (size_t i = nj; i > 1; i--) { /* shuffle */
        size_t k = lcg() % i;
        struct job t = jobs[i - 1];
        jobs[i - 1] = jobs[k];
        jobs[k] = t;
    }
    struct pctx p = {o, c, jobs, nj, 0, PTHREAD_MUTEX_INITIALIZER, 0};
    struct worker *w = calloc(threads, sizeof *w);
    pthread_t *th = calloc(threads, sizeof *th);
    for (unsigned t = 0; t < threads; t++) {
        w[t].p = &p;
        ck_assert_int_eq(pthread_create(&th[t], NULL, pworker, &w[t]), 0);
    }
    uint64_t written = 0, holes = 0;
    for (unsigned t = 0; t < threads; t++) {
        pthread_join(th[t], NULL);
        ck_assert_int_eq(w[t].acc.err.kind, SP_OK);
        written += w[t].acc.written;
        holes += w[t].acc.holes;
    }
    ck_assert_int_eq(p.failures, 0);
    o->written = written;
    o->holes = holes;
    ck_assert_int_eq(osink_finish(o, n), 0);
    ck_assert_uint_eq(written + holes, n);
    free(w);
    free(th);
    *jobs_out = jobs;
    *njobs_out = nj;
}

START_TEST(positioned_threads)
{
    size_t n = 16u << 20;
    uint8_t *c = make_content(n, 5, 40 * BLK);
    for (int mode = 0; mode < 2; mode++) {
        int fd = tmpfile_fd();
        struct osink o;
        struct job *jobs;
        size_t nj;
        enum osink_sparse m = mode ? OSINK_SPARSE_NEVER : OSINK_SPARSE_AUTO;
        positioned(fd, m, c, n, 4, 9 + (unsigned)mode, &o, &jobs, &nj);
        ck_assert_uint_gt(nj, 100);
        check_size(fd, n);
        check_content(fd, 0, c, n);
        struct range *calls = malloc(nj * sizeof *calls);
        for (size_t j = 0; j < nj; j++)
            calls[j] = (struct range){jobs[j].off, jobs[j].len};
        bool *want = mode ? calloc(n / BLK + 1, 1) : expect_holes(c, n, calls, nj);
        ck_assert_uint_eq(o.holes, count_holes(want, n));
        if (!mode)
            ck_assert_uint_gt(o.holes, n / 8);
        check_holes(fd, n, want);
        free(want);
        free(calls);
        free(jobs);
        close(fd);
    }
    free(c);
}
END_TEST

START_TEST(positioned_ends_in_hole)
{
    /* the last piece is zeros: the size still comes out right */
    int fd = tmpfile_fd();
    struct osink o;
    struct sp_err err = {0};
    ck_assert_int_eq(osink_open(&o, fd, OSINK_SPARSE_AUTO, &err), 0);
    struct osink_acc acc = {0};
    uint64_t n = 3 * BLK + ((uint64_t)1 << 32); /* over 4 GiB */
    ck_assert_int_eq(osink_pzeros(&o, 3 * BLK, (uint64_t)1 << 32, &acc), 0);
    ck_assert_int_eq(osink_pwrite(&o, 0, (const uint8_t *)"abc", 3, &acc), 0);
    ck_assert_int_eq(osink_pzeros(&o, 3, 3 * BLK - 3, &acc), 0);
    ck_assert_uint_eq(acc.written + acc.holes, n);
    ck_assert_uint_eq(acc.holes, ((uint64_t)1 << 32) + 2 * BLK);
    ck_assert_int_eq(osink_finish(&o, n), 0);
    check_size(fd, n);
    uint8_t b[4];
    ck_assert_int_eq(pread(fd, b, 4, 0), 4);
    ck_assert(memcmp(b, "abc", 4) == 0);
    close(fd);
}
END_TEST

/* ---- outputs that must not be sparse ---- */

START_TEST(never_sparse)
{
    size_t n = 2u << 20;
    uint8_t *c = make_content(n, 21, 10 * BLK);
    int fd = tmpfile_fd();
    struct osink o;
    struct sp_err err = {0};
    ck_assert_int_eq(osink_open(&o, fd, OSINK_SPARSE_NEVER, &err), 0);
    ck_assert(!o.sparse);
    ck_assert(o.seekable);
    for (size_t i = 0; i < n; i += 65536)
        ck_assert_int_eq(osink_write(&o, c + i, 65536), 0);
    ck_assert_int_eq(osink_zeros(&o, 1u << 20), 0);
    ck_assert_int_eq(osink_finish(&o, n), 0);
    ck_assert_uint_eq(o.holes, 0);
    ck_assert_uint_eq(o.written, n + (1u << 20));
    check_size(fd, n + (1u << 20));
    check_content(fd, 0, c, n);
    bool *none = calloc((n + (1u << 20)) / BLK + 1, 1);
    check_holes(fd, n + (1u << 20), none);
    free(none);
    close(fd);
    free(c);
}
END_TEST

struct reader {
    int fd;
    uint8_t *p;
    size_t n, cap;
};

static void *drain(void *arg)
{
    struct reader *r = arg;
    ssize_t k;
    while (r->n < r->cap && (k = read(r->fd, r->p + r->n, r->cap - r->n)) > 0)
        r->n += (size_t)k;
    return NULL;
}

START_TEST(pipe_is_not_sparse)
{
    size_t n = 1u << 20;
    uint8_t *c = make_content(n, 31, 10 * BLK);
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    struct reader r = {fds[0], malloc(n + (1u << 20) + 1), 0, n + (1u << 20) + 1};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, drain, &r), 0);
    struct osink o;
    struct sp_err err = {0};
    ck_assert_int_eq(osink_open(&o, fds[1], OSINK_SPARSE_ALWAYS, &err), 0);
    ck_assert(!o.sparse);
    ck_assert(!o.seekable);
    for (size_t i = 0; i < n; i += 10000)
        ck_assert_int_eq(osink_write(&o, c + i, n - i < 10000 ? n - i : 10000), 0);
    ck_assert_int_eq(osink_zeros(&o, 1u << 20), 0);
    ck_assert_int_eq(osink_finish(&o, 0), 0);
    close(fds[1]);
    pthread_join(th, NULL);
    ck_assert_uint_eq(r.n, n + (1u << 20));
    ck_assert(memcmp(r.p, c, n) == 0);
    for (size_t i = n; i < r.n; i++)
        ck_assert_uint_eq(r.p[i], 0);
    ck_assert_uint_eq(o.written, r.n);
    ck_assert_uint_eq(o.holes, 0);
    close(fds[0]);
    free(r.p);
    free(c);
}
END_TEST

START_TEST(append_mode_is_not_sparse)
{
    char path[] = "/tmp/spigz-check-osink-XXXXXX";
    int fd0 = mkstemp(path);
    ck_assert_int_ge(fd0, 0);
    ck_assert_int_eq(write(fd0, "old", 3), 3);
    int fd = open(path, O_WRONLY | O_APPEND);
    ck_assert_int_ge(fd, 0);
    unlink(path);
    ck_assert_int_eq(lseek(fd, 0, SEEK_END), 3);
    struct osink o;
    struct sp_err err = {0};
    ck_assert_int_eq(osink_open(&o, fd, OSINK_SPARSE_AUTO, &err), 0);
    ck_assert(!o.sparse);
    size_t n = 20 * BLK;
    uint8_t *c = calloc(1, n);
    memset(c + 5 * BLK, 'd', 10);
    ck_assert_int_eq(osink_write(&o, c, n), 0);
    ck_assert_int_eq(osink_zeros(&o, 8 * BLK), 0);
    ck_assert_int_eq(osink_finish(&o, 0), 0);
    ck_assert_uint_eq(o.written, n + 8 * BLK);
    ck_assert_uint_eq(o.holes, 0);
    check_size(fd0, 3 + n + 8 * BLK);
    check_content(fd0, 3, c, n);
    if (fs_has_holes())
        ck_assert_uint_ge(allocated(fd0), n + 8 * BLK);
    close(fd);
    close(fd0);
    free(c);
}
END_TEST

START_TEST(not_at_end_is_not_sparse)
{
    /* 64 KiB of old data, positioned at 4096: the new zeros must replace the
     * old bytes, and what lies after the output stays */
    int fd = tmpfile_fd();
    size_t old_n = 64 << 10;
    uint8_t *old = malloc(old_n);
    memset(old, 'o', old_n);
    ck_assert_int_eq(write(fd, old, old_n), (ssize_t)old_n);
    ck_assert_int_eq(lseek(fd, BLK, SEEK_SET), BLK);
    struct osink o;
    struct sp_err err = {0};
    ck_assert_int_eq(osink_open(&o, fd, OSINK_SPARSE_AUTO, &err), 0);
    ck_assert(!o.sparse);
    ck_assert(o.seekable);
    ck_assert_uint_eq(o.base, BLK);
    size_t n = 8 * BLK;
    uint8_t *c = calloc(1, n);
    memset(c + 2 * BLK, 'n', 100);
    ck_assert_int_eq(osink_write(&o, c, 4 * BLK), 0);
    ck_assert_int_eq(osink_zeros(&o, 4 * BLK), 0);
    ck_assert_int_eq(osink_finish(&o, n), 0);
    ck_assert_uint_eq(o.holes, 0);
    memcpy(old + BLK, c, n);
    check_size(fd, old_n);
    check_content(fd, 0, old, old_n);

    /* positioned writes on such a sink too (a new one: the two ways are not
     * mixed on one sink), at offsets from its base */
    ck_assert_int_eq(lseek(fd, BLK, SEEK_SET), BLK);
    ck_assert_int_eq(osink_open(&o, fd, OSINK_SPARSE_AUTO, &err), 0);
    ck_assert(!o.sparse);
    ck_assert_uint_eq(o.base, BLK);
    struct osink_acc acc = {0};
    ck_assert_int_eq(osink_pzeros(&o, 0, 3 * BLK, &acc), 0);
    ck_assert_int_eq(osink_pwrite(&o, 3 * BLK, (const uint8_t *)"pp", 2, &acc), 0);
    ck_assert_uint_eq(acc.holes, 0);
    ck_assert_uint_eq(acc.written, 3 * BLK + 2);
    memset(old + BLK, 0, 3 * BLK);
    memcpy(old + 4 * BLK, "pp", 2);
    check_content(fd, 0, old, old_n);
    close(fd);
    free(old);
    free(c);
}
END_TEST

START_TEST(discard)
{
    struct osink o;
    struct sp_err err = {0};
    ck_assert_int_eq(osink_open(&o, -1, OSINK_SPARSE_AUTO, &err), 0);
    ck_assert_int_eq(o.fd, -1);
    uint8_t b[10000];
    memset(b, 7, sizeof b);
    ck_assert_int_eq(osink_write(&o, b, sizeof b), 0);
    ck_assert_int_eq(osink_zeros(&o, (uint64_t)1 << 40), 0);
    ck_assert_int_eq(osink_write(&o, b, 1), 0);
    ck_assert_uint_eq(o.pos, sizeof b + ((uint64_t)1 << 40) + 1);
    ck_assert_uint_eq(o.written, 0);
    ck_assert_int_eq(osink_finish(&o, 0), 0);
    /* a window over a discard sink counts only what falls in it */
    ck_assert_int_eq(osink_open(&o, -1, OSINK_SPARSE_AUTO, &err), 0);
    osink_window(&o, 5000, 100000);
    ck_assert_int_eq(osink_write(&o, b, sizeof b), 0);
    ck_assert_int_eq(osink_zeros(&o, 1u << 20), 0);
    ck_assert_uint_eq(o.pos, 100000);
    ck_assert_int_eq(osink_finish(&o, 0), 0);
    /* positioned calls do nothing */
    struct osink_acc acc = {0};
    ck_assert_int_eq(osink_open(&o, -1, OSINK_SPARSE_AUTO, &err), 0);
    ck_assert_int_eq(osink_pwrite(&o, 123, b, sizeof b, &acc), 0);
    ck_assert_int_eq(osink_pzeros(&o, 0, (uint64_t)1 << 40, &acc), 0);
    ck_assert_int_eq(osink_finish(&o, (uint64_t)1 << 40), 0);
}
END_TEST

START_TEST(write_errors_stick)
{
    signal(SIGPIPE, SIG_IGN);
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    close(fds[0]);
    struct osink o;
    struct sp_err err = {0};
    ck_assert_int_eq(osink_open(&o, fds[1], OSINK_SPARSE_AUTO, &err), 0);
    uint8_t b[100] = {1};
    ck_assert_int_eq(osink_write(&o, b, sizeof b), -1);
    ck_assert_int_eq(o.err.kind, SP_ERR_WRITE);
    ck_assert_int_eq(o.err.errnum, EPIPE);
    ck_assert_int_ne(o.failed, 0);
    ck_assert_int_eq(osink_write(&o, b, sizeof b), -1);
    ck_assert_int_eq(osink_zeros(&o, 10), -1);
    ck_assert_int_eq(osink_finish(&o, 0), -1);
    close(fds[1]);

    /* positioned: a read-only descriptor */
    int fd = tmpfile_fd();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int ro = open(path, O_RDONLY);
    ck_assert_int_ge(ro, 0);
    ck_assert_int_eq(osink_open(&o, ro, OSINK_SPARSE_NEVER, &err), 0);
    struct osink_acc acc = {0};
    ck_assert_int_eq(osink_pwrite(&o, 0, b, sizeof b, &acc), -1);
    ck_assert_int_eq(acc.err.kind, SP_ERR_WRITE);
    ck_assert_int_eq(acc.err.errnum, EBADF);
    close(ro);
    close(fd);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("osink");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, sparse_sequential_blocks);
    tcase_add_test(t, sparse_sequential_unaligned);
    tcase_add_test(t, zeros_fast_path);
    tcase_add_test(t, zeros_unaligned);
    tcase_add_test(t, sparse_after_existing_data);
    tcase_add_test(t, windows);
    tcase_add_test(t, empty_windows);
    tcase_add_test(t, positioned_threads);
    tcase_add_test(t, positioned_ends_in_hole);
    tcase_add_test(t, never_sparse);
    tcase_add_test(t, pipe_is_not_sparse);
    tcase_add_test(t, append_mode_is_not_sparse);
    tcase_add_test(t, not_at_end_is_not_sparse);
    tcase_add_test(t, discard);
    tcase_add_test(t, write_errors_stick);
    suite_add_tcase(s, t);
    return run_suite(s);
}
