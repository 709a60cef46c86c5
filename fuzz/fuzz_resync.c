/* fuzz_resync.c — libFuzzer harness for the block finder (resync.h) and
 * the salvage path of the sequential decoder (unz.h, opts.salvage).
 *
 * Each input is
 *   1. read as deflate at a few bit positions drawn from it: rs_header()
 *      must give zlib's verdict (inflate with Z_TREES) and end bit, and the
 *      walker zlib's verdict, length and end (inflate with a 32 KiB
 *      dictionary, so that every distance is legal), whenever zlib decodes
 *      within 64 MiB;
 *   2. searched for blocks (rs_search, members too): the search ends, and
 *      every hit confirms again and starts a block that zlib decodes to its
 *      end without an error;
 *   3. decoded by unz_run from a memfd, with salvage and without, into a
 *      discard sink.  With salvage: 0, or -1 with SP_ERR_FORMAT (not gzip)
 *      or SP_ERR_NOMEM, never a data error; the ranges sorted, disjoint,
 *      not empty, a range of unknown end last; when the plain decode
 *      succeeds without trailing garbage, salvage finds nothing and outputs
 *      as much (intact input is never damaged by salvage); when salvage
 *      finds nothing, resumed nowhere and has nothing unverified or
 *      repaired, the plain decode succeeds too.
 *
 * Besides these, the sanitizers catch memory errors, leaks and undefined
 * behaviour; libFuzzer's -timeout catches a search that does not end.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "osink.h"
#include "resync.h"
#include "unz.h"

#define CHECK(cond)                                                               \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "fuzz_resync: check failed at line %d: %s\n", __LINE__, \
                    #cond);                                                       \
            abort();                                                              \
        }                                                                         \
    } while (0)

#define ZLIB_CAP ((uint64_t)64 << 20) /* zlib output beyond this: no verdict */

static uint8_t zero_dict[RS_WIN];

static int memfd_with(const uint8_t *p, size_t n)
{
    int fd = memfd_create("fuzz-resync", MFD_CLOEXEC);
    CHECK(fd >= 0);
    for (size_t i = 0; i < n;) {
        ssize_t w = write(fd, p + i, n - i);
        CHECK(w > 0);
        i += (size_t)w;
    }
    CHECK(lseek(fd, 0, SEEK_SET) == 0);
    return fd;
}

static void z_start(z_stream *z, const uint8_t *p, size_t n, uint64_t bit)
{
    memset(z, 0, sizeof *z);
    CHECK(inflateInit2(z, -15) == Z_OK);
    size_t q = (size_t)(bit >> 3);
    unsigned k = (unsigned)(bit & 7);
    if (k != 0)
        CHECK(inflatePrime(z, (int)(8 - k), p[q] >> k) == Z_OK);
    CHECK(inflateSetDictionary(z, zero_dict, sizeof zero_dict) == Z_OK);
    z->next_in = (Bytef *)p + q + (k != 0);
    z->avail_in = (uInt)(n - q - (k != 0));
}

/* 1: the header, then the walk, at bit `bit`. */
static void check_at(const uint8_t *p, size_t n, uint64_t bit)
{
    static uint8_t out[1 << 16];
    z_stream z;
    z_start(&z, p, n, bit);
    z.next_out = out;
    z.avail_out = sizeof out;
    int rc = inflate(&z, Z_TREES);
    struct rs_hdr h;
    enum rs_kind k = rs_header(p, n, bit, &h);
    if (n - (bit >> 3) >= RS_HDR_MAX) { /* then neither runs short */
        if (rc == Z_DATA_ERROR) {
            CHECK(k == RS_BAD);
        } else {
            CHECK(z.data_type & 256);
            CHECK(k == RS_STORED || k == RS_FIXED || k == RS_DYNAMIC);
            CHECK(h.data_bit == 8 * (uint64_t)(n - z.avail_in) - (unsigned)(z.data_type & 7));
        }
    }
    inflateEnd(&z);

    z_start(&z, p, n, bit);
    uint64_t total = 0;
    int zv = -1; /* -1: no verdict (too long) */
    while (total < ZLIB_CAP) {
        z.next_out = out;
        z.avail_out = sizeof out;
        rc = inflate(&z, Z_NO_FLUSH);
        total += sizeof out - z.avail_out;
        if (rc == Z_STREAM_END) {
            zv = 1;
            break;
        }
        if (rc != Z_OK || (z.avail_in == 0 && z.avail_out != 0)) {
            zv = 0;
            break;
        }
    }
    uint64_t zend = 8 * (uint64_t)(n - z.avail_in);
    inflateEnd(&z);
    if (zv < 0)
        return;
    struct rs_walk w;
    rs_walk_start(&w, bit, 0);
    enum rs_ev ev;
    while ((ev = rs_walk_run(&w, p, n, true)) == RS_EV_BLOCK)
        ;
    CHECK((ev == RS_EV_END) == (zv == 1));
    if (zv == 1) {
        CHECK(w.out == total);
        CHECK(((w.bit + 7) & ~(uint64_t)7) == zend);
    }
}

