/* fuzz_index.c — libFuzzer harness for the trailing index of a spigz file.
 *
 * The data member is fixed and valid; only what follows it comes from the
 * fuzzer.  At startup the harness builds four data members with cmp_run (and
 * idx_w for a hand-made header), and decodes each with zlib for reference:
 *   variant 0: ~100 KiB of text and zero runs, 8 KiB chunks: ~20 pieces;
 *   variant 1: empty content (no piece at all);
 *   variant 2: one short data piece, FNAME in the header;
 *   variant 3: variant 0's deflate stream under a header with FEXTRA, FNAME,
 *              FCOMMENT and FHCRC.
 *
 * An input is one flags byte, then the trailing region T (index members and
 * footer).  The file is [prefix] data member T, and flags say:
 *   bits 0-1  the variant;
 *   bit 2     set the footer's data_len and index_len to match the file
 *             (index_len = |T| - 78), so mutations get past the size check;
 *   bit 3     recompute the footer's payload_crc over T's index members
 *             (walked leniently), so mutated records get parsed;
 *   bit 4     recompute the footer's footer_crc (done last);
 *   bit 5     put 13 bytes before the data member (a non-zero base);
 *   bit 6     decode to a pipe (in order) instead of a memfd (positioned).
 * Without the fix-ups, the CRCs keep nearly every mutation out; with them,
 * the fuzzer reaches the record parser and the cross-checks.
 *
 * What must hold, whatever T is:
 *   - idx_load() returns 0 or 1, never -1 (a memfd has no read errors);
 *     an accepted index's notes are bounded and printable UTF-8;
 *   - when it returns 1: the pieces tile [0, total) and the deflate stream,
 *     total is the reference length, the CRC is the member's;
 *   - dec_run uses the index only when idx_load() took it, and then either
 *     fails with SP_ERR_DATA or outputs exactly the reference content;
 *   - when idx_load() took it but dec_run did not (a piece disagreed with
 *     the index, FORMAT.md checks 7-8, or pieces over DEC_PIECE_LIMIT), the
 *     sequential decode that follows outputs the reference content first
 *     when it succeeds, whatever the indexed pass wrote;
 *   - dec_run without the index (idx_load said 0) outputs the reference
 *     content first when it succeeds (T may hold more gzip members);
 *   - dec_list() is exact when the index is used, with the reference
 *     length (or when T holds a whole spigz file of its own: then as the
 *     sum of the parts);
 *   - a loaded index exports in both --export-index formats, to exactly
 *     the size announced, or is refused when the data member does not
 *     start the file.
 *
 * With SPIGZ_FUZZ_DUMP_SEEDS=DIR in the environment, the harness writes its
 * seeds (each variant's valid trailing region under a few flag values) into
 * DIR and exits: fuzz/make-corpus.sh uses that.
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

#include "compress.h"
#include "dec.h"
#include "idx.h"
#include "idx_w.h"
#include "text.h"
#include "xidx.h"
#include "osink.h"
#include "out.h"

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "fuzz_index: check failed at line %d: %s\n", __LINE__, \
                    #cond);                                                      \
            abort();                                                             \
        }                                                                        \
    } while (0)

#define F_FIX_SIZES 0x04
#define F_FIX_PCRC 0x08
#define F_FIX_FCRC 0x10
#define F_BASE 0x20
#define F_PIPE 0x40
#define PREFIX_LEN 13

struct bytes {
    uint8_t *p;
    size_t n;
};

struct variant {
    struct bytes member;  /* the data member */
    struct bytes tail;    /* its valid trailing region */
    struct bytes content; /* reference: zlib's decode of the member */
    uint32_t crc;
};

static struct variant V[4];

static struct bytes slurp(int fd)
{
    struct bytes b = {NULL, 0};
    off_t end = lseek(fd, 0, SEEK_END);
    CHECK(end >= 0);
    b.n = (size_t)end;
    b.p = malloc(b.n + 1);
    CHECK(b.p != NULL);
    CHECK(pread(fd, b.p, b.n, 0) == (ssize_t)b.n);
    return b;
}

