/* gzx_file.c — the saved gzip index (gzx.h; the layout is doc/FORMAT.md
 * section 7): written whole to a temporary name and renamed; read whole,
 * every field validated before it is used (the file is untrusted). */
#include "gzx.h"
#include "gzx_int.h"
#include "crcz.h"
#include "io.h"
#include "le.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GZX_MAGIC "SPGZXIDX"
#define GZX_VERSION 1u
#define GZX_HDR_LEN 96u
#define GZX_PT_LEN 32u
#define GZX_CHUNK_LOG2 20u
/* An index file larger than this is refused before it is read: 32768
 * points with windows that did not deflate (~1 GiB) and the CRCs of 2^40
 * bytes of content. */
#define GZX_FILE_MAX ((uint64_t)3 << 30)

/* ---- writing ---- */

struct gzx_wr {
    int fd;
    uint8_t buf[65536];
    size_t n;
    uint32_t crc;
    int err; /* errno of a failed write */
};

static void gzx_wr_flush(struct gzx_wr *w)
{
    if (w->n > 0 && w->err == 0 && io_write(w->fd, w->buf, w->n, NULL) != 0)
        w->err = errno != 0 ? errno : EIO;
    w->n = 0;
}

static void gzx_wr(struct gzx_wr *w, const void *p, size_t n)
{
    const uint8_t *q = p;
    if (n == 0) /* crc32() of a NULL buffer is its initial value, not crc */
        return;
    w->crc = (uint32_t)crc32(w->crc, q, (uInt)n);
    while (n > 0) {
        if (w->n == sizeof w->buf)
            gzx_wr_flush(w);
        size_t m = sizeof w->buf - w->n < n ? sizeof w->buf - w->n : n;
        memcpy(w->buf + w->n, q, m);
        w->n += m;
        q += m;
        n -= m;
    }
}

int gzx_save_fd(const struct gzx *g, int idxfd, struct sp_err *err)
{
    struct gzx_wr *w = calloc(1, sizeof *w);
    if (w == NULL) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
        return -1;
    }
    w->fd = idxfd;
    uint64_t wbytes = 0;
    for (uint64_t k = 0; k < g->np; k++)
        wbytes += g->p[k].zlen;
    uint8_t h[GZX_HDR_LEN] = {0};
    memcpy(h, GZX_MAGIC, 8);
    le_put32(h + 8, GZX_VERSION);
    le_put32(h + 12, GZX_CHUNK_LOG2);
    le_put64(h + 16, g->id.size);
    le_put64(h + 24, (uint64_t)g->id.mtime_ns);
    le_put32(h + 32, g->id.head_crc);
    le_put32(h + 36, g->id.tail_crc);
    le_put64(h + 40, g->total);
    le_put64(h + 48, g->data_end);
    le_put64(h + 56, g->nmembers);
    le_put64(h + 64, g->np);
    le_put64(h + 72, wbytes);
    gzx_wr(w, h, sizeof h);
    for (uint64_t k = 0; k < g->np; k++) {
        const struct gzx_point *pt = &g->p[k];
        uint8_t e[GZX_PT_LEN] = {0};
        le_put64(e, pt->uoff);
        le_put64(e + 8, pt->coff);
        le_put32(e + 16, pt->wlen);
        le_put32(e + 20, pt->zlen);
        e[24] = pt->bits;
        e[25] = pt->member;
        gzx_wr(w, e, sizeof e);
    }
    for (uint64_t c = 0; c < g->nchunks; c++) {
        uint8_t e[4];
        le_put32(e, g->crc[c]);
        gzx_wr(w, e, 4);
    }
    gzx_wr(w, g->zero, (size_t)((g->nchunks + 7) / 8));
    for (uint64_t k = 0; k < g->np; k++)
        gzx_wr(w, g->p[k].zwin, g->p[k].zlen);
    uint8_t t[4];
    le_put32(t, w->crc);
    gzx_wr(w, t, 4);
    gzx_wr_flush(w);
    int e = w->err;
    free(w);
    if (e != 0) {
        sp_err_set(err, SP_ERR_WRITE, e, "cannot write the index");
        return -1;
    }
    return 0;
}

