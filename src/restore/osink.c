/* osink.c — see osink.h. */
#define _GNU_SOURCE /* fallocate */
#include "osink.h"
#include "text.h"
#include "pipe.h"
#include "block.h"
#include "io.h"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef HAVE_SYS_IOCTL_H
#include <sys/ioctl.h>
#endif
#ifdef HAVE_LINUX_FS_H
#include <linux/fs.h>
#endif
#ifdef HAVE_LINUX_FALLOC_H
#include <linux/falloc.h>
#endif

#define OSINK_ZPAGE 65536
static const uint8_t osink_zero_page[OSINK_ZPAGE];

int osink_open(struct osink *o, int fd, enum osink_sparse mode, struct sp_err *err)
{
    memset(o, 0, sizeof *o);
    o->fd = fd;
    o->dfd = -1;
    if (fd < 0)
        return 0;
    sp_pipe_widen(fd, 1u << 20); /* `spigz -dc | dd`: pipe.h */
    struct stat st;
    if (fstat(fd, &st) != 0) {
        sp_err_set(err, SP_ERR_WRITE, errno, "cannot stat output");
        return -1;
    }
    off_t cur = lseek(fd, 0, SEEK_CUR);
    int fl = fcntl(fd, F_GETFL);
    bool reg = S_ISREG(st.st_mode), blk = S_ISBLK(st.st_mode);
    o->seekable = (reg || blk) && cur >= 0 && fl >= 0 && !(fl & O_APPEND);
    o->base = cur >= 0 ? (uint64_t)cur : 0;
    /* A regular file: only at its end, whatever the mode, since past it
     * there is nothing old to show through a skipped block.  A device: only
     * when the user says it reads as zeros (ALWAYS). */
    bool at_end = reg && cur == st.st_size;
    o->sparse = o->seekable && mode != OSINK_SPARSE_NEVER &&
                (reg ? at_end : mode == OSINK_SPARSE_ALWAYS);
    o->device = blk && o->seekable;
    o->dev_size = UINT64_MAX;
    uint64_t bytes;
    if (o->device && io_size(fd, &st, &bytes) == 0)
        o->dev_size = bytes > o->base ? bytes - o->base : 0;
    return 0;
}

int osink_open_compare(struct osink *o, int fd, struct sp_err *err)
{
    memset(o, 0, sizeof *o);
    o->fd = fd;
    o->dfd = -1;
    o->compare = true;
    o->dev_size = UINT64_MAX;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        sp_err_set(err, SP_ERR_WRITE, errno, "cannot stat");
        return -1;
    }
    /* Only a file or a device can be read at any offset (a FIFO cannot, and
     * a character device's offsets mean nothing: lseek(SEEK_DATA) on
     * /dev/null says "data here" at every offset without moving) */
    o->cmp_stream = !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode);
    o->seekable = !o->cmp_stream;
    o->cmp_holes = S_ISREG(st.st_mode);
    uint64_t bytes;
    o->cmp_size = io_size(fd, &st, &bytes) == 0 ? bytes : UINT64_MAX;
    o->cmp_device = S_ISBLK(st.st_mode);
    o->diff = calloc(1, sizeof *o->diff);
    if (o->diff == NULL) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
        return -1;
    }
    pthread_mutex_init(&o->diff->mu, NULL);
    return 0;
}

void osink_close(struct osink *o)
{
    if (o->dfd >= 0)
        close(o->dfd);
    o->dfd = -1;
    if (o->diff == NULL)
        return;
    pthread_mutex_destroy(&o->diff->mu);
    free(o->diff->r);
    free(o->diff);
    o->diff = NULL;
}

