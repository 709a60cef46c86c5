/* Unit tests for xidx: the index export for gztool and indexed_gzip
 * (doc/FORMAT.md section 6).
 *
 * Indexes are built here by hand (struct idx as idx_load fills it) and the
 * exported bytes are checked against the layouts written out independently
 * in this file: a small index byte for byte, a large one (many buffer
 * flushes) by reading every field back.  Then every inconsistency of a
 * struct idx must be refused before a byte is written, and failing writes
 * (a full disk, a closed descriptor) must be reported, never printed.  The
 * real tools read real spigz files in tests/export_index.sh. */
#include "check_util.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xidx.h"

/* ---- a hand-made index ---- */

/* An index of n pieces with the given compressed and decoded lengths: the
 * pieces' offsets are their sums, p[n] the ends, the sizes those of a data
 * member of header_len + sum(clen) + 10 bytes, index members of 40 bytes
 * and the footer. */
struct fake {
    struct idx x;
    uint64_t file_size;
};

static void fake_make(struct fake *f, uint64_t n, const uint64_t *clen, const uint64_t *ulen,
                      uint64_t header_len)
{
    memset(f, 0, sizeof *f);
    f->x.p = calloc(n + 1, sizeof *f->x.p);
    ck_assert_ptr_nonnull(f->x.p);
    uint64_t c = 0, u = 0;
    for (uint64_t k = 0; k < n; k++) {
        f->x.p[k] = (struct idx_piece){u, c, 0, k % 2 == 0};
        c += clen[k];
        u += ulen[k];
    }
    f->x.p[n] = (struct idx_piece){u, c, 0, false};
    f->x.n = n;
    f->x.total = u;
    f->x.header_len = header_len;
    f->x.data_len = header_len + c + 10;
    f->x.index_len = 40;
    f->file_size = f->x.data_len + f->x.index_len + IDX_FOOTER_LEN;
}

/* n pieces of varied lengths, over 4 GiB decoded in all. */
static void fake_many(struct fake *f, uint64_t n)
{
    uint64_t *c = malloc(n * sizeof *c), *u = malloc(n * sizeof *u);
    ck_assert(c != NULL && u != NULL);
    for (uint64_t k = 0; k < n; k++) {
        c[k] = 1 + (k * 7919) % 100000;
        u[k] = k % 3 == 0 ? ((uint64_t)1 << 30) : 1 + (k * 104729) % 1048576;
    }
    fake_make(f, n, c, u, 17);
    free(c);
    free(u);
}

static void fake_free(struct fake *f)
{
    free(f->x.p);
    f->x.p = NULL;
}

/* ---- files ---- */

/* Export f in fmt to a fresh file; its bytes in *out (*n), the result. */
static int export(const struct fake *f, enum xidx_fmt fmt, uint8_t **out, size_t *n,
                  struct sp_err *err)
{
    int fd = tmpfile_fd();
    memset(err, 0, sizeof *err);
    int r = xidx_write(&f->x, f->file_size, fmt, fd, err);
    struct buf b = slurp(fd);
    *out = b.p;
    *n = b.n;
    close(fd);
    return r;
}

/* ---- reading the formats back, from FORMAT.md section 6 ---- */