static int memfd_with(const uint8_t *a, size_t an, const uint8_t *b, size_t bn,
                      const uint8_t *c, size_t cn)
{
    int fd = memfd_create("fuzz-index", MFD_CLOEXEC);
    CHECK(fd >= 0);
    if (an > 0)
        CHECK(write(fd, a, an) == (ssize_t)an);
    if (bn > 0)
        CHECK(write(fd, b, bn) == (ssize_t)bn);
    if (cn > 0)
        CHECK(write(fd, c, cn) == (ssize_t)cn);
    return fd;
}

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* zlib's decode of the first gzip member of b. */
static struct bytes inflate_member(const struct bytes *b, uint32_t *crc)
{
    struct bytes out = {malloc(1 << 20), 0};
    CHECK(out.p != NULL);
    z_stream s;
    memset(&s, 0, sizeof s);
    CHECK(inflateInit2(&s, 31) == Z_OK);
    s.next_in = b->p;
    s.avail_in = (uInt)b->n;
    s.next_out = out.p;
    s.avail_out = 1 << 20;
    CHECK(inflate(&s, Z_FINISH) == Z_STREAM_END);
    out.n = s.total_out;
    *crc = (uint32_t)s.adler;
    inflateEnd(&s);
    return out;
}

/* Compress content with cmp_run; split the result into member and tail. */
static void build(struct variant *v, const uint8_t *p, size_t n, size_t chunk,
                  const char *name)
{
    int in = memfd_with(p, n, NULL, 0, NULL, 0);
    CHECK(lseek(in, 0, SEEK_SET) == 0);
    int out = memfd_create("fuzz-out", MFD_CLOEXEC);
    struct cmp_opts co;
    cmp_opts_default(&co);
    co.threads = 1;
    co.chunk = chunk;
    co.zmin = 4096;
    co.name = name;
    struct cmp_stats st;
    struct sp_err err = {0};
    CHECK(cmp_run(in, out, &co, &st, &err) == 0);
    struct bytes all = slurp(out);
    close(in);
    close(out);
    CHECK(all.n >= IDX_FOOTER_LEN);
    uint64_t data_len = le(all.p + all.n - IDX_FOOTER_LEN + 28, 8);
    CHECK(data_len < all.n);
    v->member = (struct bytes){malloc(data_len), data_len};
    memcpy(v->member.p, all.p, data_len);
    v->tail = (struct bytes){malloc(all.n - data_len), all.n - data_len};
    memcpy(v->tail.p, all.p + data_len, v->tail.n);
    free(all.p);
    v->content = inflate_member(&v->member, &v->crc);
    CHECK(v->content.n == n && memcmp(v->content.p, p, n) == 0);
}

/* Variant 3: variant 0's stream under a header with every optional field,
 * indexed with idx_w from variant 0's pieces. */
static void build_fancy(struct variant *v, const struct variant *v0)
{
    uint8_t h[64];
    size_t hn = 0;
    const uint8_t fixed[10] = {0x1f, 0x8b, 8, 0x1e, 1, 2, 3, 4, 0, 3};
    memcpy(h, fixed, 10);
    hn = 10;
    const uint8_t extra[8] = {6, 0, 'A', 'B', 2, 0, 'x', 'y'};
    memcpy(h + hn, extra, 8);
    hn += 8;
    memcpy(h + hn, "name\0comment", 13);
    hn += 13;
    uint32_t hcrc = (uint32_t)crc32(0, h, (uInt)hn);
    put_le(h + hn, hcrc & 0xffff, 2);
    hn += 2;

    int fd0 = memfd_with(v0->member.p, v0->member.n, v0->tail.p, v0->tail.n, NULL, 0);
    struct idx x;
    char why[160];
    struct sp_err err = {0};
    CHECK(idx_load(fd0, 0, v0->member.n + v0->tail.n, &x, why, sizeof why, &err) == 1);
    close(fd0);
    size_t body = v0->member.n - x.header_len;
    v->member = (struct bytes){malloc(hn + body), hn + body};
    memcpy(v->member.p, h, hn);
    memcpy(v->member.p + hn, v0->member.p + x.header_len, body);

    struct idx_w *w = idx_w_new(false, &err);
    CHECK(w != NULL);
    for (uint64_t k = 0; k < x.n; k++)
        CHECK(idx_w_add(w, x.p[k].data, x.p[k + 1].uoff - x.p[k].uoff,
                        x.p[k + 1].coff - x.p[k].coff, x.p[k].crc, &err) == 0);
    int tfd = memfd_create("fuzz-tail", MFD_CLOEXEC);
    static struct out o;
    out_init(&o, tfd);
    CHECK(idx_w_finish(w, &o, x.total, v->member.n, hn) == 0);
    CHECK(out_flush(&o) == 0);
    idx_w_free(w);
    idx_free(&x);
    v->tail = slurp(tfd);
    close(tfd);
    v->content = inflate_member(&v->member, &v->crc);
    CHECK(v->content.n == v0->content.n &&
          memcmp(v->content.p, v0->content.p, v->content.n) == 0);
}

