/* Unit tests for scan: zero detection, and the segmenter's chunking checked
 * against a direct model of the rules in scan.h, for many layouts fed in
 * many ways (one call, 4 KiB windows, random windows, holes, and lengths
 * only, as the estimate feeds it). */
#include "check_util.h"

#include <check.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "scan.h"

#define CHUNK (64u << 10)
#define ZMIN (16u << 10)
#define ZMAX (64u << 10)
#define MAXEV 100000

struct ev {
    bool zero;
    uint64_t len;
};

/* ---- the model: the rules of scan.h applied to a whole buffer ---- */

/* --rsyncable in the model: the gear values come from the code under test
 * (they are constants of the format), the rule is written out here. */
static bool model_rs;
static struct seg_rsync model_tab;

/* The data chunks of p[a, b): every CHUNK bytes, or (model_rs) after the
 * first byte, at least CHUNK/4 into a chunk, where the gear hash of the
 * chunk's bytes so far has its top model_tab.bits bits zero. */
static void model_data(const uint8_t *p, size_t a, size_t b, struct ev *out, int *ne)
{
    size_t c = a;
    while (c < b) {
        size_t end = b - c < CHUNK ? b : c + CHUNK;
        if (model_rs) {
            uint64_t h = 0;
            for (size_t i = c; i < end; i++) {
                h = (h << 1) + model_tab.gear[p[i]];
                if (i + 1 - c >= CHUNK / 4 && (h >> (64 - model_tab.bits)) == 0) {
                    end = i + 1;
                    break;
                }
            }
        }
        out[(*ne)++] = (struct ev){false, end - c};
        c = end;
    }
}

static int model(const uint8_t *p, size_t n, struct ev *out)
{
    int ne = 0;
    size_t i = 0, data_start = 0;
    bool in_data = false;
    while (i < n) {
        /* the maximal run of zero blocks at i */
        size_t j = i;
        while (j < n) {
            size_t b = n - j < SCAN_BLOCK ? n - j : SCAN_BLOCK;
            bool z = true;
            for (size_t k = 0; k < b && z; k++)
                z = p[j + k] == 0;
            if (!z)
                break;
            j += b;
        }
        if (j - i >= ZMIN) {
            if (in_data)
                model_data(p, data_start, i, out, &ne);
            in_data = false;
            for (size_t z = i; z < j; z += ZMAX)
                out[ne++] = (struct ev){true, j - z < ZMAX ? j - z : ZMAX};
            i = j;
            continue;
        }
        if (!in_data) {
            in_data = true;
            data_start = i;
        }
        i = j == i ? i + (n - i < SCAN_BLOCK ? n - i : SCAN_BLOCK) : j;
    }
    if (in_data)
        model_data(p, data_start, n, out, &ne);
    return ne;
}

/* ---- a recording sink that also checks the bytes it receives ---- */

struct rec {
    const uint8_t *src;
    uint64_t pos;
    struct ev ev[MAXEV];
    int ne;
    uint8_t *buf;
    int outstanding; /* buffers got but not handed back */
    bool bad_bytes;
    bool blank;      /* seg_blank: data buffers hold no bytes to check */
};

static uint8_t *rec_get(void *ctx)
{
    struct rec *r = ctx;
    r->outstanding++;
    return r->buf;
}

static int rec_data(void *ctx, uint8_t *buf, size_t len)
{
    struct rec *r = ctx;
    r->outstanding--;
    if (!r->blank && memcmp(buf, r->src + r->pos, len) != 0)
        r->bad_bytes = true;
    r->pos += len;
    r->ev[r->ne++] = (struct ev){false, len};
    return 0;
}

static int rec_zero(void *ctx, uint64_t len)
{
    struct rec *r = ctx;
    for (uint64_t i = 0; i < len; i++)
        if (r->src[r->pos + i] != 0)
            r->bad_bytes = true;
    r->pos += len;
    r->ev[r->ne++] = (struct ev){true, len};
    return 0;
}

enum feed { FEED_ONE, FEED_4K, FEED_RANDOM, FEED_HOLES, FEED_BLANK };

