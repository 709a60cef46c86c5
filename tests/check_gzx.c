/* Unit tests for gzx: random access to any gzip file through an index of
 * access points, and the saved index.
 *
 * Gzip files are made here with zlib (deflate with a gzip wrapper), one or
 * several members, empty members among them, trailing bytes after them.
 * Every read is compared with the content: random offsets and lengths,
 * every chunk and point edge, len 0 and past the end, with the default
 * cache, a 1-byte one and one of a chunk and a half.  A file smaller than a
 * point and an empty member alone.  A byte damaged before the build fails
 * the build; one damaged after it (size and mtime kept) fails exactly the
 * reads of the chunks decoded through it, naming their range, never a wrong
 * byte; a file whose mtime changed fails every read.  The saved index:
 * round trip, rejected (with a reason) when the gzip file's size, mtime,
 * head or tail changed, when a byte of it or its length is wrong; vol_open
 * builds and saves, then loads.  Four threads read at random at once (run
 * under ThreadSanitizer too), and four read a damaged chunk at once (one
 * decodes, the others wait, all fail).  Files written by pigz (with and without -i),
 * gzip, and two pigz files end to end read as their content. */
#define CU_CHEAP_CK_ASSERT
#include "check_util.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "cli_gzx.h"
#include "gzx.h"
#include "vol.h"

/* Text-like bytes with zero runs: deflates, with long-distance matches. */
static void make_content(uint8_t *p, size_t n, unsigned seed)
{
    lcg_seed(seed);
    static const char words[][8] = {"gzip ", "index ", "point ", "window ", "chunk ", "\n"};
    size_t i = 0;
    while (i < n) {
        if (lcg() % 50 == 0) {
            size_t z = 1 + lcg() % 20000;
            for (size_t j = 0; j < z && i < n; j++)
                p[i++] = 0;
            continue;
        }
        const char *w = words[lcg() % 6];
        for (size_t j = 0; w[j] && i < n; j++)
            p[i++] = (uint8_t)w[j];
        if (i < n && lcg() % 7 == 0)
            p[i++] = (uint8_t)lcg();
    }
}

/* zlib's memLevel for the members made: 1 makes blocks of 128 symbols
 * (block boundaries every few KiB), 8 (zlib's default) of 16384. */
static int mem_level = 8;

