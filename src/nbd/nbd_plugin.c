/* nbd_plugin.c — nbdkit-spigz-plugin.so: a gzip backup served read-only
 * over NBD (`nbdkit spigz BACKUP.gz [cache=SIZE]`).
 *
 * A front end, as cli/ is: it reads through the volume facade (vol.h) and
 * alone talks to nbdkit.  The server, its sockets, TLS, multi-conn and the
 * clients are nbdkit's; this file maps the NBD callbacks onto vol.h.
 *
 * - The file is opened once, at .get_ready (before nbdkit forks into the
 *   background, so a bad file is refused on the user's terminal): read-only,
 *   a regular file, a gzip file that vol_open() can read at random (its
 *   message says why not, e.g. a plain gzip file without spigz's index).
 * - Thread model PARALLEL and multi-conn: the content never changes and
 *   vol_pread() may be called from any number of threads; every connection
 *   shares the one volume (and its cache of decoded pieces).
 * - .pread is vol_pread(): a piece that fails its check (or a file changed
 *   under the server) fails the request with EIO and one error line naming
 *   the content range (vol.h's message); never a wrong byte.
 * - A gzip file without spigz's index is read through a gzip index
 *   (gzx.h): loaded from FILE.gz.gzx beside it, or from index=PATH, when it
 *   matches the file, else built in one pass at .get_ready and saved there
 *   (beside the file only when its folder is writable), as --mount does.
 * - .extents reports the index's zero runs (vol_extent) as holes that read
 *   as zeros, each zero piece checked first (ra.h: ra_extent), so a client
 *   that skips holes never takes zeros the file does not hold.
 *
 * Bounds: memory is the volume's (its index tables, cache=SIZE of decoded
 * pieces, and per concurrent request one piece, ra.h).  nbdkit bounds a
 * request's count (at most 64 MiB).
 */
#include <config.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vol.h"

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

/* Set by .config and .get_ready, then read-only while requests are served. */
static char *file;           /* the backup, an absolute path */
static uint64_t cache_bytes; /* cache=SIZE; 0: the volume's default */
static char *index_path;     /* index=PATH, absolute; NULL: FILE.gzx beside */
static int fd = -1;
static struct vol *vol;

static void spigz_unload(void)
{
    vol_close(vol);
    vol = NULL;
    if (fd >= 0)
        close(fd);
    fd = -1;
    free(file);
    file = NULL;
    free(index_path);
    index_path = NULL;
}

static void spigz_dump_plugin(void)
{
    printf("spigz_version=%s\n", PACKAGE_VERSION);
}

static int spigz_config(const char *key, const char *value)
{
    if (strcmp(key, "file") == 0) {
        if (file) {
            nbdkit_error("file=%s: a backup is already given (file=%s)", value, file);
            return -1;
        }
        file = nbdkit_realpath(value); /* nbdkit may chdir("/") later */
        return file ? 0 : -1;
    }
    if (strcmp(key, "cache") == 0) {
        int64_t n = nbdkit_parse_size(value);
        if (n < 0)
            return -1;
        if (n == 0) {
            nbdkit_error("cache=%s: the cache must hold at least one byte", value);
            return -1;
        }
        cache_bytes = (uint64_t)n;
        return 0;
    }
    if (strcmp(key, "index") == 0) {
        free(index_path);
        index_path = nbdkit_absolute_path(value);
        return index_path ? 0 : -1;
    }
    nbdkit_error("unknown parameter '%s' (spigz takes file=, cache= and index=)", key);
    return -1;
}

static int spigz_config_complete(void)
{
    if (!file) {
        nbdkit_error("no backup given: nbdkit spigz BACKUP.gz (or file=BACKUP.gz)");
        return -1;
    }
    return 0;
}

#define spigz_config_help \
    "file=BACKUP.gz  (required) the gzip backup to serve, read-only\n" \
    "cache=SIZE      decoded pieces kept in memory (default 64M)\n" \
    "index=PATH      a gzip file's index of access points (default FILE.gzx beside it)"

/* Where a gzip file's index is kept: index=PATH (saved there), else
 * FILE.gzx beside the file (saved when the folder is writable).  The
 * folder is opened and the name taken in it (vol.h's idx_dirfd and
 * idx_name); the descriptor returned is the caller's to close, -1 when
 * the folder cannot be opened (the index is then built in memory). */
static int spigz_index_place(struct vol_opts *o, char *name, size_t n)
{
    const char *path = index_path ? index_path : file;
    const char *slash = strrchr(path, '/'); /* absolute: there is one */
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    if (snprintf(name, n, "%s%s", slash + 1, index_path ? "" : ".gzx") >= (int)n || !slash[1])
        return -1;
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0)
        return -1;
    o->idx_dirfd = dirfd;
    o->idx_name = name;
    o->idx_save = index_path != NULL || faccessat(dirfd, ".", W_OK, AT_EACCESS) == 0;
    return dirfd;
}