/* The estimate's way: blocks classified by the caller, data given as
 * lengths only (seg_blank), runs of one class merged. */
static void feed_blank(struct seg *s, const uint8_t *p, size_t n)
{
    for (size_t i = 0, len; i < n; i += len) {
        bool zero;
        len = scan_run(p + i, n - i, &zero);
        ck_assert_int_eq(zero ? seg_zeros(s, len) : seg_blank(s, len), 0);
    }
}

/* Present p[0..n) to a segmenter in the given way; compare with the model. */
static void run_one(const uint8_t *p, size_t n, enum feed how, unsigned seed)
{
    static struct rec r;
    static struct ev want[MAXEV];
    memset(&r, 0, sizeof r);
    r.src = p;
    r.buf = malloc(CHUNK);
    struct seg s;
    struct seg_sink sink = {&r, rec_get, rec_data, rec_zero};
    seg_init(&s, CHUNK, ZMIN, ZMAX, &sink);
    struct seg_rsync rs;
    if (model_rs)
        seg_rsyncable(&s, &rs);
    srand(seed);
    r.blank = how == FEED_BLANK;
    if (how == FEED_BLANK)
        feed_blank(&s, p, n);
    size_t i = how == FEED_BLANK ? n : 0;
    while (i < n) {
        size_t w = n - i;
        if (how == FEED_4K)
            w = SCAN_BLOCK;
        else if (how != FEED_ONE)
            w = SCAN_BLOCK * (1 + (size_t)rand() % 40);
        if (w > n - i)
            w = n - i;
        bool hole = how == FEED_HOLES && rand() % 2 == 0;
        for (size_t k = 0; hole && k < w; k++)
            hole = p[i + k] == 0;
        ck_assert_int_eq(hole ? seg_zeros(&s, w) : seg_feed(&s, p + i, w), 0);
        i += w;
    }
    ck_assert_int_eq(seg_end(&s), 0);
    int nw = model(p, n, want);
    ck_assert_int_eq(r.ne, nw);
    for (int k = 0; k < nw; k++) {
        ck_assert_int_eq(r.ev[k].zero, want[k].zero);
        ck_assert_uint_eq(r.ev[k].len, want[k].len);
    }
    ck_assert(!r.bad_bytes);
    ck_assert_uint_eq(r.pos, n);
    ck_assert_int_eq(r.outstanding, 0);
    free(r.buf);
}

/* Build a layout: alternating data and zero stretches with lengths around
 * the interesting edges (4 KiB, zmin, chunk, zmax). */
static size_t make_layout(uint8_t *p, size_t cap, unsigned seed)
{
    static const size_t lens[] = {1, 4095, 4096, 4097, ZMIN - SCAN_BLOCK, ZMIN - 1,
                                  ZMIN, ZMIN + 1, ZMIN + SCAN_BLOCK, CHUNK - 1, CHUNK,
                                  CHUNK + 1, ZMAX * 2 + SCAN_BLOCK, 3 * CHUNK + 5};
    srand(seed);
    size_t n = 0;
    bool zero = rand() % 2;
    while (n < cap / 2) {
        size_t len = lens[(size_t)rand() % (sizeof lens / sizeof lens[0])];
        if (n + len > cap)
            break;
        for (size_t k = 0; k < len; k++)
            p[n + k] = zero ? 0 : (uint8_t)(1 + rand() % 255);
        /* Sometimes a data stretch with a lone zero block inside. */
        if (!zero && len > 3 * SCAN_BLOCK && rand() % 3 == 0)
            memset(p + n + SCAN_BLOCK, 0, SCAN_BLOCK);
        n += len;
        zero = !zero;
    }
    return n;
}

