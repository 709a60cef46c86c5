/* cmd_mount.c — --mount BACKUP DIR: a backup as read-only files, through
 * libfuse3, without restoring it.
 *
 * DIR holds `disk`, the whole image (its exact size), and one file per
 * partition the kernel would find in it (layout: lay_kernel_parts(): a GPT,
 * or an MBR with its logicals), named as the kernel names a loop device's
 * (`p1`, `p2`, `p5`...), so that `mount -o ro,loop DIR/p2 /mnt`, fuse2fs,
 * ntfs-3g or mtools open the filesystem inside the backup.  Every read goes
 * through the volume reader (restore/vol.h), which checks each piece before
 * a byte of it is returned: a read that touches a damaged piece, or a
 * backup changed or cut while mounted, fails with EIO and one log line
 * naming the range (repeats of the same line are not logged again).
 *
 * The content never changes while mounted, so the kernel may keep names
 * and attributes (long timeouts); data is read with direct I/O (cm_open
 * says why), zero runs spliced from a hole (cm_read_buf).  SEEK_DATA and SEEK_HOLE
 * answer from the index's zero runs, so `cp --sparse=always` and qemu-img
 * skip them; the zero runs are still checked when they are read.
 *
 * The command: the mount is made before the daemon detaches, so every
 * error (no such backup, no index, DIR not a directory, no FUSE) is printed
 * by the command, status 1.  Then it runs as a daemon (log lines to syslog)
 * or, with -f (gzip's --force, which means nothing else here), in the
 * foreground (log lines to stderr).  It ends with `fusermount3 -u DIR`,
 * SIGINT, SIGTERM or SIGHUP, unmounting cleanly; its status is 1 when any
 * read failed, else 0.  Threads: libfuse's multithreaded loop; the volume
 * reader is safe from any number of threads (vol.h).
 *
 * Choices where the issue is silent: files are mode 0444 and belong to the
 * user who mounted (as nbdfuse and fuse2fs do); an MBR's extended container
 * gets no file (the kernel's device of it is 1 KiB of nothing to mount); a
 * backup whose partition table cannot be read (a damaged first piece)
 * still mounts, `disk` only, with a warning. */
#include "config.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_FUSE3

#define FUSE_USE_VERSION 312
#include <fuse.h>
#include <pthread.h>
#include <sys/mman.h>
#include <syslog.h>

#include "cli_vol.h"
#include "lay.h"
#include "vol.h"

/* The longest read the kernel sends.  A reply is spliced into /dev/fuse
 * through a pipe that libfuse sizes as the reply plus three pages, and an
 * unprivileged pipe holds at most /proc/sys/fs/pipe-max-size (1 MiB by
 * default): a 1 MiB read would never be spliced.  252 pages fit. */
#define CM_MAX_READ ((size_t)252 * 4096)
#define CM_MAX_READ_OPT "max_read=1032192"
/* The I/O size files advertise: cat and cp read 4 MiB at once, which the
 * kernel sends as several reads at a time (asynchronous direct I/O). */
#define CM_BLKSIZE (4 << 20)
#define CM_MAX_FILES (1 + 256) /* disk, and the kernel's 256 partitions */

struct cm_file {
    char name[16];
    uint64_t off, len; /* in the content */
};

struct cm_state {
    struct vol *vol;
    struct stat backup;   /* for the files' times */
    struct cm_file files[CM_MAX_FILES];
    size_t nfiles;
    bool foreground;
    uid_t uid;
    gid_t gid;
    pthread_mutex_t log_lock;
    char last_log[sizeof(((struct sp_err *)0)->msg)];
    _Atomic uint64_t failed; /* reads answered with EIO */
    const char *name;        /* the backup, as given */
    int zero_fd;             /* CM_MAX_READ bytes of hole (a memfd), or -1 */
};

static struct cm_state *cm_get(void)
{
    return fuse_get_context()->private_data;
}

