/* input.c — see input.h. */
#include "config.h"
#include "input.h"
#include "io.h"
#include "pipe.h"
#include "block.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define IN_ALIGN(x) ((x) & ~(uint64_t)(SCAN_BLOCK - 1))
#define IN_ALIGN_UP(x) IN_ALIGN((x) + SCAN_BLOCK - 1)

int in_open(struct in_src *in, int fd, size_t wsize, struct sp_err *err)
{
    memset(in, 0, sizeof *in);
    in->fd = fd;
    in->wsize = wsize;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        sp_err_set(err, SP_ERR_READ, errno, "cannot stat input");
        return -1;
    }
    in->kind = IN_STREAM;
    off_t base = S_ISREG(st.st_mode) ? lseek(fd, 0, SEEK_CUR) : -1;
    if (S_ISREG(st.st_mode) && st.st_size > 0 && base >= 0 && base <= st.st_size) {
        /* Size 0 may be a /proc-like file with content: read it as a stream. */
        in->kind = IN_REG;
        in->size_known = true;
        in->base = (uint64_t)base;
        in->size = (uint64_t)st.st_size - in->base;
        in->seek_holes = true;
    } else if (S_ISBLK(st.st_mode) && (base = lseek(fd, 0, SEEK_CUR)) >= 0) {
        in->kind = IN_BLK;
        in->base = (uint64_t)base;
        uint64_t bytes;
        if (io_size(fd, &st, &bytes) == 0 && bytes >= in->base) {
            in->size_known = true;
            in->size = bytes - in->base;
        }
    }
#ifdef HAVE_POSIX_FADVISE
    if (in->kind != IN_STREAM)
        (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    in->nocache = in->kind == IN_BLK;
    /* A pipe (`dd | spigz`, `cat image | spigz`): a buffer as large as a
     * window, so a window fills in a few reads (pipe.h). */
    sp_pipe_widen(fd, wsize);
    return 0;
}

/* Drop [0, pos + len) of the input from the page cache: the pages the
 * reader is done with and any read ahead before pos.  Only the span since
 * the last call is advised, so the cost is one call per window. */
static void in_drop_cache(struct in_src *in, uint64_t pos, size_t len)
{
#ifdef HAVE_POSIX_FADVISE
    uint64_t end = pos + len;
    if (end > in->dropped) {
        (void)posix_fadvise(in->fd, (off_t)(in->base + in->dropped),
                            (off_t)(end - in->dropped), POSIX_FADV_DONTNEED);
        in->dropped = end;
    }
#else
    (void)in, (void)pos, (void)len;
#endif
}

/* Read up to n bytes at the current position, retrying short reads, so that
 * only the end of the input yields a short window.  Returns bytes or -1. */
static ssize_t in_fill(struct in_src *in, uint8_t *win, size_t n, struct sp_err *err)
{
    size_t got;
    int rc = in->kind != IN_STREAM ? io_pread(in->fd, win, n, in->base + in->pos, &got)
                                   : io_read(in->fd, win, n, &got);
    if (rc != 0 && in->rescue != NULL && in->kind != IN_STREAM && rsc_media_error(errno)) {
        ssize_t r = rsc_read(in->rescue, win + got, n - got, in->pos + got, err);
        if (r < 0)
            return -1;
        got += (size_t)r; /* all of it, or the end of the input */
    } else if (rc != 0) {
        sp_err_set(err, SP_ERR_READ, errno, "read error at offset %llu",
                   (unsigned long long)(in->pos + got));
        return -1;
    }
    if (in->nocache && got > 0)
        in_drop_cache(in, in->pos, got);
    return (ssize_t)got;
}

/* Regular files: find the extent at in->pos.  Sets data_end, or returns the
 * length of a hole starting at pos (0 when pos is in data). */
static uint64_t in_locate(struct in_src *in)
{
    off_t ad = lseek(in->fd, (off_t)(in->base + in->pos), SEEK_DATA);
    if (ad < 0) {
        if (errno == ENXIO)          /* only a hole up to the end */
            return in->size - in->pos;
        in->seek_holes = false;      /* not supported here: read it all */
        in->data_end = in->size;
        return 0;
    }
    uint64_t d = (uint64_t)ad - in->base; /* offsets from here on are relative */
    uint64_t hole_end = d >= in->size ? in->size : IN_ALIGN(d);
    if (hole_end > in->pos)
        return hole_end - in->pos;
    off_t ah = lseek(in->fd, ad, SEEK_HOLE);
    uint64_t h = ah < 0 ? in->size : (uint64_t)ah - in->base;
    uint64_t end = h >= in->size ? in->size : IN_ALIGN_UP(h);
    in->data_end = end > in->pos ? end : in->size;
    return 0;
}

void in_set_rescue(struct in_src *in, struct rsc *r)
{
    in->rescue = r;
}

void in_set_zero_ranges(struct in_src *in, const struct sp_range *r, size_t n)
{
    in->zr = r;
    in->nzr = n;
}

/* The whole blocks of range i: [*s, *e), empty when it covers none. */
static void in_zr_blocks(const struct in_src *in, size_t i, uint64_t *s, uint64_t *e)
{
    uint64_t a = in->zr[i].off, b = a + in->zr[i].len;
    uint64_t size = in->size_known ? in->size : UINT64_MAX;
    *s = IN_ALIGN_UP(a);
    *e = b >= size ? size : IN_ALIGN(b); /* the last block may be partial */
    if (*e < *s)
        *e = *s;
}