/* Record that [off, off + n) differs (any thread). */
static void osink_differs(const struct osink *o, uint64_t off, uint64_t n)
{
    struct osink_diff *d = o->diff;
    pthread_mutex_lock(&d->mu);
    d->bytes += n;
    if (d->n > 0 && d->r[d->n - 1].off + d->r[d->n - 1].len == off) {
        d->r[d->n - 1].len += n; /* the common case: one run across calls */
    } else {
        if (d->n == d->cap) {
            size_t cap = d->cap == 0 ? 64 : 2 * d->cap;
            struct sp_range *r = realloc(d->r, cap * sizeof *r);
            if (r == NULL) {
                d->nomem = true;
                pthread_mutex_unlock(&d->mu);
                return;
            }
            d->r = r;
            d->cap = cap;
        }
        d->r[d->n++] = (struct sp_range){off, n};
    }
    pthread_mutex_unlock(&d->mu);
}

/* Read up to m bytes of the target at output offset off: pread, or the
 * stream's next bytes (off is then where the stream is: its bytes come in
 * order).  What read() returns; 0 at the target's end, for good once a
 * stream has ended. */
static ssize_t osink_cmp_read(const struct osink *o, uint8_t *buf, size_t m, uint64_t off)
{
    if (!o->cmp_stream)
        return io_pread_once(o->fd, buf, m, o->base + off);
    if (o->diff->eof)
        return 0;
    ssize_t r = io_read_once(o->fd, buf, m);
    if (r == 0)
        o->diff->eof = true;
    return r;
}

/* Compare p[0..n) (zeros when p is NULL) with the target at output offset
 * off, in 1 MiB reads; runs of differing bytes are recorded.  0, or -1
 * with *e set for a read error of the target (SP_ERR_WRITE: see osink.h). */
static int osink_cmp(const struct osink *o, uint64_t off, const uint8_t *p, uint64_t n,
                     struct sp_err *e)
{
    if (n == 0)
        return 0;
    uint64_t have = o->cmp_size > off ? o->cmp_size - off : 0;
    if (have < n) { /* past the target's end: all different */
        osink_differs(o, off + have, n - have);
        n = have;
    }
    size_t cap = n < (1u << 20) ? (size_t)n : (1u << 20);
    uint8_t *buf = cap > 0 ? malloc(cap) : NULL;
    if (cap > 0 && buf == NULL) {
        sp_err_set(e, SP_ERR_NOMEM, 0, "out of memory");
        return -1;
    }
    for (uint64_t i = 0; i < n;) {
        size_t m = n - i < cap ? (size_t)(n - i) : cap;
        ssize_t r = osink_cmp_read(o, buf, m, off + i);
        if (r <= 0) {
            if (r == 0) { /* shorter than it said (or a stream's end): the
                             rest differs */
                osink_differs(o, off + i, n - i);
                break;
            }
            sp_err_set(e, SP_ERR_WRITE, errno, "read error in the %zu bytes at offset %llu",
                       m, (unsigned long long)(off + i));
            free(buf);
            return -1;
        }
        m = (size_t)r;
#ifdef HAVE_POSIX_FADVISE
        if (o->cmp_device) /* a device's pages are not kept (as the reader's) */
            (void)posix_fadvise(o->fd, (off_t)(o->base + off + i), (off_t)m, POSIX_FADV_DONTNEED);
#endif
        /* runs of differing bytes, found a 4 KiB block at a time */
        for (size_t b = 0; b < m;) {
            size_t bl = m - b < SCAN_BLOCK ? m - b : SCAN_BLOCK;
            bool same = p != NULL ? memcmp(buf + b, p + i + b, bl) == 0
                                  : scan_is_zero(buf + b, bl);
            if (same) {
                b += bl;
                continue;
            }
            for (size_t x = b; x < b + bl;) {
                uint8_t want = p != NULL ? p[i + x] : 0;
                if (buf[x] == want) {
                    x++;
                    continue;
                }
                size_t y = x + 1;
                while (y < b + bl && buf[y] != (p != NULL ? p[i + y] : 0))
                    y++;
                osink_differs(o, off + i + x, y - x);
                x = y;
            }
            b += bl;
        }
        i += m;
    }
    __atomic_add_fetch(&o->diff->compared, n, __ATOMIC_RELAXED);
    free(buf);
    return 0;
}

void osink_set_discard(struct osink *o, bool discard)
{
    o->discard = discard && o->device;
}