/* One line for a failed read, unless it is the line logged last. */
static void cm_log(struct cm_state *s, const char *msg)
{
    atomic_fetch_add(&s->failed, 1);
    pthread_mutex_lock(&s->log_lock);
    if (strcmp(s->last_log, msg) != 0) {
        snprintf(s->last_log, sizeof s->last_log, "%s", msg);
        if (s->foreground)
            cli_msg("%s: %s", s->name, msg);
        else
            syslog(LOG_ERR, "%s: %s", s->name, msg);
    }
    pthread_mutex_unlock(&s->log_lock);
}

static const struct cm_file *cm_find(const struct cm_state *s, const char *path)
{
    if (path[0] != '/')
        return NULL;
    for (size_t i = 0; i < s->nfiles; i++)
        if (strcmp(path + 1, s->files[i].name) == 0)
            return &s->files[i];
    return NULL;
}

static void *cm_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
    conn->max_read = CM_MAX_READ;
    /* Replies may be spliced from a file: cm_read_buf's zeros. */
    if (conn->capable & FUSE_CAP_SPLICE_WRITE)
        conn->want |= FUSE_CAP_SPLICE_WRITE;
    /* The content is immutable: the kernel may cache names, attributes
     * and what a private mapping read. */
    cfg->kernel_cache = 1;
    cfg->attr_timeout = 3600;
    cfg->entry_timeout = 3600;
    cfg->negative_timeout = 3600;
    return cm_get();
}

static void cm_times(const struct cm_state *s, struct stat *st)
{
    st->st_atim = s->backup.st_atim;
    st->st_mtim = s->backup.st_mtim;
    st->st_ctim = s->backup.st_ctim;
    st->st_uid = s->uid;
    st->st_gid = s->gid;
}

static int cm_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
    (void)fi;
    struct cm_state *s = cm_get();
    memset(st, 0, sizeof *st);
    cm_times(s, st);
    if (strcmp(path, "/") == 0) {
        st->st_mode = S_IFDIR | 0555;
        st->st_nlink = 2;
        return 0;
    }
    const struct cm_file *f = cm_find(s, path);
    if (f == NULL)
        return -ENOENT;
    st->st_mode = S_IFREG | 0444;
    st->st_nlink = 1;
    st->st_size = (off_t)f->len;
    st->st_blocks = (blkcnt_t)((f->len + 511) / 512);
    st->st_blksize = CM_BLKSIZE;
    return 0;
}

static int cm_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
    (void)off, (void)fi, (void)flags;
    struct cm_state *s = cm_get();
    if (strcmp(path, "/") != 0)
        return -ENOTDIR;
    fill(buf, ".", NULL, 0, 0);
    fill(buf, "..", NULL, 0, 0);
    for (size_t i = 0; i < s->nfiles; i++)
        fill(buf, s->files[i].name, NULL, 0, 0);
    return 0;
}

static int cm_open(const char *path, struct fuse_file_info *fi)
{
    const struct cm_file *f = cm_find(cm_get(), path);
    if (f == NULL)
        return -ENOENT;
    if ((fi->flags & O_ACCMODE) != O_RDONLY)
        return -EROFS;
    /* Direct I/O: every read comes here, none through the kernel's page
     * cache.  Copying a disk out of the mount then neither fills the page
     * cache with it (16 GiB of a mostly empty disk evicting everything
     * else) nor pays for those pages: `cat DIR/disk` of a 16 GiB disk took
     * 10-16 s through the page cache, 6-7 s so.  Pieces read again come
     * from the volume's cache (--cache); a filesystem mounted on a loop
     * device keeps its own cache above it.  The cost: the kernel refuses
     * a shared mapping (mmap MAP_SHARED: ENODEV; a private one works). */
    fi->direct_io = 1;
    fi->fh = (uint64_t)(f - cm_get()->files);
    return 0;
}

