/* gzx.c — see gzx.h: the build pass, the file's identity, the buffered
 * reader and member headers (shared with gzx_read.c and gzx_file.c).
 *
 * The pass inflates each member raw (the gzip header and trailer are read
 * here, so that every member, however many, is one raw stream) with
 * Z_BLOCK, which makes inflate return at each deflate block boundary:
 * there the stream's position is a whole number of bytes less
 * data_type & 7 bits, and inflateGetDictionary gives the window (zlib's
 * examples/zran.c shows the technique). */
#include "gzx.h"
#include "gzx_int.h"
#include "gzip.h"
#include "io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define GZX_BUILD_IN (1u << 20)
#define GZX_BUILD_OUT (256u << 10)

/* ---- the file ---- */

/* CRC-32 of n bytes at off.  0, or -1 with *err. */
static int gzx_crc_at(int fd, uint64_t off, size_t n, uint32_t *crc, struct sp_err *err)
{
    uint8_t *b = malloc(n > 0 ? n : 1);
    if (b == NULL) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
        return -1;
    }
    int rc = io_pread_exact(fd, b, n, off);
    if (rc != 0)
        sp_err_set(err, SP_ERR_READ, rc < 0 ? errno : 0, "cannot read the file");
    else
        *crc = (uint32_t)crc32(0, b, (uInt)n);
    free(b);
    return rc == 0 ? 0 : -1;
}

int gzx_identify(int fd, struct gzx_id *id, uint64_t *ino, uint64_t *dev, struct sp_err *err)
{
    struct stat s;
    if (fstat(fd, &s) != 0) {
        sp_err_set(err, SP_ERR_READ, errno, "cannot stat the file");
        return -1;
    }
    if (!S_ISREG(s.st_mode)) {
        sp_err_set(err, SP_ERR_FORMAT, 0, "not a regular file");
        return -1;
    }
    id->size = (uint64_t)s.st_size;
    id->mtime_ns = (int64_t)s.st_mtim.tv_sec * 1000000000 + s.st_mtim.tv_nsec;
    *ino = (uint64_t)s.st_ino;
    *dev = (uint64_t)s.st_dev;
    size_t n = id->size < GZX_ID_BYTES ? (size_t)id->size : GZX_ID_BYTES;
    if (gzx_crc_at(fd, 0, n, &id->head_crc, err) != 0 ||
        gzx_crc_at(fd, id->size - n, n, &id->tail_crc, err) != 0)
        return -1;
    return 0;
}

/* ---- the buffered reader ---- */

void gzx_rd_seek(struct gzx_rd *r, uint64_t off)
{
    r->base = off;
    r->have = r->at = 0;
}

/* The next bytes after buf[have): 1, 0 at the limit, -1 (r->err). */
int gzx_rd_fill(struct gzx_rd *r)
{
    r->base += r->have;
    r->have = r->at = 0;
    if (r->base >= r->limit)
        return 0;
    size_t n = r->limit - r->base < r->cap ? (size_t)(r->limit - r->base) : r->cap, got;
    if (io_pread(r->fd, r->buf, n, r->base, &got) != 0) {
        r->err = errno;
        return -1;
    }
    r->have = got;
    return got > 0 ? 1 : 0;
}

int gzx_rd_getc(void *ctx)
{
    struct gzx_rd *r = ctx;
    if (r->at == r->have) {
        int rc = gzx_rd_fill(r);
        if (rc <= 0)
            return rc == 0 ? -1 : -2;
    }
    return r->buf[r->at++];
}

uint64_t gzx_rd_pos(const struct gzx_rd *r)
{
    return r->base + r->at;
}

/* A member header at the reader's position: 0, or -1 with *err
 * (SP_ERR_FORMAT for a bad header at byte 0 when first, the file not being
 * gzip; else SP_ERR_DATA: a reader's index said a member starts there). */