/* A gzip member of p[0..n) appended to out (grown): level lvl. */
static void gz_member(struct buf *out, const uint8_t *p, size_t n, int lvl)
{
    z_stream s;
    memset(&s, 0, sizeof s);
    ck_assert_int_eq(deflateInit2(&s, lvl, Z_DEFLATED, 31, mem_level, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&s, (uLong)n) + 64;
    out->p = realloc(out->p, out->n + cap + 1);
    ck_assert_ptr_nonnull(out->p);
    s.next_in = (Bytef *)p;
    s.avail_in = (uInt)n;
    s.next_out = out->p + out->n;
    s.avail_out = (uInt)cap;
    ck_assert_int_eq(deflate(&s, Z_FINISH), Z_STREAM_END);
    out->n += s.total_out;
    deflateEnd(&s);
}

struct sample {
    uint8_t *c;
    size_t n;
    struct buf gz;
    int fd;
};

/* Content of n bytes in members of the given lengths (0: an empty member;
 * the last takes what is left), then trail bytes of garbage. */
static void sample_new(struct sample *s, size_t n, const size_t *parts, int nparts,
                       const char *trail)
{
    s->c = malloc(n + 1);
    ck_assert_ptr_nonnull(s->c);
    s->n = n;
    make_content(s->c, n, (unsigned)n);
    s->gz = (struct buf){NULL, 0};
    size_t at = 0;
    for (int i = 0; i < nparts; i++) {
        size_t len = i == nparts - 1 ? n - at : parts[i];
        gz_member(&s->gz, s->c + at, len, i % 2 ? 1 : 6);
        at += len;
    }
    if (trail != NULL) {
        size_t t = strlen(trail);
        s->gz.p = realloc(s->gz.p, s->gz.n + t + 1);
        memcpy(s->gz.p + s->gz.n, trail, t);
        s->gz.n += t;
    }
    s->fd = file_with(s->gz.p, s->gz.n);
}

static void sample_free(struct sample *s)
{
    close(s->fd);
    free(s->c);
    free(s->gz.p);
}

static struct gzx *build(const struct sample *s, uint64_t cache)
{
    struct gzx_opts o = {.cache_bytes = cache};
    struct gzx *g = NULL;
    struct sp_err err = {0};
    ck_assert_msg(gzx_build(s->fd, &o, &g, &err) == 0, "gzx_build: %s", err.msg);
    EXPECT_U(gzx_size(g), s->n);
    return g;
}

static void read_ok(struct gzx *g, const struct sample *s, uint64_t off, size_t len, uint8_t *buf)
{
    struct sp_err err = {0};
    int64_t got = gzx_pread(g, buf, len, off, &err);
    uint64_t want = off >= s->n ? 0 : (len < s->n - off ? len : s->n - off);
    if (got < 0)
        ck_abort_msg("gzx_pread(%llu, %zu): %s", (unsigned long long)off, len, err.msg);
    EXPECT_U(got, want);
    EXPECT(want == 0 || memcmp(buf, s->c + off, (size_t)want) == 0);
}

static void random_reads(struct gzx *g, const struct sample *s, unsigned count)
{
    uint8_t *buf = malloc(3 << 20);
    for (unsigned i = 0; i < count; i++) {
        uint64_t off = rnd_below(s->n + 100);
        size_t len = (size_t)(rnd() % 4 == 0 ? 1 + rnd_below(3 << 20) : 1 + rnd_below(9000));
        read_ok(g, s, off, len, buf);
    }
    free(buf);
}

/* Reads across every chunk edge, then the whole content in 1 MiB + 1
 * byte steps (sequential), len 0, and past the end. */
static void edge_reads(struct gzx *g, const struct sample *s)
{
    uint8_t *buf = malloc(GZX_CHUNK + 1);
    for (uint64_t e = 0; e <= s->n; e += GZX_CHUNK) {
        read_ok(g, s, e, 1, buf);
        if (e > 0)
            read_ok(g, s, e - 1, 2, buf);
        if (e >= 100)
            read_ok(g, s, e - 100, 4096, buf);
    }
    for (uint64_t off = 0; off < s->n; off += GZX_CHUNK + 1)
        read_ok(g, s, off, GZX_CHUNK + 1, buf);
    read_ok(g, s, s->n, 10, buf);
    read_ok(g, s, s->n + 12345, 10, buf);
    read_ok(g, s, 0, 0, buf);
    free(buf);
}

/* The extents from 0 partition the content, at chunk edges; a zero one
 * reads as zeros; from an offset inside one, the rest of it.  How many
 * zero ones: the return. */
static unsigned extents_ok(struct gzx *g, const struct sample *s)
{
    uint64_t off = 0, len;
    bool zero, was = false;
    unsigned nz = 0;
    while (gzx_extent(g, off, &len, &zero) == 0) {
        ck_assert_uint_gt(len, 0);
        EXPECT(off == 0 || zero != was);
        EXPECT((off + len) % GZX_CHUNK == 0 || off + len == s->n);
        if (zero) {
            nz++;
            for (uint64_t i = 0; i < len; i++)
                EXPECT(s->c[off + i] == 0);
        }
        uint64_t len2;
        bool zero2;
        if (len > 1) {
            ck_assert_int_eq(gzx_extent(g, off + len / 2, &len2, &zero2), 0);
            EXPECT_U(len2, len - len / 2);
            EXPECT(zero2 == zero);
        }
        was = zero;
        off += len;
    }
    EXPECT_U(off, s->n);
    return nz;
}

/* ~21 MiB in one member: a point every 4 MiB or so. */
START_TEST(single_member)
{
    struct sample s;
    size_t one = 0;
    sample_new(&s, (21u << 20) + 777, &one, 1, NULL);
    uint64_t caches[] = {0, 1, GZX_CHUNK + GZX_CHUNK / 2};
    for (int i = 0; i < 3; i++) {
        struct gzx *g = build(&s, caches[i]);
        EXPECT_U(gzx_nmembers(g), 1);
        ck_assert_uint_ge(gzx_npoints(g), 5);
        edge_reads(g, &s);
        random_reads(g, &s, i == 1 ? 40 : 300);
        extents_ok(g, &s);
        gzx_close(g);
    }
    sample_free(&s);
}
END_TEST

/* Members of 3 MiB, an empty one, 5 MiB, 10 bytes, an empty one, the
 * rest; then trailing garbage, which is not content (as for gzip -d). */
START_TEST(multi_member)
{
    struct sample s;
    size_t parts[] = {3u << 20, 0, 5u << 20, 10, 0, 0};
    sample_new(&s, (13u << 20) + 5, parts, 6, "trailing garbage");
    struct gzx *g = build(&s, 0);
    EXPECT_U(gzx_nmembers(g), 6);
    edge_reads(g, &s);
    random_reads(g, &s, 200);
    gzx_close(g);
    g = build(&s, 1);
    random_reads(g, &s, 40);
    gzx_close(g);
    sample_free(&s);
}
END_TEST

/* 3000 members of 7 KiB (bgzip-like): points at member starts only. */
START_TEST(many_small_members)
{
    struct sample s;
    size_t *parts = malloc(3000 * sizeof *parts);
    for (int i = 0; i < 3000; i++)
        parts[i] = 7 << 10;
    sample_new(&s, 3000u * (7 << 10), parts, 3000, NULL);
    free(parts);
    struct gzx *g = build(&s, 0);
    EXPECT_U(gzx_nmembers(g), 3000);
    ck_assert_uint_ge(gzx_npoints(g), 5);
    edge_reads(g, &s);
    random_reads(g, &s, 200);
    gzx_close(g);
    sample_free(&s);
}
END_TEST

/* Points every 64 KiB, at most 8 (so thinned again and again), and at
 * most 64: the reads are the content still, members included. */
START_TEST(small_span_and_thinning)
{
    struct sample s;
    size_t parts[] = {700000, 0, 1500000, 0};
    mem_level = 1;
    sample_new(&s, (5u << 20) + 3, parts, 4, NULL);
    mem_level = 8;
    uint32_t maxes[] = {8, 64, 0};
    for (int i = 0; i < 3; i++) {
        struct gzx_opts o = {.span = 65536, .points_max = maxes[i], .cache_bytes = i == 1 ? 1 : 0};
        struct gzx *g = NULL;
        struct sp_err err = {0};
        ck_assert_msg(gzx_build(s.fd, &o, &g, &err) == 0, "gzx_build: %s", err.msg);
        EXPECT_U(gzx_size(g), s.n);
        if (maxes[i] > 0)
            ck_assert_uint_le(gzx_npoints(g), maxes[i]);
        ck_assert_uint_ge(gzx_npoints(g), (i == 2 ? 60 : maxes[i] / 2));
        edge_reads(g, &s);
        random_reads(g, &s, 100);
        gzx_close(g);
    }
    sample_free(&s);
}
END_TEST

/* Less than a chunk; and an empty member alone (no content at all). */
START_TEST(small_and_empty)
{
    struct sample s;
    size_t one = 0;
    sample_new(&s, 5000, &one, 1, NULL);
    struct gzx *g = build(&s, 1);
    EXPECT_U(gzx_npoints(g), 1);
    edge_reads(g, &s);
    random_reads(g, &s, 50);
    gzx_close(g);
    sample_free(&s);

    sample_new(&s, 0, &one, 1, NULL);
    g = build(&s, 0);
    uint8_t b[4];
    struct sp_err err = {0};
    EXPECT_INT(gzx_pread(g, b, 4, 0, &err), 0);
    uint64_t len;
    bool zero;
    EXPECT_INT(gzx_extent(g, 0, &len, &zero), -1);
    gzx_close(g);
    sample_free(&s);
}
END_TEST

START_TEST(not_gzip)
{
    uint8_t junk[1000];
    rnd_bytes(junk, sizeof junk);
    junk[0] = 'x';
    int fd = file_with(junk, sizeof junk);
    struct gzx *g = NULL;
    struct sp_err err = {0};
    EXPECT_INT(gzx_build(fd, NULL, &g, &err), -1);
    EXPECT_INT(err.kind, SP_ERR_FORMAT);
    struct vol *v = NULL;
    memset(&err, 0, sizeof err);
    EXPECT_INT(vol_open(fd, NULL, &v, &err), -1);
    EXPECT_INT(err.kind, SP_ERR_FORMAT);
    close(fd);
    /* empty file */
    fd = file_with(junk, 0);
    memset(&err, 0, sizeof err);
    EXPECT_INT(gzx_build(fd, NULL, &g, &err), -1);
    EXPECT_INT(err.kind, SP_ERR_FORMAT);
    close(fd);
}
END_TEST

/* Restore fd's mtime to st's (a change that keeps size and mtime). */
static void keep_mtime(int fd, const struct stat *st)
{
    struct timespec ts[2] = {st->st_atim, st->st_mtim};
    ck_assert_int_eq(futimens(fd, ts), 0);
}

/* Flip a byte of the deflate data at gz offset at, keeping the mtime. */
static void flip(const struct sample *s, uint64_t at)
{
    struct stat st;
    ck_assert_int_eq(fstat(s->fd, &st), 0);
    uint8_t b;
    ck_assert_int_eq(pread(s->fd, &b, 1, (off_t)at), 1);
    b ^= 0x55;
    pwrite_all(s->fd, &b, 1, at);
    keep_mtime(s->fd, &st);
}

START_TEST(damaged)
{
    struct sample s;
    size_t one = 0;
    sample_new(&s, 14u << 20, &one, 1, NULL);
    /* damaged before the build: no index */
    uint64_t mid = s.gz.n / 2;
    flip(&s, mid);
    struct gzx *g = NULL;
    struct sp_err err = {0};
    EXPECT_INT(gzx_build(s.fd, NULL, &g, &err), -1);
    EXPECT(err.kind == SP_ERR_DATA || err.kind == SP_ERR_CHECK);
    flip(&s, mid); /* undone */

    g = build(&s, 1); /* nothing cached: each read decodes */
    struct gzx *seq = build(&s, 0); /* read in order: the read-ahead's decodes */
    flip(&s, mid);
    /* every read either fails naming a range holding its start, or is
     * the content */
    uint8_t *buf = malloc(GZX_CHUNK);
    unsigned failed = 0, fine = 0;
    for (uint64_t off = 0; off < s.n; off += 262144) {
        memset(&err, 0, sizeof err);
        int64_t got = gzx_pread(g, buf, 4096, off, &err);
        if (got < 0) {
            failed++;
            EXPECT_INT(err.kind, SP_ERR_DATA);
            unsigned long long a, b;
            EXPECT(sscanf(err.msg, "bytes %llu to %llu of the content", &a, &b) == 2);
            EXPECT(a <= off && off < b && b - a == GZX_CHUNK);
        } else {
            fine++;
            EXPECT_INT(got, 4096);
            EXPECT(memcmp(buf, s.c + off, 4096) == 0);
        }
    }
    ck_assert_uint_gt(failed, 0);
    ck_assert_uint_gt(fine, 0);
    /* in order, 1 MiB at a time, the read-ahead threads decoding ahead:
     * each read fails naming its chunk, or is the content */
    unsigned seq_failed = 0;
    for (uint64_t off = 0; off < s.n; off += GZX_CHUNK) {
        memset(&err, 0, sizeof err);
        int64_t got = gzx_pread(seq, buf, GZX_CHUNK, off, &err);
        if (got < 0) {
            seq_failed++;
            EXPECT_INT(err.kind, SP_ERR_DATA);
        } else {
            EXPECT_INT(got, GZX_CHUNK);
            EXPECT(memcmp(buf, s.c + off, GZX_CHUNK) == 0);
        }
    }
    ck_assert_uint_gt(seq_failed, 0);
    gzx_close(seq);
    /* the start of the content is decoded from the first point: intact */
    read_ok(g, &s, 0, 4096, buf);
    /* the file changed (its mtime): every read fails */
    flip(&s, mid);
    struct stat st;
    ck_assert_int_eq(fstat(s.fd, &st), 0);
    st.st_mtim.tv_sec -= 100;
    keep_mtime(s.fd, &st);
    memset(&err, 0, sizeof err);
    EXPECT_INT(gzx_pread(g, buf, 10, s.n - 10, &err), -1);
    EXPECT_INT(err.kind, SP_ERR_DATA);
    EXPECT(strstr(err.msg, "changed") != NULL);
    gzx_close(g);
    free(buf);
    sample_free(&s);
}
END_TEST

/* A scratch directory (removed with its files at the end of the test). */
static int scratch_dir(char *path, size_t n)
{
    snprintf(path, n, "/tmp/spigz-gzx-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(path));
    int d = open(path, O_RDONLY | O_DIRECTORY);
    ck_assert_int_ge(d, 0);
    return d;
}

static void scratch_rm(int d, const char *path, const char *name)
{
    unlinkat(d, name, 0);
    close(d);
    ck_assert_int_eq(rmdir(path), 0); /* no temporary left behind */
}

/* Load name for s: 1 with the index, else 0 and a reason in why. */
static int load(const struct sample *s, int d, const char *name, struct gzx **g, char *why)
{
    struct sp_err err = {0};
    int rc = gzx_load(s->fd, NULL, d, name, g, why, 200, &err);
    ck_assert_msg(rc >= 0, "gzx_load: %s", err.msg);
    return rc;
}

static void save(const struct gzx *g, int d, const char *name)
{
    struct sp_err err = {0};
    ck_assert_msg(gzx_save(g, d, name, &err) == 0, "gzx_save: %s", err.msg);
}

/* Whole chunks of zeros (a disk image's free space): reported as zero
 * extents, read as zeros without decoding, and the same after a saved
 * index is loaded. */
START_TEST(zero_chunks)
{
    struct sample s;
    size_t parts[] = {7u << 20, 0};
    sample_new(&s, 14u << 20, parts, 2, NULL);
    memset(s.c + (2u << 20) + 100, 0, 6u << 20);    /* chunks 3 to 7 zero, 2 and 8 partly */
    memset(s.c + (13u << 20), 0, 1u << 20);         /* the last chunk */
    free(s.gz.p);
    s.gz = (struct buf){NULL, 0};
    gz_member(&s.gz, s.c, 7u << 20, 6);
    gz_member(&s.gz, s.c + (7u << 20), 7u << 20, 1);
    close(s.fd);
    s.fd = file_with(s.gz.p, s.gz.n);
    char path[64], why[200];
    int d = scratch_dir(path, sizeof path);
    struct gzx *g = build(&s, 1);
    EXPECT_INT(extents_ok(g, &s), 2);
    uint64_t len;
    bool zero;
    ck_assert_int_eq(gzx_extent(g, 3u << 20, &len, &zero), 0);
    EXPECT(zero && len == 5u << 20);
    edge_reads(g, &s);
    random_reads(g, &s, 60);
    save(g, d, "z.gzx");
    gzx_close(g);
    EXPECT_INT(load(&s, d, "z.gzx", &g, why), 1);
    EXPECT_INT(extents_ok(g, &s), 2);
    edge_reads(g, &s);
    gzx_close(g);
    scratch_rm(d, path, "z.gzx");
    sample_free(&s);
}
END_TEST

START_TEST(saved_index)
{
    struct sample s;
    size_t parts[] = {6u << 20, 0, 0};
    sample_new(&s, (11u << 20) + 3, parts, 3, NULL);
    char path[64], why[200];
    int d = scratch_dir(path, sizeof path);
    struct gzx *g = build(&s, 0), *h = NULL;
    uint64_t np = gzx_npoints(g);
    EXPECT_INT(load(&s, d, "x.gz.gzx", &h, why), 0);
    EXPECT(strstr(why, "no saved index") != NULL);
    ck_assert_int_eq(fchmod(s.fd, 0640), 0);
    save(g, d, "x.gz.gzx");
    gzx_close(g);
    struct stat ist;
    ck_assert_int_eq(fstatat(d, "x.gz.gzx", &ist, 0), 0);
    EXPECT_INT(ist.st_mode & 0777, 0640); /* the gzip file's: windows are content */
    /* a link is not followed: rebuilt, not an error */
    ck_assert_int_eq(symlinkat("x.gz.gzx", d, "link.gzx"), 0);
    EXPECT_INT(load(&s, d, "link.gzx", &h, why), 0);
    EXPECT(strstr(why, "cannot open") != NULL);
    unlinkat(d, "link.gzx", 0);
    EXPECT_INT(load(&s, d, "x.gz.gzx", &h, why), 1);
    EXPECT_U(gzx_size(h), s.n);
    EXPECT_U(gzx_npoints(h), np);
    EXPECT_U(gzx_nmembers(h), 3);
    edge_reads(h, &s);
    random_reads(h, &s, 100);
    gzx_close(h);

    /* the index file damaged: each byte class, and cut */
    int ifd = openat(d, "x.gz.gzx", O_RDWR);
    struct buf ib = slurp(ifd);
    uint64_t where[] = {0, 9, 20, 45, 100, 130, ib.n / 2, ib.n - 1};
    for (unsigned i = 0; i < sizeof where / sizeof *where; i++) {
        uint8_t b = ib.p[where[i]] ^ 1;
        pwrite_all(ifd, &b, 1, where[i]);
        EXPECT_INT(load(&s, d, "x.gz.gzx", &h, why), 0);
        EXPECT(why[0] != 0);
        pwrite_all(ifd, ib.p + where[i], 1, where[i]);
    }
    ck_assert_int_eq(ftruncate(ifd, (off_t)ib.n - 1), 0);
    EXPECT_INT(load(&s, d, "x.gz.gzx", &h, why), 0);
    pwrite_all(ifd, ib.p, ib.n, 0);
    EXPECT_INT(load(&s, d, "x.gz.gzx", &h, why), 1);
    gzx_close(h);
    close(ifd);
    free(ib.p);

    /* the gzip file changed: mtime; head and tail (mtime kept); size */
    struct stat st, st0;
    ck_assert_int_eq(fstat(s.fd, &st0), 0);
    st = st0;
    st.st_mtim.tv_nsec ^= 1000;
    keep_mtime(s.fd, &st);
    EXPECT_INT(load(&s, d, "x.gz.gzx", &h, why), 0);
    EXPECT(strstr(why, "modified") != NULL);
    keep_mtime(s.fd, &st0);
    uint64_t at[] = {4, s.gz.n - 3}; /* the header's mtime, the last ISIZE byte */
    for (int i = 0; i < 2; i++) {
        flip(&s, at[i]);
        EXPECT_INT(load(&s, d, "x.gz.gzx", &h, why), 0);
        EXPECT(strstr(why, "64 KiB") != NULL);
        flip(&s, at[i]);
    }
    EXPECT_INT(load(&s, d, "x.gz.gzx", &h, why), 1);
    gzx_close(h);
    pwrite_all(s.fd, "", 1, s.gz.n);
    keep_mtime(s.fd, &st0);
    EXPECT_INT(load(&s, d, "x.gz.gzx", &h, why), 0);
    EXPECT(strstr(why, "bytes") != NULL);

    /* garbage and an empty file */
    int gfd = openat(d, "junk", O_WRONLY | O_CREAT, 0644);
    uint8_t junk[300];
    rnd_bytes(junk, sizeof junk);
    pwrite_all(gfd, junk, sizeof junk, 0);
    close(gfd);
    EXPECT_INT(load(&s, d, "junk", &h, why), 0);
    gfd = openat(d, "empty", O_WRONLY | O_CREAT, 0644);
    close(gfd);
    EXPECT_INT(load(&s, d, "empty", &h, why), 0);
    unlinkat(d, "junk", 0);
    unlinkat(d, "empty", 0);
    scratch_rm(d, path, "x.gz.gzx");
    sample_free(&s);
}
END_TEST

/* vol_open on a plain gzip file: builds and saves, then loads. */
START_TEST(vol_builds_then_loads)
{
    struct sample s;
    size_t one = 0;
    sample_new(&s, (5u << 20) + 9, &one, 1, NULL);
    char path[64];
    int d = scratch_dir(path, sizeof path);
    struct sp_progress prog = {0};
    struct vol_opts o = {.prog = &prog, .idx_dirfd = d, .idx_name = "f.gz.gzx", .idx_save = true};
    struct vol *v = NULL;
    struct sp_err err = {0};
    ck_assert_msg(vol_open(s.fd, &o, &v, &err) == 0, "vol_open: %s", err.msg);
    ck_assert_str_eq(vol_kind(v), "gzip index");
    EXPECT(strstr(vol_note(v), "built") != NULL && strstr(vol_note(v), "saved as") != NULL);
    EXPECT_U(vol_size(v), s.n);
    EXPECT_U(prog.in_total, s.gz.n);
    EXPECT_U(prog.in, s.gz.n);
    uint8_t *buf = malloc(100000);
    EXPECT_INT(vol_pread(v, buf, 100000, 4u << 20, &err), 100000);
    EXPECT(memcmp(buf, s.c + (4u << 20), 100000) == 0);
    vol_close(v);
    o.prog = NULL;
    ck_assert_msg(vol_open(s.fd, &o, &v, &err) == 0, "vol_open: %s", err.msg);
    ck_assert_str_eq(vol_note(v), "loaded from the saved index");
    EXPECT_INT(vol_pread(v, buf, 100000, 1, &err), 100000);
    EXPECT(memcmp(buf, s.c + 1, 100000) == 0);
    vol_close(v);
    /* zeroed options: built in memory, nothing saved */
    struct vol_opts z = {0};
    ck_assert_msg(vol_open(s.fd, &z, &v, &err) == 0, "vol_open: %s", err.msg);
    ck_assert_str_eq(vol_note(v), "built");
    vol_close(v);
    free(buf);
    scratch_rm(d, path, "f.gz.gzx");
    sample_free(&s);
}
END_TEST

/* The file a command (sh -c) writes from content c[0..n) on its stdin. */
static int made_by(const char *cmd, const uint8_t *c, size_t n)
{
    int in = file_with(c, n), out = tmpfile_fd();
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        lseek(in, 0, SEEK_SET);
        dup2(in, 0);
        dup2(out, 1);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s failed (pigz and gzip are in "
                  "scripts/deps.sh's test list)", cmd);
    close(in);
    return out;
}

/* Real writers: pigz (one member, its blocks' sync points), pigz -i
 * (independent blocks), gzip, and two pigz files end to end. */
START_TEST(real_writers)
{
    struct sample s;
    size_t one = 0;
    sample_new(&s, (9u << 20) + 1234, &one, 1, NULL);
    const char *cmds[] = {"pigz -p 2 -c", "pigz -p 2 -i -6 -c", "gzip -1 -c",
                          "pigz -p 2 -c >t.$$ && cat t.$$ t.$$ && rm t.$$"};
    uint8_t *twice = malloc(2 * s.n);
    memcpy(twice, s.c, s.n);
    memcpy(twice + s.n, s.c, s.n);
    for (int i = 0; i < 4; i++) {
        struct sample w = s;
        if (i == 3) {
            w.c = twice;
            w.n = 2 * s.n;
        }
        char cmd[200];
        snprintf(cmd, sizeof cmd, "cd /tmp && %s", cmds[i]);
        w.fd = made_by(cmd, s.c, s.n);
        struct gzx *g = build(&w, i == 1 ? 1 : 0);
        EXPECT_U(gzx_nmembers(g), i == 3 ? 2 : 1);
        edge_reads(g, &w);
        random_reads(g, &w, i == 1 ? 30 : 200);
        gzx_close(g);
        close(w.fd);
    }
    free(twice);
    sample_free(&s);
}
END_TEST

/* cli_gzx_place: FILE.gz.gzx beside the file, saved when the folder is
 * writable; --index-file's name in its folder, saved; an --index-file in
 * a folder that does not exist is an error. */
START_TEST(cli_places_the_index)
{
    char path[64], p[128];
    int d = scratch_dir(path, sizeof path);
    struct cli_gzx x;
    struct vol_opts o = {0};
    snprintf(p, sizeof p, "%s/disk.img.gz", path);
    ck_assert_int_eq(cli_gzx_place(p, NULL, &x, &o), 0);
    ck_assert_str_eq(o.idx_name, "disk.img.gz.gzx");
    EXPECT(o.idx_save && o.idx_dirfd >= 0);
    struct stat a, b;
    ck_assert_int_eq(fstat(o.idx_dirfd, &a), 0);
    ck_assert_int_eq(fstat(d, &b), 0);
    EXPECT(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
    cli_gzx_done(&x);
    snprintf(p, sizeof p, "%s/my.index", path);
    ck_assert_int_eq(cli_gzx_place("/nonexistent/x.gz", p, &x, &o), 0);
    ck_assert_str_eq(o.idx_name, "my.index");
    EXPECT(o.idx_save);
    ck_assert_int_eq(fstat(o.idx_dirfd, &a), 0);
    EXPECT(a.st_ino == b.st_ino);
    cli_gzx_done(&x);
    EXPECT_INT(cli_gzx_place("x.gz", "/nonexistent/dir/my.index", &x, &o), -1);
    /* a gzip file in a folder that cannot be opened: in memory */
    ck_assert_int_eq(cli_gzx_place("/nonexistent/dir/x.gz", NULL, &x, &o), 0);
    EXPECT(o.idx_name == NULL && !o.idx_save);
    close(d);
    ck_assert_int_eq(rmdir(path), 0);
}
END_TEST

struct reader {
    struct gzx *g;
    const struct sample *s;
    uint64_t seed;
    int bad;
};

static void *reader_main(void *arg)
{
    struct reader *r = arg;
    uint64_t x = r->seed;
    uint8_t *buf = malloc(1 << 20);
    for (int i = 0; i < 60 && buf != NULL; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t off = x % r->s->n;
        size_t len = 1 + (size_t)((x >> 32) % (1 << 20));
        if (len > r->s->n - off)
            len = r->s->n - off;
        struct sp_err err = {0};
        if (gzx_pread(r->g, buf, len, off, &err) != (int64_t)len ||
            memcmp(buf, r->s->c + off, len) != 0)
            r->bad++;
    }
    free(buf);
    return NULL;
}

START_TEST(concurrent_readers)
{
    struct sample s;
    size_t one = 0;
    sample_new(&s, 17u << 20, &one, 1, NULL);
    uint64_t caches[] = {3u << 20, 0};
    for (int c = 0; c < 2; c++) {
        struct gzx *g = build(&s, caches[c]);
        pthread_t t[4];
        struct reader r[4];
        for (int i = 0; i < 4; i++) {
            r[i] = (struct reader){g, &s, 0x1234567ull * (uint64_t)(i + 1) + (uint64_t)c, 0};
            ck_assert_int_eq(pthread_create(&t[i], NULL, reader_main, &r[i]), 0);
        }
        for (int i = 0; i < 4; i++) {
            pthread_join(t[i], NULL);
            EXPECT_INT(r[i].bad, 0);
        }
        gzx_close(g);
    }
    sample_free(&s);
}
END_TEST

struct bad_reader {
    struct gzx *g;
    uint64_t off;
    int failed, wrong;
    const struct sample *s;
};

static void *bad_reader_main(void *arg)
{
    struct bad_reader *r = arg;
    uint8_t *buf = malloc(GZX_CHUNK);
    for (int i = 0; i < 20 && buf != NULL; i++) {
        struct sp_err err = {0};
        int64_t got = gzx_pread(r->g, buf, 4096, r->off + (uint64_t)i * 4096, &err);
        if (got < 0 && err.kind == SP_ERR_DATA)
            r->failed++;
        else if (got != 4096 || memcmp(buf, r->s->c + r->off + (uint64_t)i * 4096, 4096) != 0)
            r->wrong++;
    }
    free(buf);
    return NULL;
}

/* Four threads read a damaged chunk at once (one decodes, the others wait
 * on it, then retry on its failure): every read fails, none returns
 * bytes; and reads of intact chunks meanwhile are the content. */
START_TEST(concurrent_damage)
{
    struct sample s;
    size_t one = 0;
    sample_new(&s, 9u << 20, &one, 1, NULL);
    struct gzx *g = build(&s, 0);
    /* a damaged chunk: flip a byte at 3/4 of the file, find one that fails */
    flip(&s, s.gz.n * 3 / 4);
    uint8_t *buf = malloc(4096);
    uint64_t bad = UINT64_MAX;
    for (uint64_t c = gzx_size(g) / GZX_CHUNK; c-- > 0 && bad == UINT64_MAX;) {
        struct sp_err err = {0};
        if (gzx_pread(g, buf, 4096, c * GZX_CHUNK, &err) < 0)
            bad = c; /* a failed chunk is not cached: it fails again below */
    }
    ck_assert_uint_ne(bad, UINT64_MAX);
    pthread_t t[4];
    struct bad_reader r[4];
    for (int i = 0; i < 4; i++) {
        uint64_t off = i < 3 ? bad * GZX_CHUNK : 0; /* the fourth: intact */
        r[i] = (struct bad_reader){g, off, 0, 0, &s};
        ck_assert_int_eq(pthread_create(&t[i], NULL, bad_reader_main, &r[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        EXPECT_INT(r[i].wrong, 0);
        EXPECT_INT(r[i].failed, i < 3 ? 20 : 0);
    }
    gzx_close(g);
    free(buf);
    sample_free(&s);
}
END_TEST

static Suite *gzx_suite(void)
{
    Suite *s = suite_create("gzx");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, single_member);
    tcase_add_test(tc, multi_member);
    tcase_add_test(tc, zero_chunks);
    tcase_add_test(tc, many_small_members);
    tcase_add_test(tc, small_and_empty);
    tcase_add_test(tc, small_span_and_thinning);
    tcase_add_test(tc, not_gzip);
    tcase_add_test(tc, damaged);
    tcase_add_test(tc, saved_index);
    tcase_add_test(tc, vol_builds_then_loads);
    tcase_add_test(tc, concurrent_readers);
    tcase_add_test(tc, concurrent_damage);
    tcase_add_test(tc, real_writers);
    tcase_add_test(tc, cli_places_the_index);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(gzx_suite());
}
