/* check_util.h — what the Check unit tests share: scratch files and memfds
 * holding given bytes, a descriptor's whole content, little-endian fields,
 * and the pseudo-random numbers their contents are made from.
 *
 * Test code only.  A failed system call or allocation fails the test
 * (ck_assert), so nothing here returns an error.  Header only (static
 * inline): each test program is one translation unit and takes what it
 * uses.  The numbers are fixed sequences (fixed seeds): a test makes the
 * same data on every run, and a failure reproduces.  Include it before any
 * system header: it brings config.h (_GNU_SOURCE, for memfd_create).
 */
#ifndef SPIGZ_CHECK_UTIL_H
#define SPIGZ_CHECK_UTIL_H

#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* ---- assertions that cost nothing when they pass ----
 * A passing Check assertion sends "last point reached" to the parent
 * process (a write(2) each): far too slow for loops of millions of checks.
 * EXPECT* test cheaply and call into Check only on failure.  A test whose
 * ck_assert*() calls sit in such loops defines CU_CHEAP_CK_ASSERT before
 * including this header: its ck_assert_msg, and so every ck_assert_*, then
 * does the same (and reports a failure as before). */
#define EXPECT(c)                                                              \
    do {                                                                       \
        if (!(c))                                                              \
            ck_abort_msg("%s:%d: failed: %s", __FILE__, __LINE__, #c);         \
    } while (0)
#define EXPECT_INT(a, b)                                                       \
    do {                                                                       \
        long long a_ = (long long)(a), b_ = (long long)(b);                    \
        if (a_ != b_)                                                          \
            ck_abort_msg("%s:%d: %s == %s failed: %lld != %lld", __FILE__,     \
                         __LINE__, #a, #b, a_, b_);                            \
    } while (0)
#define EXPECT_U(a, b)                                                         \
    do {                                                                       \
        unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b); \
        if (a_ != b_)                                                          \
            ck_abort_msg("%s:%d: %s == %s failed: %llu != %llu", __FILE__,     \
                         __LINE__, #a, #b, a_, b_);                            \
    } while (0)
#ifdef CU_CHEAP_CK_ASSERT
#undef ck_assert_msg
#define ck_assert_msg(expr, ...)                                                      \
    ((expr) ? (void)0                                                                 \
            : _ck_assert_failed(__FILE__, __LINE__, "Assertion '" #expr "' failed", \
                                ##__VA_ARGS__))
#endif

/* Run every test of s: the program's exit status, 0 when none failed, 1
 * otherwise. */
static inline int run_suite(Suite *s)
{
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed == 0 ? 0 : 1;
}

/* A whole file's bytes: p holds n bytes and one more (never NULL). */
struct buf {
    uint8_t *p;
    size_t n;
};

/* ---- files ---- */

/* A new empty file in /tmp, already unlinked: it goes when closed. */
static inline int tmpfile_fd(void)
{
    char path[] = "/tmp/spigz-check-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    unlink(path);
    return fd;
}

/* Write all n bytes of p at off. */
static inline void pwrite_all(int fd, const void *p, size_t n, uint64_t off)
{
    const uint8_t *q = p;
    while (n > 0) {
        ssize_t w = pwrite(fd, q, n, (off_t)off);
        ck_assert_int_gt(w, 0);
        q += w;
        n -= (size_t)w;
        off += (uint64_t)w;
    }
}

/* A scratch file (tmpfile_fd) holding p[0..n). */
static inline int file_with(const uint8_t *p, size_t n)
{
    int fd = tmpfile_fd();
    pwrite_all(fd, p, n, 0);
    return fd;
}

/* A memfd holding p[0..n), its offset at 0. */
static inline int memfd_with(const uint8_t *p, size_t n)
{
    int fd = memfd_create("spigz-check", MFD_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    pwrite_all(fd, p, n, 0);
    return fd;
}

/* The whole content of a file or memfd (its size by fstat), read without
 * moving its offset. */
static inline struct buf slurp(int fd)
{
    struct stat st;
    ck_assert_int_eq(fstat(fd, &st), 0);
    struct buf b = {malloc((size_t)st.st_size + 1), (size_t)st.st_size};
    ck_assert_ptr_nonnull(b.p);
    for (size_t i = 0; i < b.n;) {
        ssize_t r = pread(fd, b.p + i, b.n - i, (off_t)i);
        ck_assert_int_gt(r, 0);
        i += (size_t)r;
    }
    return b;
}

/* ---- little-endian fields of n bytes (1 to 8) ---- */

static inline uint64_t get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static inline void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- pseudo-random numbers ---- */

/* xorshift64 (Marsaglia's 13, 7, 17), from CU_RNG_SEED unless the test
 * defines another before including this, or calls rnd_seed. */
#ifndef CU_RNG_SEED
#define CU_RNG_SEED 0x9e3779b97f4a7c15ull
#endif
static uint64_t cu_rng = CU_RNG_SEED;

static inline void rnd_seed(uint64_t s)
{
    cu_rng = s;
}

static inline uint64_t rnd(void)
{
    cu_rng ^= cu_rng << 13;
    cu_rng ^= cu_rng >> 7;
    cu_rng ^= cu_rng << 17;
    return cu_rng;
}

/* 0 .. n-1 (0 for n = 0). */
static inline uint64_t rnd_below(uint64_t n)
{
    return n == 0 ? 0 : rnd() % n;
}

/* n bytes, each the low byte of the next number. */
static inline void rnd_bytes(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rnd();
}

/* A linear congruential sequence (the C standard's example constants),
 * bits 8..31 of each state: the tests of the index and the output sink
 * make their contents from it, seeded per content. */
static uint32_t cu_lcg = 1;

static inline void lcg_seed(uint32_t s)
{
    cu_lcg = s;
}

static inline uint32_t lcg(void)
{
    cu_lcg = cu_lcg * 1103515245u + 12345u;
    return cu_lcg >> 8;
}

#endif