static void setup(void)
{
    size_t n = 100 << 10;
    uint8_t *p = calloc(1, n);
    CHECK(p != NULL);
    uint32_t r = 7;
    for (size_t i = 0; i < n; i++) {
        r = r * 1103515245u + 12345u;
        bool zero = (i / 4096) % 5 == 2 || (i / 4096) % 7 == 3 || i >= n - 12288;
        p[i] = zero ? 0 : (uint8_t)"index fuzz\n"[(r >> 16) % 11];
    }
    build(&V[0], p, n, 8192, NULL);
    build(&V[1], p, 0, 4096, NULL);
    build(&V[2], (const uint8_t *)"hello, index", 12, 4096, "hello.txt");
    build_fancy(&V[3], &V[0]);
    free(p);
}

/* Lenient walk of the index members in t[0..n): CRC of their payloads. */
static uint32_t payload_crc(const uint8_t *t, size_t n)
{
    uint32_t crc = 0;
    size_t pos = 0;
    while (n - pos >= 16) {
        size_t m = (size_t)le(t + pos + 14, 2);
        size_t have = n - pos - 16 < m ? n - pos - 16 : m;
        crc = (uint32_t)crc32(crc, t + pos + 16, (uInt)have);
        if (n - pos - 16 - have < 10)
            break;
        pos += 16 + have + 10;
    }
    return crc;
}

/* A seed whose index holds more after the records: variant v's tail with
 * one more index member holding list[0..n), the footer's flags set to
 * flag; the harness's fix-ups (flags 0x1c) recompute sizes and CRCs.
 * Flag 1: bad ranges (--rescue); flag 2: notes; 3: both. */
static void dump_extra_seed(const char *dir, int v, const uint8_t *list, size_t n, uint8_t flag,
                            const char *what)
{
    const struct bytes *t = &V[v].tail;
    uint8_t m[16 + 64 + 10] = {0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff,
                               (uint8_t)(n + 4), 0, 'S', 'I', (uint8_t)n, 0};
    CHECK(n <= 64);
    memcpy(m + 16, list, n);
    memset(m + 16 + n, 0, 10);
    m[16 + n] = 3;
    uint8_t foot[IDX_FOOTER_LEN];
    memcpy(foot, t->p + t->n - IDX_FOOTER_LEN, IDX_FOOTER_LEN);
    foot[17] = flag;
    char path[4096];
    snprintf(path, sizeof path, "%s/index-v%d-%s-f1c", dir, v, what);
    FILE *fp = fopen(path, "wb");
    CHECK(fp != NULL);
    uint8_t b = (uint8_t)(0x1c | v);
    CHECK(fwrite(&b, 1, 1, fp) == 1);
    CHECK(fwrite(t->p, 1, t->n - IDX_FOOTER_LEN, fp) == t->n - IDX_FOOTER_LEN);
    CHECK(fwrite(m, 1, 16 + n + 10, fp) == 16 + n + 10);
    CHECK(fwrite(foot, 1, sizeof foot, fp) == sizeof foot);
    CHECK(fclose(fp) == 0);
}

static void dump_bad_seed(const char *dir, int v)
{
    /* 2 ranges: [0, 1) and, a gap of 3 later, [4, 5) (LEB128 values) */
    static const uint8_t bad[] = {2, 0, 1, 3, 1};
    /* 2 notes: "two layouts", and "\xc3\xa9" (UTF-8 e-acute) */
    static const uint8_t notes[] = {2, 11, 't', 'w', 'o', ' ', 'l', 'a', 'y', 'o', 'u', 't', 's',
                                    2, 0xc3, 0xa9};
    static const uint8_t both[] = {2, 0, 1, 3, 1, 1, 4, 'n', 'o', 't', 'e'};
    dump_extra_seed(dir, v, bad, sizeof bad, 1, "bad");
    dump_extra_seed(dir, v, notes, sizeof notes, 2, "notes");
    dump_extra_seed(dir, v, both, sizeof both, 3, "bad-notes");
}

static void dump_seeds(const char *dir)
{
    dump_bad_seed(dir, 0);
    dump_bad_seed(dir, 2);
    static const uint8_t flags[] = {0x00, 0x1c, 0x3c, 0x5c};
    for (int v = 0; v < 4; v++)
        for (size_t f = 0; f < sizeof flags; f++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/index-v%d-f%02x", dir, v, flags[f]);
            FILE *fp = fopen(path, "wb");
            CHECK(fp != NULL);
            uint8_t b = (uint8_t)(flags[f] | v);
            CHECK(fwrite(&b, 1, 1, fp) == 1);
            CHECK(fwrite(V[v].tail.p, 1, V[v].tail.n, fp) == V[v].tail.n);
            CHECK(fclose(fp) == 0);
        }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    signal(SIGPIPE, SIG_IGN);
    setup();
    const char *dir = getenv("SPIGZ_FUZZ_DUMP_SEEDS");
    if (dir != NULL) {
        dump_seeds(dir);
        exit(0);
    }
    return 0;
}

