/* Unit tests for idx: the piece index in trailing empty gzip members
 * (doc/FORMAT.md sections 2-4).
 *
 * Real spigz files are made with cmp_run on generated content (small ones,
 * and one with hundreds of pieces); the index idx_load returns is checked
 * against an independent reading of the file written here from FORMAT.md,
 * and each piece is checked against the content by inflating it alone
 * (piece bytes + 03 00, zlib raw).  An independent writer (also here) makes
 * the crafted indexes: any split into members, non-minimal LEB128, out of
 * range lengths, wrong counts.  The spill path is driven through idx_w_add
 * directly with a fake data member.  Then corruption: every footer byte,
 * every byte of the first index member's framing, every payload byte, the
 * data member's header and trailer, with and without the CRCs fixed up;
 * truncations at every offset of the trailing region; a data member not at
 * offset 0 and bytes after the footer.  idx_load must answer 0 (with a
 * reason when the footer is a spigz footer, unless its sizes say the data
 * member comes after other members: a concatenation) or 1 with pieces that
 * describe the file exactly, never -1 (no read error on a regular file),
 * and never read out of bounds (run under ASan). */
/* millions of checks: ck_assert*() that cost nothing when they pass */
#define CU_CHEAP_CK_ASSERT
#include "check_util.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "compress.h"
#include "idx.h"
#include "mf.h"
#include "idx_w.h"
#include "out.h"
#include "zrun.h"

/* ---- content and compression ---- */

/* Data runs of [dmin, dmax) bytes (text-like, no zero 4 KiB block) and zero
 * runs of [zmin, zmax) bytes, alternating. */
static size_t make_content(uint8_t *p, size_t cap, unsigned seed, size_t dmin, size_t dmax,
                           size_t zmin, size_t zmax)
{
    lcg_seed(seed);
    size_t n = 0;
    bool zero = false;
    while (n < cap) {
        size_t len = zero ? zmin + lcg() % (zmax - zmin) : dmin + lcg() % (dmax - dmin);
        if (len > cap - n)
            len = cap - n;
        if (zero)
            memset(p + n, 0, len);
        else
            for (size_t i = 0; i < len; i++)
                p[n + i] = (uint8_t)("spigz index test "[lcg() % 17] + (i % 61 == 0));
        n += len;
        zero = !zero;
    }
    return n;
}

static struct buf compress_buf(const uint8_t *p, size_t n, size_t chunk, const char *name)
{
    int in = file_with(p, n), out = tmpfile_fd();
    struct cmp_opts o;
    cmp_opts_default(&o);
    o.threads = 2;
    o.chunk = chunk;
    o.name = name;
    struct cmp_stats st;
    struct sp_err err = {0};
    ck_assert_msg(cmp_run(in, out, &o, &st, &err) == 0, "cmp_run: %s", err.msg);
    struct buf b = slurp(out);
    ck_assert_uint_eq(st.out_bytes, b.n);
    close(in);
    close(out);
    return b;
}

/* ---- an independent reading of the index (FORMAT.md, not idx.c) ---- */

struct rec {
    bool data;
    uint64_t ulen, clen;
    uint32_t crc;
};

struct ref {
    uint64_t total, data_len, header_len, index_len, pieces;
    uint32_t payload_crc;
    size_t members;
    struct rec *r;
    size_t n;
};

static const uint8_t member_hdr[10] = {0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff};
static const uint8_t member_end[10] = {3, 0, 0, 0, 0, 0, 0, 0, 0, 0};

static uint64_t leb_get(const uint8_t *p, size_t n, size_t *i)
{
    uint64_t v = 0;
    for (int s = 0;; s += 7) {
        ck_assert_uint_lt(*i, n);
        ck_assert_int_lt(s, 64);
        uint8_t b = p[(*i)++];
        v |= (uint64_t)(b & 0x7f) << s;
        if (!(b & 0x80))
            return v;
    }
}

static struct ref ref_parse(const uint8_t *f, size_t size)
{
    struct ref x;
    memset(&x, 0, sizeof x);
    ck_assert_uint_ge(size, IDX_FOOTER_LEN);
    const uint8_t *ft = f + size - IDX_FOOTER_LEN;
    ck_assert(memcmp(ft, member_hdr, 10) == 0);
    ck_assert_uint_eq(get_le(ft + 10, 2), 56);
    ck_assert(ft[12] == 'S' && ft[13] == 'F');
    ck_assert_uint_eq(get_le(ft + 14, 2), 52);
    ck_assert_uint_eq(ft[16], 1);
    ck_assert_uint_eq(get_le(ft + 17, 3), 0);
    x.total = get_le(ft + 20, 8);
    x.data_len = get_le(ft + 28, 8);
    x.header_len = get_le(ft + 36, 8);
    x.index_len = get_le(ft + 44, 8);
    x.pieces = get_le(ft + 52, 8);
    x.payload_crc = (uint32_t)get_le(ft + 60, 4);
    ck_assert_uint_eq(get_le(ft + 64, 4), crc32(0, ft + 16, 48));
    ck_assert(memcmp(ft + 68, member_end, 10) == 0);
    ck_assert_uint_eq(x.data_len + x.index_len + IDX_FOOTER_LEN, size);
    uint8_t *pay = malloc(x.index_len + 1);
    size_t plen = 0;
    for (uint64_t at = x.data_len; at < x.data_len + x.index_len;) {
        const uint8_t *m = f + at;
        ck_assert(memcmp(m, member_hdr, 10) == 0);
        size_t len = (size_t)get_le(m + 14, 2);
        ck_assert_uint_eq(get_le(m + 10, 2), len + 4);
        ck_assert(m[12] == 'S' && m[13] == 'I');
        ck_assert(len >= 1 && len <= IDX_MEMBER_MAX);
        memcpy(pay + plen, m + 16, len);
        plen += len;
        ck_assert(memcmp(m + 16 + len, member_end, 10) == 0);
        at += 16 + len + 10;
        x.members++;
    }
    ck_assert_uint_eq(crc32(0, pay, (uInt)plen), x.payload_crc);
    x.r = calloc(x.pieces + 1, sizeof *x.r);
    for (size_t i = 0; i < plen; x.n++) {
        ck_assert_uint_lt(x.n, x.pieces);
        uint64_t h = leb_get(pay, plen, &i);
        struct rec *r = &x.r[x.n];
        r->data = h & 1;
        r->ulen = h >> 1;
        r->clen = leb_get(pay, plen, &i);
        if (r->data) {
            ck_assert_uint_le(i + 4, plen);
            r->crc = (uint32_t)get_le(pay + i, 4);
            i += 4;
        }
    }
    ck_assert_uint_eq(x.n, x.pieces);
    free(pay);
    return x;
}

/* ---- an independent writer ---- */

static size_t leb_put(uint8_t *p, uint64_t v, int pad)
{
    size_t n = 0;
    do {
        p[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v != 0 || pad > 0)
            p[n] |= 0x80;
        n++;
    } while (v != 0);
    for (; pad > 0; pad--)
        p[n++] = pad > 1 ? 0x80 : 0x00; /* redundant high groups */
    return n;
}

static struct buf payload_of(const struct rec *r, size_t n)
{
    struct buf b = {malloc(n * 24 + 1), 0};
    for (size_t k = 0; k < n; k++) {
        b.n += leb_put(b.p + b.n, r[k].ulen << 1 | r[k].data, 0);
        b.n += leb_put(b.p + b.n, r[k].clen, 0);
        if (r[k].data) {
            put_le(b.p + b.n, r[k].crc, 4);
            b.n += 4;
        }
    }
    return b;
}

/* Index members holding payload in pieces of `split` bytes (the last may be
 * shorter), then the footer. */
static struct buf tail_of(const uint8_t *pay, size_t plen, size_t split, uint64_t total,
                          uint64_t data_len, uint64_t header_len, uint64_t pieces)
{
    size_t members = (plen + split - 1) / split;
    struct buf t = {malloc(plen + 26 * members + IDX_FOOTER_LEN), 0};
    for (size_t off = 0; off < plen; off += split) {
        size_t m = plen - off < split ? plen - off : split;
        uint8_t *h = t.p + t.n;
        memcpy(h, member_hdr, 10);
        put_le(h + 10, m + 4, 2);
        h[12] = 'S';
        h[13] = 'I';
        put_le(h + 14, m, 2);
        memcpy(h + 16, pay + off, m);
        memcpy(h + 16 + m, member_end, 10);
        t.n += 16 + m + 10;
    }
    uint64_t index_len = t.n;
    uint8_t *f = t.p + t.n;
    memset(f, 0, IDX_FOOTER_LEN);
    memcpy(f, member_hdr, 10);
    put_le(f + 10, 56, 2);
    f[12] = 'S';
    f[13] = 'F';
    put_le(f + 14, 52, 2);
    f[16] = 1;
    put_le(f + 20, total, 8);
    put_le(f + 28, data_len, 8);
    put_le(f + 36, header_len, 8);
    put_le(f + 44, index_len, 8);
    put_le(f + 52, pieces, 8);
    put_le(f + 60, crc32(0, pay, (uInt)plen), 4);
    put_le(f + 64, crc32(0, f + 16, 48), 4);
    memcpy(f + 68, member_end, 10);
    t.n += IDX_FOOTER_LEN;
    return t;
}

static void fix_footer_crc(uint8_t *f)
{
    put_le(f + 64, crc32(0, f + 16, 48), 4);
}

