/* fault.c — an LD_PRELOAD shim for the error tests: make reads of regular
 * files fail (EIO) after a number of bytes, writes to regular files fail
 * (ENOSPC, "disk full") after a number of bytes, or reads slow down so a
 * signal can arrive mid-run.  Pipes and terminals are never touched.
 *
 *   FAULT_READ_EIO_AFTER=N   FAULT_WRITE_ENOSPC_AFTER=N   FAULT_READ_DELAY_US=U
 *   FAULT_READ_EINTR=1       every other read of a file fails with EINTR
 *                            before reading anything (a signal arrived)
 *   FAULT_FSYNC_EIO=dir|file fsync of a directory (or of a regular file)
 *                            fails with EIO
 *   FAULT_FSYNC_STALL_DIR=D  fsync of a block device writes a line to the
 *                            FIFO D/stalled, then waits until D/go is
 *                            written to (a device flushing its cache: the
 *                            test acts meanwhile, as with FAULT_STALL_*)
 *   FAULT_STALL_AFTER=N FAULT_STALL_DIR=D
 *                            the first read of a file that would pass N bytes
 *                            in all writes a line to the FIFO D/stalled, then
 *                            waits until the FIFO D/go is written to; reads on
 *                            other threads past N wait for it too.  So a test
 *                            knows spigz is mid-run (its output exists) by
 *                            reading D/stalled, acts (a signal, a change to
 *                            the input), then lets it go on: no sleeps, no
 *                            timing.
 *
 *   FAULT_EIO_FILE=PATH FAULT_EIO_RANGES=OFF+LEN[,OFF+LEN...]
 *                            reads of that file or device (any descriptor
 *                            on it, O_DIRECT ones too) that touch one of the
 *                            byte ranges fail with EIO: bad sectors
 *   FAULT_EIO_FLAKY=N        ... but each range fails only its first N
 *                            reads, then reads well (a marginal sector)
 *   FAULT_SHORT_READ=N       reads of FAULT_EIO_FILE return N bytes at most
 *   FAULT_READ_LOG=PATH      append "OFF LEN\n" for each read of
 *                            FAULT_EIO_FILE (to count the retries)
 *
 *   FAULT_NO_ZEROOUT=1       the BLKZEROOUT ioctl and fallocate fail with
 *                            EOPNOTSUPP (a device that offloads nothing)
 *
 * read, pread, write, pwrite (and their 64-bit names), fsync, ioctl
 * (BLKZEROOUT only) and fallocate are intercepted.
 *
 * Test-only: not installed, not linked into spigz.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <linux/fs.h>
#include <string.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static atomic_llong fault_read_total, fault_write_total, fault_read_calls;

static long long fault_env(const char *name)
{
    const char *v = getenv(name);
    return v != NULL ? atoll(v) : -1;
}

static int fault_is_file(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode));
}

static atomic_int fault_stall_state; /* 0 before, 1 stalled, 2 released */
static atomic_llong fault_stall_total;

/* Open and write (or read to its end) the FIFO dir/name. */
static void fault_fifo(const char *dir, const char *name, int write_it)
{
    char path[4096];
    size_t n = strlen(dir);
    if (n + strlen(name) + 2 > sizeof path)
        return;
    memcpy(path, dir, n);
    path[n] = '/';
    strcpy(path + n + 1, name);
    int fd;
    do
        fd = open(path, write_it ? O_WRONLY : O_RDONLY);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return;
    char b[64];
    if (write_it)
        (void)!write(fd, "stalled\n", 8);
    else
        while (read(fd, b, sizeof b) > 0)
            ;
    close(fd);
}

