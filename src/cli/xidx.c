/* xidx.c — see xidx.h; the layouts are in doc/FORMAT.md section 6. */
#include "xidx.h"
#include "io.h"
#include "le.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* gztool reads its fields big-endian whatever the host. */
#define GZT_ID "gzipindx"       /* index version 0: no line numbers */

/* indexed_gzip writes and reads its fields in the host's byte order. */
#define IGZ_ID "GZIDX"
#define IGZ_VERSION 1           /* the version with a data flag per point */
#define IGZ_WINDOW 32768u       /* its import refuses less; no window is
                                   stored, so it costs nothing */
#define IGZ_SPACING (1u << 20)  /* spigz's chunk; used only if the index is
                                   ever extended, and it sizes the tool's
                                   discard buffer (4 x spacing) */
#define IGZ_POINTS_MAX 0xffffffffu

#define GZT_FIXED 40u           /* header 32 + the uncompressed size 8 */
#define GZT_POINT 24u           /* out 8, in 8, bits 4, window size 4 */
#define IGZ_FIXED 35u           /* id 5, version, flags, 2 x 8, 3 x 4 */
#define IGZ_POINT 18u           /* cmp 8, uncmp 8, bits 1, data flag 1 */

int xidx_parse_fmt(const char *name, enum xidx_fmt *fmt)
{
    if (name == NULL)
        return -1;
    if (strcmp(name, "gztool") == 0) {
        *fmt = XIDX_GZTOOL;
        return 0;
    }
    /* indexed_gzip is the module's name, indexed-gzip the package's. */
    if (strcmp(name, "indexed_gzip") == 0 || strcmp(name, "indexed-gzip") == 0) {
        *fmt = XIDX_INDEXED_GZIP;
        return 0;
    }
    return -1;
}

const char *xidx_fmt_name(enum xidx_fmt fmt)
{
    switch (fmt) {
    case XIDX_GZTOOL: return "gztool";
    case XIDX_INDEXED_GZIP: return "indexed_gzip";
    }
    return NULL;
}

/* Points: one per piece and one at the end of the stream (p[n]). */
uint64_t xidx_size(const struct idx *x, enum xidx_fmt fmt)
{
    if (x == NULL || x->n >= IDX_TABLE_MAX / sizeof(struct idx_piece))
        return 0;
    uint64_t points = x->n + 1;
    switch (fmt) {
    case XIDX_GZTOOL: return GZT_FIXED + GZT_POINT * points;
    case XIDX_INDEXED_GZIP:
        return points > IGZ_POINTS_MAX ? 0 : IGZ_FIXED + IGZ_POINT * points;
    }
    return 0;
}

/* ---- checking the index ---- */

/* The sizes: the data member starts the file and the index members and the
 * footer end it, as idx_load found them. */
static const char *xidx_check_sizes(const struct idx *x, uint64_t file_size)
{
    if (x->header_len < 10 || x->data_len < x->header_len + 10)
        return "the data member's sizes are impossible";
    if (x->data_len > file_size || x->index_len > file_size - x->data_len ||
        file_size - x->data_len - x->index_len != IDX_FOOTER_LEN)
        return "the file's size is not the index's";
    return NULL;
}

/* The pieces: offsets strictly increasing from 0, the sentinel p[n] at the
 * end of the pieces (the final 03 00 block) and of the content. */
static const char *xidx_check_pieces(const struct idx *x)
{
    const struct idx_piece *p = x->p;
    if (p[0].coff != 0 || p[0].uoff != 0)
        return "the first piece does not start the stream";
    for (uint64_t k = 0; k < x->n; k++)
        if (p[k + 1].coff <= p[k].coff || p[k + 1].uoff <= p[k].uoff)
            return "the pieces' offsets do not increase";
    if (p[x->n].coff != x->data_len - x->header_len - 10 || p[x->n].uoff != x->total)
        return "the pieces do not end where the data member does";
    return NULL;
}

static int xidx_check(const struct idx *x, uint64_t file_size, enum xidx_fmt fmt,
                      struct sp_err *err)
{
    if (xidx_fmt_name(fmt) == NULL) {
        sp_err_set(err, SP_ERR_INTERNAL, 0, "unknown index export format %d", (int)fmt);
        return -1;
    }
    if (x == NULL || x->p == NULL || x->n >= IDX_TABLE_MAX / sizeof(struct idx_piece)) {
        sp_err_set(err, SP_ERR_INTERNAL, 0, "no index to export");
        return -1;
    }
    if (x->base != 0) {
        /* The tools decode from the file's first byte: the members before
         * the data member would shift every offset by their content. */
        sp_err_set(err, SP_ERR_FORMAT, 0,
                   "the data member does not start the file: its index cannot be exported");
        return -1;
    }
    const char *why = xidx_check_sizes(x, file_size);
    if (why == NULL)
        why = xidx_check_pieces(x);
    if (why == NULL && xidx_size(x, fmt) == 0)
        why = "too many pieces for that index format";
    if (why != NULL) {
        sp_err_set(err, SP_ERR_FORMAT, 0, "cannot export the index: %s", why);
        return -1;
    }
    return 0;
}

