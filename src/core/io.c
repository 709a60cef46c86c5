/* io.c — see io.h. */
#include "config.h"
#include "io.h"

#include <errno.h>
#include <stdbool.h>
#include <unistd.h>
#ifdef HAVE_SYS_IOCTL_H
#include <sys/ioctl.h>
#endif
#ifdef HAVE_LINUX_FS_H
#include <linux/fs.h>
#endif

/* One call, retried on EINTR: pread(2) at off when `at`, else read(2). */
static ssize_t io_rd(int fd, void *p, size_t n, bool at, uint64_t off)
{
    ssize_t r;
    do
        r = at ? pread(fd, p, n, (off_t)off) : read(fd, p, n);
    while (r < 0 && errno == EINTR);
    return r;
}

static int io_fill(int fd, uint8_t *p, size_t n, bool at, uint64_t off, size_t *got)
{
    size_t done = 0;
    int rc = 0;
    while (done < n) {
        ssize_t r = io_rd(fd, p + done, n - done, at, off + done);
        if (r < 0) {
            rc = -1;
            break;
        }
        if (r == 0)
            break; /* the end of the input */
        done += (size_t)r;
    }
    if (got != NULL)
        *got = done;
    return rc;
}

int io_read(int fd, void *p, size_t n, size_t *got)
{
    return io_fill(fd, p, n, false, 0, got);
}

int io_pread(int fd, void *p, size_t n, uint64_t off, size_t *got)
{
    return io_fill(fd, p, n, true, off, got);
}

int io_pread_exact(int fd, void *p, size_t n, uint64_t off)
{
    size_t got;
    if (io_fill(fd, p, n, true, off, &got) != 0)
        return -1;
    return got < n ? IO_SHORT : 0;
}

ssize_t io_read_once(int fd, void *p, size_t n)
{
    return io_rd(fd, p, n, false, 0);
}

ssize_t io_pread_once(int fd, void *p, size_t n, uint64_t off)
{
    return io_rd(fd, p, n, true, off);
}

static int io_put(int fd, const uint8_t *p, size_t n, bool at, uint64_t off, size_t *put)
{
    size_t done = 0;
    int rc = 0;
    while (done < n) {
        ssize_t w = at ? pwrite(fd, p + done, n - done, (off_t)(off + done))
                       : write(fd, p + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO; /* nothing taken and no error: it would never end */
            rc = -1;
            break;
        }
        done += (size_t)w;
    }
    if (put != NULL)
        *put = done;
    return rc;
}

int io_write(int fd, const void *p, size_t n, size_t *put)
{
    return io_put(fd, p, n, false, 0, put);
}

int io_pwrite(int fd, const void *p, size_t n, uint64_t off, size_t *put)
{
    return io_put(fd, p, n, true, off, put);
}

int io_size(int fd, const struct stat *st, uint64_t *bytes)
{
    if (S_ISREG(st->st_mode)) {
        *bytes = st->st_size > 0 ? (uint64_t)st->st_size : 0;
        return 0;
    }
#ifdef BLKGETSIZE64
    if (S_ISBLK(st->st_mode) && ioctl(fd, BLKGETSIZE64, bytes) == 0)
        return 0;
#else
    (void)fd;
#endif
    return -1;
}