START_TEST(is_zero_every_size_and_position)
{
    uint8_t buf[SCAN_BLOCK + 64];
    memset(buf, 0, sizeof buf);
    for (size_t n = 0; n <= SCAN_BLOCK + 64; n++) {
        ck_assert(scan_is_zero(buf, n));
        /* one non-zero byte: first, last, and a few in between */
        size_t pos[] = {0, n / 3, n / 2, n - 1};
        bool ok = true;
        for (int k = 0; k < 4 && n > 0; k++) {
            buf[pos[k]] = 0x80;
            ok = ok && !scan_is_zero(buf, n);
            buf[pos[k]] = 0;
        }
        ck_assert(ok);
    }
    /* every position of whole blocks and of a block plus a tail, in every
     * lane and word of the vector loop, with the lowest and highest bit */
    const size_t sizes[] = {256, 300, SCAN_BLOCK, SCAN_BLOCK + 64};
    for (int k = 0; k < 4; k++)
        for (size_t i = 0; i < sizes[k]; i++)
            for (int bit = 0; bit < 8; bit += 7) {
                buf[i] = (uint8_t)(1u << bit);
                ck_assert_msg(!scan_is_zero(buf, sizes[k]), "byte %zu of %zu", i, sizes[k]);
                buf[i] = 0;
            }
    /* a misaligned start */
    ck_assert(scan_is_zero(buf + 1, SCAN_BLOCK));
}
END_TEST

START_TEST(layouts_all_feeds)
{
    size_t cap = 4u << 20;
    uint8_t *p = malloc(cap);
    for (unsigned seed = 1; seed <= 60; seed++) {
        size_t n = make_layout(p, cap, seed);
        for (int how = FEED_ONE; how <= FEED_BLANK; how++)
            run_one(p, n, (enum feed)how, seed * 7 + (unsigned)how);
    }
    free(p);
}
END_TEST

START_TEST(rsyncable_layouts)
{
    /* the content-defined ends, against the model, fed every way but
     * seg_blank (which has no bytes to look at) */
    struct seg dummy;
    struct seg_sink none = {NULL, NULL, NULL, NULL};
    seg_init(&dummy, CHUNK, ZMIN, ZMAX, &none);
    seg_rsyncable(&dummy, &model_tab);
    ck_assert_uint_gt(model_tab.bits, 8);
    model_rs = true;
    size_t cap = 4u << 20;
    uint8_t *p = malloc(cap);
    unsigned cuts = 0;
    for (unsigned seed = 1; seed <= 40; seed++) {
        size_t n = make_layout(p, cap, seed);
        for (int how = FEED_ONE; how < FEED_BLANK; how++)
            run_one(p, n, (enum feed)how, seed * 5 + (unsigned)how);
        static struct ev ev[MAXEV];
        int ne = model(p, n, ev);
        for (int k = 0; k < ne; k++)
            cuts += !ev[k].zero && ev[k].len < CHUNK;
    }
    ck_assert_uint_gt(cuts, 100); /* content-defined ends do happen */
    free(p);
    model_rs = false;
}
END_TEST

START_TEST(rsyncable_resynchronises)
{
    /* bytes inserted into a long data stretch change only the chunks around
     * the insertion: the chunks before are the same, and after the first
     * content-defined end past it they are the same again */
    model_rs = true;
    struct seg dummy;
    struct seg_sink none = {NULL, NULL, NULL, NULL};
    seg_init(&dummy, CHUNK, ZMIN, ZMAX, &none);
    seg_rsyncable(&dummy, &model_tab);
    size_t n = 3u << 20, at = n / 2, ins = 333;
    uint8_t *a = malloc(n), *b = malloc(n + ins);
    srand(11);
    for (size_t i = 0; i < n; i++)
        a[i] = (uint8_t)(1 + rand() % 255);
    memcpy(b, a, at);
    for (size_t i = 0; i < ins; i++)
        b[at + i] = (uint8_t)(1 + rand() % 255);
    memcpy(b + at + ins, a + at, n - at);
    static struct ev ea[MAXEV], eb[MAXEV];
    int na = model(a, n, ea), nb = model(b, n + ins, eb);
    run_one(a, n, FEED_RANDOM, 1);
    run_one(b, n + ins, FEED_RANDOM, 2);
    /* the same chunks from each end, but for a few around the change */
    int same_head = 0, same_tail = 0;
    while (same_head < na && same_head < nb && ea[same_head].len == eb[same_head].len)
        same_head++;
    while (same_tail < na && same_tail < nb &&
           ea[na - 1 - same_tail].len == eb[nb - 1 - same_tail].len)
        same_tail++;
    ck_assert_int_gt(na, 40);
    ck_assert_int_le(na - same_head - same_tail, 3);
    free(a);
    free(b);
    model_rs = false;
}
END_TEST