int gzx_header(struct gzx_rd *r, bool first, struct sp_err *err)
{
    struct gz_info h;
    uint64_t at = gzx_rd_pos(r);
    int st = gz_read_header(gzx_rd_getc, r, &h);
    if (st == GZ_OK)
        return 0;
    if (st == GZ_READ_ERROR) {
        sp_err_set(err, SP_ERR_READ, r->err, "cannot read the file");
        return -1;
    }
    char msg[128];
    sp_err_set(err, first && at == 0 ? SP_ERR_FORMAT : SP_ERR_DATA, 0,
               "the member at byte %llu: %s", (unsigned long long)at,
               gz_status_msg(st, &h, msg, sizeof msg));
    return -1;
}

uint64_t gzx_nchunks(uint64_t total)
{
    return total / GZX_CHUNK + (total % GZX_CHUNK != 0);
}

void gzx_free_tables(struct gzx *g)
{
    for (uint64_t k = 0; g->p != NULL && k < g->np; k++)
        free(g->p[k].zwin);
    free(g->p);
    free(g->crc);
    free(g->zero);
    free(g->run);
    g->p = NULL;
    g->crc = NULL;
    g->zero = NULL;
    g->run = NULL;
}

/* ---- the build pass ---- */

struct gzx_build {
    struct gzx *g;
    struct gzx_rd rd;
    z_stream zs;
    uint8_t *out, *win;
    uint64_t pcap;      /* points allocated */
    uint64_t crcap;     /* chunk CRCs allocated */
    uint64_t span;      /* GZX_SPAN, doubled when the points are thinned */
    uint32_t pmax;      /* GZX_POINTS_MAX, or less */
    uint64_t last;      /* content offset of the last point */
    uint32_t chunk_crc; /* of the chunk being filled */
    bool chunk_zero;    /* its bytes so far are all zeros */
    struct sp_progress *prog;
    uint64_t shown;     /* file bytes counted in prog (PROG_IN) */
};

/* Every other point kept, the span doubled: the table stays under
 * GZX_POINTS_MAX whatever the content's length. */
static void gzx_thin(struct gzx_build *b)
{
    struct gzx *g = b->g;
    uint64_t n = 0;
    for (uint64_t k = 0; k < g->np; k++) {
        if (k % 2 == 0)
            g->p[n++] = g->p[k];
        else
            free(g->p[k].zwin);
    }
    g->np = n;
    b->span *= 2;
    b->last = g->p[n - 1].uoff;
}

/* A point at content offset total: at a member's header at coff (member),
 * else at the current block boundary with its window.  0, or -1 (memory). */
static int gzx_add_point(struct gzx_build *b, bool member, uint64_t coff, unsigned bits)
{
    struct gzx *g = b->g;
    if (g->np == b->pmax)
        gzx_thin(b);
    if (g->np == b->pcap) {
        uint64_t cap = b->pcap ? b->pcap * 2 : 64;
        struct gzx_point *p = realloc(g->p, cap * sizeof *p);
        if (p == NULL)
            return -1;
        g->p = p;
        b->pcap = cap;
    }
    struct gzx_point pt = {.uoff = g->total, .coff = coff, .bits = (uint8_t)bits,
                           .member = member};
    if (!member) {
        uInt wlen = GZX_WINDOW;
        if (inflateGetDictionary(&b->zs, b->win, &wlen) != Z_OK)
            return -1;
        uLongf zlen = compressBound(wlen);
        if ((pt.zwin = malloc(zlen)) == NULL)
            return -1;
        if (compress2(pt.zwin, &zlen, b->win, wlen, 1) != Z_OK) {
            free(pt.zwin);
            return -1;
        }
        pt.wlen = wlen;
        pt.zlen = (uint32_t)zlen;
    }
    g->p[g->np++] = pt;
    b->last = g->total;
    return 0;
}

/* p[0..n) are all zeros. */
static bool gzx_zeros(const uint8_t *p, size_t n)
{
    static const uint8_t z[4096];
    while (n >= sizeof z) {
        if (memcmp(p, z, sizeof z) != 0)
            return false;
        p += sizeof z;
        n -= sizeof z;
    }
    return memcmp(p, z, n) == 0;
}

/* n content bytes decoded: the chunk CRCs, zero bits and the total.  0,
 * or -1 (memory). */