int osink_set_direct(struct osink *o, struct sp_err *err)
{
    if (!o->device)
        return 0;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", o->fd);
    o->dfd = open(path, O_WRONLY | O_DIRECT | O_CLOEXEC);
    if (o->dfd < 0) {
        sp_err_set(err, SP_ERR_WRITE, errno, "cannot open the device for direct I/O");
        return -1;
    }
    return 0;
}

/* Zeros against a regular file: its holes compare equal unread.  Each
 * turn moves off forward (a file system whose SEEK_DATA or SEEK_HOLE
 * answers make no progress gets its bytes read instead). */
static int osink_cmp_zeros(const struct osink *o, uint64_t off, uint64_t n, struct sp_err *e)
{
    if (!o->cmp_holes)
        return osink_cmp(o, off, NULL, n, e);
    uint64_t end = off + n;
    while (off < end) {
        off_t d = lseek(o->fd, (off_t)(o->base + off), SEEK_DATA);
        if (d < 0 && errno == ENXIO && off < o->cmp_size) { /* a hole to its end */
            uint64_t stop = end < o->cmp_size ? end : o->cmp_size;
            __atomic_add_fetch(&o->diff->compared, stop - off, __ATOMIC_RELAXED);
            return osink_cmp(o, stop, NULL, end - stop, e);
        }
        if (d < 0 || (uint64_t)d < o->base) /* no holes here (or none known) */
            return osink_cmp(o, off, NULL, end - off, e);
        uint64_t ds = (uint64_t)d - o->base;
        if (ds >= end) {
            __atomic_add_fetch(&o->diff->compared, end - off, __ATOMIC_RELAXED);
            return 0; /* a hole to the end */
        }
        __atomic_add_fetch(&o->diff->compared, ds > off ? ds - off : 0, __ATOMIC_RELAXED);
        uint64_t from = ds > off ? ds : off;
        off_t h = lseek(o->fd, (off_t)(o->base + from), SEEK_HOLE);
        uint64_t hs = h < 0 || (uint64_t)h < o->base ? end : (uint64_t)h - o->base;
        if (hs > end || hs <= from) /* past the span, or no progress: read it */
            hs = end;
        if (osink_cmp(o, from, NULL, hs - from, e) != 0)
            return -1;
        off = hs;
    }
    return 0;
}

/* A write that failed: past a device's end, say so. */
static int osink_errno_msg(const struct osink *o, struct sp_err *e, int errnum, uint64_t off)
{
    if (o->device && errnum == ENOSPC && off >= o->dev_size) {
        char sz[TXT_SIZE_LEN];
        sp_err_set(e, SP_ERR_WRITE, 0,
                   "the image is larger than the device, which ends at %llu bytes (%s)",
                   (unsigned long long)o->dev_size, txt_size(sz, sizeof sz, (double)o->dev_size));
        return -1;
    }
    sp_err_set(e, SP_ERR_WRITE, errnum, "write error");
    return -1;
}

static int osink_fail(struct osink *o, int e, const char *what)
{
    o->failed = 1;
    sp_err_set(&o->err, SP_ERR_WRITE, e, "%s", what);
    return -1;
}

static int osink_raw(struct osink *o, const uint8_t *p, size_t n)
{
    size_t put;
    int rc = io_write(o->fd, p, n, &put);
    o->written += put;
    if (rc == 0)
        return 0;
    int e = errno;
    off_t at = lseek(o->fd, 0, SEEK_CUR);
    o->failed = 1;
    return osink_errno_msg(o, &o->err, e, at < 0 ? 0 : (uint64_t)at - o->base);
}

/* --direct: the whole pages of an aligned buffer at an aligned offset go
 * through the O_DIRECT twin, past the page cache; the rest is written as
 * usual (below).  Returns the bytes written so, or -1 (*acc's err set).
 * Not io_pwrite: a short direct write that ends inside a page must stop
 * there (O_DIRECT refuses the unaligned rest), not be retried. */
