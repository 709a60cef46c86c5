/* cli_path.c — names reached through directory descriptors, and identity.
 * See cli_path.h. */
#include "config.h"
#include "cli_path.h"
#include "lay.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* A directory: for reading (fsync and fdopendir need it), else O_PATH when
 * only search permission is granted. */
static int cp_open_dir(const char *name)
{
    int fd = open(name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno == EACCES)
        fd = open(name, O_PATH | O_DIRECTORY | O_CLOEXEC);
    return fd;
}

const char *cli_base(const char *path)
{
    const char *b = strrchr(path, '/');
    return b != NULL ? b + 1 : path;
}

int cli_dir_of(const char *path, int *dfd, const char **base)
{
    const char *b = cli_base(path);
    if (*b == '\0' || strcmp(b, ".") == 0 || strcmp(b, "..") == 0) {
        *dfd = AT_FDCWD;
        *base = path;
        return 0;
    }
    size_t n = (size_t)(b - path);
    char *dir = n == 0 ? strdup(".") : strndup(path, n);
    if (dir == NULL)
        return -1;
    int fd = cp_open_dir(dir);
    int e = errno;
    free(dir);
    if (fd < 0) {
        errno = e;
        return -1;
    }
    *dfd = fd;
    *base = b;
    return 0;
}

int cli_dir_down(int dfd, const char *name, bool follow)
{
    /* O_NONBLOCK: a FIFO put in its place is refused (ENOTDIR), never
     * waited on */
    return openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK |
                                 (follow ? 0 : O_NOFOLLOW));
}

/* Six characters for a temporary name: from getrandom, else the clock and
 * the process (a name taken is just tried again). */
static void cp_random(char out[6])
{
    static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static uint64_t mix;
    unsigned char r[6];
    if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        mix = mix * 6364136223846793005u + (uint64_t)ts.tv_nsec + (uint64_t)getpid() + 1;
        for (int i = 0; i < 6; i++)
            r[i] = (unsigned char)(mix >> (8 * i + 16));
    }
    for (int i = 0; i < 6; i++)
        out[i] = set[r[i] % (sizeof set - 1)];
}

