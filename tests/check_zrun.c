/* Unit tests for zrun: every zero-run encoding inflated by zlib (and, for the
 * small ones, libdeflate) and compared, after a non-zero byte, followed by more
 * data, and checked for size and alignment; and compared byte for byte with the
 * golden encodings of tests/golden/zrun.txt, which tests/golden/mkgolden.py
 * wrote from doc/FORMAT.md section 1.1 (not from zrun.c): every zero piece
 * already written holds those bytes, and a reader accepts a zero piece only
 * if it is them (FORMAT.md check 7), so a change here that still inflates
 * right would still send every old backup to the slow path. */
#include "check_util.h"

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include "zrun.h"

/* A stored block holding 0xff, so a run that wrongly starts with a
 * distance-1 match would copy 0xff instead of 0. */
static const unsigned char lead[] = {0x00, 0x01, 0x00, 0xfe, 0xff, 0xff};
/* After the run: a stored block "AB", then an empty final fixed block.  If
 * the run did not end byte-aligned and non-final, this would not decode. */
static const unsigned char trail[] = {0x00, 0x02, 0x00, 0xfd, 0xff, 'A', 'B', 0x03, 0x00};

/* Inflate lead + run(n) + trail with zlib, feeding the zero middle from a
 * small page, and check the output: 0xff, n zeros, "AB", end of stream. */
static void inflate_check(uint64_t n)
{
    struct zrun z;
    zrun_encode(n, &z);
    z_stream s;
    memset(&s, 0, sizeof s);
    ck_assert_int_eq(inflateInit2(&s, -15), Z_OK);
    static unsigned char zero_page[1 << 16];
    unsigned char out[1 << 16];
    uint64_t got = 0, zeros_left = z.zeros;
    int phase = 0, rc = Z_OK;
    bool bad = false;
    while (rc == Z_OK) {
        if (s.avail_in == 0) {
            if (phase == 0) { s.next_in = (Bytef *)lead; s.avail_in = sizeof lead; phase = 1; }
            else if (phase == 1) { s.next_in = z.head; s.avail_in = z.head_len; phase = 2; }
            else if (phase == 2 && zeros_left > 0) {
                uInt step = zeros_left > sizeof zero_page ? sizeof zero_page : (uInt)zeros_left;
                s.next_in = zero_page; s.avail_in = step; zeros_left -= step;
            } else if (phase == 2) { s.next_in = z.tail; s.avail_in = z.tail_len; phase = 3; }
            else if (phase == 3) { s.next_in = (Bytef *)trail; s.avail_in = sizeof trail; phase = 4; }
            else break;
        }
        s.next_out = out;
        s.avail_out = sizeof out;
        rc = inflate(&s, Z_NO_FLUSH);
        if (rc == Z_BUF_ERROR)
            rc = Z_OK;
        size_t k = sizeof out - s.avail_out;
        for (size_t i = 0; i < k; i++, got++) {
            unsigned char want = got == 0 ? 0xff : got <= n ? 0 : got == n + 1 ? 'A' : 'B';
            if (out[i] != want)
                bad = true;
        }
    }
    ck_assert_msg(rc == Z_STREAM_END, "n=%llu: inflate rc %d", (unsigned long long)n, rc);
    ck_assert_msg(!bad, "n=%llu: wrong bytes", (unsigned long long)n);
    ck_assert_uint_eq(got, n + 3);
    ck_assert_uint_eq(s.avail_in, 0);
    inflateEnd(&s);
    /* 2 bits per 258 zeros, plus the fixed head and tail. */
    ck_assert_uint_le(zrun_size(&z), n / 1032 + 40);
}