static int gzx_count(struct gzx_build *b, const uint8_t *p, size_t n)
{
    struct gzx *g = b->g;
    while (n > 0) {
        uint64_t in_chunk = g->total % GZX_CHUNK;
        size_t take = GZX_CHUNK - in_chunk < n ? (size_t)(GZX_CHUNK - in_chunk) : n;
        if (in_chunk == 0) {
            if (g->nchunks == b->crcap) {
                uint64_t cap = b->crcap ? b->crcap * 2 : 256;
                uint32_t *c = realloc(g->crc, cap * sizeof *c);
                if (c != NULL)
                    g->crc = c;
                uint8_t *z = realloc(g->zero, cap / 8);
                if (z != NULL)
                    g->zero = z;
                if (c == NULL || z == NULL)
                    return -1;
                memset(g->zero + b->crcap / 8, 0, (cap - b->crcap) / 8);
                b->crcap = cap;
            }
            g->nchunks++;
            b->chunk_crc = 0;
            b->chunk_zero = true;
        }
        b->chunk_crc = (uint32_t)crc32(b->chunk_crc, p, (uInt)take);
        b->chunk_zero = b->chunk_zero && gzx_zeros(p, take);
        uint64_t c = g->nchunks - 1;
        g->crc[c] = b->chunk_crc;
        g->zero[c / 8] = (uint8_t)((g->zero[c / 8] & ~(1u << (c % 8))) | (unsigned)b->chunk_zero << (c % 8));
        g->total += take;
        p += take;
        n -= take;
    }
    return 0;
}

int gzx_runs(struct gzx *g)
{
    uint64_t n = 0;
    for (uint64_t c = 0; c < g->nchunks; c++)
        n += c == 0 || gzx_is_zero(g, c) != gzx_is_zero(g, c - 1);
    if ((g->run = malloc((n + 1) * sizeof *g->run)) == NULL)
        return -1;
    g->nrun = 0;
    for (uint64_t c = 0; c < g->nchunks; c++)
        if (c == 0 || gzx_is_zero(g, c) != gzx_is_zero(g, c - 1))
            g->run[g->nrun++] = c;
    g->run[g->nrun] = g->nchunks;
    return 0;
}

/* PROG_IN up to the reader's position: headers and trailers count too. */
static void gzx_show(struct gzx_build *b)
{
    uint64_t at = gzx_rd_pos(&b->rd);
    if (at > b->shown) {
        prog_add(b->prog, PROG_IN, at - b->shown);
        b->shown = at;
    }
}

/* Inflate one member's deflate stream from the reader's position, points
 * added as the span passes.  0, or -1 with *err.  *crc and *len: the
 * member's content's. */
static int gzx_member(struct gzx_build *b, uint32_t *crc, uint64_t *len, struct sp_err *err)
{
    struct gzx *g = b->g;
    z_stream *zs = &b->zs;
    *crc = 0;
    *len = 0;
    if (inflateReset(zs) != Z_OK)
        goto nomem;
    for (;;) {
        if (b->rd.at == b->rd.have) {
            int rc = gzx_rd_fill(&b->rd);
            if (rc < 0) {
                sp_err_set(err, SP_ERR_READ, b->rd.err, "cannot read the file");
                return -1;
            }
            if (rc == 0) {
                sp_err_set(err, SP_ERR_DATA, 0, "unexpected end of file");
                return -1;
            }
        }
        zs->next_in = b->rd.buf + b->rd.at;
        zs->avail_in = (uInt)(b->rd.have - b->rd.at);
        zs->next_out = b->out;
        zs->avail_out = GZX_BUILD_OUT;
        int ret = inflate(zs, Z_BLOCK);
        size_t used = b->rd.have - b->rd.at - zs->avail_in, made = GZX_BUILD_OUT - zs->avail_out;
        b->rd.at += used;
        gzx_show(b);
        *crc = (uint32_t)crc32(*crc, b->out, (uInt)made);
        *len += made;
        if (gzx_count(b, b->out, made) != 0)
            goto nomem;
        if (ret == Z_STREAM_END)
            return 0;
        if (ret == Z_MEM_ERROR)
            goto nomem;
        if (ret != Z_OK && !(ret == Z_BUF_ERROR && b->rd.at == b->rd.have)) {
            sp_err_set(err, SP_ERR_DATA, 0, "invalid compressed data near byte %llu (%s)",
                       (unsigned long long)gzx_rd_pos(&b->rd),
                       zs->msg ? zs->msg : "format violated");
            return -1;
        }
        if ((zs->data_type & 0xc0) == 0x80 && g->total - b->last >= b->span &&
            gzx_add_point(b, false, gzx_rd_pos(&b->rd), (unsigned)zs->data_type & 7) != 0)
            goto nomem;
    }
nomem:
    sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
    return -1;
}