int cli_tmp_create(int dfd, const char *base, char *tmp, size_t n)
{
    size_t blen = strlen(base);
    if (blen > NAME_MAX - 8)
        blen = NAME_MAX - 8;
    if (n < blen + 9) {
        errno = ENAMETOOLONG;
        return -1;
    }
    tmp[0] = '.';
    memcpy(tmp + 1, base, blen);
    tmp[1 + blen] = '.';
    tmp[blen + 8] = '\0';
    for (int i = 0; i < CLI_TMP_TRIES; i++) {
        cp_random(tmp + blen + 2);
        int fd = openat(dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

int cli_rename_at(int dfd, const char *from, const char *to, const struct stat *was)
{
    if (was != NULL) {
        /* replace only what was checked: a name that now holds another
         * file (swapped meanwhile) keeps it */
        struct stat now;
        if (fstatat(dfd, to, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
            (now.st_dev != was->st_dev || now.st_ino != was->st_ino)) {
            errno = EEXIST;
            return -1;
        }
        return renameat(dfd, from, dfd, to);
    }
    if (renameat2(dfd, from, dfd, to, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
    /* A file system without RENAME_NOREPLACE: link() refuses an existing
     * name as well. */
    if (linkat(dfd, from, dfd, to, 0) != 0)
        return -1;
    (void)unlinkat(dfd, from, 0);
    return 0;
}

int cli_dir_sync(int dfd)
{
    if (fsync(dfd) == 0 || errno == EINVAL || errno == EBADF)
        return 0;
    return -1;
}

int cli_unlink_same(int dfd, const char *name, dev_t dev, ino_t ino)
{
    struct stat now;
    if (fstatat(dfd, name, &now, AT_SYMLINK_NOFOLLOW) != 0)
        return -1;
    if (now.st_dev != dev || now.st_ino != ino)
        return 1;
    return unlinkat(dfd, name, 0);
}

bool cli_same_object(const struct stat *a, const struct stat *b)
{
    if (S_ISBLK(a->st_mode) && S_ISBLK(b->st_mode) &&
        (a->st_rdev == b->st_rdev || lay_disk_of(a->st_rdev) == b->st_rdev ||
         lay_disk_of(b->st_rdev) == a->st_rdev))
        return true;
    if (S_ISREG(a->st_mode) && S_ISREG(b->st_mode))
        return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
    /* a loop device over the other (an image onto a loop device of itself) */
    return lay_stores(a, b) || lay_stores(b, a);
}

/* d's directory and name from a path that needs no more resolving. */
static int cp_dest_dir(const char *path, struct cli_dest *d)
{
    const char *base;
    if (strlen(path) >= sizeof d->shown || cli_dir_of(path, &d->dfd, &base) != 0) {
        if (strlen(path) >= sizeof d->shown)
            errno = ENAMETOOLONG;
        return -1;
    }
    if (d->dfd == AT_FDCWD) { /* "", ".", "..", "dir/": no file name of its own */
        d->dfd = -1;
        errno = EISDIR;
        return -1;
    }
    if (strlen(base) > NAME_MAX || fstat(d->dfd, &d->dir) != 0) {
        int e = strlen(base) > NAME_MAX ? ENAMETOOLONG : errno;
        close(d->dfd);
        d->dfd = -1;
        errno = e;
        return -1;
    }
    memcpy(d->base, base, strlen(base) + 1);
    memcpy(d->shown, path, strlen(path) + 1);
    return 0;
}

int cli_dest_named(const char *path, struct cli_dest *d)
{
    memset(d, 0, sizeof *d);
    d->dfd = d->opath = -1;
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0 && errno != ENOENT)
        return -1;
    if (fd < 0) { /* nothing there, or a link to nothing */
        struct stat lst;
        if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
            d->dangling = true;
            d->st = lst;
        }
        return cp_dest_dir(path, d);
    }
    if (fstat(fd, &d->st) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    d->exists = true;
    if (!S_ISREG(d->st.st_mode)) { /* written into, or refused: no name to make */
        d->opath = fd;
        if (strlen(path) < sizeof d->shown)
            memcpy(d->shown, path, strlen(path) + 1);
        return 0;
    }
    /* a regular file, perhaps through links: replaced where it is.  Its
     * directory is found from the descriptor (the kernel's name for it,
     * no link followed again), and must hold this very file: else the
     * path changed under the check (EAGAIN). */
    char link[64], *real = malloc(PATH_MAX);
    ssize_t n = -1;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    if (real != NULL && (n = readlink(link, real, PATH_MAX - 1)) > 0)
        real[n] = '\0';
    else if (real != NULL && realpath(path, real) == NULL) /* no /proc */
        n = -1, real[0] = '\0';
    close(fd);
    int rc = real != NULL && real[0] == '/' ? cp_dest_dir(real, d) : -1;
    int e = real == NULL ? ENOMEM : real[0] != '/' ? ENOENT : errno;
    free(real);
    struct stat now;
    if (rc == 0 && (fstatat(d->dfd, d->base, &now, AT_SYMLINK_NOFOLLOW) != 0 ||
                    now.st_dev != d->st.st_dev || now.st_ino != d->st.st_ino)) {
        close(d->dfd);
        d->dfd = -1;
        rc = -1;
        e = EAGAIN;
    }
    errno = e;
    return rc;
}

int cli_dest_at(int dfd, const char *base, const char *shown, struct cli_dest *d)
{
    memset(d, 0, sizeof *d);
    d->opath = -1;
    if (strlen(base) > NAME_MAX || strlen(shown) >= sizeof d->shown) {
        d->dfd = -1;
        errno = ENAMETOOLONG;
        return -1;
    }
    d->dfd = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
    if (d->dfd < 0 || fstat(d->dfd, &d->dir) != 0) {
        int e = errno;
        cli_dest_close(d);
        errno = e;
        return -1;
    }
    memcpy(d->base, base, strlen(base) + 1);
    memcpy(d->shown, shown, strlen(shown) + 1);
    d->exists = fstatat(dfd, base, &d->st, AT_SYMLINK_NOFOLLOW) == 0;
    if (!d->exists && errno == ENAMETOOLONG) {
        cli_dest_close(d);
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

void cli_dest_close(struct cli_dest *d)
{
    if (d->dfd >= 0)
        close(d->dfd);
    if (d->opath >= 0)
        close(d->opath);
    d->dfd = d->opath = -1;
}