static ssize_t osink_pdirect(const struct osink *o, uint64_t off, const uint8_t *p, size_t n,
                             struct osink_acc *acc)
{
    size_t body = n / SCAN_BLOCK * SCAN_BLOCK, done = 0;
    if (o->dfd < 0 || body == 0 || (uintptr_t)p % SCAN_BLOCK != 0 ||
        (o->base + off) % SCAN_BLOCK != 0)
        return 0;
    while (done < body) {
        ssize_t w = pwrite(o->dfd, p + done, body - done, (off_t)(o->base + off + done));
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return osink_errno_msg(o, &acc->err, errno, off + done);
        done += (size_t)w;
        acc->written += (uint64_t)w;
        if (done % SCAN_BLOCK != 0) /* a short direct write: finish buffered */
            break;
    }
    return (ssize_t)done;
}

static int osink_praw(const struct osink *o, uint64_t off, const uint8_t *p, size_t n,
                      struct osink_acc *acc)
{
    ssize_t d = osink_pdirect(o, off, p, n, acc);
    if (d < 0)
        return -1;
    p += d;
    n -= (size_t)d;
    off += (uint64_t)d;
    size_t put;
    int rc = io_pwrite(o->fd, p, n, o->base + off, &put);
    acc->written += put;
    return rc == 0 ? 0 : osink_errno_msg(o, &acc->err, errno, off + put);
}

/* Zero [a, b) of a device (output offsets, whole 4 KiB pages of the
 * device) by the kernel: 1 done, 0 when the device takes neither way (plain
 * writes from then on), -1 with *e set for an error of the device.  Any
 * thread: the flags are atomics (hence the cast of the const sink). */
static int osink_offload(const struct osink *o, uint64_t a, uint64_t b, struct sp_err *e)
{
    struct osink *w = (struct osink *)o;
    if (!o->device || b <= a || atomic_load(&w->no_offload))
        return 0;
#if defined(HAVE_LINUX_FALLOC_H) && defined(FALLOC_FL_PUNCH_HOLE)
    if (o->discard && fallocate(o->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                (off_t)(o->base + a), (off_t)(b - a)) == 0) {
        atomic_fetch_add(&w->offloaded, b - a);
        return 1;
    }
#endif
#ifdef BLKZEROOUT
    uint64_t range[2] = {o->base + a, b - a};
    if (ioctl(o->fd, BLKZEROOUT, range) == 0) {
        atomic_fetch_add(&w->offloaded, b - a);
        return 1;
    }
    if (errno != ENOTTY && errno != EOPNOTSUPP && errno != EINVAL && errno != ENOSYS)
        return osink_errno_msg(o, e, errno, a);
#else
    (void)e;
#endif
    atomic_store(&w->no_offload, 1);
    return 0;
}

/* The whole 4 KiB pages of the device inside [off, off + n): [*a, *b). */
static void osink_pages(const struct osink *o, uint64_t off, uint64_t n, uint64_t *a, uint64_t *b)
{
    uint64_t s = o->base + off, t = s + n;
    uint64_t ps = (s + SCAN_BLOCK - 1) / SCAN_BLOCK * SCAN_BLOCK, pt = t / SCAN_BLOCK * SCAN_BLOCK;
    *a = ps - o->base;
    *b = pt > ps ? pt - o->base : *a;
}

/* Seek over zeros owed to the file before writing more. */
static int osink_settle(struct osink *o)
{
    if (o->skipped == 0)
        return 0;
    if (lseek(o->fd, (off_t)o->skipped, SEEK_CUR) < 0)
        return osink_fail(o, errno, "seek error");
    o->skipped = 0;
    return 0;
}

/* Length of the prefix of p[0..n) up to the first 4 KiB boundary of the file
 * at output offset off. */
static size_t osink_head(const struct osink *o, uint64_t off, size_t n)
{
    size_t mis = (size_t)((o->base + off) % SCAN_BLOCK);
    size_t head = mis == 0 ? 0 : SCAN_BLOCK - mis;
    return head < n ? head : n;
}

