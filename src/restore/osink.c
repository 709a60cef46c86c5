/* osink.c — see osink.h. */
#include "osink.h"
#include "scan.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OSINK_ZPAGE 65536
static const uint8_t osink_zero_page[OSINK_ZPAGE];

int osink_open(struct osink *o, int fd, enum osink_sparse mode, struct sp_err *err)
{
    memset(o, 0, sizeof *o);
    o->fd = fd;
    if (fd < 0)
        return 0;
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
    return 0;
}

static int osink_fail(struct osink *o, int e, const char *what)
{
    o->failed = 1;
    sp_err_set(&o->err, SP_ERR_WRITE, e, "%s", what);
    return -1;
}

static int osink_raw(struct osink *o, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(o->fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return osink_fail(o, errno, "write error");
        }
        p += w;
        n -= (size_t)w;
        o->written += (uint64_t)w;
    }
    return 0;
}

static int osink_praw(const struct osink *o, uint64_t off, const uint8_t *p, size_t n,
                      struct osink_acc *acc)
{
    while (n > 0) {
        ssize_t w = pwrite(o->fd, p, n, (off_t)(o->base + off));
        if (w < 0) {
            if (errno == EINTR)
                continue;
            sp_err_set(&acc->err, SP_ERR_WRITE, errno, "write error");
            return -1;
        }
        p += w;
        n -= (size_t)w;
        off += (uint64_t)w;
        acc->written += (uint64_t)w;
    }
    return 0;
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

static int osink_write_in(struct osink *o, const uint8_t *p, size_t n)
{
    o->sequential = true;
    if (o->failed)
        return -1;
    uint64_t off = o->pos;
    o->pos += n;
    if (o->fd < 0 || n == 0)
        return 0;
    if (!o->sparse)
        return osink_raw(o, p, n);
    return osink_split(o, off, p, n, osink_seq_put, osink_seq_skip, o);
}

static int osink_zeros_in(struct osink *o, uint64_t n)
{
    o->sequential = true;
    if (o->fd < 0 && !o->failed) { /* testing: nothing to write */
        o->pos += n;
        return 0;
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
    if (!o->sparse)
        return osink_praw(o, off, p, n, acc);
    struct osink_pos ps = {o, acc};
    return osink_split(o, off, p, n, osink_pos_put, osink_pos_skip, &ps);
}

int osink_pzeros(const struct osink *o, uint64_t off, uint64_t n, struct osink_acc *acc)
{
    if (o->fd < 0)
        return 0;
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
    while (n > 0) {
        size_t step = n < OSINK_ZPAGE ? (size_t)n : OSINK_ZPAGE;
        if (osink_praw(o, off, osink_zero_page, step, acc) != 0)
            return -1;
        off += step;
        n -= step;
    }
    return 0;
}

int osink_finish(struct osink *o, uint64_t total)
{
    if (o->failed)
        return -1;
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
    /* Positioned writes do not move the file offset: leave it just past the
     * output, where a sequential writer would have left it, so that what the
     * shell or the next input writes to the same descriptor follows it
     * (`spigz -dc a.gz b.gz > out`, `(spigz -dc x.gz; printf T) > out`). */
    if (o->seekable && !o->sequential &&
        lseek(o->fd, (off_t)(o->base + total), SEEK_SET) < 0)
        return osink_fail(o, errno, "seek error");
    return 0;
}