static int spigz_get_ready(void)
{
    struct stat st;
    fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        nbdkit_error("%s: %s", file, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0) {
        nbdkit_error("%s: %s", file, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        nbdkit_error("%s: not a regular file", file);
        return -1;
    }
    /* read-ahead held until .after_fork: nbdkit may fork into the
     * background after this, and threads do not survive a fork (ra.h) */
    struct vol_opts o = {.cache_bytes = cache_bytes, .hold_ahead = true};
    char name[4096];
    int dirfd = spigz_index_place(&o, name, sizeof name);
    struct sp_err err = {0};
    int rc = vol_open(fd, &o, &vol, &err);
    if (dirfd >= 0)
        close(dirfd);
    if (rc != 0) {
        nbdkit_error("%s: %s", file, err.msg);
        return -1;
    }
    if (vol_note(vol)[0] != '\0')
        nbdkit_debug("%s: gzip index %s", file, vol_note(vol));
    nbdkit_debug("%s: %llu bytes, read through its %s", file,
                 (unsigned long long)vol_size(vol), vol_kind(vol));
    return 0;
}

/* nbdkit has forked into the background (or stays): read-ahead threads
 * may start now, in the process that serves. */
static int spigz_after_fork(void)
{
    vol_hold_ahead(vol, false);
    return 0;
}

static void *spigz_open(int readonly)
{
    (void)readonly; /* no .pwrite: nbdkit serves the export read-only */
    return NBDKIT_HANDLE_NOT_NEEDED;
}

static int64_t spigz_get_size(void *h)
{
    (void)h;
    return (int64_t)vol_size(vol);
}

static int spigz_can_write(void *h) { (void)h; return 0; }
static int spigz_can_multi_conn(void *h) { (void)h; return 1; }
static int spigz_can_extents(void *h) { (void)h; return 1; }

/* A failed read: one line naming the range (vol's message), EIO (ENOMEM
 * when memory ran out), and the request fails. */
static int spigz_fail(const struct sp_err *err)
{
    nbdkit_error("%s: %s", file, err->msg);
    nbdkit_set_error(err->kind == SP_ERR_NOMEM ? ENOMEM : EIO);
    return -1;
}

static int spigz_pread(void *h, void *buf, uint32_t count, uint64_t offset, uint32_t flags)
{
    (void)h;
    (void)flags;
    char *p = buf;
    while (count > 0) { /* one call in practice; nbdkit keeps the request in bounds */
        struct sp_err err = {0};
        int64_t n = vol_pread(vol, p, count, offset, &err);
        if (n < 0)
            return spigz_fail(&err);
        if (n == 0) {
            nbdkit_error("%s: read at %llu past the content's end", file,
                         (unsigned long long)offset);
            nbdkit_set_error(EIO);
            return -1;
        }
        p += n;
        count -= (uint32_t)n;
        offset += (uint64_t)n;
    }
    return 0;
}

static int spigz_extents(void *h, uint32_t count, uint64_t offset, uint32_t flags,
                         struct nbdkit_extents *extents)
{
    (void)h;
    uint64_t end = offset + count, len;
    bool zero;
    /* Each run is maximal, so the loop adds one extent per run of the index
     * that meets the range; nbdkit keeps the range inside the content. */
    for (uint64_t at = offset; at < end; at += len) {
        if (vol_extent(vol, at, &len, &zero) != 0 || len == 0) {
            if (at > offset)
                break;
            nbdkit_error("%s: no extent at %llu", file, (unsigned long long)at);
            nbdkit_set_error(EIO);
            return -1;
        }
        if (nbdkit_add_extent(extents, at, len,
                              zero ? NBDKIT_EXTENT_HOLE | NBDKIT_EXTENT_ZERO : 0) != 0)
            return -1;
        if (flags & NBDKIT_FLAG_REQ_ONE)
            break;
    }
    return 0;
}

static struct nbdkit_plugin plugin = {
    .name = "spigz",
    .longname = "spigz: a gzip backup served read-only",
    .version = PACKAGE_VERSION,
    .description = "Serve the content of a spigz backup (.gz) read-only, at random",
    .unload = spigz_unload,
    .dump_plugin = spigz_dump_plugin,
    .config = spigz_config,
    .config_complete = spigz_config_complete,
    .config_help = spigz_config_help,
    .magic_config_key = "file",
    .get_ready = spigz_get_ready,
    .after_fork = spigz_after_fork,
    .open = spigz_open,
    .get_size = spigz_get_size,
    .can_write = spigz_can_write,
    .can_multi_conn = spigz_can_multi_conn,
    .can_extents = spigz_can_extents,
    .pread = spigz_pread,
    .extents = spigz_extents,
};

NBDKIT_REGISTER_PLUGIN(plugin)
