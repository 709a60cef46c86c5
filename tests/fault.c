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
 * read, pread, write, pwrite (and their 64-bit names) and fsync are
 * intercepted.
 *
 * Test-only: not installed, not linked into spigz.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
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
    return fault_before_read(fd, n) != 0 ? -1 : real(fd, buf, n);
}

ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
    static ssize_t (*real)(int, void *, size_t, off_t);
    if (real == NULL)
        real = (ssize_t (*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread64");
    return fault_before_read(fd, n) != 0 ? -1 : real(fd, buf, n, off);
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
    struct stat st;
    if (what != NULL && fstat(fd, &st) == 0 &&
        ((strcmp(what, "dir") == 0 && S_ISDIR(st.st_mode)) ||
         (strcmp(what, "file") == 0 && S_ISREG(st.st_mode)))) {
        errno = EIO;
        return -1;
    }
    return real(fd);
}