#ifdef HAVE_LIBDEFLATE
/* A second, independent decoder on the whole buffer. */
static void libdeflate_check(uint64_t n)
{
    struct zrun z;
    zrun_encode(n, &z);
    size_t len = sizeof lead + (size_t)zrun_size(&z) + sizeof trail;
    unsigned char *in = calloc(len, 1), *out = malloc((size_t)n + 3);
    memcpy(in, lead, sizeof lead);
    memcpy(in + sizeof lead, z.head, z.head_len);
    memcpy(in + sizeof lead + z.head_len + z.zeros, z.tail, z.tail_len);
    memcpy(in + len - sizeof trail, trail, sizeof trail);
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    size_t outn = 0;
    ck_assert_int_eq(libdeflate_deflate_decompress(d, in, len, out, (size_t)n + 3, &outn),
                     LIBDEFLATE_SUCCESS);
    ck_assert_uint_eq(outn, n + 3);
    ck_assert_int_eq(out[0], 0xff);
    /* One assertion per buffer: Check records every passing assertion. */
    uint64_t i = 1;
    while (i <= n && out[i] == 0)
        i++;
    ck_assert_uint_eq(i, n + 1);
    libdeflate_free_decompressor(d);
    free(in);
    free(out);
}
#else
static void libdeflate_check(uint64_t n) { (void)n; }
#endif

START_TEST(small_runs_exhaustive)
{
    for (uint64_t n = 1; n <= 2200; n++) {
        inflate_check(n);
        libdeflate_check(n);
    }
}
END_TEST

START_TEST(block_and_chunk_edges)
{
    static const uint64_t sizes[] = {4095, 4096, 4097, 65535, 65536, 65537,
                                     258 * 1000, 258 * 1000 + 1, 258 * 1000 + 2,
                                     (1 << 20) - 1, 1 << 20, (1 << 20) + 1,
                                     (64u << 20) + 4095};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        inflate_check(sizes[i]);
        libdeflate_check(sizes[i]);
    }
}
END_TEST

START_TEST(random_sizes)
{
    srand(42);
    for (int i = 0; i < 40; i++)
        inflate_check(1 + (uint64_t)rand() % (4u << 20));
}
END_TEST

START_TEST(one_gib_at_the_bound)
{
    uint64_t n = 1ull << 30;
    inflate_check(n);
    struct zrun z;
    zrun_encode(n, &z);
    /* The project's target: at most 1.05 MB per GiB of zeros. */
    ck_assert_uint_le(zrun_size(&z), 1050000);
}
END_TEST

START_TEST(huge_runs_are_regular)
{
    /* Runs beyond what a test can inflate: adding 4*258 zeros adds exactly
     * one zero byte (four 2-bit matches) and changes neither head nor tail. */
    const uint64_t bases[] = {1ull << 33, (1ull << 40) + 77, (1ull << 62) + 5};
    for (size_t i = 0; i < 3; i++) {
        struct zrun a, b;
        zrun_encode(bases[i], &a);
        zrun_encode(bases[i] + 4 * 258, &b);
        ck_assert_uint_eq(b.zeros, a.zeros + 1);
        ck_assert_uint_eq(a.head_len, b.head_len);
        ck_assert_uint_eq(a.tail_len, b.tail_len);
        ck_assert_mem_eq(a.head, b.head, a.head_len);
        ck_assert_mem_eq(a.tail, b.tail, a.tail_len);
        ck_assert_uint_le(zrun_size(&a), bases[i] / 1032 + 40);
    }
}
END_TEST

START_TEST(empty_run)
{
    struct zrun z;
    zrun_encode(0, &z);
    ck_assert_uint_eq(zrun_size(&z), 0);
}
END_TEST

/* ---- the golden encodings ----
 *
 * Read from the source tree (srcdir, as the shell tests find it; `make check`
 * sets it) rather than embedded as arrays: one copy of the bytes, written by
 * one program and read by both tests/golden.sh and this test, which a second
 * reader's author can read too.  A line: n, the encoding's size, then tokens:
 * hex bytes, or 0*N for N zero bytes (a 1 GiB encoding is ~1 MB of zeros). */