static void fault_stall(size_t n)
{
    long long after = fault_env("FAULT_STALL_AFTER");
    const char *dir = getenv("FAULT_STALL_DIR");
    if (after < 0 || dir == NULL)
        return;
    if (atomic_fetch_add(&fault_stall_total, (long long)n) + (long long)n <= after)
        return;
    int expect = 0;
    if (atomic_compare_exchange_strong(&fault_stall_state, &expect, 1)) {
        int saved = errno;
        fault_fifo(dir, "stalled", 1);
        fault_fifo(dir, "go", 0);
        atomic_store(&fault_stall_state, 2);
        errno = saved;
        return;
    }
    while (atomic_load(&fault_stall_state) == 1) { /* another thread waits for go */
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

#define FAULT_RANGES 64
static struct { long long off, len; atomic_int fails; } fault_rng[FAULT_RANGES];
static int fault_nrng = -1; /* -1: not parsed yet */

static void fault_parse_ranges(void)
{
    const char *v = getenv("FAULT_EIO_RANGES");
    int n = 0;
    while (v != NULL && *v != '\0' && n < FAULT_RANGES) {
        char *end;
        long long off = strtoll(v, &end, 0);
        if (*end != '+')
            break;
        long long len = strtoll(end + 1, &end, 0);
        fault_rng[n].off = off;
        fault_rng[n].len = len;
        n++;
        v = *end == ',' ? end + 1 : end;
    }
    fault_nrng = n;
}

/* Whether fd is open on FAULT_EIO_FILE. */
static int fault_is_target(int fd)
{
    const char *path = getenv("FAULT_EIO_FILE");
    struct stat a, b;
    if (path == NULL || stat(path, &a) != 0 || fstat(fd, &b) != 0)
        return 0;
    if (S_ISBLK(a.st_mode))
        return S_ISBLK(b.st_mode) && a.st_rdev == b.st_rdev;
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static void fault_log(long long off, size_t n)
{
    const char *path = getenv("FAULT_READ_LOG");
    if (path == NULL)
        return;
    static ssize_t (*real)(int, const void *, size_t);
    if (real == NULL)
        real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    int lfd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0600);
    if (lfd < 0)
        return;
    char line[64];
    int k = snprintf(line, sizeof line, "%lld %zu\n", off, n);
    (void)!real(lfd, line, (size_t)k);
    close(lfd);
}

/* Bad sectors: -1 with EIO when [off, off + n) of the target touches one;
 * else 0 with *n cut to FAULT_SHORT_READ. */
static int fault_sectors(int fd, long long off, size_t *n)
{
    if (!fault_is_target(fd))
        return 0;
    int saved = errno;
    fault_log(off, *n);
    errno = saved;
    if (fault_nrng < 0)
        fault_parse_ranges();
    long long flaky = fault_env("FAULT_EIO_FLAKY");
    for (int i = 0; i < fault_nrng; i++) {
        if (off < fault_rng[i].off + fault_rng[i].len && fault_rng[i].off < off + (long long)*n) {
            if (flaky > 0 && atomic_fetch_add(&fault_rng[i].fails, 1) >= flaky)
                continue;
            errno = EIO;
            return -1;
        }
    }
    long long cut = fault_env("FAULT_SHORT_READ");
    if (cut > 0 && (long long)*n > cut)
        *n = (size_t)cut;
    return 0;
}

/* Returns -1 with errno set when this read must fail, else 0. */
static int fault_before_read(int fd, size_t n)
{
    if (!fault_is_file(fd))
        return 0;
    fault_stall(n);
    long long delay = fault_env("FAULT_READ_DELAY_US");
    if (delay > 0) {
        struct timespec ts = {delay / 1000000, (delay % 1000000) * 1000};
        nanosleep(&ts, NULL);
    }
    if (fault_env("FAULT_READ_EINTR") > 0 && atomic_fetch_add(&fault_read_calls, 1) % 2 == 0) {
        errno = EINTR;
        return -1;
    }
    long long limit = fault_env("FAULT_READ_EIO_AFTER");
    if (limit >= 0 && atomic_fetch_add(&fault_read_total, (long long)n) + (long long)n > limit) {
        errno = EIO;
        return -1;
    }
    return 0;
}

ssize_t read(int fd, void *buf, size_t n)
{
    static ssize_t (*real)(int, void *, size_t);
    if (real == NULL)
        real = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
    if (fault_before_read(fd, n) != 0)
        return -1;
    if (getenv("FAULT_EIO_FILE") != NULL &&
        fault_sectors(fd, (long long)lseek(fd, 0, SEEK_CUR), &n) != 0)
        return -1;
    return real(fd, buf, n);
}

ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
    static ssize_t (*real)(int, void *, size_t, off_t);
    if (real == NULL)
        real = (ssize_t (*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread64");
    if (fault_before_read(fd, n) != 0)
        return -1;
    if (getenv("FAULT_EIO_FILE") != NULL && fault_sectors(fd, (long long)off, &n) != 0)
        return -1;
    return real(fd, buf, n, off);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    return pread64(fd, buf, n, off);
}

/* How many of n bytes a write may take before the disk is "full": n, fewer
 * (a short write, as a filling disk gives), or -1 with ENOSPC. */
static ssize_t fault_write_room(int fd, size_t n)
{
    long long limit = fault_env("FAULT_WRITE_ENOSPC_AFTER");
    if (limit < 0 || !fault_is_file(fd))
        return (ssize_t)n;
    long long before = atomic_fetch_add(&fault_write_total, (long long)n);
    if (before + (long long)n <= limit)
        return (ssize_t)n;
    if (before < limit)
        return (ssize_t)(limit - before);
    errno = ENOSPC;
    return -1;
}

ssize_t write(int fd, const void *buf, size_t n)
{
    static ssize_t (*real)(int, const void *, size_t);
    if (real == NULL)
        real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    ssize_t room = fault_write_room(fd, n);
    return room < 0 ? -1 : real(fd, buf, (size_t)room);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
    static ssize_t (*real)(int, const void *, size_t, off_t);
    if (real == NULL)
        real = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite64");
    ssize_t room = fault_write_room(fd, n);
    return room < 0 ? -1 : real(fd, buf, (size_t)room, off);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    return pwrite64(fd, buf, n, off);
}

int fsync(int fd)
{
    static int (*real)(int);
    if (real == NULL)
        real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    const char *what = getenv("FAULT_FSYNC_EIO");
    const char *stall = getenv("FAULT_FSYNC_STALL_DIR");
    struct stat st;
    if (stall != NULL && fstat(fd, &st) == 0 && S_ISBLK(st.st_mode)) {
        int saved = errno; /* a device's cache being flushed: held */
        fault_fifo(stall, "stalled", 1);
        fault_fifo(stall, "go", 0);
        errno = saved;
    }
    if (what != NULL && fstat(fd, &st) == 0 &&
        ((strcmp(what, "dir") == 0 && S_ISDIR(st.st_mode)) ||
         (strcmp(what, "file") == 0 && S_ISREG(st.st_mode)))) {
        errno = EIO;
        return -1;
    }
    return real(fd);
}

int ioctl(int fd, unsigned long req, ...)
{
    static int (*real)(int, unsigned long, ...);
    if (real == NULL)
        real = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
    va_list ap;
    va_start(ap, req);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    if (req == BLKZEROOUT && fault_env("FAULT_NO_ZEROOUT") > 0) {
        errno = EOPNOTSUPP;
        return -1;
    }
    return real(fd, req, arg);
}

int fallocate64(int fd, int mode, off_t off, off_t len)
{
    static int (*real)(int, int, off_t, off_t);
    if (real == NULL)
        real = (int (*)(int, int, off_t, off_t))dlsym(RTLD_NEXT, "fallocate64");
    if (fault_env("FAULT_NO_ZEROOUT") > 0) {
        errno = EOPNOTSUPP;
        return -1;
    }
    return real(fd, mode, off, len);
}

int fallocate(int fd, int mode, off_t off, off_t len)
{
    return fallocate64(fd, mode, off, len);
}
