/* rescue.c — see rescue.h. */
#define _GNU_SOURCE /* O_DIRECT */
#include "config.h"
#include "rescue.h"
#include "io.h"

#include <errno.h>
#include <fcntl.h>
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

void rsc_init(struct rsc *r, int fd, uint64_t base, struct sp_progress *progress)
{
    memset(r, 0, sizeof *r);
    r->fd = fd;
    r->dfd = -1;
    r->base = base;
    r->sector = 512;
    r->progress = progress;
    struct stat st;
#ifdef BLKSSZGET
    int ss;
    if (fstat(fd, &st) == 0 && S_ISBLK(st.st_mode) && ioctl(fd, BLKSSZGET, &ss) == 0 &&
        ss >= 512 && ss <= 65536 && (ss & (ss - 1)) == 0)
        r->sector = (unsigned)ss;
#else
    (void)st;
#endif
}

bool rsc_media_error(int e)
{
    return e == EIO || e == ENODATA || e == EBADMSG || e == EILSEQ
#ifdef EREMOTEIO
           || e == EREMOTEIO
#endif
        ;
}

/* Read n bytes at file offset off, over short reads: the bytes read (fewer
 * only at the end), or -1 with errno. */
static ssize_t rsc_pread(int fd, uint8_t *buf, size_t n, uint64_t off)
{
    size_t got;
    if (io_pread(fd, buf, n, off, &got) != 0 && got == 0)
        return -1;
    return (ssize_t)got;
}

/* The O_DIRECT twin of the input, opened once on the first sector read. */
static void rsc_direct(struct rsc *r)
{
    if (r->direct_tried)
        return;
    r->direct_tried = true;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", r->fd);
    int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (fd < 0)
        return;
    if (posix_memalign((void **)&r->bounce, r->sector < 4096 ? 4096 : r->sector, r->sector) != 0) {
        r->bounce = NULL;
        close(fd);
        return;
    }
    r->dfd = fd;
}

/* Record [off, off + n) as bad (offsets from base). */
static int rsc_record(struct rsc *r, uint64_t off, uint64_t n, struct sp_err *err)
{
    r->bad_bytes += n;
    prog_add(r->progress, PROG_BAD, n);
    if (r->nbad > 0) {
        struct sp_range *last = &r->bad[r->nbad - 1];
        if (last->off + last->len == off || r->nbad == RSC_RANGES_MAX) {
            last->len = off + n - last->off; /* at the bound, the gap too */
            return 0;
        }
    }
    if (r->nbad == r->cap) {
        size_t cap = r->cap == 0 ? 64 : r->cap * 2;
        struct sp_range *p = realloc(r->bad, cap * sizeof *p);
        if (p == NULL) {
            sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory for the list of bad sectors");
            return -1;
        }
        r->bad = p;
        r->cap = cap;
    }
    r->bad[r->nbad++] = (struct sp_range){off, n};
    return 0;
}

/* One sector (or the part of one at the input's end), RSC_TRIES times:
 * bytes read, 0 at the end, -1 (errno) for a non-media error, or n with the
 * sector zeroed and recorded.  *fail tells the last case apart. */
static ssize_t rsc_sector(struct rsc *r, uint8_t *buf, size_t n, uint64_t off, bool *fail)
{
    uint64_t at = r->base + off;
    rsc_direct(r);
    int e = EIO;
    for (int t = 0; t < RSC_TRIES; t++) {
        ssize_t k;
        bool aligned = at % r->sector == 0;
        if (r->dfd >= 0 && aligned) {
            k = rsc_pread(r->dfd, r->bounce, r->sector, at);
            if (k < 0 && errno == EINVAL) { /* not for this file: buffered reads */
                close(r->dfd);
                r->dfd = -1;
                k = rsc_pread(r->fd, buf, n, at);
            } else if (k > 0) {
                k = (size_t)k < n ? k : (ssize_t)n;
                memcpy(buf, r->bounce, (size_t)k);
            }
        } else {
            k = rsc_pread(r->fd, buf, n, at);
        }
        if (k >= 0)
            return k;
        e = errno;
        if (!rsc_media_error(e)) {
            errno = e;
            return -1;
        }
    }
    memset(buf, 0, n);
    *fail = true;
    return (ssize_t)n;
}

/* [off, off + n) in halves on sector boundaries, down to one sector. */
static ssize_t rsc_split(struct rsc *r, uint8_t *buf, size_t n, uint64_t off, struct sp_err *err)
{
    uint64_t at = r->base + off, s = r->sector;
    uint64_t first_end = (at / s + 1) * s; /* end of the sector holding at */
    if (at + n <= first_end) {
        bool fail = false;
        ssize_t k = rsc_sector(r, buf, n, off, &fail);
        if (k < 0)
            sp_err_set(err, SP_ERR_READ, errno, "read error at offset %llu",
                       (unsigned long long)off);
        else if (fail && rsc_record(r, off, n, err) != 0)
            return -1;
        return k;
    }
    uint64_t mid = (at + n / 2) / s * s;
    if (mid <= at)
        mid = first_end;
    size_t a = (size_t)(mid - at);
    for (int half = 0; half < 2; half++) {
        uint8_t *p = half == 0 ? buf : buf + a;
        size_t len = half == 0 ? a : n - a;
        uint64_t o = half == 0 ? off : off + a;
        ssize_t k = rsc_pread(r->fd, p, len, r->base + o);
        if (k < 0 && !rsc_media_error(errno)) {
            sp_err_set(err, SP_ERR_READ, errno, "read error at offset %llu",
                       (unsigned long long)o);
            return -1;
        }
        if (k < 0 && (k = rsc_split(r, p, len, o, err)) < 0)
            return -1;
        if ((size_t)k < len) /* the end of the input */
            return (ssize_t)(half == 0 ? (size_t)k : a + (size_t)k);
    }
    return (ssize_t)n;
}

ssize_t rsc_read(struct rsc *r, uint8_t *buf, size_t n, uint64_t off, struct sp_err *err)
{
    return rsc_split(r, buf, n, off, err);
}

void rsc_free(struct rsc *r)
{
    if (r->dfd >= 0)
        close(r->dfd);
    free(r->bounce);
    free(r->bad);
    r->bad = NULL;
    r->dfd = -1;
}