/* The trailer after a member [ustart, total): 0, or -1 with *err. */
static int gzx_trailer(struct gzx_build *b, uint64_t ustart, uint32_t crc, uint64_t len,
                       struct sp_err *err)
{
    uint8_t t[8];
    for (int i = 0; i < 8; i++) {
        int c = gzx_rd_getc(&b->rd);
        if (c < 0) {
            if (c == -2)
                sp_err_set(err, SP_ERR_READ, b->rd.err, "cannot read the file");
            else
                sp_err_set(err, SP_ERR_DATA, 0, "unexpected end of file");
            return -1;
        }
        t[i] = (uint8_t)c;
    }
    uint32_t tcrc = t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24;
    uint32_t tlen = t[4] | (uint32_t)t[5] << 8 | (uint32_t)t[6] << 16 | (uint32_t)t[7] << 24;
    if (tcrc != crc || tlen != (uint32_t)len) {
        sp_err_set(err, SP_ERR_CHECK, 0, "bytes %llu to %llu of the content: the member's %s",
                   (unsigned long long)ustart, (unsigned long long)b->g->total,
                   tcrc != crc ? "CRC-32 is not its trailer's" : "length is not its trailer's");
        return -1;
    }
    return 0;
}

/* Another member follows at the reader's position: 1, 0 (the end, or bytes
 * that do not start one: not content, as for gzip -d), -1 (*err).  Peeks:
 * the position stays. */
static int gzx_more(struct gzx_build *b, struct sp_err *err)
{
    struct gzx_rd *r = &b->rd;
    if (r->have - r->at < 2) {
        gzx_rd_seek(r, gzx_rd_pos(r));
        if (gzx_rd_fill(r) < 0) {
            sp_err_set(err, SP_ERR_READ, r->err, "cannot read the file");
            return -1;
        }
        if (r->have < 2)
            return 0;
    }
    return r->buf[r->at] == 0x1f && (r->buf[r->at + 1] == 0x8b || r->buf[r->at + 1] == 0x9e);
}

static int gzx_pass(struct gzx_build *b, struct sp_err *err)
{
    struct gzx *g = b->g;
    gzx_rd_seek(&b->rd, 0);
    for (;;) {
        uint64_t hoff = gzx_rd_pos(&b->rd), ustart = g->total;
        if (gzx_header(&b->rd, true, err) != 0)
            return -1;
        if ((g->np == 0 || g->total - b->last >= b->span) && gzx_add_point(b, true, hoff, 0) != 0) {
            sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
            return -1;
        }
        uint32_t crc;
        uint64_t len;
        if (gzx_member(b, &crc, &len, err) != 0 || gzx_trailer(b, ustart, crc, len, err) != 0)
            return -1;
        g->nmembers++;
        g->data_end = gzx_rd_pos(&b->rd);
        int more = gzx_more(b, err);
        if (more <= 0)
            return more;
    }
}

/* The file did not change during the pass: 0, or -1 with *err. */
static int gzx_unchanged(const struct gzx *g, struct sp_err *err)
{
    struct stat s;
    if (fstat(g->fd, &s) != 0) {
        sp_err_set(err, SP_ERR_READ, errno, "cannot stat the file");
        return -1;
    }
    int64_t mt = (int64_t)s.st_mtim.tv_sec * 1000000000 + s.st_mtim.tv_nsec;
    if ((uint64_t)s.st_size != g->id.size || mt != g->id.mtime_ns) {
        sp_err_set(err, SP_ERR_DATA, 0, "the file changed while it was indexed");
        return -1;
    }
    return 0;
}