static uint64_t be(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

/* indexed_gzip: the host's byte order. */
static uint64_t host(const uint8_t *p, int n)
{
    uint64_t v = 0;
    memcpy(&v, p, (size_t)n); /* little-endian host: the low bytes */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = be(p, n);
#endif
    return v;
}

static void check_gztool(const struct fake *f, const uint8_t *b, size_t n)
{
    uint64_t pts = f->x.n + 1;
    ck_assert_uint_eq(n, 40 + 24 * pts);
    ck_assert_uint_eq(be(b, 8), 0);
    ck_assert(memcmp(b + 8, "gzipindx", 8) == 0);
    ck_assert_uint_eq(be(b + 16, 8), pts);
    ck_assert_uint_eq(be(b + 24, 8), pts);
    for (uint64_t k = 0; k < pts; k++) {
        const uint8_t *q = b + 32 + 24 * k;
        ck_assert_uint_eq(be(q, 8), f->x.p[k].uoff);
        ck_assert_uint_eq(be(q + 8, 8), f->x.header_len + f->x.p[k].coff);
        ck_assert_uint_eq(be(q + 16, 4), 0);
        ck_assert_uint_eq(be(q + 20, 4), 0);
    }
    ck_assert_uint_eq(be(b + n - 8, 8), f->x.total);
}

static void check_indexed_gzip(const struct fake *f, const uint8_t *b, size_t n)
{
    uint64_t pts = f->x.n + 1;
    ck_assert_uint_eq(n, 35 + 18 * pts);
    ck_assert(memcmp(b, "GZIDX\x01\x00", 7) == 0);
    ck_assert_uint_eq(host(b + 7, 8), f->file_size);
    ck_assert_uint_eq(host(b + 15, 8), f->x.total);
    ck_assert_uint_eq(host(b + 23, 4), 1048576);
    ck_assert_uint_eq(host(b + 27, 4), 32768);
    ck_assert_uint_eq(host(b + 31, 4), pts);
    for (uint64_t k = 0; k < pts; k++) {
        const uint8_t *q = b + 35 + 18 * k;
        ck_assert_uint_eq(host(q, 8), f->x.header_len + f->x.p[k].coff);
        ck_assert_uint_eq(host(q + 8, 8), f->x.p[k].uoff);
        ck_assert_uint_eq(q[16], 0);
        ck_assert_uint_eq(q[17], 0);
    }
}

/* ---- tests ---- */

START_TEST(format_names)
{
    enum xidx_fmt f = XIDX_INDEXED_GZIP;
    ck_assert_int_eq(xidx_parse_fmt("gztool", &f), 0);
    ck_assert_int_eq(f, XIDX_GZTOOL);
    ck_assert_int_eq(xidx_parse_fmt("indexed_gzip", &f), 0);
    ck_assert_int_eq(f, XIDX_INDEXED_GZIP);
    f = XIDX_GZTOOL;
    ck_assert_int_eq(xidx_parse_fmt("indexed-gzip", &f), 0);
    ck_assert_int_eq(f, XIDX_INDEXED_GZIP);
    const char *bad[] = {"", "GZTOOL", "gztool ", "zran", "bgzip", "indexed", NULL};
    for (int i = 0; bad[i] != NULL; i++) {
        f = XIDX_GZTOOL;
        ck_assert_int_eq(xidx_parse_fmt(bad[i], &f), -1);
        ck_assert_int_eq(f, XIDX_GZTOOL);
    }
    ck_assert_int_eq(xidx_parse_fmt(NULL, &f), -1);
    ck_assert_str_eq(xidx_fmt_name(XIDX_GZTOOL), "gztool");
    ck_assert_str_eq(xidx_fmt_name(XIDX_INDEXED_GZIP), "indexed_gzip");
    ck_assert_ptr_null(xidx_fmt_name((enum xidx_fmt)7));
}
END_TEST

/* Two pieces, byte for byte. */
START_TEST(small_index_bytes)
{
    const uint64_t c[2] = {300, 0x123456789}, u[2] = {1000, 0x100000000};
    struct fake f;
    fake_make(&f, 2, c, u, 23);
    uint8_t *b;
    size_t n;
    struct sp_err err;
    ck_assert_int_eq(export(&f, XIDX_GZTOOL, &b, &n, &err), 0);
    static const uint8_t gzt[] = {
        0, 0, 0, 0, 0, 0, 0, 0, 'g', 'z', 'i', 'p', 'i', 'n', 'd', 'x',
        0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 3,
        /* out 0, in 23 */
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 23, 0, 0, 0, 0, 0, 0, 0, 0,
        /* out 1000, in 323 */
        0, 0, 0, 0, 0, 0, 0x03, 0xe8, 0, 0, 0, 0, 0, 0, 0x01, 0x43, 0, 0, 0, 0, 0, 0, 0, 0,
        /* out 0x1000003e8, in 323 + 0x123456789 = 0x1234568cc */
        0, 0, 0, 0x01, 0, 0, 0x03, 0xe8, 0, 0, 0, 0x01, 0x23, 0x45, 0x68, 0xcc,
        0, 0, 0, 0, 0, 0, 0, 0,
        /* the uncompressed size */
        0, 0, 0, 0x01, 0, 0, 0x03, 0xe8};
    ck_assert_uint_eq(n, sizeof gzt);
    ck_assert(memcmp(b, gzt, n) == 0);
    ck_assert_uint_eq(xidx_size(&f.x, XIDX_GZTOOL), n);
    check_gztool(&f, b, n);
    free(b);

    ck_assert_int_eq(export(&f, XIDX_INDEXED_GZIP, &b, &n, &err), 0);
    ck_assert_uint_eq(n, 35 + 3 * 18);
    ck_assert_uint_eq(xidx_size(&f.x, XIDX_INDEXED_GZIP), n);
    check_indexed_gzip(&f, b, n);
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_BIG_ENDIAN__
    static const uint8_t igz_head[] = {'G', 'Z', 'I', 'D', 'X', 1, 0};
    static const uint8_t igz_last[] = {0xcc, 0x68, 0x45, 0x23, 0x01, 0, 0, 0,
                                       0xe8, 0x03, 0, 0, 0x01, 0, 0, 0, 0, 0};
    ck_assert(memcmp(b, igz_head, sizeof igz_head) == 0);
    ck_assert(memcmp(b + n - 18, igz_last, sizeof igz_last) == 0);
#endif
    free(b);
    fake_free(&f);
}
END_TEST

/* Empty content: no piece, one point at the final block. */
START_TEST(empty_content)
{
    struct fake f;
    fake_make(&f, 0, NULL, NULL, 10);
    uint8_t *b;
    size_t n;
    struct sp_err err;
    ck_assert_int_eq(export(&f, XIDX_GZTOOL, &b, &n, &err), 0);
    check_gztool(&f, b, n);
    ck_assert_uint_eq(be(b + 40, 8), 10); /* the point's in: after the header */
    free(b);
    ck_assert_int_eq(export(&f, XIDX_INDEXED_GZIP, &b, &n, &err), 0);
    check_indexed_gzip(&f, b, n);
    free(b);
    fake_free(&f);
}
END_TEST

/* Many points: every field across many buffer flushes. */
START_TEST(large_index_reads_back)
{
    struct fake f;
    fake_many(&f, 100003);
    ck_assert_uint_gt(f.x.total, (uint64_t)1 << 32);
    uint8_t *b;
    size_t n;
    struct sp_err err;
    ck_assert_int_eq(export(&f, XIDX_GZTOOL, &b, &n, &err), 0);
    check_gztool(&f, b, n);
    free(b);
    ck_assert_int_eq(export(&f, XIDX_INDEXED_GZIP, &b, &n, &err), 0);
    check_indexed_gzip(&f, b, n);
    free(b);
    fake_free(&f);
}
END_TEST

/* What xidx_write must accept, said independently. */
static bool consistent(const struct fake *f)
{
    const struct idx_piece *p = f->x.p;
    if (p[0].coff != 0 || p[0].uoff != 0)
        return false;
    for (uint64_t k = 0; k < f->x.n; k++)
        if (p[k + 1].coff <= p[k].coff || p[k + 1].uoff <= p[k].uoff)
            return false;
    return p[f->x.n].coff + f->x.header_len + 10 == f->x.data_len &&
           p[f->x.n].uoff == f->x.total;
}

/* Export must fail with kind, and write nothing. */
static void refused(const struct fake *f, enum sp_kind kind, const char *what)
{
    for (int fmt = XIDX_GZTOOL; fmt <= XIDX_INDEXED_GZIP; fmt++) {
        uint8_t *b;
        size_t n;
        struct sp_err err;
        int r = export(f, (enum xidx_fmt)fmt, &b, &n, &err);
        ck_assert_msg(r == -1, "%s: exported (format %d)", what, fmt);
        ck_assert_msg(err.kind == kind, "%s: kind %d, not %d (%s)", what, err.kind, kind,
                      err.msg);
        ck_assert_msg(err.msg[0] != 0, "%s: no message", what);
        ck_assert_msg(n == 0, "%s: %zu bytes written", what, n);
        free(b);
    }
}

START_TEST(inconsistent_index_is_refused)
{
    const uint64_t c[3] = {100, 200, 300}, u[3] = {1000, 2000, 3000};
    struct fake f;
    fake_make(&f, 3, c, u, 20);
    struct fake g = f;

    g.x.base = 1;
    refused(&g, SP_ERR_FORMAT, "base 1");
    g = f;
    g.file_size++;
    refused(&g, SP_ERR_FORMAT, "file one byte longer");
    g.file_size -= 2;
    refused(&g, SP_ERR_FORMAT, "file one byte shorter");
    g.file_size = 0;
    refused(&g, SP_ERR_FORMAT, "file size 0");
    g = f;
    g.x.index_len = UINT64_MAX;
    refused(&g, SP_ERR_FORMAT, "index_len overflows");
    g = f;
    g.x.data_len = UINT64_MAX - 10;
    refused(&g, SP_ERR_FORMAT, "data_len overflows");
    g = f;
    g.x.header_len = 9;
    refused(&g, SP_ERR_FORMAT, "header of 9 bytes");
    g = f;
    g.x.header_len = g.x.data_len - 9;
    refused(&g, SP_ERR_FORMAT, "no room for the trailer");
    g = f;
    g.x.total++;
    refused(&g, SP_ERR_FORMAT, "total past the pieces");
    g = f;
    g.x.data_len++;
    g.file_size++;
    refused(&g, SP_ERR_FORMAT, "data member longer than the pieces");

    /* Every offset of every piece changed: refused unless the offsets
     * still increase from (0, 0) to the ends. */
    uint64_t *fields[] = {&f.x.p[0].coff, &f.x.p[0].uoff, &f.x.p[1].coff, &f.x.p[1].uoff,
                          &f.x.p[2].coff, &f.x.p[2].uoff, &f.x.p[3].coff, &f.x.p[3].uoff};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        uint64_t keep = *fields[i];
        const uint64_t bad[] = {keep + 1, keep - 1, 0, UINT64_MAX, f.x.p[1].coff, f.x.p[2].uoff};
        for (size_t j = 0; j < sizeof bad / sizeof *bad; j++) {
            if (bad[j] == keep)
                continue;
            *fields[i] = bad[j];
            if (consistent(&f)) {
                uint8_t *b;
                size_t n;
                struct sp_err err;
                ck_assert_int_eq(export(&f, XIDX_GZTOOL, &b, &n, &err), 0);
                check_gztool(&f, b, n);
                free(b);
            } else {
                refused(&f, SP_ERR_FORMAT, "a piece's offset changed");
            }
        }
        *fields[i] = keep;
    }

    g = f;
    g.x.p = NULL;
    refused(&g, SP_ERR_INTERNAL, "no pieces");
    g = f;
    g.x.n = UINT64_MAX;
    refused(&g, SP_ERR_INTERNAL, "n = 2^64 - 1");
    g.x.n = IDX_TABLE_MAX;
    refused(&g, SP_ERR_INTERNAL, "n past what idx_load loads");
    ck_assert_uint_eq(xidx_size(&g.x, XIDX_GZTOOL), 0);
    ck_assert_uint_eq(xidx_size(NULL, XIDX_GZTOOL), 0);

    struct sp_err err = {0};
    ck_assert_int_eq(xidx_write(NULL, 0, XIDX_GZTOOL, 1, &err), -1);
    ck_assert_int_eq(err.kind, SP_ERR_INTERNAL);
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(xidx_write(&f.x, f.file_size, (enum xidx_fmt)9, 1, &err), -1);
    ck_assert_int_eq(err.kind, SP_ERR_INTERNAL);
    fake_free(&f);
}
END_TEST