static int cm_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)path;
    struct cm_state *s = cm_get();
    if (fi->fh >= s->nfiles || off < 0)
        return -EINVAL;
    const struct cm_file *f = &s->files[fi->fh];
    if ((uint64_t)off >= f->len)
        return 0;
    if (size > f->len - (uint64_t)off)
        size = (size_t)(f->len - (uint64_t)off);
    struct sp_err err = {0};
    int64_t got = vol_pread(s->vol, buf, size, f->off + (uint64_t)off, &err);
    if (got < 0) {
        cm_log(s, err.msg);
        return -EIO;
    }
    if ((uint64_t)got != size) { /* the content is shorter than the index said */
        cm_log(s, "the content ends before its index's size");
        return -EIO;
    }
    return (int)got;
}

/* The read, in a buffer libfuse frees: a range the index calls zero (its
 * pieces checked: vol_extent) is answered from zero_fd, a memfd that is one
 * hole, which libfuse splices into /dev/fuse: the kernel copies its zero
 * page into the reader's pages, and nothing is allocated or filled here
 * (a 16 GiB disk of zeros read whole took 22 s through cm_read, 11.5 s so).
 * Any other range goes through cm_read. */
static int cm_read_buf(const char *path, struct fuse_bufvec **bufp, size_t size, off_t off,
                       struct fuse_file_info *fi)
{
    struct cm_state *s = cm_get();
    struct fuse_bufvec *bv = malloc(sizeof *bv);
    if (bv == NULL)
        return -ENOMEM;
    if (fi->fh < s->nfiles && off >= 0 && s->zero_fd >= 0) {
        const struct cm_file *f = &s->files[fi->fh];
        uint64_t at = (uint64_t)off, run;
        bool zero;
        size_t n = at < f->len && size > f->len - at ? (size_t)(f->len - at) : size;
        if (at < f->len && n <= CM_MAX_READ && vol_extent(s->vol, f->off + at, &run, &zero) == 0 &&
            zero && run >= n) {
            *bv = (struct fuse_bufvec)FUSE_BUFVEC_INIT(n);
            bv->buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
            bv->buf[0].fd = s->zero_fd;
            bv->buf[0].pos = 0;
            *bufp = bv;
            return 0;
        }
    }
    void *mem = malloc(size > 0 ? size : 1);
    int got = mem != NULL ? cm_read(path, mem, size, off, fi) : -ENOMEM;
    if (got < 0) {
        free(mem);
        free(bv);
        return got;
    }
    *bv = (struct fuse_bufvec)FUSE_BUFVEC_INIT((size_t)got);
    bv->buf[0].mem = mem;
    *bufp = bv;
    return 0;
}

/* SEEK_DATA, SEEK_HOLE: the next offset at or after off (within file f)
 * in a data run (data) or a zero run or the end (hole); -ENXIO when off is
 * at or past the end, or no data follows for SEEK_DATA. */
static off_t cm_lseek(const char *path, off_t off, int whence, struct fuse_file_info *fi)
{
    (void)path;
    struct cm_state *s = cm_get();
    if (fi == NULL || fi->fh >= s->nfiles)
        return -EBADF;
    const struct cm_file *f = &s->files[fi->fh];
    if (whence != SEEK_DATA && whence != SEEK_HOLE)
        return -EINVAL;
    if (off < 0)
        return -ENXIO;
    uint64_t at = (uint64_t)off;
    while (at < f->len) {
        uint64_t len;
        bool zero;
        if (vol_extent(s->vol, f->off + at, &len, &zero) != 0)
            break;
        if (zero == (whence == SEEK_HOLE))
            return (off_t)at;
        at = len < f->len - at ? at + len : f->len;
    }
    if ((uint64_t)off >= f->len || whence == SEEK_DATA)
        return -ENXIO;
    return (off_t)f->len; /* the end is a hole */
}

static int cm_statfs(const char *path, struct statvfs *sv)
{
    (void)path;
    struct cm_state *s = cm_get();
    memset(sv, 0, sizeof *sv);
    sv->f_bsize = sv->f_frsize = 4096;
    sv->f_blocks = (fsblkcnt_t)((vol_size(s->vol) + 4095) / 4096);
    sv->f_files = s->nfiles;
    sv->f_namemax = 255;
    return 0;
}