static struct buf concat(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    struct buf c = {malloc(an + bn + 1), an + bn};
    memcpy(c.p, a, an);
    memcpy(c.p + an, b, bn);
    return c;
}

/* ---- checking a loaded index ---- */

static uint32_t crc_zeros(uint64_t n)
{
    static const uint8_t z[65536];
    uint32_t c = 0;
    while (n > 0) {
        size_t k = n < sizeof z ? (size_t)n : sizeof z;
        c = (uint32_t)crc32(c, z, (uInt)k);
        n -= k;
    }
    return c;
}

/* piece bytes + 03 00, inflated raw by zlib: exactly want[0..ulen), every
 * input byte used. */
static void check_piece_decodes(const uint8_t *piece, uint64_t clen, const uint8_t *want,
                                uint64_t ulen)
{
    uint8_t *in = malloc(clen + 2), *out = malloc(ulen + 1);
    memcpy(in, piece, clen);
    in[clen] = 3;
    in[clen + 1] = 0;
    z_stream s;
    memset(&s, 0, sizeof s);
    ck_assert_int_eq(inflateInit2(&s, -15), Z_OK);
    s.next_in = in;
    s.avail_in = (uInt)clen + 2;
    s.next_out = out;
    s.avail_out = (uInt)ulen + 1;
    ck_assert_int_eq(inflate(&s, Z_FINISH), Z_STREAM_END);
    ck_assert_uint_eq(s.total_out, ulen);
    ck_assert_uint_eq(s.avail_in, 0);
    ck_assert(memcmp(out, want, ulen) == 0);
    inflateEnd(&s);
    free(in);
    free(out);
}

/* x describes file f (data member at base) holding content c exactly. */
static void check_exact(const struct idx *x, const uint8_t *f, size_t fsize, uint64_t base,
                        const uint8_t *c, size_t cn)
{
    ck_assert_uint_eq(x->base, base);
    ck_assert_uint_eq(x->total, cn);
    ck_assert_uint_eq(x->crc, crc32(0, c, (uInt)cn));
    ck_assert_uint_eq(x->data_len + x->index_len + IDX_FOOTER_LEN, fsize - base);
    ck_assert_ptr_nonnull(x->p);
    ck_assert_uint_eq(x->p[0].uoff, 0);
    ck_assert_uint_eq(x->p[0].coff, 0);
    ck_assert_uint_eq(x->p[x->n].uoff, cn);
    ck_assert_uint_eq(x->p[x->n].coff, x->data_len - x->header_len - 10);
    const uint8_t *stream = f + base + x->header_len;
    ck_assert(stream[x->p[x->n].coff] == 3 && stream[x->p[x->n].coff + 1] == 0);
    uint64_t max_u = 0, max_c = 0;
    for (uint64_t k = 0; k < x->n; k++) {
        const struct idx_piece *p = &x->p[k];
        uint64_t ulen = x->p[k + 1].uoff - p->uoff, clen = x->p[k + 1].coff - p->coff;
        ck_assert_uint_ge(ulen, 1);
        ck_assert_uint_ge(clen, 1);
        ck_assert_uint_le(p->uoff + ulen, cn);
        const uint8_t *want = c + p->uoff;
        check_piece_decodes(stream + p->coff, clen, want, ulen);
        if (p->data) {
            ck_assert_uint_eq(p->crc, crc32(0, want, (uInt)ulen));
            max_u = ulen > max_u ? ulen : max_u;
            max_c = clen > max_c ? clen : max_c;
        } else {
            /* canonical encoding of ulen zeros (FORMAT.md 1.1) */
            ck_assert_uint_eq(p->crc, crc_zeros(ulen));
            struct zrun z;
            zrun_encode(ulen, &z);
            ck_assert_uint_eq(zrun_size(&z), clen);
            ck_assert(memcmp(stream + p->coff, z.head, z.head_len) == 0);
            ck_assert(memcmp(stream + p->coff + clen - z.tail_len, z.tail, z.tail_len) == 0);
        }
    }
    ck_assert_uint_eq(x->max_ulen, max_u);
    ck_assert_uint_eq(x->max_clen, max_c);
}

/* x is the index ref_parse() read. */
static void check_same(const struct idx *x, const struct ref *r)
{
    ck_assert_uint_eq(x->n, r->n);
    ck_assert_uint_eq(x->total, r->total);
    ck_assert_uint_eq(x->data_len, r->data_len);
    ck_assert_uint_eq(x->header_len, r->header_len);
    ck_assert_uint_eq(x->index_len, r->index_len);
    uint64_t u = 0, c = 0;
    for (size_t k = 0; k < r->n; k++) {
        ck_assert_uint_eq(x->p[k].uoff, u);
        ck_assert_uint_eq(x->p[k].coff, c);
        ck_assert_int_eq(x->p[k].data, r->r[k].data);
        if (r->r[k].data)
            ck_assert_uint_eq(x->p[k].crc, r->r[k].crc);
        u += r->r[k].ulen;
        c += r->r[k].clen;
    }
    ck_assert_uint_eq(x->p[r->n].uoff, u);
    ck_assert_uint_eq(x->p[r->n].coff, c);
}

/* idx_load on a whole buffer in a fresh file. */
static int load_buf(const uint8_t *p, size_t n, uint64_t base, struct idx *x, char *why,
                    size_t whylen)
{
    int fd = file_with(p, n);
    struct sp_err err = {0};
    int r = idx_load(fd, base, n, x, why, whylen, &err);
    ck_assert_msg(r == 0 || r == 1, "idx_load returned %d (%s)", r, err.msg);
    if (r == 0)
        ck_assert_ptr_null(x->p);
    close(fd);
    return r;
}

/* A spigz file of content c: load it and check it every way. */
static void roundtrip(const uint8_t *c, size_t cn, size_t chunk, const char *name,
                      size_t min_pieces)
{
    struct buf f = compress_buf(c, cn, chunk, name);
    struct ref r = ref_parse(f.p, f.n);
    ck_assert_uint_ge(r.n, min_pieces);
    struct idx x;
    char why[160] = "unset";
    ck_assert_int_eq(load_buf(f.p, f.n, 0, &x, why, sizeof why), 1);
    check_same(&x, &r);
    check_exact(&x, f.p, f.n, 0, c, cn);
    ck_assert_uint_eq(x.header_len, name == NULL ? 10 : 10 + strlen(name) + 1);
    ck_assert_str_eq(x.hdr.name, name == NULL ? "" : name);
    /* the independent writer gives the same bytes */
    struct buf pay = payload_of(r.r, r.n);
    struct buf t = tail_of(pay.p, pay.n, IDX_MEMBER_MAX, r.total, r.data_len, r.header_len, r.n);
    ck_assert_uint_eq(t.n, f.n - r.data_len);
    ck_assert(memcmp(t.p, f.p + r.data_len, t.n) == 0);
    idx_free(&x);
    ck_assert_ptr_null(x.p);
    free(t.p);
    free(pay.p);
    free(r.r);
    free(f.p);
}

/* ==== round trips ==== */

START_TEST(small_files)
{
    uint8_t *c = calloc(1, 300 << 10);
    roundtrip(c, 0, 64 << 10, NULL, 0);                        /* no piece */
    roundtrip((const uint8_t *)"x", 1, 64 << 10, "a.txt", 1);
    memset(c, 0, 20000);
    roundtrip(c, 20000, 64 << 10, NULL, 1);                    /* one zero piece */
    memset(c, 0, 16384);
    roundtrip(c, 16383, 64 << 10, NULL, 1);                    /* below zmin: data */
    size_t n = make_content(c, 300 << 10, 1, 3000, 90000, 16384, 70000);
    roundtrip(c, n, 64 << 10, "mixed", 4);
    free(c);
}
END_TEST

START_TEST(empty_content)
{
    struct buf f = compress_buf(NULL, 0, 64 << 10, NULL);
    ck_assert_uint_eq(f.n, 20 + IDX_FOOTER_LEN); /* header, 03 00, trailer; no member */
    struct idx x;
    char why[160];
    ck_assert_int_eq(load_buf(f.p, f.n, 0, &x, why, sizeof why), 1);
    ck_assert_uint_eq(x.n, 0);
    ck_assert_uint_eq(x.total, 0);
    ck_assert_uint_eq(x.index_len, 0);
    ck_assert_uint_eq(x.data_len, 20);
    ck_assert_uint_eq(x.p[0].uoff, 0);
    ck_assert_uint_eq(x.p[0].coff, 0);
    ck_assert_uint_eq(x.max_ulen, 0);
    idx_free(&x);
    free(f.p);
}
END_TEST

START_TEST(hundreds_of_pieces)
{
    size_t cap = 12u << 20;
    uint8_t *c = malloc(cap);
    /* short data runs and zero runs just over the threshold: every run is a
     * piece; some data runs span several 64 KiB chunks */
    size_t n = make_content(c, cap, 7, 4096, 150000, 16384, 40000);
    roundtrip(c, n, 64 << 10, "many.img", 300);
    free(c);
}
END_TEST

/* ==== the writer's spill path, with a fake data member ==== */

struct fake {
    int fd;
    uint64_t clen_sum, total, data_len;
    uint32_t crc;
    size_t n;
    struct rec *r;
};

/* Records: data pieces of 1..3 bytes (CRC of real bytes) and zero pieces of
 * up to 5000 bytes; CRC of the whole by zlib. */