START_TEST(write_errors_are_reported)
{
    struct fake f;
    fake_many(&f, 5000);
    for (int fmt = XIDX_GZTOOL; fmt <= XIDX_INDEXED_GZIP; fmt++) {
        int fd = open("/dev/full", O_WRONLY);
        ck_assert_int_ge(fd, 0);
        struct sp_err err = {0};
        ck_assert_int_eq(xidx_write(&f.x, f.file_size, (enum xidx_fmt)fmt, fd, &err), -1);
        ck_assert_int_eq(err.kind, SP_ERR_WRITE);
        ck_assert_int_eq(err.errnum, ENOSPC);
        close(fd);

        fd = tmpfile_fd();
        close(fd); /* a descriptor no longer open */
        memset(&err, 0, sizeof err);
        ck_assert_int_eq(xidx_write(&f.x, f.file_size, (enum xidx_fmt)fmt, fd, &err), -1);
        ck_assert_int_eq(err.kind, SP_ERR_WRITE);
        ck_assert_int_eq(err.errnum, EBADF);
    }
    fake_free(&f);
}
END_TEST

/* Written from the fd's position, and the fd left open. */
START_TEST(writes_at_the_current_position)
{
    const uint64_t c[1] = {50}, u[1] = {77};
    struct fake f;
    fake_make(&f, 1, c, u, 12);
    int fd = tmpfile_fd();
    ck_assert_int_eq(write(fd, "abc", 3), 3);
    struct sp_err err = {0};
    ck_assert_int_eq(xidx_write(&f.x, f.file_size, XIDX_GZTOOL, fd, &err), 0);
    ck_assert_int_eq(write(fd, "z", 1), 1);
    struct stat s;
    ck_assert_int_eq(fstat(fd, &s), 0);
    ck_assert_int_eq(s.st_size, 3 + 40 + 2 * 24 + 1);
    close(fd);
    fake_free(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("xidx");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, format_names);
    tcase_add_test(t, small_index_bytes);
    tcase_add_test(t, empty_content);
    tcase_add_test(t, large_index_reads_back);
    tcase_add_test(t, inconsistent_index_is_refused);
    tcase_add_test(t, write_errors_are_reported);
    tcase_add_test(t, writes_at_the_current_position);
    suite_add_tcase(s, t);
    return run_suite(s);
}