START_TEST(edge_sizes)
{
    /* Sizes N-1, N, N+1 around the block and the chunk, all data, all zero,
     * and data followed by zeros. */
    static const size_t sizes[] = {0, 1, SCAN_BLOCK - 1, SCAN_BLOCK, SCAN_BLOCK + 1,
                                   ZMIN - 1, ZMIN, ZMIN + 1, CHUNK - 1, CHUNK, CHUNK + 1,
                                   2 * CHUNK - 1, 2 * CHUNK, 2 * CHUNK + 1};
    uint8_t *p = malloc(4 * CHUNK);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        for (int kind = 0; kind < 3; kind++) {
            for (size_t k = 0; k < n; k++)
                p[k] = kind == 1 || (kind == 2 && k >= n / 2) ? 0 : (uint8_t)(k % 251 + 1);
            for (int how = FEED_ONE; how <= FEED_BLANK; how++)
                run_one(p, n, (enum feed)how, (unsigned)(i * 3 + kind));
        }
    }
    free(p);
}
END_TEST

START_TEST(zero_run_threshold)
{
    /* data | zeros of zmin - 4 KiB | data: one data stretch (zeros inside);
     * data | zeros of zmin | data: split around a zero run. */
    uint8_t *p = malloc(ZMIN + 2 * SCAN_BLOCK);
    memset(p, 0, ZMIN + 2 * SCAN_BLOCK);
    memset(p, 7, SCAN_BLOCK);
    memset(p + ZMIN, 7, SCAN_BLOCK); /* zeros: [4K, ZMIN) = ZMIN - 4K */
    run_one(p, ZMIN + SCAN_BLOCK, FEED_ONE, 0);
    memset(p + ZMIN, 0, SCAN_BLOCK);
    memset(p + ZMIN + SCAN_BLOCK, 7, SCAN_BLOCK); /* zeros: [4K, ZMIN + 4K) = ZMIN */
    run_one(p, ZMIN + 2 * SCAN_BLOCK, FEED_4K, 0);
    free(p);
}
END_TEST

/* A sink that stops: every call after the first chunk fails, and the
 * segmenter must pass the failure up without calling again. */
static int stop_calls;
static uint8_t stop_buf[CHUNK];
static uint8_t *stop_get(void *ctx) { (void)ctx; stop_calls++; return stop_buf; }
static int stop_data(void *ctx, uint8_t *b, size_t n) { (void)ctx; (void)b; (void)n; stop_calls++; return -1; }
static int stop_zero(void *ctx, uint64_t n) { (void)ctx; (void)n; stop_calls++; return -1; }

START_TEST(sink_failure_propagates)
{
    uint8_t *p = calloc(4 * CHUNK, 1);
    memset(p, 1, 2 * CHUNK);
    struct seg s;
    struct seg_sink sink = {NULL, stop_get, stop_data, stop_zero};
    seg_init(&s, CHUNK, ZMIN, ZMAX, &sink);
    stop_calls = 0;
    ck_assert_int_eq(seg_feed(&s, p, 4 * CHUNK), -1);
    ck_assert_int_eq(stop_calls, 2); /* one get, one failing data */
    seg_init(&s, CHUNK, ZMIN, ZMAX, &sink);
    stop_calls = 0;
    ck_assert_int_eq(seg_zeros(&s, ZMAX), -1);
    ck_assert_int_eq(stop_calls, 1);
    free(p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("scan");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, is_zero_every_size_and_position);
    tcase_add_test(t, layouts_all_feeds);
    tcase_add_test(t, edge_sizes);
    tcase_add_test(t, rsyncable_layouts);
    tcase_add_test(t, rsyncable_resynchronises);
    tcase_add_test(t, zero_run_threshold);
    tcase_add_test(t, sink_failure_propagates);
    suite_add_tcase(s, t);
    return run_suite(s);
}