static void fake_records(struct fake *fk, size_t n)
{
    fk->r = malloc(n * sizeof *fk->r);
    fk->n = n;
    lcg_seed(99);
    for (size_t k = 0; k < n; k++) {
        struct rec *r = &fk->r[k];
        r->data = k % 3 != 2;
        if (r->data) {
            uint8_t b[3] = {(uint8_t)lcg(), (uint8_t)lcg(), (uint8_t)lcg()};
            r->ulen = 1 + lcg() % 3;
            r->crc = (uint32_t)crc32(0, b, (uInt)r->ulen);
            r->clen = 1 + lcg() % 200;
            fk->crc = (uint32_t)crc32_combine(fk->crc, r->crc, (z_off_t)r->ulen);
        } else {
            r->ulen = 1 + lcg() % 5000;
            struct zrun z; /* the index checks a zero piece's length */
            zrun_encode(r->ulen, &z);
            r->clen = zrun_size(&z);
            fk->crc = (uint32_t)crc32_combine(fk->crc, crc_zeros(r->ulen), (z_off_t)r->ulen);
        }
        fk->clen_sum += r->clen;
        fk->total += r->ulen;
    }
}

/* The data member: 10-byte header, clen_sum bytes of (hole), 03 00, trailer. */
static void fake_member(struct fake *fk)
{
    fk->fd = tmpfile_fd();
    static const uint8_t h[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    pwrite_all(fk->fd, h, 10, 0);
    uint8_t t[10] = {3, 0};
    put_le(t + 2, fk->crc, 4);
    put_le(t + 6, fk->total, 4);
    pwrite_all(fk->fd, t, 10, 10 + fk->clen_sum);
    fk->data_len = 20 + fk->clen_sum;
}

START_TEST(spill_to_temporary_file)
{
    struct fake fk = {0};
    fake_records(&fk, 2200000); /* ~10 MB of records, more than IDX_SPILL */
    fake_member(&fk);
    struct sp_err err = {0};
    struct idx_w *w = idx_w_new(false, &err);
    ck_assert_ptr_nonnull(w);
    for (size_t k = 0; k < fk.n; k++)
        ck_assert_int_eq(idx_w_add(w, fk.r[k].data, fk.r[k].ulen, fk.r[k].clen, fk.r[k].crc,
                                   &err), 0);
    static struct out o;
    ck_assert_int_eq(lseek(fk.fd, (off_t)fk.data_len, SEEK_SET), (off_t)fk.data_len);
    out_init(&o, fk.fd);
    ck_assert_int_eq(idx_w_finish(w, &o, fk.total, fk.data_len, 10), 0);
    ck_assert_int_eq(out_flush(&o), 0);
    idx_w_free(w);
    struct buf f = slurp(fk.fd);
    ck_assert_uint_eq(o.total, f.n - fk.data_len);

    /* the bytes are what FORMAT.md says */
    struct ref r = ref_parse(f.p, f.n);
    ck_assert_uint_gt(r.index_len, IDX_SPILL + 26 * r.members);
    ck_assert_uint_gt(r.members, 100);
    ck_assert_uint_eq(r.n, fk.n);
    for (size_t k = 0; k < fk.n; k++) {
        ck_assert_int_eq(r.r[k].data, fk.r[k].data);
        ck_assert_uint_eq(r.r[k].ulen, fk.r[k].ulen);
        ck_assert_uint_eq(r.r[k].clen, fk.r[k].clen);
        if (fk.r[k].data)
            ck_assert_uint_eq(r.r[k].crc, fk.r[k].crc);
    }
    /* every member but the last is full */
    for (uint64_t at = fk.data_len, m = 0; m < r.members; m++) {
        uint64_t len = get_le(f.p + at + 14, 2);
        if (m + 1 < r.members)
            ck_assert_uint_eq(len, IDX_MEMBER_MAX);
        at += 26 + len;
    }

    /* and idx_load reads it back */
    struct idx x;
    char why[160];
    ck_assert_int_eq(idx_load(fk.fd, 0, f.n, &x, why, sizeof why, &err), 1);
    check_same(&x, &r);
    ck_assert_uint_eq(x.crc, fk.crc);
    for (size_t k = 0; k < fk.n; k++)
        ck_assert_uint_eq(x.p[k].crc, fk.r[k].data ? fk.r[k].crc : crc_zeros(fk.r[k].ulen));
    idx_free(&x);
    free(r.r);
    free(f.p);
    free(fk.r);
    close(fk.fd);
}
END_TEST

/* A fake file of 300 records with the bad ranges r[0..nr) and the notes
 * t[0..nt) after them: its bytes in *f (or NULL), idx_load's answer, the
 * index in *x. */
/* A manifest's bytes for fake_with() to store after the notes (none when
 * fake_mf_n is 0). */
static const uint8_t *fake_mf_p;
static size_t fake_mf_n;

static int fake_with(const struct sp_range *r, size_t nr, const char *const *t, size_t nt,
                     struct idx *x, char *why, size_t whylen, struct buf *f)
{
    struct fake fk = {0};
    fake_records(&fk, 300);
    fake_member(&fk);
    struct sp_err err = {0};
    struct idx_w *w = idx_w_new(false, &err);
    ck_assert_ptr_nonnull(w);
    for (size_t k = 0; k < fk.n; k++)
        ck_assert_int_eq(idx_w_add(w, fk.r[k].data, fk.r[k].ulen, fk.r[k].clen, fk.r[k].crc,
                                   &err), 0);
    ck_assert_int_eq(idx_w_add_bad(w, r, nr, &err), 0);
    ck_assert_int_eq(idx_w_add_notes(w, t, nt, &err), 0);
    ck_assert_int_eq(idx_w_add_manifest(w, fake_mf_p, fake_mf_n, &err), 0);
    static struct out o;
    ck_assert_int_eq(lseek(fk.fd, (off_t)fk.data_len, SEEK_SET), (off_t)fk.data_len);
    out_init(&o, fk.fd);
    ck_assert_int_eq(idx_w_finish(w, &o, fk.total, fk.data_len, 10), 0);
    ck_assert_int_eq(out_flush(&o), 0);
    idx_w_free(w);
    struct buf all = slurp(fk.fd);
    int rc = idx_load(fk.fd, 0, all.n, x, why, whylen, &err);
    ck_assert_int_ge(rc, 0);
    if (rc == 1)
        ck_assert_uint_eq(x->total, fk.total);
    if (f != NULL)
        *f = all;
    else
        free(all.p);
    free(fk.r);
    close(fk.fd);
    return rc;
}

/* The same with bad ranges only; the footer's flag checked. */
static int fake_with_bad(const struct sp_range *r, size_t n, struct idx *x, char *why,
                         size_t whylen)
{
    struct buf f;
    int rc = fake_with(r, n, NULL, 0, x, why, whylen, &f);
    ck_assert_int_eq(f.p[f.n - IDX_FOOTER_LEN + 17], n > 0 ? 1 : 0); /* the flag */
    free(f.p);
    return rc;
}

/* The same with notes, and one bad range when bad. */
static int fake_with_notes(const char *const *t, size_t n, bool bad, struct idx *x, char *why,
                           size_t whylen, struct buf *f)
{
    static const struct sp_range one = {4096, 512};
    return fake_with(&one, bad ? 1 : 0, t, n, x, why, whylen, f);
}

/* Notes round trip, alone and after bad ranges, up to 64 of 1024 bytes
 * (65 KiB: across index members); text with control characters is left
 * out by the writer; none sets no flag. */
START_TEST(notes_round_trip)
{
    struct idx x;
    char why[160];
    struct buf f;
    static const char *const two[] = {"its layout reads 2 ways: an MBR, a vfat on the whole input",
                                      "bad\ttab", "partition 1: ext4, read whole: \xc3\xa9t\xc3\xa9"};
    for (int bad = 0; bad < 2; bad++) {
        ck_assert_int_eq(fake_with_notes(two, 3, bad, &x, why, sizeof why, &f), 1);
        ck_assert_int_eq(f.p[f.n - IDX_FOOTER_LEN + 17], 2 | bad);
        ck_assert_uint_eq(x.nnotes, 2);
        ck_assert_str_eq(x.notes[0], two[0]);
        ck_assert_str_eq(x.notes[1], two[2]);
        ck_assert_uint_eq(x.nbad, bad ? 1 : 0);
        idx_free(&x);
        ck_assert_ptr_null(x.notes);
        free(f.p);
    }
    static char big[IDX_NOTES_MAX + 2][IDX_NOTE_MAX + 1];
    const char *many[IDX_NOTES_MAX + 2];
    for (int i = 0; i < IDX_NOTES_MAX + 2; i++) {
        memset(big[i], 'a' + i % 26, IDX_NOTE_MAX);
        many[i] = big[i];
    }
    ck_assert_int_eq(fake_with_notes(many, IDX_NOTES_MAX + 2, false, &x, why, sizeof why, &f), 1);
    ck_assert_uint_eq(x.nnotes, IDX_NOTES_MAX);
    for (int i = 0; i < IDX_NOTES_MAX; i++)
        ck_assert_str_eq(x.notes[i], big[i]);
    idx_free(&x);
    free(f.p);
    ck_assert_int_eq(fake_with_notes(NULL, 0, false, &x, why, sizeof why, &f), 1);
    ck_assert_int_eq(f.p[f.n - IDX_FOOTER_LEN + 17], 0);
    ck_assert_ptr_null(x.notes);
    idx_free(&x);
    free(f.p);
}
END_TEST

/* The payload's CRC over every index member's payload, then the footer's,
 * made right again after bytes of f were changed. */
static void fix_crcs(struct buf *f)
{
    uint64_t data_len = get_le(f->p + f->n - IDX_FOOTER_LEN + 28, 8);
    uint32_t crc = 0;
    for (uint64_t at = data_len; at < f->n - IDX_FOOTER_LEN;) {
        uint64_t m = get_le(f->p + at + 14, 2);
        crc = (uint32_t)crc32(crc, f->p + at + 16, (uInt)m);
        at += 26 + m;
    }
    uint8_t *ft = f->p + f->n - IDX_FOOTER_LEN;
    for (int i = 0; i < 4; i++)
        ft[60 + i] = (uint8_t)(crc >> (8 * i));
    uint32_t fc = (uint32_t)crc32(0, ft + 16, 48);
    for (int i = 0; i < 4; i++)
        ft[64 + i] = (uint8_t)(fc >> (8 * i));
}

/* A note forged with a control character, the payload and footer CRCs
 * made right again: the index is refused. */
START_TEST(notes_rejected)
{
    struct idx x;
    char why[160];
    struct buf f;
    static const char *const one[] = {"a note"};
    ck_assert_int_eq(fake_with_notes(one, 1, false, &x, why, sizeof why, &f), 1);
    idx_free(&x);
    uint8_t *note = memmem(f.p, f.n, "a note", 6);
    ck_assert_ptr_nonnull(note);
    note[1] = 0x07;
    fix_crcs(&f);
    uint8_t *ft = f.p + f.n - IDX_FOOTER_LEN;
    int fd = tmpfile_fd();
    ck_assert_int_eq(write(fd, f.p, f.n), (ssize_t)f.n);
    struct sp_err err = {0};
    ck_assert_int_eq(idx_load(fd, 0, f.n, &x, why, sizeof why, &err), 0);
    ck_assert_msg(strstr(why, "control character") != NULL, "%s", why);
    ck_assert_ptr_null(x.notes);
    /* a C1 control in UTF-8 (U+009B, a terminal's CSI), and invalid UTF-8 */
    note[1] = 0xC2;
    note[2] = 0x9B;
    fix_crcs(&f);
    ck_assert_int_eq(pwrite(fd, f.p, f.n, 0), (ssize_t)f.n);
    ck_assert_int_eq(idx_load(fd, 0, f.n, &x, why, sizeof why, &err), 0);
    ck_assert_msg(strstr(why, "printable UTF-8") != NULL, "%s", why);
    /* flag 4 (the manifest) with no manifest after the notes */
    note[1] = ' ';
    note[2] = 'n';
    ft[17] |= 4;
    fix_crcs(&f);
    ck_assert_int_eq(pwrite(fd, f.p, f.n, 0), (ssize_t)f.n);
    ck_assert_int_eq(idx_load(fd, 0, f.n, &x, why, sizeof why, &err), 0);
    ck_assert_msg(strstr(why, "manifest is cut short") != NULL, "%s", why);
    /* an unknown flag (bit 3) is refused as before */
    ft[17] = (uint8_t)((ft[17] & ~4) | 8);
    fix_crcs(&f);
    ck_assert_int_eq(pwrite(fd, f.p, f.n, 0), (ssize_t)f.n);
    ck_assert_int_eq(idx_load(fd, 0, f.n, &x, why, sizeof why, &err), 0);
    ck_assert_msg(strstr(why, "flags") != NULL, "%s", why);
    close(fd);
    free(f.p);
}
END_TEST

START_TEST(bad_ranges_round_trip)
{
    struct idx x;
    char why[160];
    /* the fake's content is over 300000 bytes: these all fit */
    static const struct sp_range ok[] = {{0, 512}, {4096, 1}, {4098, 7000}, {200000, 4096}};
    ck_assert_int_eq(fake_with_bad(ok, 4, &x, why, sizeof why), 1);
    ck_assert_uint_eq(x.nbad, 4);
    for (size_t i = 0; i < 4; i++) {
        ck_assert_uint_eq(x.bad[i].off, ok[i].off);
        ck_assert_uint_eq(x.bad[i].len, ok[i].len);
    }
    idx_free(&x);
    ck_assert_ptr_null(x.bad);
    /* none: no flag, no list */
    ck_assert_int_eq(fake_with_bad(NULL, 0, &x, why, sizeof why), 1);
    ck_assert_uint_eq(x.nbad, 0);
    ck_assert_ptr_null(x.bad);
    idx_free(&x);
}
END_TEST

START_TEST(bad_ranges_rejected)
{
    struct idx x;
    char why[160];
    /* touching, overlapping, out of order, past the content's end */
    static const struct sp_range touch[] = {{0, 10}, {10, 5}};
    static const struct sp_range overlap[] = {{0, 10}, {5, 10}};
    static const struct sp_range order[] = {{100, 10}, {5, 10}};
    static const struct sp_range past[] = {{0, 10}, {(uint64_t)1 << 40, 1}};
    static const struct sp_range empty[] = {{5, 0}};
    const struct sp_range *cases[] = {touch, overlap, order, past, empty};
    size_t ns[] = {2, 2, 2, 2, 1};
    for (size_t k = 0; k < 5; k++) {
        ck_assert_int_eq(fake_with_bad(cases[k], ns[k], &x, why, sizeof why), 0);
        ck_assert_msg(strstr(why, "bad range") != NULL, "case %zu: %s", k, why);
        ck_assert_ptr_null(x.bad);
    }
}
END_TEST

START_TEST(spill_failure_is_reported)
{
    /* no temporary file can be made: when the spill may be needed, idx_w_new
     * fails at once, naming the directory */
    setenv("TMPDIR", "/nonexistent/spigz-check", 1);
    struct sp_err err = {0};
    ck_assert_ptr_null(idx_w_new(true, &err));
    ck_assert_int_eq(err.kind, SP_ERR_SYS);
    ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/spigz-check"));
    ck_assert_ptr_nonnull(strstr(err.msg, "No such file"));
    /* when it was not foreseen, the spill fails when it comes, and says so */
    memset(&err, 0, sizeof err);
    struct idx_w *w = idx_w_new(false, &err);
    ck_assert_ptr_nonnull(w);
    int rc = 0;
    for (size_t k = 0; k < 3000000 && rc == 0; k++)
        rc = idx_w_add(w, true, 1, 1, 0, &err);
    ck_assert_int_eq(rc, -1);
    ck_assert_int_eq(err.kind, SP_ERR_SYS);
    ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/spigz-check"));
    static struct out o;
    out_init(&o, -1);
    ck_assert_int_eq(idx_w_finish(w, &o, 0, 20, 10), -1);
    ck_assert_int_eq(o.err.kind, SP_ERR_SYS);
    idx_w_free(w);
    unsetenv("TMPDIR");
}
END_TEST

/* ==== crafted indexes on a real data member ==== */

struct sample {
    uint8_t *c;
    size_t cn;
    struct buf f;   /* the spigz file */
    struct ref r;   /* its index, read independently */
    struct buf member;
};

static void sample_new(struct sample *s, const char *name)
{
    s->c = malloc(400 << 10);
    s->cn = make_content(s->c, 400 << 10, 3, 5000, 70000, 16384, 50000);
    s->f = compress_buf(s->c, s->cn, 64 << 10, name);
    s->r = ref_parse(s->f.p, s->f.n);
    ck_assert_uint_ge(s->r.n, 8);
    s->member = (struct buf){s->f.p, s->r.data_len};
}

static void sample_free(struct sample *s)
{
    free(s->c);
    free(s->f.p);
    free(s->r.r);
}

/* The member followed by an index of these records, split as given. */
static struct buf with_records(const struct sample *s, const struct rec *r, size_t n,
                               size_t split, uint64_t pieces)
{
    struct buf pay = payload_of(r, n);
    struct buf t = tail_of(pay.p, pay.n, split, s->r.total, s->r.data_len, s->r.header_len,
                           pieces);
    struct buf f = concat(s->member.p, s->member.n, t.p, t.n);
    free(pay.p);
    free(t.p);
    return f;
}

/* The footer at the end of f[0..n) places the data member after base:
 * members before it (a concatenation), decoded sequentially without a word
 * (FORMAT.md 4.2), so idx_load may give no reason. */
static bool footer_says_concat(const uint8_t *f, size_t n, uint64_t base)
{
    if (n < base + IDX_FOOTER_LEN)
        return false;
    const uint8_t *ft = f + n - IDX_FOOTER_LEN;
    uint64_t dl = get_le(ft + 28, 8), il = get_le(ft + 44, 8), size = n - base;
    return dl <= size && il <= size && dl + il + IDX_FOOTER_LEN < size;
}

/* Load f: 0 with a reason, or 1 describing the file exactly. */
static int load_check(const struct sample *s, const struct buf *f, uint64_t base, bool spigz)
{
    struct idx x;
    char why[160];
    int r = load_buf(f->p, f->n, base, &x, why, sizeof why);
    if (r == 1) {
        check_exact(&x, f->p, f->n, base, s->c, s->cn);
        idx_free(&x);
    } else if (spigz && !footer_says_concat(f->p, f->n, base)) {
        ck_assert_msg(why[0] != 0, "no reason given (base %ju, %zu bytes)", (uintmax_t)base,
                      f->n);
    }
    return r;
}

START_TEST(any_split_is_accepted)
{
    struct sample s;
    sample_new(&s, NULL);
    static const size_t splits[] = {1, 2, 3, 5, 7, 24, 100, IDX_MEMBER_MAX};
    for (size_t i = 0; i < sizeof splits / sizeof splits[0]; i++) {
        struct buf f = with_records(&s, s.r.r, s.r.n, splits[i], s.r.n);
        struct idx x;
        char why[160];
        ck_assert_msg(load_buf(f.p, f.n, 0, &x, why, sizeof why) == 1, "split %zu: %s",
                      splits[i], why);
        ck_assert_uint_eq(x.index_len, f.n - s.r.data_len - IDX_FOOTER_LEN);
        check_exact(&x, f.p, f.n, 0, s.c, s.cn);
        idx_free(&x);
        free(f.p);
    }
    sample_free(&s);
}
END_TEST

/* A payload edited by hand: the footer and payload CRCs are right, so only
 * the record checks can reject it. */
/* Rejected, for the reason that holds `why_part`. */
static void expect_reject_why(const struct sample *s, const uint8_t *pay, size_t plen,
                              uint64_t pieces, const char *why_part)
{
    struct buf t = tail_of(pay, plen, IDX_MEMBER_MAX, s->r.total, s->r.data_len,
                           s->r.header_len, pieces);
    struct buf f = concat(s->member.p, s->member.n, t.p, t.n);
    struct idx x;
    char why[160];
    ck_assert_msg(load_buf(f.p, f.n, 0, &x, why, sizeof why) == 0, "%s: accepted", why_part);
    ck_assert_msg(strstr(why, why_part) != NULL, "rejected for '%s', not '%s'", why, why_part);
    free(f.p);
    free(t.p);
}

static void expect_reject_payload(const struct sample *s, const uint8_t *pay, size_t plen,
                                  uint64_t pieces, const char *what)
{
    for (size_t split = 1; split <= IDX_MEMBER_MAX; split = split == 1 ? 3 : IDX_MEMBER_MAX + 1) {
        struct buf t = tail_of(pay, plen, split, s->r.total, s->r.data_len, s->r.header_len,
                               pieces);
        struct buf f = concat(s->member.p, s->member.n, t.p, t.n);
        struct idx x;
        char why[160];
        ck_assert_msg(load_buf(f.p, f.n, 0, &x, why, sizeof why) == 0, "%s: accepted", what);
        ck_assert_msg(why[0] != 0, "%s: no reason", what);
        free(f.p);
        free(t.p);
    }
}

START_TEST(bad_records_are_rejected)
{
    struct sample s;
    sample_new(&s, "crafted");
    struct buf good = payload_of(s.r.r, s.r.n);
    uint8_t *p = malloc(good.n + 64);
    size_t n;

    /* a redundant high group in the first record's h, then in its clen */
    for (int field = 0; field < 2; field++) {
        const struct rec *r0 = &s.r.r[0];
        n = leb_put(p, r0->ulen << 1 | r0->data, field == 0 ? 1 : 0);
        n += leb_put(p + n, r0->clen, field == 1 ? 2 : 0);
        if (r0->data) {
            put_le(p + n, r0->crc, 4);
            n += 4;
        }
        struct buf rest = payload_of(s.r.r + 1, s.r.n - 1);
        memcpy(p + n, rest.p, rest.n);
        n += rest.n;
        expect_reject_payload(&s, p, n, s.r.n, "non-minimal LEB128");
        free(rest.p);
    }

    /* LEB128 too long or over 64 bits, in place of the first record */
    static const uint8_t eleven[11] = {0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                       0x80, 0x01};
    static const uint8_t wide[10] = {0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02};
    memcpy(p, eleven, 11);
    memcpy(p + 11, good.p, good.n);
    expect_reject_payload(&s, p, good.n + 11, s.r.n, "11-byte LEB128");
    memcpy(p, wide, 10);
    memcpy(p + 10, good.p, good.n);
    expect_reject_payload(&s, p, good.n + 10, s.r.n, "LEB128 over 64 bits");

    /* counts: one record more or less than the footer says */
    expect_reject_payload(&s, good.p, good.n, s.r.n + 1, "pieces + 1");
    expect_reject_payload(&s, good.p, good.n, s.r.n - 1, "pieces - 1");
    struct buf fewer = payload_of(s.r.r, s.r.n - 1);
    expect_reject_payload(&s, fewer.p, fewer.n, s.r.n - 1, "last record missing");
    free(fewer.p);

    /* a byte after the last record; a record cut short */
    memcpy(p, good.p, good.n);
    p[good.n] = 0;
    expect_reject_payload(&s, p, good.n + 1, s.r.n, "trailing byte");
    expect_reject_payload(&s, good.p, good.n - 1, s.r.n, "cut record");

    /* lengths out of range, the sums kept right by the neighbour */
    struct rec *r = malloc((s.r.n + 1) * sizeof *r);
    memcpy(r, s.r.r, s.r.n * sizeof *r);
    r[0].ulen = 0;
    struct buf b = payload_of(r, s.r.n);
    expect_reject_payload(&s, b.p, b.n, s.r.n, "ulen 0");
    free(b.p);
    memcpy(r, s.r.r, s.r.n * sizeof *r);
    r[0].clen = 0;
    b = payload_of(r, s.r.n);
    expect_reject_payload(&s, b.p, b.n, s.r.n, "clen 0");
    free(b.p);
    memcpy(r, s.r.r, s.r.n * sizeof *r);
    r[0].ulen = IDX_PIECE_MAX + 1;
    b = payload_of(r, s.r.n);
    expect_reject_payload(&s, b.p, b.n, s.r.n, "ulen 2^40 + 1");
    free(b.p);
    memcpy(r, s.r.r, s.r.n * sizeof *r);
    r[0].clen = IDX_PIECE_MAX + 1;
    b = payload_of(r, s.r.n);
    expect_reject_payload(&s, b.p, b.n, s.r.n, "clen 2^40 + 1");
    free(b.p);

    /* a zero piece whose clen is not its canonical encoding's, the sums kept
     * right by the next piece; a data piece claiming more than 1032:1 */
    for (size_t k = 0; k < 2; k++) {
        memcpy(r, s.r.r, s.r.n * sizeof *r);
        size_t i = 0;
        while (i + 1 < s.r.n && r[i].data != (k == 1))
            i++;
        ck_assert(r[i].data == (k == 1) && i + 1 < s.r.n);
        if (k == 0) {
            r[i].clen += 1;
            r[i + 1].clen -= 1;
        } else { /* records are checked one by one, before the sums */
            r[i].ulen = r[i].clen * 1032;
        }
        b = payload_of(r, s.r.n);
        expect_reject_why(&s, b.p, b.n, s.r.n, k == 0 ? "encoding" : "deflate's limit");
        free(b.p);
    }

    /* boundaries moved between two pieces: sums right, CRCs not */
    memcpy(r, s.r.r, s.r.n * sizeof *r);
    r[0].clen += 1;
    r[1].clen -= 1;
    b = payload_of(r, s.r.n);
    struct buf t = tail_of(b.p, b.n, IDX_MEMBER_MAX, s.r.total, s.r.data_len, s.r.header_len,
                           s.r.n);
    struct buf f = concat(s.member.p, s.member.n, t.p, t.n);
    /* FORMAT.md checks 1-6 cannot see this (check 8 does, when decoding):
     * idx_load may accept it, but then the pieces must be as written */
    struct idx x;
    char why[160];
    if (load_buf(f.p, f.n, 0, &x, why, sizeof why) == 1) {
        ck_assert_uint_eq(x.p[1].coff, s.r.r[0].clen + 1);
        idx_free(&x);
    }
    free(f.p);
    free(t.p);
    free(b.p);

    /* a data piece recorded as a zero piece, and the reverse */
    for (size_t k = 0; k < 2; k++) {
        memcpy(r, s.r.r, s.r.n * sizeof *r);
        size_t i = 0;
        while (r[i].data != (k == 0))
            i++;
        r[i].data = !r[i].data;
        b = payload_of(r, s.r.n);
        expect_reject_payload(&s, b.p, b.n, s.r.n, "kind flipped");
        free(b.p);
    }
    /* a wrong CRC in one data record */
    memcpy(r, s.r.r, s.r.n * sizeof *r);
    r[0].crc ^= 1;
    ck_assert(r[0].data);
    b = payload_of(r, s.r.n);
    expect_reject_payload(&s, b.p, b.n, s.r.n, "wrong piece CRC");
    free(b.p);

    /* one zero piece more than the data member holds (the footer counting
     * it): refused at that piece, before the sums are compared */
    struct rec *more = malloc((s.r.n + 1) * sizeof *more);
    memcpy(more, s.r.r, s.r.n * sizeof *more);
    struct zrun zr;
    zrun_encode(4096, &zr);
    more[s.r.n] = (struct rec){false, 4096, zrun_size(&zr), 0};
    b = payload_of(more, s.r.n + 1);
    expect_reject_why(&s, b.p, b.n, s.r.n + 1, "run past the data member");
    free(b.p);
    free(more);

    free(r);
    free(p);
    free(good.p);
    sample_free(&s);
}
END_TEST

START_TEST(largest_piece)
{
    /* one zero piece of 2^40 bytes is within the limits; 2^40 + 1 is not */
    for (int over = 0; over <= 1; over++) {
        uint64_t ulen = IDX_PIECE_MAX + (uint64_t)over;
        struct zrun zr; /* the index checks a zero piece's length against it */
        zrun_encode(ulen, &zr);
        uint64_t clen = zrun_size(&zr); /* about 1 GB: the file is sparse */
        uint32_t z = (uint32_t)crc32(0, (const uint8_t *)"", 1); /* 1 zero */
        uint32_t crc = z;
        for (int i = 0; i < 40; i++) /* crc of 2^i zeros, doubled */
            crc = (uint32_t)crc32_combine64(crc, crc, (z_off64_t)1 << i);
        if (over)
            crc = (uint32_t)crc32_combine64(crc, z, 1);
        struct rec r = {false, ulen, clen, 0};
        struct buf pay = payload_of(&r, 1);
        uint64_t data_len = 20 + clen;
        struct buf t = tail_of(pay.p, pay.n, IDX_MEMBER_MAX, ulen, data_len, 10, 1);
        static const uint8_t h[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
        uint8_t e[10] = {3, 0};
        put_le(e + 2, crc, 4);
        put_le(e + 6, ulen, 4);
        int fd = tmpfile_fd();
        pwrite_all(fd, h, 10, 0);
        pwrite_all(fd, e, 10, 10 + clen);
        pwrite_all(fd, t.p, t.n, data_len);
        struct idx x;
        char why[160];
        struct sp_err err = {0};
        int rc = idx_load(fd, 0, data_len + t.n, &x, why, sizeof why, &err);
        close(fd);
        if (over) {
            ck_assert_int_eq(rc, 0);
            ck_assert_int_ne(why[0], 0);
        } else {
            ck_assert_msg(rc == 1, "%s", why);
            ck_assert_uint_eq(x.total, ulen);
            ck_assert_uint_eq(x.n, 1);
            ck_assert_uint_eq(x.p[1].uoff, ulen);
            ck_assert_uint_eq(x.max_ulen, 0); /* data pieces only */
            idx_free(&x);
        }
        free(t.p);
        free(pay.p);
    }
}
END_TEST

/* A footer counting more pieces than IDX_TABLE_MAX holds, the sizes
 * consistent (a sparse file: the data and the index are holes): declined
 * without a reason and without reading the records. */
START_TEST(huge_piece_count_is_declined)
{
    uint64_t n = IDX_TABLE_MAX / sizeof(struct idx_piece) + 1;
    uint64_t data_len = n + 20, index_len = 2 * n;
    static const uint8_t h[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    uint8_t e[10] = {3, 0};
    struct buf t = tail_of(NULL, 0, IDX_MEMBER_MAX, n, data_len, 10, n);
    put_le(t.p + 44, index_len, 8);
    fix_footer_crc(t.p);
    int fd = tmpfile_fd();
    pwrite_all(fd, h, 10, 0);
    pwrite_all(fd, e, 10, data_len - 10);
    pwrite_all(fd, t.p, t.n, data_len + index_len);
    struct idx x;
    char why[160];
    struct sp_err err = {0};
    int rc = idx_load(fd, 0, data_len + index_len + t.n, &x, why, sizeof why, &err);
    close(fd);
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(why[0] == 0, "declined with a reason: %s", why);
    ck_assert_ptr_null(x.p);
    free(t.p);
}
END_TEST

START_TEST(any_data_member_header)
{
    /* FEXTRA, FNAME, FCOMMENT and FHCRC in the data member's header */
    struct sample s;
    sample_new(&s, NULL);
    uint8_t h[64];
    static const uint8_t fixed[10] = {0x1f, 0x8b, 8, 0x1e, 1, 2, 3, 4, 0, 3};
    memcpy(h, fixed, 10);
    size_t hn = 10;
    static const uint8_t extra[8] = {6, 0, 'A', 'B', 2, 0, 'x', 'y'};
    memcpy(h + hn, extra, 8);
    hn += 8;
    memcpy(h + hn, "name\0comment", 13);
    hn += 13;
    put_le(h + hn, crc32(0, h, (uInt)hn) & 0xffff, 2);
    hn += 2;
    size_t body = s.r.data_len - s.r.header_len;
    struct buf m = concat(h, hn, s.f.p + s.r.header_len, body);
    struct buf pay = payload_of(s.r.r, s.r.n);
    struct buf t = tail_of(pay.p, pay.n, IDX_MEMBER_MAX, s.r.total, m.n, hn, s.r.n);
    struct buf f = concat(m.p, m.n, t.p, t.n);
    struct idx x;
    char why[160];
    ck_assert_msg(load_buf(f.p, f.n, 0, &x, why, sizeof why) == 1, "%s", why);
    ck_assert_uint_eq(x.header_len, hn);
    ck_assert_str_eq(x.hdr.name, "name");
    ck_assert_uint_eq(x.hdr.flags, 0x1e);
    check_exact(&x, f.p, f.n, 0, s.c, s.cn);
    idx_free(&x);

    /* the footer's header_len one off either way, sizes and CRC made right */
    for (int d = -1; d <= 1; d += 2) {
        struct buf t2 = tail_of(pay.p, pay.n, IDX_MEMBER_MAX, s.r.total, m.n,
                                (uint64_t)((int64_t)hn + d), s.r.n);
        struct buf f2 = concat(m.p, m.n, t2.p, t2.n);
        ck_assert_int_eq(load_check(&s, &f2, 0, true), 0);
        free(f2.p);
        free(t2.p);
    }
    /* a header with a bad header CRC */
    f.p[hn - 1] ^= 1;
    ck_assert_int_eq(load_check(&s, &f, 0, true), 0);
    free(f.p);

    /* the original index after a data member whose header is shorter (FNAME
     * dropped) or longer (a name added): the sizes no longer fit */
    struct sample named;
    sample_new(&named, "some-name.img");
    struct buf shorter = concat(s.f.p, s.r.header_len, named.f.p + named.r.header_len,
                                named.f.n - named.r.header_len);
    ck_assert_int_eq(load_check(&s, &shorter, 0, true), 0);
    uint8_t nh[32];
    memcpy(nh, named.f.p, named.r.header_len);
    struct buf longer = concat(nh, named.r.header_len, s.f.p + s.r.header_len,
                               s.f.n - s.r.header_len);
    ck_assert_int_eq(load_check(&s, &longer, 0, true), 0);
    free(shorter.p);
    free(longer.p);
    sample_free(&named);
    free(t.p);
    free(pay.p);
    free(m.p);
    sample_free(&s);
}
END_TEST

/* ==== corruption of a real file ==== */

/* Values to try at one byte. */
static int variants(uint8_t orig, uint8_t out[8])
{
    static const uint8_t xors[] = {0x01, 0x02, 0x10, 0x80, 0xff};
    int n = 0;
    for (size_t i = 0; i < sizeof xors; i++)
        out[n++] = orig ^ xors[i];
    if (orig != 0)
        out[n++] = 0;
    if (orig != 0x7f)
        out[n++] = 0x7f;
    return n;
}

/* A file whose bytes are edited in place between loads. */
struct live {
    int fd;
    uint8_t *p;
    size_t n;
};

static void live_set(struct live *l, size_t at, uint8_t v)
{
    l->p[at] = v;
    pwrite_all(l->fd, &v, 1, at);
}

static int live_load(const struct sample *s, struct live *l, bool footer_ok, const char *what,
                     size_t at)
{
    struct idx x;
    char why[160];
    struct sp_err err = {0};
    errno = 0;
    int r = idx_load(l->fd, 0, l->n, &x, why, sizeof why, &err);
    ck_assert_msg(r == 0 || r == 1, "%s byte %zu: idx_load returned %d (%s)", what, at, r,
                  err.msg);
    if (r == 1) {
        check_exact(&x, l->p, l->n, 0, s->c, s->cn);
        idx_free(&x);
    } else {
        ck_assert_ptr_null(x.p);
        if (footer_ok)
            ck_assert_msg(why[0] != 0, "%s byte %zu: no reason", what, at);
    }
    return r;
}

/* Every value in variants() at each byte of [from, to): idx_load must
 * reject, or accept an exact index.  With fix, the footer CRC (and, for
 * the payload, the payload CRC) are recomputed after the edit. */
enum fix { FIX_NONE, FIX_FOOTER, FIX_BOTH };

static unsigned corrupt_range(const struct sample *s, size_t from, size_t to, enum fix fix,
                              const char *what)
{
    struct live l = {file_with(s->f.p, s->f.n), malloc(s->f.n), s->f.n};
    memcpy(l.p, s->f.p, s->f.n);
    size_t foot = l.n - IDX_FOOTER_LEN;
    unsigned accepted = 0;
    for (size_t at = from; at < to; at++) {
        uint8_t orig = l.p[at], v[8];
        int nv = variants(orig, v);
        for (int i = 0; i < nv; i++) {
            live_set(&l, at, v[i]);
            uint8_t keep[IDX_FOOTER_LEN];
            memcpy(keep, l.p + foot, IDX_FOOTER_LEN);
            if (fix == FIX_BOTH) {
                /* the payload CRC over the (single) index member */
                size_t m = (size_t)get_le(s->f.p + s->r.data_len + 14, 2);
                put_le(l.p + foot + 60, crc32(0, l.p + s->r.data_len + 16, (uInt)m), 4);
            }
            if (fix != FIX_NONE && at < foot + 64) {
                fix_footer_crc(l.p + foot);
                pwrite_all(l.fd, l.p + foot, IDX_FOOTER_LEN, foot);
            }
            /* the footer magic: bytes 0-15 of the footer, as written; and sizes that
     * do not say "a concatenation" */
            bool footer_ok = memcmp(l.p + foot, s->f.p + foot, 16) == 0 &&
                             !footer_says_concat(l.p, l.n, 0);
            accepted += (unsigned)live_load(s, &l, footer_ok, what, at);
            memcpy(l.p + foot, keep, IDX_FOOTER_LEN);
            pwrite_all(l.fd, l.p + foot, IDX_FOOTER_LEN, foot);
        }
        live_set(&l, at, orig);
    }
    ck_assert_int_eq(live_load(s, &l, true, what, 0), 1);
    close(l.fd);
    free(l.p);
    return accepted;
}

START_TEST(corrupt_footer)
{
    struct sample s;
    sample_new(&s, "x");
    size_t foot = s.f.n - IDX_FOOTER_LEN;
    /* every byte, as is: nothing passes the fixed bytes and the CRC */
    ck_assert_uint_eq(corrupt_range(&s, foot, s.f.n, FIX_NONE, "footer"), 0);
    /* every byte of 16..63 with the footer CRC made right: the checks
     * behind it reject every change */
    ck_assert_uint_eq(corrupt_range(&s, foot + 16, foot + 64, FIX_FOOTER, "footer (CRC fixed)"),
                      0);
    sample_free(&s);
}
END_TEST

START_TEST(corrupt_index_member)
{
    struct sample s;
    sample_new(&s, NULL);
    ck_assert_uint_eq(s.r.members, 1);
    size_t at = s.r.data_len, m = (size_t)get_le(s.f.p + at + 14, 2);
    /* framing: header (16 bytes) and end (10 bytes) */
    ck_assert_uint_eq(corrupt_range(&s, at, at + 16, FIX_NONE, "index header"), 0);
    ck_assert_uint_eq(corrupt_range(&s, at + 16 + m, at + 26 + m, FIX_NONE, "index end"), 0);
    /* payload: the payload CRC catches every change */
    ck_assert_uint_eq(corrupt_range(&s, at + 16, at + 16 + m, FIX_NONE, "payload"), 0);
    /* payload with both CRCs made right: the record checks see the rest */
    corrupt_range(&s, at + 16, at + 16 + m, FIX_BOTH, "payload (CRCs fixed)");
    sample_free(&s);
}
END_TEST

START_TEST(corrupt_data_member_frame)
{
    struct sample s;
    sample_new(&s, "frame");
    size_t hl = s.r.header_len, dl = s.r.data_len;
    /* the header: MTIME, XFL, OS and name bytes are not covered, so an
     * edit there may be accepted, but then the index is still exact */
    corrupt_range(&s, 0, hl, FIX_NONE, "data header");
    /* 03 00, CRC-32 and ISIZE: always rejected */
    ck_assert_uint_eq(corrupt_range(&s, dl - 10, dl, FIX_NONE, "data trailer"), 0);
    /* a sample of the deflate stream: not checked by idx_load (FORMAT.md
     * 7-8 are the decoder's), so it is accepted; just no crash */
    struct live l = {file_with(s.f.p, s.f.n), s.f.p, s.f.n};
    for (size_t at = hl; at < dl - 10; at += 997) {
        uint8_t orig = s.f.p[at];
        uint8_t v = orig ^ 0x55;
        pwrite_all(l.fd, &v, 1, at);
        struct idx x;
        char why[160];
        struct sp_err err = {0};
        ck_assert_int_eq(idx_load(l.fd, 0, l.n, &x, why, sizeof why, &err), 1);
        idx_free(&x);
        pwrite_all(l.fd, &orig, 1, at);
    }
    close(l.fd);
    sample_free(&s);
}
END_TEST

START_TEST(truncated_anywhere)
{
    struct sample s;
    sample_new(&s, NULL);
    int fd = file_with(s.f.p, s.f.n);
    /* every length from inside the data member's trailer to one byte short */
    for (size_t n = s.r.data_len - 12; n < s.f.n; n++) {
        ck_assert_int_eq(ftruncate(fd, (off_t)n), 0);
        struct idx x;
        char why[160];
        struct sp_err err = {0};
        errno = 0;
        int r = idx_load(fd, 0, n, &x, why, sizeof why, &err);
        ck_assert_msg(r == 0, "cut at %zu: idx_load returned %d (%s)", n, r, err.msg);
        ck_assert_ptr_null(x.p);
    }
    /* and a few lengths shorter than any spigz file */
    for (size_t n = 0; n < 100; n += 7) {
        ck_assert_int_eq(ftruncate(fd, (off_t)n), 0);
        struct idx x;
        char why[160];
        struct sp_err err = {0};
        ck_assert_int_eq(idx_load(fd, 0, n, &x, why, sizeof why, &err), 0);
    }
    close(fd);
    sample_free(&s);
}
END_TEST

START_TEST(index_region_with_extra_bytes)
{
    /* index_len in the footer covers k more bytes than the index members,
     * footer CRC right: a malformed index, to be rejected (0 with a reason),
     * not a read error.  errno is cleared first: idx_load must not depend
     * on a stale value. */
    struct sample s;
    sample_new(&s, NULL);
    struct buf pay = payload_of(s.r.r, s.r.n);
    for (size_t k = 1; k <= 40; k++) {
        struct buf t = tail_of(pay.p, pay.n, IDX_MEMBER_MAX, s.r.total, s.r.data_len,
                               s.r.header_len, s.r.n);
        size_t ilen = t.n - IDX_FOOTER_LEN;
        uint8_t *f = malloc(s.r.data_len + t.n + k);
        memcpy(f, s.f.p, s.r.data_len);
        memcpy(f + s.r.data_len, t.p, ilen);
        memset(f + s.r.data_len + ilen, 0x1f, k); /* k bytes of junk */
        uint8_t *ft = f + s.r.data_len + ilen + k;
        memcpy(ft, t.p + ilen, IDX_FOOTER_LEN);
        put_le(ft + 44, ilen + k, 8);
        fix_footer_crc(ft);
        size_t n = s.r.data_len + t.n + k;
        int fd = file_with(f, n);
        struct idx x;
        char why[160];
        struct sp_err err = {0};
        errno = 0;
        int r = idx_load(fd, 0, n, &x, why, sizeof why, &err);
        ck_assert_msg(r == 0, "%zu junk bytes in the index region: idx_load returned %d (%s)",
                      k, r, err.msg);
        ck_assert_int_ne(why[0], 0);
        close(fd);
        free(f);
        free(t.p);
    }
    free(pay.p);
    sample_free(&s);
}
END_TEST

START_TEST(base_offset_and_trailing_bytes)
{
    struct sample s;
    sample_new(&s, NULL);
    /* 777 bytes before the data member: usable with base 777 only */
    uint8_t *pre = malloc(777);
    for (size_t i = 0; i < 777; i++)
        pre[i] = (uint8_t)(i * 13);
    struct buf f = concat(pre, 777, s.f.p, s.f.n);
    struct idx x;
    char why[160];
    ck_assert_int_eq(load_buf(f.p, f.n, 777, &x, why, sizeof why), 1);
    ck_assert_uint_eq(x.base, 777);
    check_exact(&x, f.p, f.n, 777, s.c, s.cn);
    idx_free(&x);
    ck_assert_int_eq(load_check(&s, &f, 0, true), 0);     /* data member not at 0 */
    ck_assert_int_eq(load_check(&s, &f, 776, true), 0);
    ck_assert_int_eq(load_check(&s, &f, 778, true), 0);
    free(f.p);
    /* a gzip member before it (a concatenation): likewise */
    struct buf g = compress_buf((const uint8_t *)"abc", 3, 64 << 10, NULL);
    struct buf cat = concat(g.p, g.n, s.f.p, s.f.n);
    ck_assert_int_eq(load_check(&s, &cat, 0, true), 0);
    ck_assert_int_eq(load_buf(cat.p, cat.n, g.n, &x, why, sizeof why), 1);
    check_exact(&x, cat.p, cat.n, g.n, s.c, s.cn);
    idx_free(&x);
    free(cat.p);
    free(g.p);
    /* bytes after the footer: no footer at the end, so no index (and
     * nothing that says it is a spigz file) */
    static const size_t extra[] = {1, 8, 77, 78, 79, 200};
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
        uint8_t *z = calloc(1, extra[i]);
        struct buf t = concat(s.f.p, s.f.n, z, extra[i]);
        ck_assert_int_eq(load_check(&s, &t, 0, false), 0);
        free(t.p);
        free(z);
    }
    /* the spigz file twice: the second footer is at the end but the sizes
     * in it do not reach back to offset 0 */
    struct buf twice = concat(s.f.p, s.f.n, s.f.p, s.f.n);
    ck_assert_int_eq(load_check(&s, &twice, 0, true), 0);
    ck_assert_int_eq(load_buf(twice.p, twice.n, s.f.n, &x, why, sizeof why), 1);
    idx_free(&x);
    free(twice.p);
    free(pre);
    sample_free(&s);
}
END_TEST

START_TEST(not_seekable_is_a_read_error_or_no_index)
{
    /* a pipe has no footer to find: idx_load must not crash */
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    struct idx x;
    char why[160];
    struct sp_err err = {0};
    int r = idx_load(fds[0], 0, 1000, &x, why, sizeof why, &err);
    ck_assert(r == -1 || r == 0);
    if (r == -1)
        ck_assert_int_eq(err.kind, SP_ERR_READ);
    close(fds[0]);
    close(fds[1]);
}
END_TEST

/* The manifest (footer flag 4) round trips after bad ranges and notes,
 * across index members (a free map of 40000 ranges: 80 KB); every
 * type, and a newer writer's unknown type kept. */
START_TEST(manifest_round_trip)
{
    struct mf m = {0};
    static struct sp_range fr[40000];
    for (size_t i = 0; i < 40000; i++)
        fr[i] = (struct sp_range){(uint64_t)i * 2 + 1, 1}; /* inside the 300 pieces */
    const uint8_t dg[32] = {1, 2, 3};
    ck_assert_int_eq(mf_add_text(&m, "spigz.version", "9.9"), 0);
    ck_assert_int_eq(mf_add_uint(&m, "options.level", 6), 0);
    ck_assert_int_eq(mf_add_text(&m, "part.1.label", "bad\x1b[31mlabel"), 0); /* cleaned */
    ck_assert_int_eq(mf_add_ranges(&m, "free.map", fr, 40000), 0);
    ck_assert_int_eq(mf_add_bytes(&m, "image.xxh3-128-tree", dg, 32), 0);
    ck_assert_int_eq(mf_add_uint(&m, "options.level", 7), -1);   /* repeated */
    ck_assert_int_eq(mf_add_uint(&m, "Bad.Key", 7), -1);         /* not [a-z0-9._-] */
    uint8_t *p;
    size_t n;
    ck_assert_int_eq(mf_encode(&m, &p, &n), 0);
    /* a newer writer's entry of type 9, appended by hand (count 5 -> 6) */
    uint8_t *q = malloc(n + 16);
    memcpy(q, p, n);
    ck_assert_int_eq(q[0], 5);
    q[0] = 6;
    memcpy(q + n, "\x05later\x09\x03xyz", 11);
    fake_mf_p = q;
    fake_mf_n = n + 11;
    static const char *const one[] = {"a note"};
    static const struct sp_range bad = {4096, 512};
    struct idx x;
    char why[160];
    struct buf f;
    ck_assert_msg(fake_with(&bad, 1, one, 1, &x, why, sizeof why, &f) == 1, "%s", why);
    ck_assert_int_eq(f.p[f.n - IDX_FOOTER_LEN + 17], 1 | 2 | 4);
    ck_assert(x.has_mf);
    ck_assert_uint_eq(x.mf.n, 6);
    ck_assert_uint_eq(x.nnotes, 1);
    uint64_t v;
    char t[64];
    ck_assert(mf_get_uint(&x.mf, "options.level", &v) && v == 6);
    ck_assert_str_eq(mf_text(mf_get(&x.mf, "spigz.version"), t, sizeof t), "9.9");
    ck_assert_str_eq(mf_text(mf_get(&x.mf, "part.1.label"), t, sizeof t), "bad?[31mlabel");
    struct sp_range *r;
    ck_assert_int_eq(mf_ranges(mf_get(&x.mf, "free.map"), &r, &n), 0);
    ck_assert_uint_eq(n, 40000);
    ck_assert_mem_eq(r, fr, sizeof fr);
    free(r);
    const struct mf_entry *e = mf_get(&x.mf, "image.xxh3-128-tree");
    ck_assert(e != NULL && e->type == MF_BYTES && e->vlen == 32 && memcmp(e->v, dg, 32) == 0);
    e = mf_get(&x.mf, "later");
    ck_assert(e != NULL && e->type == 9 && e->vlen == 3);
    idx_free(&x);
    ck_assert(!x.has_mf);
    free(f.p);
    fake_mf_p = NULL;
    fake_mf_n = 0;
    free(p);
    free(q);
    mf_free(&m);
}
END_TEST

/* mf_decode refuses what FORMAT.md 2.2 forbids, each with its reason. */
START_TEST(manifest_rejected)
{
    static const struct {
        const char *bytes;
        size_t n;
        const char *why;
    } c[] = {
        {"\x00", 1, "count"},                                 /* no entry */
        {"\x01\x01" "a\x02\x01\x05\x00", 7, "after"},         /* a byte after */
        {"\x02\x01" "a\x02\x01\x05\x01" "a\x02\x01\x06", 11, "repeated"},
        {"\x01\x01" "A\x02\x01\x05", 6, "key"},               /* not lower case */
        {"\x01\x00\x02\x01\x05", 5, "malformed"},             /* an empty key */
        {"\x01\x01" "a\x01\x02" "h\x07", 7, "value"},         /* a control in text */
        {"\x01\x01" "a\x02\x02\x85\x00", 7, "value"},         /* a redundant LEB128 */
        {"\x01\x01" "a\x02\x00", 5, "value"},                 /* an empty uint */
        {"\x01\x01" "a\x04\x03\x01\x00\x00", 8, "value"},     /* a range of length 0 */
        {"\x01\x01" "a\x04\x03\x01\x7f\x02", 8, "value"},     /* past the content (100) */
        {"\x01\x01" "a\x04\x05\x02\x01\x01\x00\x01", 10, "value"}, /* ranges touching */
        {"\x01\x01" "a\x01\x05" "ab", 6, "malformed"},        /* cut short */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        struct mf m;
        const char *why = NULL;
        ck_assert_msg(mf_decode((const uint8_t *)c[i].bytes, c[i].n, 100, &m, &why) == -1,
                      "case %zu accepted", i);
        ck_assert_msg(strstr(why, c[i].why) != NULL, "case %zu: %s", i, why);
        ck_assert_ptr_null(m.e);
    }
    /* and one the reader takes: an empty text, a range ending at the end */
    struct mf m;
    const char *why;
    ck_assert_int_eq(mf_decode((const uint8_t *)"\x02\x01" "a\x01\x00\x01" "b\x04\x03\x01\x5f\x05",
                               12, 100, &m, &why), 0);
    mf_free(&m);
    /* through the index: a malformed manifest refuses the index */
    fake_mf_p = (const uint8_t *)"\x01\x01" "a\x01\x02" "h\x07";
    fake_mf_n = 7;
    struct idx x;
    char w[160];
    ck_assert_int_eq(fake_with(NULL, 0, NULL, 0, &x, w, sizeof w, NULL), 0);
    ck_assert_msg(strstr(w, "manifest value") != NULL, "%s", w);
    fake_mf_p = NULL;
    fake_mf_n = 0;
}
END_TEST

/* A long note (or the manifest) appended when the records have filled the
 * writer's buffer to within a note of its end: it must go through the
 * spill, not past the buffer (ASan saw 419 bytes written past it before
 * appends went in record-sized steps).  The payload comes out whole. */
START_TEST(long_note_at_the_spill_point)
{
    struct sp_err err = {0};
    struct idx_w *w = idx_w_new(false, &err);
    ck_assert_ptr_nonnull(w);
    ck_assert_uint_eq(idx_rec_size(true, 1 << 20, 1000), 10);
    size_t k = (IDX_SPILL - 608) / 10; /* 8388000 bytes of records */
    for (size_t i = 0; i < k; i++)
        ck_assert_int_eq(idx_w_add(w, true, 1 << 20, 1000, (uint32_t)i, &err), 0);
    static char note[IDX_NOTE_MAX + 1];
    memset(note, 'n', IDX_NOTE_MAX);
    const char *notes[] = {note};
    ck_assert_int_eq(idx_w_add_notes(w, notes, 1, &err), 0);
    int fd = tmpfile_fd();
    static struct out o;
    out_init(&o, fd);
    ck_assert_int_eq(idx_w_finish(w, &o, (uint64_t)k << 20, 1000 * k + 20, 10), 0);
    ck_assert_int_eq(out_flush(&o), 0);
    idx_w_free(w);
    uint64_t payload = 10 * (uint64_t)k + 1 + 2 + IDX_NOTE_MAX;
    struct buf all = slurp(fd);
    ck_assert_uint_eq(all.n, idx_len(payload));
    /* the note's bytes end the payload, in the last member */
    ck_assert(memmem(all.p + all.n - IDX_FOOTER_LEN - 10 - 2000, 2000, note, IDX_NOTE_MAX) != NULL);
    free(all.p);
    close(fd);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("idx");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, small_files);
    tcase_add_test(t, empty_content);
    tcase_add_test(t, hundreds_of_pieces);
    tcase_add_test(t, spill_to_temporary_file);
    tcase_add_test(t, spill_failure_is_reported);
    tcase_add_test(t, bad_ranges_round_trip);
    tcase_add_test(t, bad_ranges_rejected);
    tcase_add_test(t, notes_round_trip);
    tcase_add_test(t, notes_rejected);
    tcase_add_test(t, any_split_is_accepted);
    tcase_add_test(t, bad_records_are_rejected);
    tcase_add_test(t, largest_piece);
    tcase_add_test(t, huge_piece_count_is_declined);
    tcase_add_test(t, any_data_member_header);
    tcase_add_test(t, corrupt_footer);
    tcase_add_test(t, corrupt_index_member);
    tcase_add_test(t, corrupt_data_member_frame);
    tcase_add_test(t, truncated_anywhere);
    tcase_add_test(t, index_region_with_extra_bytes);
    tcase_add_test(t, base_offset_and_trailing_bytes);
    tcase_add_test(t, not_seekable_is_a_read_error_or_no_index);
    tcase_add_test(t, manifest_round_trip);
    tcase_add_test(t, manifest_rejected);
    tcase_add_test(t, long_note_at_the_spill_point);
    suite_add_tcase(s, t);
    return run_suite(s);
}