int gzx_save(const struct gzx *g, int dirfd, const char *name, struct sp_err *err)
{
    if (name[0] == 0 || strchr(name, '/') != NULL) {
        sp_err_set(err, SP_ERR_WRITE, EINVAL, "the index's name %s is not a plain name", name);
        return -1;
    }
    char tmp[64];
    int fd = -1;
    for (int i = 0; i < 100 && fd < 0; i++) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        snprintf(tmp, sizeof tmp, ".gzx-%ld-%lx.tmp", (long)getpid(),
                 (unsigned long)(ts.tv_nsec ^ (long)i * 7919));
        fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        sp_err_set(err, SP_ERR_WRITE, errno, "cannot create the index");
        return -1;
    }
    /* The windows are pieces of the content: readable by whoever may read
     * the gzip file, no one else (its permission bits, as gzip gives its
     * output the input's). */
    struct stat st;
    int rc = fstat(g->fd, &st) == 0 && fchmod(fd, st.st_mode & 0666) == 0 ? 0 : -1;
    if (rc != 0)
        sp_err_set(err, SP_ERR_WRITE, errno, "cannot set the index's permissions");
    if (rc == 0)
        rc = gzx_save_fd(g, fd, err);
    if (rc == 0 && fsync(fd) != 0) {
        sp_err_set(err, SP_ERR_WRITE, errno, "cannot write the index");
        rc = -1;
    }
    if (close(fd) != 0 && rc == 0) {
        sp_err_set(err, SP_ERR_WRITE, errno, "cannot write the index");
        rc = -1;
    }
    /* Never over the gzip file itself (--index-file naming it, or a link
     * to it): the index would replace the file it indexes. */
    struct stat nt;
    if (rc == 0 && fstatat(dirfd, name, &nt, AT_SYMLINK_NOFOLLOW) == 0 &&
        (uint64_t)nt.st_ino == g->ino && (uint64_t)nt.st_dev == g->dev) {
        sp_err_set(err, SP_ERR_WRITE, EEXIST, "%s is the gzip file itself", name);
        rc = -1;
    }
    if (rc == 0 && renameat(dirfd, tmp, dirfd, name) != 0) {
        sp_err_set(err, SP_ERR_WRITE, errno, "cannot rename the index to %s", name);
        rc = -1;
    }
    if (rc != 0) {
        unlinkat(dirfd, tmp, 0);
        return -1;
    }
    fsync(dirfd); /* the rename durable; a directory fd that cannot: nothing lost but that */
    return 0;
}

/* ---- reading ---- */

#define REJECT(...)                                                                            \
    do {                                                                                       \
        snprintf(why, whylen, __VA_ARGS__);                                                    \
        return 0;                                                                              \
    } while (0)

/* The header's fields checked against the gzip file and the index file's
 * size n.  1 (*np, *nchunks, *wbytes set), or 0 with why. */
static int gzx_check_header(const uint8_t *h, uint64_t n, const struct gzx_id *id,
                            struct gzx *g, uint64_t *wbytes, char *why, size_t whylen)
{
    if (memcmp(h, GZX_MAGIC, 8) != 0)
        REJECT("not a spigz gzip index");
    if (le_get32(h + 8) != GZX_VERSION)
        REJECT("index version %u, not %u", (unsigned)le_get32(h + 8), GZX_VERSION);
    if (le_get32(h + 12) != GZX_CHUNK_LOG2)
        REJECT("chunks of 2^%u bytes, not 2^%u", (unsigned)le_get32(h + 12), GZX_CHUNK_LOG2);
    for (unsigned i = 80; i < GZX_HDR_LEN; i++)
        if (h[i] != 0)
            REJECT("reserved header bytes are not zero");
    if (le_get64(h + 16) != id->size)
        REJECT("made for a file of %llu bytes, this one has %llu",
               (unsigned long long)le_get64(h + 16), (unsigned long long)id->size);
    if ((int64_t)le_get64(h + 24) != id->mtime_ns)
        REJECT("the file was modified since the index was made");
    if (le_get32(h + 32) != id->head_crc || le_get32(h + 36) != id->tail_crc)
        REJECT("the file's first or last 64 KiB are not those indexed");
    g->total = le_get64(h + 40);
    g->data_end = le_get64(h + 48);
    g->nmembers = le_get64(h + 56);
    g->np = le_get64(h + 64);
    *wbytes = le_get64(h + 72);
    if (g->data_end == 0 || g->data_end > id->size)
        REJECT("the members end at byte %llu, outside the file",
               (unsigned long long)g->data_end);
    if (g->nmembers == 0 || g->nmembers > g->data_end)
        REJECT("%llu members", (unsigned long long)g->nmembers);
    if (g->np == 0 || g->np > GZX_POINTS_MAX)
        REJECT("%llu access points", (unsigned long long)g->np);
    if (g->total > ((uint64_t)1 << 60))
        REJECT("content of %llu bytes", (unsigned long long)g->total);
    g->nchunks = gzx_nchunks(g->total);
    if (*wbytes > GZX_FILE_MAX || g->nchunks > GZX_FILE_MAX / 4)
        REJECT("the index is larger than spigz reads");
    uint64_t want = GZX_HDR_LEN + g->np * GZX_PT_LEN + g->nchunks * 4 + (g->nchunks + 7) / 8 +
                    *wbytes + 4;
    if (want != n)
        REJECT("the index file has %llu bytes, its header says %llu", (unsigned long long)n,
               (unsigned long long)want);
    return 1;
}