static const struct fuse_operations cm_ops = {
    .init = cm_init,
    .getattr = cm_getattr,
    .readdir = cm_readdir,
    .open = cm_open,
    .read_buf = cm_read_buf,
    .lseek = cm_lseek,
    .statfs = cm_statfs,
};

/* DIR/disk and DIR/pN. */
static int cm_files(struct cli *c, struct cm_state *s)
{
    uint64_t size = vol_size(s->vol);
    s->files[0] = (struct cm_file){"disk", 0, size};
    s->nfiles = 1;
    struct sp_err terr;
    struct lay_kpart *p = NULL;
    size_t n = 0;
    if (cli_vol_parts(s->vol, &p, &n, &terr) != 0) {
        cli_error(c, "%s: out of memory", s->name);
        return -1;
    }
    if (terr.kind != SP_OK)
        cli_warn(c, "%s: its partition table may be unreadable (%s): only `disk` is sure", s->name,
                 terr.msg);
    for (size_t i = 0; i < n && s->nfiles < CM_MAX_FILES; i++) {
        struct cm_file *f = &s->files[s->nfiles++];
        snprintf(f->name, sizeof f->name, "p%u", p[i].number);
        f->off = p[i].off;
        f->len = p[i].len;
    }
    free(p);
    return 0;
}

/* SIGINT, SIGTERM and SIGHUP, all three to h.  SIG_DFL before the mount:
 * they end the loop, libfuse installing its handlers only over the default
 * ones (the CLI's own, cli_signals_install, would remove temporary files, of
 * which a mount has none).  SIG_IGN once the loop has ended, until exit:
 * timeout(1) and systemd send one signal to the process and another to its
 * group; with libfuse's handlers removed, the second met the default action
 * between the loop's end and the unmount (status 143, the mount left
 * behind).  Set before fuse_remove_signal_handlers, which restores the
 * default only over its own handler, so no instant is left uncovered; the
 * teardown that follows is bounded (unmount, free). */
static void cm_signals(void (*h)(int))
{
    signal(SIGINT, h);
    signal(SIGTERM, h);
    signal(SIGHUP, h);
}

/* Mount, detach unless foreground, serve until unmounted or signalled. */
static void cm_serve(struct cli *c, struct cm_state *s, const char *dir)
{
    char fsname[300];
    snprintf(fsname, sizeof fsname, "-ofsname=spigz:%s", s->name);
    for (char *q = fsname; *q; q++)
        if (*q == ',')
            *q = '_'; /* a comma would end the option */
    char *argv[] = {(char *)cli_prog, "-oro,default_permissions,subtype=spigz," CM_MAX_READ_OPT, fsname, NULL};
    struct fuse_args args = FUSE_ARGS_INIT(3, argv);
    struct fuse *f = fuse_new(&args, &cm_ops, sizeof cm_ops, s);
    fuse_opt_free_args(&args); /* fuse_new may have copied them */
    if (f == NULL) {
        cli_error(c, "%s: FUSE could not start (see above)", dir);
        return;
    }
    /* The session's handlers before the mount appears: a SIGTERM sent as
     * soon as DIR is a mount point (a script's, a test's) ends the session
     * cleanly, where between the mount and handlers set after it the
     * default action killed the process (status 143, the mount left to
     * fusermount3's cleanup).  A signal before the loop starts makes it
     * return at once. */
    cm_signals(SIG_DFL);
    if (fuse_set_signal_handlers(fuse_get_session(f)) != 0) {
        cli_error(c, "%s: cannot serve the mount", dir);
        fuse_destroy(f);
        return;
    }
    /* An absolute path: libfuse unmounts by path at the end, after the
     * daemon has left the working directory. */
    char *abs = realpath(dir, NULL);
    if (abs == NULL || fuse_mount(f, abs) != 0) {
        free(abs);
        cli_error(c, "%s: cannot mount %s there (see above; is /dev/fuse there and DIR a "
                     "directory?)", dir, s->name);
        fuse_remove_signal_handlers(fuse_get_session(f));
        fuse_destroy(f);
        return;
    }
    if (!s->foreground)
        openlog("spigz", LOG_PID, LOG_DAEMON);
    if (fuse_daemonize(s->foreground) != 0) {
        cli_error(c, "%s: cannot serve the mount", dir);
        fuse_remove_signal_handlers(fuse_get_session(f));
    } else {
        vol_hold_ahead(s->vol, false); /* the process that serves */
        struct fuse_loop_config *lc = fuse_loop_cfg_create();
        int rc = lc ? fuse_loop_mt(f, lc) : -1;
        fuse_loop_cfg_destroy(lc);
        cm_signals(SIG_IGN);
        fuse_remove_signal_handlers(fuse_get_session(f));
        if (rc < 0)
            cli_error(c, "%s: the mount's loop failed", dir);
    }
    fuse_unmount(f);
    fuse_destroy(f);
    free(abs);
    uint64_t failed = atomic_load(&s->failed);
    if (failed > 0)
        cli_error(c, "%s: %llu reads failed (EIO): the backup is damaged or changed", s->name,
                  (unsigned long long)failed);
}