/* Whether zlib decodes the block at `bit` to its end. */
static bool z_block_ok(const uint8_t *p, size_t n, uint64_t bit)
{
    static uint8_t out[1 << 16];
    z_stream z;
    z_start(&z, p, n, bit);
    bool ok = false;
    for (uint64_t total = 0; total < ZLIB_CAP;) {
        z.next_out = out;
        z.avail_out = sizeof out;
        int rc = inflate(&z, Z_BLOCK);
        total += sizeof out - z.avail_out;
        if (rc == Z_STREAM_END || (rc == Z_OK && (z.data_type & 128))) {
            ok = true;
            break;
        }
        if (rc != Z_OK && rc != Z_BUF_ERROR)
            break;
        if (z.avail_in == 0 && z.avail_out != 0)
            break;
    }
    if (!ok && z.total_out >= ZLIB_CAP)
        ok = true; /* no verdict */
    inflateEnd(&z);
    return ok;
}

/* 2: the search. */
static void check_search(const uint8_t *p, size_t n)
{
    struct rs_search s = {.limit = 8u << 20, .budget = (uint64_t)64 << 23, .members = true};
    s.look = (size_t)(s.limit / 8) + RS_HDR_MAX + RS_FINAL_LOOK;
    uint64_t from = 0, at;
    for (int hits = 0; hits < 16; hits++) {
        enum rs_found f = rs_search(&s, p, n, true, from, &at);
        if (f == RS_FOUND_NONE || f == RS_FOUND_GIVEUP)
            break;
        CHECK(at >= from && at < 8 * (uint64_t)n);
        uint64_t start = at, work = 0;
        if (f == RS_FOUND_MEMBER) {
            CHECK((at & 7) == 0);
            size_t hl = rs_member(p, n, (size_t)(at >> 3));
            CHECK(hl > 0);
            start = at + 8 * (uint64_t)hl;
        }
        CHECK(rs_confirm(p, n, start, true, s.limit, &work) == RS_YES);
        CHECK(z_block_ok(p, n, start));
        from = at + 1;
    }
}

/* 3: salvage against the plain decode. */
static void check_salvage(const uint8_t *p, size_t n)
{
    struct sp_err err = {0};
    struct osink o;
    int fd = memfd_with(p, n);
    CHECK(osink_open(&o, -1, OSINK_SPARSE_AUTO, &err) == 0);
    struct unz_opts uo = {.threads = 1, .salvage = true};
    struct unz_stats s;
    int src = unz_run(fd, &o, &uo, &s, &err);
    if (src != 0)
        CHECK(err.kind == SP_ERR_FORMAT || err.kind == SP_ERR_NOMEM);
    CHECK((s.nbad == 0) == (s.bad == NULL));
    for (size_t i = 0; i < s.nbad; i++) {
        CHECK(s.bad[i].len > 0 && s.bad[i].len <= UINT64_MAX - s.bad[i].off);
        if (i > 0)
            CHECK(s.bad[i].off > s.bad[i - 1].off + s.bad[i - 1].len);
    }
    if (s.shifted)
        CHECK(s.nbad > 0 && s.bad[s.nbad - 1].len == UINT64_MAX - s.bad[s.nbad - 1].off &&
              s.bad[s.nbad - 1].off <= s.shifted_at);

    memset(&err, 0, sizeof err);
    CHECK(osink_open(&o, -1, OSINK_SPARSE_AUTO, &err) == 0);
    CHECK(lseek(fd, 0, SEEK_SET) == 0);
    struct unz_opts po = {.threads = 1};
    struct unz_stats ps;
    int prc = unz_run(fd, &o, &po, &ps, &err);
    CHECK(ps.bad == NULL && ps.nbad == 0);
    /* intact (trailing garbage aside: salvage may find a member in it) */
    bool clean = s.nbad == 0 && s.resyncs == 0 && !s.shifted && s.unverified == 0 &&
                 s.repaired == 0;
    if (prc == 0 && !ps.trailing_garbage) {
        CHECK(src == 0 && clean);
        CHECK(s.out_bytes == ps.out_bytes);
    }
    if (src == 0 && clean)
        CHECK(prc == 0);
    free(s.bad);
    close(fd);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < size && i < 64; i++)
        h = (h ^ data[i]) * 1099511628211ull;
    for (int k = 0; k < 6; k++) {
        uint64_t bit = k < 2 ? (uint64_t)k * 3 : (h >> (8 * k)) % (8 * (uint64_t)size);
        check_at(data, size, bit);
    }
    check_search(data, size);
    check_salvage(data, size);
    return 0;
}