/* Byte i of the encoding (head, zeros, tail), i < zrun_size(z). */
static unsigned zrun_byte(const struct zrun *z, uint64_t i)
{
    if (i < z->head_len)
        return z->head[i];
    if (i < z->head_len + z->zeros)
        return 0;
    return z->tail[i - z->head_len - z->zeros];
}

/* Whether bytes [a, a + n) of the encoding are all zero: the head and tail
 * parts byte by byte, the middle at once. */
static bool zrun_zero_span(const struct zrun *z, uint64_t a, uint64_t n)
{
    uint64_t mid_end = z->head_len + z->zeros;
    for (uint64_t i = a; i < a + n; i++) {
        if (i >= z->head_len && i < mid_end) {
            i = mid_end - 1; /* the middle is zeros by construction */
            continue;
        }
        if (zrun_byte(z, i) != 0)
            return false;
    }
    return true;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Compare one golden line with zrun_encode(n); NULL, or what differs. */
static const char *golden_line(char *line, uint64_t *np)
{
    char *p = line, *end;
    unsigned long long n = strtoull(p, &end, 10), size;
    if (end == p || n == 0)
        return "no length";
    size = strtoull(end, &p, 10);
    if (p == end)
        return "no size";
    *np = n;
    struct zrun z;
    zrun_encode(n, &z);
    if (zrun_size(&z) != size)
        return "size differs";
    uint64_t at = 0;
    for (char *tok = strtok(p, " \n"); tok != NULL; tok = strtok(NULL, " \n")) {
        if (tok[0] == '0' && tok[1] == '*') {
            unsigned long long run = strtoull(tok + 2, &end, 10);
            if (*end != '\0' || run > size - at)
                return "bad zero run";
            if (!zrun_zero_span(&z, at, run))
                return "bytes differ in a run of zeros";
            at += run;
            continue;
        }
        size_t len = strlen(tok);
        if (len % 2 != 0 || len / 2 > size - at)
            return "bad hex";
        for (size_t i = 0; i < len; i += 2) {
            int hi = hexval(tok[i]), lo = hexval(tok[i + 1]);
            if (hi < 0 || lo < 0)
                return "bad hex";
            if (zrun_byte(&z, at++) != (unsigned)(hi << 4 | lo))
                return "bytes differ";
        }
    }
    return at == size ? NULL : "the line is shorter than its size";
}

START_TEST(golden_encodings)
{
    const char *dir = getenv("srcdir");
    char path[4096], line[8192];
    snprintf(path, sizeof path, "%s/tests/golden/zrun.txt", dir != NULL ? dir : ".");
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s: cannot open (srcdir=%s)", path, dir != NULL ? dir : "unset");
    unsigned lines = 0;
    bool one = false, gib = false, max = false;
    while (fgets(line, sizeof line, f) != NULL) {
        ck_assert_msg(strchr(line, '\n') != NULL, "%s: a line longer than %zu bytes", path,
                      sizeof line);
        if (line[0] == '#')
            continue;
        uint64_t n = 0;
        const char *why = golden_line(line, &n);
        ck_assert_msg(why == NULL,
                      "zrun_encode(%llu) is not the golden encoding (%s): the format changed; "
                      "see tests/golden/README.md", (unsigned long long)n, why);
        one |= n == 1;
        gib |= n == 1ull << 30;
        max |= n == 1ull << 40;
        lines++;
    }
    fclose(f);
    /* the file is whole: it has its ends and the size spigz writes most */
    ck_assert_uint_ge(lines, 20);
    ck_assert(one && gib && max);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("zrun");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 600);
    tcase_add_test(t, small_runs_exhaustive);
    tcase_add_test(t, block_and_chunk_edges);
    tcase_add_test(t, random_sizes);
    tcase_add_test(t, one_gib_at_the_bound);
    tcase_add_test(t, huge_runs_are_regular);
    tcase_add_test(t, empty_run);
    tcase_add_test(t, golden_encodings);
    suite_add_tcase(s, t);
    return run_suite(s);
}