/* Walk p[0..n) at output offset off in runs: partial edge blocks and runs of
 * data blocks go to put(); aligned zero blocks to skip(). */
typedef int (*osink_put_fn)(void *, uint64_t, const uint8_t *, size_t);
typedef int (*osink_skip_fn)(void *, uint64_t, uint64_t);

static int osink_split(const struct osink *o, uint64_t off, const uint8_t *p, size_t n,
                       osink_put_fn put, osink_skip_fn skip, void *ctx)
{
    size_t i = osink_head(o, off, n);
    if (i > 0 && put(ctx, off, p, i) != 0)
        return -1;
    while (i < n) {
        size_t blk = n - i < SCAN_BLOCK ? n - i : SCAN_BLOCK;
        bool zero = blk == SCAN_BLOCK && scan_is_zero(p + i, blk);
        size_t j = i + blk;
        while (j + SCAN_BLOCK <= n && scan_is_zero(p + j, SCAN_BLOCK) == zero)
            j += SCAN_BLOCK;
        int rc = zero ? skip(ctx, off + i, j - i) : put(ctx, off + i, p + i, j - i);
        if (rc != 0)
            return -1;
        i = j;
    }
    return 0;
}

static int osink_seq_put(void *ctx, uint64_t off, const uint8_t *p, size_t n)
{
    struct osink *o = ctx;
    (void)off;
    if (osink_settle(o) != 0)
        return -1;
    return osink_raw(o, p, n);
}

static int osink_seq_skip(void *ctx, uint64_t off, uint64_t n)
{
    struct osink *o = ctx;
    (void)off;
    o->skipped += n;
    o->holes += n;
    return 0;
}

void osink_window(struct osink *o, uint64_t off, uint64_t len)
{
    o->sequential = true; /* even if nothing falls in the window */
    o->windowed = true;
    o->lpos = 0;
    o->win_off = off;
    o->win_end = len > UINT64_MAX - off ? UINT64_MAX : off + len;
}

/* The part of [lpos, lpos + n) inside the window: its start and length. */
static uint64_t osink_clip(struct osink *o, uint64_t n, uint64_t *skip)
{
    uint64_t a = o->lpos, b = o->lpos + n;
    o->lpos = b;
    if (a < o->win_off)
        a = o->win_off;
    if (b > o->win_end)
        b = o->win_end;
    *skip = a - (o->lpos - n);
    return b > a ? b - a : 0;
}

static int osink_write_in(struct osink *o, const uint8_t *p, size_t n);
static int osink_zeros_in(struct osink *o, uint64_t n);

int osink_write(struct osink *o, const uint8_t *p, size_t n)
{
    if (!o->windowed)
        return osink_write_in(o, p, n);
    uint64_t skip, len = osink_clip(o, n, &skip);
    return len == 0 ? (o->failed ? -1 : 0) : osink_write_in(o, p + skip, (size_t)len);
}

int osink_zeros(struct osink *o, uint64_t n)
{
    if (!o->windowed)
        return osink_zeros_in(o, n);
    uint64_t skip, len = osink_clip(o, n, &skip);
    return len == 0 ? (o->failed ? -1 : 0) : osink_zeros_in(o, len);
}

/* A device, sequentially: zero runs found in decoded data are zeroed by
 * the kernel too (a foreign gzip file's zeros are data to the inflater). */
static int osink_seq_dev_put(void *ctx, uint64_t off, const uint8_t *p, size_t n)
{
    (void)off;
    return osink_raw(ctx, p, n);
}

static int osink_seq_dev_zero(void *ctx, uint64_t off, uint64_t n)
{
    struct osink *o = ctx;
    uint64_t end = o->pos; /* osink_write_in moved it past the buffer */
    o->pos = off;
    int r = osink_zeros_in(o, n);
    o->pos = end;
    return r;
}