/* ---- buffered writing ---- */

struct xw {
    int fd;
    bool failed;
    size_t n;
    struct sp_err *err;
    uint8_t b[8192];
};

static void xw_flush(struct xw *w)
{
    if (!w->failed && io_write(w->fd, w->b, w->n, NULL) != 0) {
        sp_err_set(w->err, SP_ERR_WRITE, errno, "writing the index failed");
        w->failed = true;
    }
    w->n = 0;
}

static void xw_put(struct xw *w, const void *p, size_t n)
{
    if (w->n + n > sizeof w->b)
        xw_flush(w);
    memcpy(w->b + w->n, p, n);
    w->n += n;
}

/* A 4- or 8-byte field, big-endian or little-endian. */
static void xw_int(struct xw *w, uint64_t v, int bytes, bool big)
{
    uint8_t t[8];
    if (bytes == 8)
        big ? be_put64(t, v) : le_put64(t, v);
    else
        big ? be_put32(t, (uint32_t)v) : le_put32(t, (uint32_t)v);
    xw_put(w, t, (size_t)bytes);
}

static void xw_be(struct xw *w, uint64_t v, int bytes)
{
    xw_int(w, v, bytes, true);
}

/* indexed_gzip fwrite()s its integers as they lie in memory. */
static void xw_host(struct xw *w, uint64_t v, int bytes)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    xw_int(w, v, bytes, true);
#else
    xw_int(w, v, bytes, false);
#endif
}

/* ---- the formats ---- */

/* gztool (gztool.c, serialize_index_to_file): 8 zero bytes (where a bgzip
 * .gzi starts with its count), the id, the point count twice (equal counts
 * mark the index complete), the points, then the uncompressed size. */
static void xidx_gztool(struct xw *w, const struct idx *x)
{
    xw_be(w, 0, 8);
    xw_put(w, GZT_ID, 8);
    xw_be(w, x->n + 1, 8);
    xw_be(w, x->n + 1, 8);
    for (uint64_t k = 0; k <= x->n; k++) {
        xw_be(w, x->p[k].uoff, 8);
        /* bits 0: gztool seeks to `in` itself (in - 1 only when bits > 0) */
        xw_be(w, x->header_len + x->p[k].coff, 8);
        xw_be(w, 0, 4);  /* bits */
        xw_be(w, 0, 4);  /* window size 0: no dictionary is set */
    }
    xw_be(w, x->total, 8);
}

/* indexed_gzip (zran.c, zran_export_index, file version 1): the header,
 * then every point's offsets and data flag; windows follow only for points
 * whose flag is 1, and none is. */
static void xidx_indexed_gzip(struct xw *w, const struct idx *x, uint64_t file_size)
{
    const uint8_t vf[2] = {IGZ_VERSION, 0};
    xw_put(w, IGZ_ID, 5);
    xw_put(w, vf, 2);
    xw_host(w, file_size, 8);    /* its import requires the file's size */
    xw_host(w, x->total, 8);
    xw_host(w, IGZ_SPACING, 4);
    xw_host(w, IGZ_WINDOW, 4);
    xw_host(w, x->n + 1, 4);
    for (uint64_t k = 0; k <= x->n; k++) {
        const uint8_t bits_data[2] = {0, 0}; /* byte-aligned; no window */
        xw_host(w, x->header_len + x->p[k].coff, 8);
        xw_host(w, x->p[k].uoff, 8);
        xw_put(w, bits_data, 2);
    }
}

int xidx_write(const struct idx *x, uint64_t file_size, enum xidx_fmt fmt, int fd,
               struct sp_err *err)
{
    if (xidx_check(x, file_size, fmt, err) != 0)
        return -1;
    struct xw w = {.fd = fd, .failed = false, .n = 0, .err = err};
    if (fmt == XIDX_GZTOOL)
        xidx_gztool(&w, x);
    else
        xidx_indexed_gzip(&w, x, file_size);
    xw_flush(&w);
    return w.failed ? -1 : 0;
}

/* ---- a foreign gzip file's index (gzx.h) ---- */

/* The points exported: gzx's, and one at the end unless one is there. */
static uint64_t xidx_gzx_points(const struct gzx *g)
{
    uint64_t n = gzx_npoints(g);
    struct gzx_xpoint p;
    struct sp_err e = {0};
    if (gzx_xpoint(g, n - 1, &p, &e) == 0 && p.uoff == gzx_size(g))
        return n;
    return n + 1;
}

