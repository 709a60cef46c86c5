/* Unit tests for the scout and the reader it feeds: a unit is marked only
 * when all its bytes are zero, the reader's runs are the same blocks with and
 * without a scout, and the reader really skips what the scout marked. */
#include "check_util.h"

#include <check.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "input.h"
#include "reader.h"
#include "scan.h"
#include "scout.h"

#define U SCOUT_UNIT
#define NUNITS 100u
#define TAIL 3000u /* a short last unit, not a whole block */
#define FSIZE ((uint64_t)NUNITS * U + TAIL)

static char path[64];
static uint8_t *want; /* the file's bytes */

/* What unit u holds: 'z' written zeros, 'h' a hole, 'd' random data,
 * 'l' zeros but the last byte, 'f' zeros but the first byte, 'm' zeros
 * but one byte in the middle of a block. */
static char layout(unsigned u)
{
    if (u < 10)
        return 'd'; /* more than the reader's 8 windows: it stops here */
    if (u == 41)
        return 'l';
    if (u == 42)
        return 'f';
    if (u == 61 || u == 62 || u == 63)
        return 'h';
    if (u >= 70 && u < 90)
        return "zmzdzz"[u % 6];
    return 'z';
}

static void make_file(void)
{
    strcpy(path, "/tmp/check_scout.XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    want = calloc(1, FSIZE);
    ck_assert_ptr_nonnull(want);
    srand(7);
    for (unsigned u = 0; u < NUNITS; u++) {
        uint8_t *p = want + (uint64_t)u * U;
        switch (layout(u)) {
        case 'd':
            for (size_t i = 0; i < U; i++)
                p[i] = (uint8_t)rand();
            break;
        case 'l': p[U - 1] = 1; break;
        case 'f': p[0] = 1; break;
        case 'm': p[U / 2 + 77] = 0x80; break;
        }
        if (layout(u) != 'h')
            ck_assert_int_eq(pwrite(fd, p, U, (off_t)u * U), (ssize_t)U);
    }
    ck_assert_int_eq(pwrite(fd, want + (uint64_t)NUNITS * U, TAIL, (off_t)NUNITS * U),
                     (ssize_t)TAIL);
    close(fd);
}

static bool unit_is_zero(uint64_t u)
{
    uint64_t off = u * U, len = FSIZE - off < U ? FSIZE - off : U;
    return scan_is_zero(want + off, (size_t)len);
}

static void setup(void) { make_file(); }
static void teardown(void)
{
    unlink(path);
    free(want);
}

/* A scout over the file, its pages read once (the scout scans only cached
 * pages), the reader left at 0, once it has done all it can. */
static struct scout *idle_scout(int *fd)
{
    *fd = open(path, O_RDONLY);
    ck_assert_int_ge(*fd, 0);
    static uint8_t sink[1 << 16];
    while (read(*fd, sink, sizeof sink) > 0)
        continue;
    struct scout *s = scout_start(*fd, 0, FSIZE, true);
    ck_assert_ptr_nonnull(s);
    uint64_t next;
    ck_assert_uint_eq(scout_zero(s, 0, FSIZE, &next), 0); /* unit 0 holds data */
    scout_wait_idle(s);
    return s;
}

/* The scout, left alone with the reader at 0, marks the units from SCOUT_GAP
 * on: never one holding a byte, and (its reads all cached) every zero one
 * but the holes, which the reader skips itself. */
START_TEST(marks_only_zero_units)
{
    int fd;
    struct scout *s = idle_scout(&fd);
    unsigned misses = scout_misses(s), marked = 0;
    for (unsigned u = 0; u <= NUNITS; u++) {
        if (scout_peek(s, u)) {
            ck_assert_msg(unit_is_zero(u), "unit %u holds data but was marked", u);
            marked++;
        } else if (misses == 0 && u >= SCOUT_GAP && unit_is_zero(u) && layout(u) != 'h') {
            ck_abort_msg("zero unit %u was not marked", u);
        }
    }
    ck_assert_uint_eq(marked, scout_marked(s));
    ck_assert_uint_gt(marked, 0);
    scout_stop(s);
    close(fd);
}
END_TEST

/* scout_zero() answers from the reader's position: a marked unit gives the
 * bytes to its end (or to the run of marked units' end, or limit); an
 * unmarked one gives 0 and where the next marked unit starts. */
START_TEST(zero_answers)
{
    int fd;
    struct scout *s = idle_scout(&fd);
    uint64_t next;
    ck_assert_msg(scout_peek(s, 45), "unit 45 (zero, past the gap) not marked");
    ck_assert_msg(!scout_peek(s, 41), "unit 41 holds a byte");
    /* Units 43..60 are marked zero (42 holds a byte): from inside 43 the
     * run ends at unit 61, a hole the scout leaves to the reader. */
    uint64_t pos = 43ull * U + 5 * SCAN_BLOCK;
    ck_assert_uint_eq(scout_zero(s, pos, FSIZE, &next), 61ull * U - pos);
    ck_assert_uint_eq(scout_zero(s, pos, 50ull * U, &next), 50ull * U - pos);
    /* From 42 (data) the next marked unit is 43. */
    next = 0;
    ck_assert_uint_eq(scout_zero(s, 42ull * U, FSIZE, &next), 0);
    ck_assert_uint_eq(next, 43ull * U);
    next = 0;
    ck_assert_uint_eq(scout_zero(s, 42ull * U, 42ull * U + 100, &next), 0);
    ck_assert_uint_eq(next, 42ull * U + 100);
    scout_stop(s);
    close(fd);
}
END_TEST

/* Read the file through the reader and check every run against the bytes:
 * data runs hold exactly the file's bytes, zero runs only zero blocks, and
 * they tile the file.  Returns bytes the scout let the reader skip. */
static uint64_t read_all(bool wait_for_scout)
{
    int fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    struct in_src in;
    struct sp_err err = {0};
    ck_assert_int_eq(in_open(&in, fd, U, &err), 0);
    struct rd *r = rd_start(&in, 8, &err);
    ck_assert_ptr_nonnull(r);
    if (wait_for_scout) {
        ck_assert_ptr_nonnull(in.scout);
        scout_wait_idle(in.scout); /* the reader is held by 8 data windows */
    }
    struct rd_run run;
    uint64_t pos = 0;
    int rc;
    while ((rc = rd_next(r, &run, &err)) > 0) {
        ck_assert_uint_le(pos + run.len, FSIZE);
        if (run.data != NULL)
            ck_assert_msg(memcmp(run.data, want + pos, (size_t)run.len) == 0,
                          "data run at %llu differs", (unsigned long long)pos);
        else
            ck_assert_msg(scan_is_zero(want + pos, (size_t)run.len),
                          "zero run at %llu holds data", (unsigned long long)pos);
        pos += run.len;
    }
    ck_assert_int_eq(rc, 0);
    ck_assert_uint_eq(pos, FSIZE);
    rd_stop(r);
    uint64_t skipped = in.scout_bytes;
    in_close(&in);
    close(fd);
    return skipped;
}

START_TEST(reader_skips_marked_units)
{
    uint64_t skipped = read_all(true);
    ck_assert_uint_gt(skipped, 0);
}
END_TEST

START_TEST(reader_without_waiting)
{
    for (int i = 0; i < 5; i++)
        read_all(false);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("scout");
    TCase *t = tcase_create("scout");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 60);
    tcase_add_test(t, marks_only_zero_units);
    tcase_add_test(t, zero_answers);
    tcase_add_test(t, reader_skips_marked_units);
    tcase_add_test(t, reader_without_waiting);
    suite_add_tcase(s, t);
    return run_suite(s);
}