/* The pieces of an accepted index describe this member. */
static void check_index(const struct idx *x, const struct variant *v, uint64_t base)
{
    CHECK(x->base == base);
    CHECK(x->data_len == v->member.n);
    CHECK(x->total == v->content.n);
    CHECK(x->crc == v->crc);
    CHECK(x->p != NULL);
    CHECK(x->p[0].uoff == 0 && x->p[0].coff == 0);
    for (uint64_t k = 0; k < x->n; k++) {
        CHECK(x->p[k + 1].uoff > x->p[k].uoff);
        CHECK(x->p[k + 1].coff > x->p[k].coff);
    }
    CHECK(x->p[x->n].uoff == x->total);
    CHECK(x->p[x->n].coff == x->data_len - x->header_len - 10);
    /* notes: bounded, and printable (what reaches a terminal) */
    CHECK(x->nnotes <= IDX_NOTES_MAX && (x->nnotes == 0) == (x->notes == NULL));
    for (size_t i = 0; i < x->nnotes; i++) {
        size_t n = strlen(x->notes[i]);
        CHECK(n >= 1 && n <= IDX_NOTE_MAX);
        CHECK(txt_printable((const uint8_t *)x->notes[i], n));
    }
}

/* --export-index: a loaded index exports in both formats, exactly
 * xidx_size() bytes, when its data member starts the file; otherwise it is
 * refused as a format error, writing nothing. */
static void check_export(const struct idx *x, uint64_t fsize)
{
    for (int f = XIDX_GZTOOL; f <= XIDX_INDEXED_GZIP; f++) {
        int fd = memfd_create("fuzz-xidx", MFD_CLOEXEC);
        CHECK(fd >= 0);
        struct sp_err err = {0};
        int rc = xidx_write(x, fsize, (enum xidx_fmt)f, fd, &err);
        off_t len = lseek(fd, 0, SEEK_END);
        if (x->base == 0) {
            CHECK(rc == 0);
            CHECK((uint64_t)len == xidx_size(x, (enum xidx_fmt)f));
        } else {
            CHECK(rc == -1 && err.kind == SP_ERR_FORMAT && len == 0);
        }
        close(fd);
    }
}