int gzx_build(int fd, const struct gzx_opts *o, struct gzx **out, struct sp_err *err)
{
    *out = NULL;
    struct gzx *g = calloc(1, sizeof *g);
    struct gzx_build b = {.g = g, .span = GZX_SPAN, .pmax = GZX_POINTS_MAX,
                          .prog = o ? o->prog : NULL};
    if (o != NULL && o->span > 0)
        b.span = o->span;
    if (o != NULL && o->points_max >= 2 && o->points_max < GZX_POINTS_MAX)
        b.pmax = o->points_max;
    if (g == NULL) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
        return -1;
    }
    g->fd = fd;
    int rc = -1;
    if (gzx_identify(fd, &g->id, &g->ino, &g->dev, err) != 0)
        goto done;
    if (b.prog != NULL)
        atomic_store_explicit(&b.prog->in_total, g->id.size, memory_order_relaxed);
    b.rd = (struct gzx_rd){.fd = fd, .cap = GZX_BUILD_IN, .limit = g->id.size};
    b.rd.buf = malloc(GZX_BUILD_IN);
    b.out = malloc(GZX_BUILD_OUT);
    b.win = malloc(GZX_WINDOW);
    if (b.rd.buf == NULL || b.out == NULL || b.win == NULL ||
        inflateInit2(&b.zs, -15) != Z_OK) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
        goto done;
    }
    rc = gzx_pass(&b, err);
    inflateEnd(&b.zs);
    if (rc == 0 && g->id.size > b.shown) /* the bytes after the last member */
        prog_add(b.prog, PROG_IN, g->id.size - b.shown);
    if (rc == 0)
        rc = gzx_unchanged(g, err);
    if (rc == 0 && g->zero == NULL && (g->zero = calloc(1, 1)) == NULL)
        rc = -1; /* no content: a bitmap all the same */
    if (rc == 0 && (gzx_runs(g) != 0 || gzx_cache_init(g, o ? o->cache_bytes : 0) != 0)) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
        rc = -1;
    }
    if (rc == 0)
        g->ra_held = o != NULL && o->hold_ahead;
done:
    free(b.rd.buf);
    free(b.out);
    free(b.win);
    if (rc != 0) {
        gzx_close(g);
        return -1;
    }
    *out = g;
    return 0;
}

uint64_t gzx_size(const struct gzx *g) { return g->total; }
uint64_t gzx_npoints(const struct gzx *g) { return g->np; }
uint64_t gzx_nmembers(const struct gzx *g) { return g->nmembers; }
uint64_t gzx_data_end(const struct gzx *g) { return g->data_end; }

int gzx_extent(const struct gzx *g, uint64_t off, uint64_t *len, bool *zero)
{
    if (off >= g->total)
        return -1;
    uint64_t c = off / GZX_CHUNK, lo = 0, hi = g->nrun;
    while (hi - lo > 1) { /* the run holding chunk c: run[lo] <= c < run[lo + 1] */
        uint64_t mid = lo + (hi - lo) / 2;
        if (g->run[mid] <= c)
            lo = mid;
        else
            hi = mid;
    }
    uint64_t end = g->run[lo + 1] * GZX_CHUNK;
    *len = (end < g->total ? end : g->total) - off;
    *zero = gzx_is_zero(g, c);
    return 0;
}

int gzx_xpoint(const struct gzx *g, uint64_t k, struct gzx_xpoint *x, struct sp_err *err)
{
    const struct gzx_point *p = &g->p[k];
    *x = (struct gzx_xpoint){.uoff = p->uoff, .coff = p->coff, .bits = p->bits,
                             .wlen = p->wlen, .zlen = p->zlen, .zwin = p->zwin};
    if (!p->member)
        return 0;
    uint8_t buf[4096];
    struct gzx_rd r = {.fd = g->fd, .buf = buf, .cap = sizeof buf, .limit = g->data_end};
    gzx_rd_seek(&r, p->coff);
    if (gzx_header(&r, false, err) != 0)
        return -1;
    x->coff = gzx_rd_pos(&r);
    return 0;
}

void gzx_close(struct gzx *g)
{
    if (g == NULL)
        return;
    gzx_cache_free(g);
    gzx_free_tables(g);
    free(g);
}