static int osink_write_in(struct osink *o, const uint8_t *p, size_t n)
{
    o->sequential = true;
    if (o->failed)
        return -1;
    uint64_t off = o->pos;
    o->pos += n;
    if (o->fd < 0 || n == 0)
        return 0;
    if (o->compare) {
        int r = osink_cmp(o, off, p, n, &o->err);
        o->failed = r != 0;
        return r;
    }
    if (o->device && !o->sparse && n >= OSINK_ZPAGE && !atomic_load(&o->no_offload))
        return osink_split(o, off, p, n, osink_seq_dev_put, osink_seq_dev_zero, o);
    if (!o->sparse)
        return osink_raw(o, p, n);
    return osink_split(o, off, p, n, osink_seq_put, osink_seq_skip, o);
}

/* A device, sequentially: the whole pages by the kernel, the edges written;
 * 1 done, 0 not offloaded (write them), -1 failed. */
static int osink_zeros_dev(struct osink *o, uint64_t n)
{
    uint64_t a, b;
    osink_pages(o, o->pos, n, &a, &b);
    if (b - a < OSINK_ZPAGE || o->failed || atomic_load(&o->no_offload))
        return 0;
    uint64_t head = a - o->pos, tail = o->pos + n - b;
    if (osink_write_in(o, osink_zero_page, (size_t)head) != 0)
        return -1;
    int r = osink_offload(o, a, b, &o->err);
    if (r < 0) {
        o->failed = 1;
        return -1;
    }
    if (r == 0)
        return osink_zeros_in(o, n - head) == 0 ? 1 : -1;
    if (lseek(o->fd, (off_t)(o->base + b), SEEK_SET) < 0)
        return osink_fail(o, errno, "seek error");
    o->pos = b;
    o->written += b - a;
    return osink_zeros_in(o, tail) == 0 ? 1 : -1;
}

static int osink_zeros_in(struct osink *o, uint64_t n)
{
    o->sequential = true;
    if (o->fd < 0 && !o->failed) { /* testing: nothing to write */
        o->pos += n;
        return 0;
    }
    if (o->compare && !o->failed) {
        int r = osink_cmp_zeros(o, o->pos, n, &o->err);
        o->pos += n;
        o->failed = r != 0;
        return r;
    }
    if (o->device && !o->sparse) {
        int r = osink_zeros_dev(o, n);
        if (r != 0)
            return r < 0 ? -1 : 0;
    }
    while (n > 0) {
        size_t step = n < OSINK_ZPAGE ? (size_t)n : OSINK_ZPAGE;
        /* Up to a block boundary first, so whole blocks can be skipped. */
        size_t head = o->sparse ? osink_head(o, o->pos, step) : 0;
        if (head > 0)
            step = head;
        /* Whole aligned blocks of a sparse file are skipped without a scan. */
        if (o->sparse && o->fd >= 0 && !o->failed && head == 0 && step >= SCAN_BLOCK) {
            uint64_t blocks = (n / SCAN_BLOCK) * SCAN_BLOCK;
            o->pos += blocks;
            o->skipped += blocks;
            o->holes += blocks;
            n -= blocks;
            continue;
        }
        if (osink_write_in(o, osink_zero_page, step) != 0)
            return -1;
        n -= step;
    }
    return 0;
}

struct osink_pos {
    const struct osink *o;
    struct osink_acc *acc;
};

static int osink_pos_put(void *ctx, uint64_t off, const uint8_t *p, size_t n)
{
    struct osink_pos *ps = ctx;
    return osink_praw(ps->o, off, p, n, ps->acc);
}

static int osink_pos_skip(void *ctx, uint64_t off, uint64_t n)
{
    struct osink_pos *ps = ctx;
    (void)off;
    ps->acc->holes += n;
    return 0;
}

int osink_pwrite(const struct osink *o, uint64_t off, const uint8_t *p, size_t n,
                 struct osink_acc *acc)
{
    if (o->fd < 0 || n == 0)
        return 0;
    if (o->compare)
        return osink_cmp(o, off, p, n, &acc->err);
    if (!o->sparse)
        return osink_praw(o, off, p, n, acc);
    struct osink_pos ps = {o, acc};
    return osink_split(o, off, p, n, osink_pos_put, osink_pos_skip, &ps);
}