static size_t read_all(int fd, uint8_t *p, size_t cap)
{
    size_t n = 0;
    ssize_t r;
    while (n < cap && (r = read(fd, p + n, cap - n)) > 0)
        n += (size_t)r;
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned flags = data[0];
    const struct variant *v = &V[flags & 3];
    size_t tn = size - 1;
    uint8_t *t = malloc(tn + 1);
    CHECK(t != NULL);
    memcpy(t, data + 1, tn);
    if (tn >= IDX_FOOTER_LEN) {
        uint8_t *f = t + tn - IDX_FOOTER_LEN;
        if (flags & F_FIX_SIZES) {
            put_le(f + 28, v->member.n, 8);
            put_le(f + 44, tn - IDX_FOOTER_LEN, 8);
        }
        if (flags & F_FIX_PCRC)
            put_le(f + 60, payload_crc(t, tn - IDX_FOOTER_LEN), 4);
        if (flags & F_FIX_FCRC)
            put_le(f + 64, (uint32_t)crc32(0, f + 16, 48), 4);
    }
    static const uint8_t prefix[PREFIX_LEN] = "not a member";
    uint64_t base = (flags & F_BASE) ? PREFIX_LEN : 0;
    int fd = memfd_with(prefix, (size_t)base, v->member.p, v->member.n, t, tn);
    uint64_t fsize = base + v->member.n + tn;

    /* The index alone. */
    struct idx x;
    char why[160];
    struct sp_err err = {0};
    int lr = idx_load(fd, base, fsize, &x, why, sizeof why, &err);
    if (lr < 0)
        fprintf(stderr, "idx_load: -1 (%s)\n", err.msg);
    CHECK(lr == 0 || lr == 1);
    bool big = false; /* pieces over what the indexed path holds */
    if (lr == 1) {
        check_index(&x, v, base);
        big = x.max_ulen > DEC_PIECE_LIMIT || x.max_clen > DEC_PIECE_LIMIT;
        check_export(&x, fsize);
        idx_free(&x);
    } else {
        CHECK(x.p == NULL);
    }

    /* -l */
    struct dec_list l;
    CHECK(lseek(fd, (off_t)base, SEEK_SET) == (off_t)base);
    memset(&err, 0, sizeof err);
    int lrc = dec_list(fd, 1, false, &l, &err);
    free(l.bad);
    dec_notes_free(l.notes, l.nnotes);
    /* with an index, -l reads it alone; without one, it decodes the
     * whole file, as gzip -l does: it fails where the decode below fails */
    CHECK(lrc == 0 || lr == 0);
    CHECK(lrc != 0 || lr == 0 || l.exact);
    if (l.exact && lr == 1) {
        CHECK(l.parts == 1);
        CHECK(l.uncompressed == v->content.n);
        CHECK(l.compressed == fsize - base);
    } else if (l.exact) {
        /* spigz files joined: T held a whole one after the data member's
         * own index; each part was validated on its own */
        CHECK(l.parts > 1);
        CHECK(l.compressed == fsize - base);
    }

    /* Decode through dec_run: to a memfd (positioned) or a pipe (in order). */
    size_t cap = v->content.n + 4096;
    uint8_t *got = malloc(cap);
    CHECK(got != NULL);
    int ofd, rfd;
    if (flags & F_PIPE) {
        int fds[2];
        CHECK(pipe2(fds, O_CLOEXEC) == 0);
        CHECK(fcntl(fds[1], F_SETPIPE_SZ, (int)cap) >= (int)cap);
        CHECK(fcntl(fds[1], F_SETFL, O_NONBLOCK) == 0); /* never hang: fail instead */
        ofd = fds[1];
        rfd = fds[0];
    } else {
        ofd = rfd = memfd_create("fuzz-dec", MFD_CLOEXEC);
        CHECK(ofd >= 0);
    }
    struct osink o;
    memset(&err, 0, sizeof err);
    CHECK(osink_open(&o, ofd, OSINK_SPARSE_AUTO, &err) == 0);
    struct dec_opts dopt = {.threads = 2, .use_index = true};
    struct dec_stats ds;
    CHECK(lseek(fd, (off_t)base, SEEK_SET) == (off_t)base);
    int drc = dec_run(fd, &o, &dopt, &ds, &err);
    free(ds.bad);
    free(ds.unread);
    dec_notes_free(ds.notes, ds.nnotes);
    /* The index is used exactly when it loads, unless its pieces are too
     * large to hold or one of them disagrees with it; the decode is then
     * sequential, and says why when the index lied. */
    CHECK(!ds.indexed || lr == 1);
    CHECK(ds.indexed || lr == 0 || big || ds.index_warning[0] != '\0');
    size_t gn;
    off_t end = -1;
    if (flags & F_PIPE) {
        close(ofd);
        gn = read_all(rfd, got, cap);
    } else {
        gn = (size_t)pread(rfd, got, cap, 0);
        end = lseek(rfd, 0, SEEK_END);
    }
    close(rfd);
    if (ds.indexed) {
        if (drc != 0) {
            if (err.kind != SP_ERR_DATA)
                fprintf(stderr, "dec_run: kind %d: %s\n", (int)err.kind, err.msg);
            CHECK(err.kind == SP_ERR_DATA);
        } else {
            CHECK(ds.out_bytes == v->content.n);
            CHECK(gn == v->content.n && memcmp(got, v->content.p, gn) == 0);
            if (!(flags & F_PIPE))
                CHECK(end == (off_t)gn); /* the size was set, trailing holes included */
        }
    } else if (lr == 1) {
        /* the sequential pass after an index that lied: gunzip's bytes,
         * whatever the indexed pass wrote first; T may hold more members */
        if (drc != 0 && err.kind != SP_ERR_DATA && !(err.kind == SP_ERR_WRITE && (flags & F_PIPE)))
            fprintf(stderr, "dec_run after the index: kind %d: %s\n", (int)err.kind, err.msg);
        CHECK(drc == 0 || err.kind == SP_ERR_DATA ||
              (err.kind == SP_ERR_WRITE && (flags & F_PIPE))); /* a full pipe */
        if (drc == 0)
            CHECK(gn >= v->content.n && memcmp(got, v->content.p, v->content.n) == 0);
    } else {
        CHECK((drc == 0) == (lrc == 0));
        if (drc == 0)
            CHECK(gn >= v->content.n && memcmp(got, v->content.p, v->content.n) == 0);
    }
    free(got);
    close(fd);
    free(t);
    return 0;
}