/* Point k from its entry e, the windows at *w (advanced).  1, 0 (why), -1. */
static int gzx_check_point(struct gzx *g, uint64_t k, const uint8_t *e, const uint8_t **w,
                           char *why, size_t whylen)
{
    struct gzx_point *pt = &g->p[k];
    pt->uoff = le_get64(e);
    pt->coff = le_get64(e + 8);
    pt->wlen = le_get32(e + 16);
    pt->zlen = le_get32(e + 20);
    pt->bits = e[24];
    for (unsigned i = 26; i < GZX_PT_LEN; i++)
        if (e[i] != 0)
            REJECT("point %llu: reserved bytes are not zero", (unsigned long long)k);
    if (e[25] > 1 || pt->bits > 7 || (pt->bits > 0 && pt->coff == 0))
        REJECT("point %llu: bad kind or bit offset", (unsigned long long)k);
    pt->member = e[25] == 1;
    if (pt->member && (pt->bits != 0 || pt->wlen != 0 || pt->zlen != 0))
        REJECT("point %llu: a member's start with a window", (unsigned long long)k);
    if (pt->wlen > GZX_WINDOW || pt->zlen > compressBound(GZX_WINDOW))
        REJECT("point %llu: a window of %u bytes", (unsigned long long)k, (unsigned)pt->wlen);
    if (k == 0 && (!pt->member || pt->uoff != 0 || pt->coff != 0))
        REJECT("the first point is not the first member's start");
    if (pt->uoff > g->total || pt->coff >= g->data_end)
        REJECT("point %llu lies outside the content or the members", (unsigned long long)k);
    if (k > 0) {
        const struct gzx_point *q = &g->p[k - 1];
        if (pt->uoff <= q->uoff || pt->coff * 8 - pt->bits <= q->coff * 8 - q->bits)
            REJECT("point %llu does not follow point %llu", (unsigned long long)k,
                   (unsigned long long)(k - 1));
    }
    if (pt->zlen > 0) {
        if ((pt->zwin = malloc(pt->zlen)) == NULL)
            return -1;
        memcpy(pt->zwin, *w, pt->zlen);
        *w += pt->zlen;
    }
    return 1;
}

/* A CRC-32 of n bytes in pieces: crc32() takes a uInt length. */
static uint32_t gzx_crc_big(const uint8_t *p, uint64_t n)
{
    uint32_t c = 0;
    while (n > 0) {
        uInt m = n > (1u << 30) ? 1u << 30 : (uInt)n;
        c = (uint32_t)crc32(c, p, m);
        p += m;
        n -= m;
    }
    return c;
}