int osink_pzeros(const struct osink *o, uint64_t off, uint64_t n, struct osink_acc *acc)
{
    if (o->fd < 0)
        return 0;
    if (o->compare)
        return osink_cmp_zeros(o, off, n, &acc->err);
    if (o->sparse) {
        /* Edges that are not whole blocks must be written. */
        size_t head = osink_head(o, off, n > SCAN_BLOCK ? SCAN_BLOCK : (size_t)n);
        uint64_t body = (n - head) / SCAN_BLOCK * SCAN_BLOCK;
        uint64_t tail = n - head - body;
        acc->holes += body;
        if (osink_praw(o, off, osink_zero_page, head, acc) != 0)
            return -1;
        return osink_praw(o, off + head + body, osink_zero_page, (size_t)tail, acc);
    }
    uint64_t a, b;
    osink_pages(o, off, n, &a, &b);
    if (o->device && b - a >= OSINK_ZPAGE) {
        int r = osink_offload(o, a, b, &acc->err);
        if (r < 0)
            return -1;
        if (r > 0) { /* the edges are written */
            acc->written += b - a;
            if (osink_pzeros(o, off, a - off, acc) != 0)
                return -1;
            return osink_pzeros(o, b, off + n - b, acc);
        }
    }
    while (n > 0) {
        size_t step = n < OSINK_ZPAGE ? (size_t)n : OSINK_ZPAGE;
        if (osink_praw(o, off, osink_zero_page, step, acc) != 0)
            return -1;
        off += step;
        n -= step;
    }
    return 0;
}

/* The device's own cache flushed (fsync), then its page cache dropped, so
 * that nothing read later comes from pages of this run rather than the
 * medium, and a 500 GB restore leaves the machine's cache as it was. */
static int osink_dev_sync(struct osink *o)
{
    if (o->prog != NULL)
        atomic_store_explicit(&o->prog->syncing, 1, memory_order_relaxed);
    int rc = fsync(o->fd);
    if (o->prog != NULL)
        atomic_store_explicit(&o->prog->syncing, 0, memory_order_relaxed);
    if (rc != 0)
        return osink_fail(o, errno, "cannot flush the device");
#ifdef BLKFLSBUF
    (void)ioctl(o->fd, BLKFLSBUF, 0);
#endif
    return 0;
}

int osink_finish(struct osink *o, uint64_t total)
{
    if (o->failed)
        return -1;
    if (o->compare) {
        struct osink_diff *d = o->diff;
        d->n = sp_ranges_normalize(d->r, d->n); /* join what threads recorded apart */
        if (d->nomem)
            return osink_fail(o, ENOMEM, "out of memory for the differences");
        return 0;
    }
    if (o->sequential)
        total = o->pos; /* what was output */
    if (o->fd < 0)
        return 0;
    if (o->sparse) {
        if (o->skipped > 0 && lseek(o->fd, (off_t)o->skipped, SEEK_CUR) < 0)
            return osink_fail(o, errno, "seek error");
        o->skipped = 0;
        struct stat st;
        if (fstat(o->fd, &st) != 0)
            return osink_fail(o, errno, "cannot stat output");
        if (S_ISREG(st.st_mode) && (uint64_t)st.st_size < o->base + total &&
            ftruncate(o->fd, (off_t)(o->base + total)) != 0)
            return osink_fail(o, errno, "cannot set the output size");
    }
    if (o->device && osink_dev_sync(o) != 0)
        return -1;
    /* Positioned writes do not move the file offset: leave it just past the
     * output, where a sequential writer would have left it, so that what the
     * shell or the next input writes to the same descriptor follows it
     * (`spigz -dc a.gz b.gz > out`, `(spigz -dc x.gz; printf T) > out`). */
    if (o->seekable && !o->sequential &&
        lseek(o->fd, (off_t)(o->base + total), SEEK_SET) < 0)
        return osink_fail(o, errno, "seek error");
    return 0;
}