/* Point k of the export: gzx's, or the end.  0, or -1 with *err. */
static int xidx_gzx_point(const struct gzx *g, uint64_t k, struct gzx_xpoint *p,
                          struct sp_err *err)
{
    if (k < gzx_npoints(g))
        return gzx_xpoint(g, k, p, err);
    *p = (struct gzx_xpoint){.uoff = gzx_size(g), .coff = gzx_data_end(g)};
    return 0;
}

uint64_t xidx_gzx_size(const struct gzx *g, enum xidx_fmt fmt)
{
    uint64_t n = xidx_gzx_points(g), w = 0;
    for (uint64_t k = 0; k < n; k++) {
        struct gzx_xpoint p;
        struct sp_err e = {0};
        if (xidx_gzx_point(g, k, &p, &e) != 0)
            return 0;
        w += fmt == XIDX_GZTOOL ? p.zlen : p.zwin != NULL ? IGZ_WINDOW : 0;
    }
    return fmt == XIDX_GZTOOL ? GZT_FIXED + GZT_POINT * n + w : IGZ_FIXED + IGZ_POINT * n + w;
}

/* indexed_gzip's window for p: 32 KiB, p's bytes at its end.  0, or -1. */
static int xidx_igz_window(const struct gzx_xpoint *p, uint8_t win[IGZ_WINDOW], struct sp_err *err)
{
    uLongf n = IGZ_WINDOW;
    memset(win, 0, IGZ_WINDOW);
    if (p->wlen > IGZ_WINDOW || uncompress(win + IGZ_WINDOW - p->wlen, &n, p->zwin, p->zlen) != Z_OK ||
        n != p->wlen) {
        sp_err_set(err, SP_ERR_INTERNAL, 0, "a window of the index does not decode");
        return -1;
    }
    return 0;
}

int xidx_write_gzx(const struct gzx *g, uint64_t file_size, enum xidx_fmt fmt, int fd,
                   struct sp_err *err)
{
    uint64_t n = xidx_gzx_points(g);
    if (xidx_fmt_name(fmt) == NULL || (fmt == XIDX_INDEXED_GZIP && n > IGZ_POINTS_MAX)) {
        sp_err_set(err, SP_ERR_FORMAT, 0, "cannot export the index in that format");
        return -1;
    }
    struct xw w = {.fd = fd, .failed = false, .n = 0, .err = err};
    bool gzt = fmt == XIDX_GZTOOL;
    if (gzt) {
        xw_be(&w, 0, 8);
        xw_put(&w, GZT_ID, 8);
        xw_be(&w, n, 8);
        xw_be(&w, n, 8);
    } else {
        const uint8_t vf[2] = {IGZ_VERSION, 0};
        xw_put(&w, IGZ_ID, 5);
        xw_put(&w, vf, 2);
        xw_host(&w, file_size, 8);
        xw_host(&w, gzx_size(g), 8);
        xw_host(&w, (uint32_t)GZX_SPAN, 4);
        xw_host(&w, IGZ_WINDOW, 4);
        xw_host(&w, n, 4);
    }
    for (uint64_t k = 0; k < n && !w.failed; k++) {
        struct gzx_xpoint p;
        if (xidx_gzx_point(g, k, &p, err) != 0)
            return -1;
        if (gzt) {
            xw_be(&w, p.uoff, 8);
            xw_be(&w, p.coff, 8);
            xw_be(&w, p.bits, 4);
            xw_be(&w, p.zlen, 4);
            for (uint32_t i = 0; i < p.zlen; i += 4096)
                xw_put(&w, p.zwin + i, p.zlen - i < 4096 ? p.zlen - i : 4096);
        } else {
            const uint8_t bits_data[2] = {(uint8_t)p.bits, p.zwin != NULL};
            xw_host(&w, p.coff, 8);
            xw_host(&w, p.uoff, 8);
            xw_put(&w, bits_data, 2);
        }
    }
    if (gzt) {
        xw_be(&w, gzx_size(g), 8);
    } else {
        uint8_t *win = malloc(IGZ_WINDOW);
        if (win == NULL) {
            sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
            return -1;
        }
        for (uint64_t k = 0; k < n && !w.failed; k++) {
            struct gzx_xpoint p;
            if (xidx_gzx_point(g, k, &p, err) != 0 || (p.zwin != NULL && xidx_igz_window(&p, win, err) != 0)) {
                free(win);
                return -1;
            }
            for (uint32_t i = 0; p.zwin != NULL && i < IGZ_WINDOW; i += 4096)
                xw_put(&w, win + i, 4096);
        }
        free(win);
    }
    xw_flush(&w);
    return w.failed ? -1 : 0;
}