/* The first range that ends after pos (ranges are sorted): a binary
 * search, once per window or zero extent, so jumps (the estimate's probes)
 * cost no more than the reader's steady walk. */
static size_t in_zr_search(const struct in_src *in, uint64_t pos)
{
    size_t lo = 0, hi = in->nzr;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (in->zr[mid].off + in->zr[mid].len <= pos)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

bool in_next_zero_range(const struct in_src *in, uint64_t pos, uint64_t *s, uint64_t *e)
{
    for (size_t i = in_zr_search(in, pos); i < in->nzr; i++) {
        in_zr_blocks(in, i, s, e);
        if (*e > pos && *e > *s) {
            if (*s < pos)
                *s = pos;
            return true;
        }
    }
    return false;
}

void in_mask_zero_ranges(const struct in_src *in, uint64_t off, uint8_t *buf, size_t len)
{
    uint64_t end = off + len;
    for (size_t i = in_zr_search(in, off); i < in->nzr && in->zr[i].off < end; i++) {
        uint64_t a = in->zr[i].off > off ? in->zr[i].off : off;
        uint64_t b = in->zr[i].off + in->zr[i].len < end ? in->zr[i].off + in->zr[i].len : end;
        memset(buf + (a - off), 0, (size_t)(b - a));
    }
}

/* Whole blocks of a zero range at pos: one zero extent, unread (true);
 * otherwise *want shrinks so the read ends where the next such blocks
 * start. */
static bool in_zeroed(struct in_src *in, struct in_ext *ext, size_t *want)
{
    for (size_t i = in_zr_search(in, in->pos); i < in->nzr; i++) {
        uint64_t s, e;
        in_zr_blocks(in, i, &s, &e);
        if (e <= in->pos || e == s)
            continue; /* no whole block (left to the mask) */
        if (s <= in->pos) {
            *ext = (struct in_ext){in->pos, e - in->pos, NULL};
            in->zr_bytes += e - in->pos;
            prog_add(in->prog, PROG_SKIP, e - in->pos);
            in->pos = e;
            return true;
        }
        if (s - in->pos < *want)
            *want = (size_t)(s - in->pos);
        return false;
    }
    return false;
}

/* Zeros the scout already found at pos: one zero extent, unread (true);
 * otherwise *want shrinks so the read ends where the next found zeros start. */
static bool in_scouted(struct in_src *in, struct in_ext *ext, size_t *want)
{
    uint64_t limit = in->kind == IN_REG ? in->data_end : in->size, next;
    if (in->pos >= limit)
        return false;
    uint64_t z = scout_zero(in->scout, in->pos, limit, &next);
    if (z > 0) {
        *ext = (struct in_ext){in->pos, z, NULL};
        in->pos += z;
        in->scout_bytes += z;
        return true;
    }
    if (next - in->pos < *want)
        *want = (size_t)(next - in->pos);
    return false;
}

int in_next(struct in_src *in, uint8_t *win, struct in_ext *ext, struct sp_err *err)
{
    if (in->eof)
        return 0;
    size_t want = in->wsize;
    if (in->kind == IN_REG) {
        if (in->pos >= in->size) {
            in->eof = true;
            return 0;
        }
        if (in->pos >= in->data_end) {
            uint64_t hole = in->seek_holes ? in_locate(in) : 0;
            if (!in->seek_holes)
                in->data_end = in->size;
            if (hole > 0) {
                *ext = (struct in_ext){in->pos, hole, NULL};
                in->pos += hole;
                in->hole_bytes += hole;
                return 1;
            }
        }
        if (in->data_end - in->pos < want)
            want = (size_t)(in->data_end - in->pos);
    }
    if (in->nzr > 0 && in_zeroed(in, ext, &want))
        return 1;
    if (in->scout != NULL && in_scouted(in, ext, &want))
        return 1;
    ssize_t got = in_fill(in, win, want, err);
    if (got < 0)
        return -1;
    if ((size_t)got < want) {
        in->eof = true;
        if (in->kind == IN_REG)
            in->short_file = true;
        if (got == 0)
            return 0;
    }
    if (in->nzr > 0)
        in_mask_zero_ranges(in, in->pos, win, (size_t)got);
    *ext = (struct in_ext){in->pos, (uint64_t)got, win};
    in->pos += (uint64_t)got;
    return 1;
}

bool in_size_changed(const struct in_src *in)
{
    if (in->kind != IN_REG)
        return false;
    struct stat st;
    return in->short_file ||
           (fstat(in->fd, &st) == 0 && (uint64_t)st.st_size != in->base + in->size);
}

void in_close(struct in_src *in)
{
#ifdef HAVE_POSIX_FADVISE
    /* Again over everything read: pages the scout was reading while the
     * reader advised them away stay otherwise (measured: a third of a
     * cached file). */
    if (in->nocache && in->kind != IN_STREAM && in->pos > 0)
        (void)posix_fadvise(in->fd, (off_t)in->base, (off_t)in->pos, POSIX_FADV_DONTNEED);
#endif
    /* Leave the shared offset where a sequential read would have: pread
     * never moved it, and the hole probing moved it elsewhere. */
    if (in->kind != IN_STREAM)
        (void)lseek(in->fd, (off_t)(in->base + in->pos), SEEK_SET);
}