/* The index in b[0..n) for the file id.  1, 0 (why), -1 (memory). */
static int gzx_parse(struct gzx *g, const uint8_t *b, uint64_t n, const struct gzx_id *id,
                     char *why, size_t whylen)
{
    uint64_t wbytes;
    if (n < GZX_HDR_LEN + 4)
        REJECT("the index file is too short");
    if (gzx_check_header(b, n, id, g, &wbytes, why, whylen) != 1)
        return 0;
    if (le_get32(b + n - 4) != gzx_crc_big(b, n - 4))
        REJECT("the index file fails its CRC-32");
    uint64_t np = g->np, sum = 0;
    for (uint64_t k = 0; k < np; k++)
        sum += le_get32(b + GZX_HDR_LEN + k * GZX_PT_LEN + 20);
    if (sum != wbytes)
        REJECT("the windows' lengths do not add up");
    uint64_t zn = (g->nchunks + 7) / 8;
    g->p = calloc(np, sizeof *g->p);
    g->crc = malloc(g->nchunks > 0 ? g->nchunks * 4 : 1);
    g->zero = calloc(zn > 0 ? zn : 1, 1);
    if (g->p == NULL || g->crc == NULL || g->zero == NULL)
        return -1;
    const uint8_t *crcs = b + GZX_HDR_LEN + np * GZX_PT_LEN, *zb = crcs + g->nchunks * 4;
    const uint8_t *w = zb + zn;
    for (uint64_t k = 0; k < np; k++) {
        int rc = gzx_check_point(g, k, b + GZX_HDR_LEN + k * GZX_PT_LEN, &w, why, whylen);
        if (rc != 1)
            return rc;
    }
    for (uint64_t c = 0; c < g->nchunks; c++)
        g->crc[c] = le_get32(crcs + c * 4);
    memcpy(g->zero, zb, (size_t)zn);
    if (g->nchunks % 8 != 0 && zb[zn - 1] >> (g->nchunks % 8) != 0)
        REJECT("zero bits past the last chunk");
    uint32_t full = crcz_zeros(0, GZX_CHUNK);
    for (uint64_t c = 0; c < g->nchunks; c++) {
        uint64_t len = c + 1 < g->nchunks || g->total % GZX_CHUNK == 0 ? GZX_CHUNK
                                                                        : g->total % GZX_CHUNK;
        if (gzx_is_zero(g, c) && g->crc[c] != (len == GZX_CHUNK ? full : crcz_zeros(0, len)))
            REJECT("chunk %llu is marked zero but its CRC-32 is not of zeros",
                   (unsigned long long)c);
    }
    return 1;
}

#undef REJECT

int gzx_load_fd(int fd, const struct gzx_opts *o, int idxfd, struct gzx **out, char *why,
                size_t whylen, struct sp_err *err)
{
    *out = NULL;
    snprintf(why, whylen, "%s", "");
    struct stat s;
    if (fstat(idxfd, &s) != 0) {
        sp_err_set(err, SP_ERR_READ, errno, "cannot stat the index");
        return -1;
    }
    if (!S_ISREG(s.st_mode) || (uint64_t)s.st_size > GZX_FILE_MAX) {
        snprintf(why, whylen, "the index is not a regular file of at most 3 GiB");
        return 0;
    }
    uint64_t n = (uint64_t)s.st_size;
    struct gzx *g = calloc(1, sizeof *g);
    uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
    int rc = -1;
    if (g == NULL || b == NULL) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
        goto done;
    }
    g->fd = fd;
    if (gzx_identify(fd, &g->id, &g->ino, &g->dev, err) != 0)
        goto done;
    int r = io_pread_exact(idxfd, b, (size_t)n, 0);
    if (r != 0) {
        if (r < 0)
            sp_err_set(err, SP_ERR_READ, errno, "cannot read the index");
        else
            snprintf(why, whylen, "the index file shrank while it was read");
        rc = r < 0 ? -1 : 0;
        goto done;
    }
    rc = gzx_parse(g, b, n, &g->id, why, whylen);
    if (rc < 0)
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
    if (rc == 1 && (gzx_runs(g) != 0 || gzx_cache_init(g, o ? o->cache_bytes : 0) != 0)) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
        rc = -1;
    }
    if (rc == 1)
        g->ra_held = o != NULL && o->hold_ahead;
done:
    free(b);
    if (rc != 1) {
        gzx_close(g);
        return rc;
    }
    *out = g;
    return 1;
}

int gzx_load(int fd, const struct gzx_opts *o, int dirfd, const char *name, struct gzx **out,
             char *why, size_t whylen, struct sp_err *err)
{
    *out = NULL;
    int idxfd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (idxfd < 0) {
        /* a missing, unreadable or linked index is rebuilt, not an error */
        if (errno == ENOENT)
            snprintf(why, whylen, "no saved index");
        else
            snprintf(why, whylen, "cannot open the saved index: %s", strerror(errno));
        return 0;
    }
    int rc = gzx_load_fd(fd, o, idxfd, out, why, whylen, err);
    close(idxfd);
    return rc;
}