/* The volume of the backup open on fd (cli_vol.h); read-ahead held until
 * the daemon has forked (cm_serve): the partition table is read before,
 * and threads do not survive a fork.  0, or -1 (printed). */
static int cm_open_vol(struct cli *c, struct cm_state *s, int fd)
{
    struct sp_err err = {0};
    if (cli_vol_open(c, s->name, fd, true, &s->vol, &err) != 0) {
        cli_error(c, "%s: %s", s->name, err.msg);
        return -1;
    }
    return 0;
}

void cmd_mount(struct cli *c, const char *backup, const char *dir)
{
    /* FUSE would mount over a file too, hiding it: DIR must be a directory. */
    struct stat dst;
    int r = stat(dir, &dst);
    if (r != 0 || !S_ISDIR(dst.st_mode)) {
        cli_error(c, "%s: cannot mount %s there: %s", dir, backup,
                  r != 0 ? strerror(errno) : "not a directory");
        return;
    }
    struct cm_state *s = calloc(1, sizeof *s);
    if (s == NULL) {
        cli_error(c, "%s: out of memory", backup);
        return;
    }
    s->name = backup;
    s->foreground = c->force;
    s->uid = getuid();
    s->gid = getgid();
    pthread_mutex_init(&s->log_lock, NULL);
    s->zero_fd = memfd_create("spigz-zeros", MFD_CLOEXEC);
    if (s->zero_fd >= 0 && ftruncate(s->zero_fd, (off_t)CM_MAX_READ) != 0) {
        close(s->zero_fd); /* zeros are then filled in as any read */
        s->zero_fd = -1;
    }
    int fd = open(backup, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        cli_error(c, "%s: %s", backup, strerror(errno));
    } else if (fstat(fd, &s->backup) != 0 || !S_ISREG(s->backup.st_mode)) {
        cli_error(c, "%s: not a regular file: a backup is mounted from a file", backup);
    } else if (cm_open_vol(c, s, fd) == 0 && cm_files(c, s) == 0) {
        if (c->verbose > 0)
            for (size_t i = 0; i < s->nfiles; i++)
                cli_msg("%s: %s/%s: %llu bytes at %llu", backup, dir, s->files[i].name,
                        (unsigned long long)s->files[i].len, (unsigned long long)s->files[i].off);
        cm_serve(c, s, dir);
    }
    vol_close(s->vol);
    if (fd >= 0)
        close(fd);
    if (s->zero_fd >= 0)
        close(s->zero_fd);
    pthread_mutex_destroy(&s->log_lock);
    free(s);
}

#else

void cmd_mount(struct cli *c, const char *backup, const char *dir)
{
    (void)dir;
    cli_error(c, "%s: --mount is not in this build (configure found no libfuse3)", backup);
}

#endif
