/* cli.c — what the commands share: messages, exit status, signals, the
 * lifecycle of a named output, and gzip's rules for inputs.  See cli.h. */
#include "config.h"
#include "cli.h"
#include "lay.h"
#include "cli_progress.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

const char *cli_prog = "spigz";

/* ---- messages and status ---- */

void cli_status(struct cli *c, int st)
{
    if (st == EXIT_ERR || (st == EXIT_WARN && c->status == EXIT_OK))
        c->status = st;
}

static void cli_vmsg(const char *fmt, va_list ap)
{
    fprintf(stderr, "%s: ", cli_prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cli_stop_on(struct cli *c, const struct sp_err *err)
{
    /* a CRC-32 or length that does not match ends the run too, but not for
     * -t and -l, which gzip runs on to the next file */
    bool testing = c->mode == MODE_TEST || c->mode == MODE_LIST;
    if (err->kind != SP_ERR_FORMAT && (err->kind != SP_ERR_CHECK || !testing))
        c->stop = true;
}

void cli_msg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_vmsg(fmt, ap);
    va_end(ap);
}

void cli_error(struct cli *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_vmsg(fmt, ap);
    va_end(ap);
    cli_status(c, EXIT_ERR);
}

void cli_warn(struct cli *c, const char *fmt, ...)
{
    cli_status(c, EXIT_WARN);
    if (c->quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    cli_vmsg(fmt, ap);
    va_end(ap);
}

/* ---- named outputs: a temporary name, renamed when complete ---- */

/* A named output is written under a temporary name in its directory
 * (".NAME.XXXXXX") and renamed to its name only once it is complete, its
 * metadata set and, when the input goes, synced: so a run that fails, is
 * killed or loses power never leaves a partial file under the name, and -f
 * keeps the old file until the new one is whole.  The temporary path is
 * published to the signal handler with the signals blocked, so the handler
 * never removes a file spigz did not create.  An existing device or FIFO
 * named with -o is written into as it is, and never removed. */
static char cli_tmp_path[PATH_MAX];
static volatile sig_atomic_t cli_tmp_live;
static struct {
    char path[PATH_MAX]; /* the name the output gets */
    bool special;        /* an existing device or FIFO, written in place */
    bool device;         /* ... a block device */
    bool replace;        /* -f: the name may exist already */
} cli_out;
static mode_t cli_umask_bits = 022;

static const int cli_sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGXCPU, SIGXFSZ};
#define CLI_NSIGS (sizeof cli_sigs / sizeof cli_sigs[0])

static _Atomic uint64_t *cli_dev_written; /* restore onto a device: its counter */

void cli_device_progress(_Atomic uint64_t *written)
{
    cli_dev_written = written;
}

/* Decimal digits of v into b (20 at most), async-signal-safe; the length. */
static size_t cli_utoa(char *b, uint64_t v)
{
    char t[20];
    size_t n = 0, i = 0;
    do
        t[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    while (n > 0)
        b[i++] = t[--n];
    return i;
}

static void cli_say(const char *s)
{
    (void)!write(STDERR_FILENO, s, strlen(s));
}

/* What ended the run: a limit is named (gzip says nothing and the shell
 * says "File size limit exceeded"; "interrupted" would blame a user). */
static const char *cli_sig_what(int sig)
{
    return sig == SIGXFSZ ? "file size limit exceeded (SIGXFSZ)"
         : sig == SIGXCPU ? "CPU time limit exceeded (SIGXCPU)" : "interrupted";
}

static void cli_on_signal(int sig)
{
    bool rm = cli_tmp_live && unlink(cli_tmp_path) == 0;
    cli_prog_interrupted(); /* end a progress line first */
    cli_say(cli_prog);
    cli_say(": ");
    if (cli_out.device && cli_dev_written != NULL) {
        /* the device keeps what was written: say how much */
        char n[24];
        size_t k = cli_utoa(n, atomic_load(cli_dev_written));
        n[k] = '\0';
        cli_say(cli_out.path);
        cli_say(": ");
        cli_say(cli_sig_what(sig));
        cli_say(" after ");
        cli_say(n);
        cli_say(" bytes of the image were written: the device holds a partial image\n");
    } else {
        cli_say(cli_sig_what(sig));
        cli_say(rm ? ", partial output removed\n" : "\n");
    }
    /* Die by the same signal, as gzip does, so that the caller sees it: a
     * shell loop stops on one Ctrl-C instead of going on to the next file.
     * The handler runs with every signal blocked: unblock this one. */
    signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
    raise(sig);
    _exit(EXIT_ERR); /* not reached: the default action ends the process */
}

void cli_signals_install(void)
{
    mode_t m = umask(0);
    umask(m);
    cli_umask_bits = m;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = cli_on_signal;
    sigfillset(&sa.sa_mask);
    for (size_t i = 0; i < CLI_NSIGS; i++) {
        struct sigaction old;
        /* Keep "ignored" when the shell ignored it (nohup, background jobs). */
        if (sigaction(cli_sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(cli_sigs[i], &sa, NULL);
    }
}

static void cli_signals_block(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < CLI_NSIGS; i++)
        sigaddset(&set, cli_sigs[i]);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

/* dir/.base.XXXXXX, the base cut so the name fits NAME_MAX. */
static int cli_tmp_name(const char *path, char *out, size_t n)
{
    const char *base = cli_base(path);
    size_t dir = (size_t)(base - path), blen = strlen(base);
    if (blen > NAME_MAX - 8)
        blen = NAME_MAX - 8;
    if (dir + 1 + blen + 8 >= n)
        return -1;
    memcpy(out, path, dir);
    out[dir] = '.';
    memcpy(out + dir + 1, base, blen);
    memcpy(out + dir + 1 + blen, ".XXXXXX", 8);
    return 0;
}

/* A block device given with -o, before anything is written to it: refused
 * when it, a partition of it or the disk it is part of is mounted (read-only
 * too: a read-only mount caches what we would overwrite), and opened with
 * O_EXCL, which the kernel refuses (EBUSY) while anything holds the device:
 * a mount, swap, device-mapper, md, LVM.  The exclusive open also keeps a
 * mount from starting while the image is written. */
static int cli_out_device(struct cli *c, const char *path)
{
    int fd = open(path, O_WRONLY | O_EXCL | O_CLOEXEC | O_NOCTTY);
    if (fd < 0 && errno == EBUSY) {
        cli_error(c, "%s: in use by the system (mounted, swap, or held by device-mapper, md "
                     "or LVM): not written", path);
        return -1;
    }
    if (fd < 0) {
        cli_error(c, "%s: %s", path, strerror(errno));
        return -1;
    }
    char where[256];
    if (lay_mounted(fd, false, where, sizeof where)) {
        cli_error(c, "%s: mounted (on %s): not written", path, where);
        close(fd);
        return -1;
    }
    return fd;
}

bool cli_stdout_device_busy(struct cli *c)
{
    struct stat st;
    if (fstat(STDOUT_FILENO, &st) != 0 || !S_ISBLK(st.st_mode))
        return false;
    char where[256];
    int fd = open("/proc/self/fd/1", O_WRONLY | O_EXCL | O_CLOEXEC | O_NOCTTY);
    if (fd < 0 && errno == EBUSY) {
        cli_error(c, "stdout: the device is in use by the system (mounted, swap, or held by "
                     "device-mapper, md or LVM): not written");
        return true;
    }
    bool busy = lay_mounted(STDOUT_FILENO, false, where, sizeof where);
    if (busy)
        cli_error(c, "stdout: the device is mounted (on %s): not written", where);
    if (fd >= 0)
        close(fd);
    return busy;
}

/* An existing device or FIFO given with -o: written into, never replaced. */
static int cli_out_special(struct cli *c, const char *path, bool blk)
{
    int fd = blk ? cli_out_device(c, path) : open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0 && !blk)
        cli_error(c, "%s: %s", path, strerror(errno));
    cli_out.special = true;
    cli_out.device = blk;
    if (blk && fd >= 0)
        memcpy(cli_out.path, path, strlen(path) + 1); /* for the signal handler */
    return fd;
}

int cli_out_create(struct cli *c, const char *path, bool named)
{
    struct stat st;
    char real[PATH_MAX];
    memset(&cli_out, 0, sizeof cli_out);
    if (strlen(path) >= sizeof cli_out.path) {
        cli_error(c, "%s: file name too long", path);
        return -1;
    }
    /* -o: what the name leads to (a device or FIFO is written into, a link
     * followed, as a shell's redirection does).  A name made from the
     * input's: the name itself, as gzip: without -f anything there is kept
     * ("already exists", a directory too); with -f anything but a
     * directory is replaced, a FIFO, a device node or a link by a file. */
    bool exists = (named ? stat(path, &st) : lstat(path, &st)) == 0;
    if (!exists && errno == ENAMETOOLONG) { /* said before any work, not at the rename */
        cli_error(c, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (exists && named && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) || S_ISFIFO(st.st_mode)))
        return cli_out_special(c, path, S_ISBLK(st.st_mode));
    if (exists && S_ISDIR(st.st_mode) && (named || c->force)) {
        cli_error(c, "%s: is a directory", path);
        return -1;
    }
    if (exists && !c->force) {
        /* gzip says so even with -q */
        cli_status(c, EXIT_WARN);
        cli_msg("%s already exists; not overwritten", path);
        return -1;
    }
    /* -o writes through a symbolic link, as a shell redirection does; an
     * output named after the input replaces the name itself, as gzip -f. */
    if (exists && named && realpath(path, real) != NULL && strlen(real) < sizeof cli_out.path)
        path = real;
    memcpy(cli_out.path, path, strlen(path) + 1);
    cli_out.replace = exists;
    char tmp[PATH_MAX];
    if (cli_tmp_name(path, tmp, sizeof tmp) != 0) {
        cli_error(c, "%s: file name too long", path);
        return -1;
    }
    sigset_t old;
    cli_signals_block(&old);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd >= 0) {
        memcpy(cli_tmp_path, tmp, strlen(tmp) + 1);
        cli_tmp_live = 1;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (fd < 0)
        cli_error(c, "%s: %s", path, strerror(errno));
    return fd;
}

/* Give the temporary file its name: over an old one only with -f. */
static int cli_out_rename(void)
{
    if (cli_out.replace)
        return rename(cli_tmp_path, cli_out.path);
    if (renameat2(AT_FDCWD, cli_tmp_path, AT_FDCWD, cli_out.path, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
    /* A file system without RENAME_NOREPLACE: link() refuses an existing
     * name as well. */
    if (link(cli_tmp_path, cli_out.path) != 0)
        return -1;
    (void)unlink(cli_tmp_path);
    return 0;
}

/* Sync the directory holding the output, so the rename is on disk before
 * the input is removed.  -1 (errno set) when the sync failed: the input
 * must stay.  A directory that cannot be opened for it (no read
 * permission) or does not sync (EINVAL) is left as gzip leaves every one:
 * unsynced, 0. */
static int cli_sync_dir(const char *path)
{
    size_t n = (size_t)(cli_base(path) - path);
    char *dir = n == 0 ? strdup(".") : strndup(path, n);
    if (dir == NULL)
        return -1;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    if (fd < 0)
        return 0;
    int rc = fsync(fd) != 0 && errno != EINVAL ? -1 : 0;
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

bool cli_out_done(struct cli *c, bool ok)
{
    if (cli_out.special)
        return ok;
    sigset_t old;
    cli_signals_block(&old);
    if (ok && cli_out_rename() != 0) {
        if (errno == EEXIST)
            cli_warn(c, "%s already exists; not overwritten", cli_out.path);
        else
            cli_error(c, "%s: %s", cli_out.path, strerror(errno));
        ok = false;
    }
    if (!ok)
        (void)unlink(cli_tmp_path);
    cli_tmp_live = 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return ok;
}

/* Give the output the input's times (or mtime), mode and owner, as gzip; an
 * output from stdin or a device gets what a shell redirection would. */
static void cli_copy_meta(int fd, const struct cli_job *j, const struct timespec *mtime)
{
    if (j->in_path == NULL || !S_ISREG(j->st.st_mode)) {
        (void)fchmod(fd, 0666 & ~cli_umask_bits);
        return;
    }
    const struct stat *st = &j->st;
    struct timespec ts[2] = {st->st_atim, mtime != NULL ? *mtime : st->st_mtim};
    (void)futimens(fd, ts);
    (void)!fchown(fd, st->st_uid, st->st_gid);
    (void)fchmod(fd, st->st_mode & 0777); /* never set-ID or sticky, as gzip */
}

bool cli_out_finish(struct cli *c, struct cli_job *j, bool ok, bool remove_input,
                    const struct timespec *mtime)
{
    if (ok && !cli_out.special)
        cli_copy_meta(j->out_fd, j, mtime);
    /* synced before the input goes; with --synchronous always, as gzip
     * (which takes EINVAL, a FIFO's or a device's, for done) */
    if (ok && (remove_input || c->synchronous) && fsync(j->out_fd) != 0 && errno != EINVAL) {
        cli_error(c, "%s: %s", j->out_name, strerror(errno));
        ok = false;
    }
    if (close(j->out_fd) != 0 && ok) {
        cli_error(c, "%s: %s", j->out_name, strerror(errno));
        ok = false;
    }
    ok = cli_out_done(c, ok);
    if (ok && c->synchronous && !remove_input && !cli_out.special &&
        cli_sync_dir(cli_out.path) != 0) {
        cli_error(c, "%s: cannot sync its directory: %s", cli_out.path, strerror(errno));
        ok = false;
    }
    if (ok && remove_input) {
        if (cli_sync_dir(cli_out.path) != 0)
            cli_warn(c, "%s: cannot sync its directory (%s): %s kept", cli_out.path,
                     strerror(errno), j->in_path);
        else if (unlink(j->in_path) != 0)
            cli_warn(c, "%s: cannot remove: %s", j->in_path, strerror(errno));
    }
    return ok;
}

/* ---- inputs ---- */

bool cli_input_stays(const struct cli *c)
{
    return c->to_stdout || c->output != NULL || c->mode == MODE_TEST || c->mode == MODE_LIST ||
           c->mode == MODE_ESTIMATE || c->mode == MODE_EXPORT;
}

bool cli_progress_wanted(const struct cli *c)
{
    if (c->quiet || c->progress == PROGRESS_OFF)
        return false;
    return c->progress == PROGRESS_ON || isatty(STDERR_FILENO);
}

int cli_open_input(struct cli *c, const char *path, struct cli_job *j)
{
    /* Like gzip: links are followed when the input stays (-c, -o) or with -f;
     * devices are often links (/dev/mapper/..., /dev/disk/by-id/...). */
    bool stays = cli_input_stays(c);
    int flags = O_RDONLY | O_CLOEXEC | (c->force || stays ? 0 : O_NOFOLLOW);
    int fd = open(path, flags | O_NONBLOCK);
    if (fd < 0 || fstat(fd, &j->st) != 0) {
        cli_error(c, "%s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    /* O_NONBLOCK only kept open() from waiting on a FIFO writer. */
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    mode_t m = j->st.st_mode;
    bool device = S_ISBLK(m) || S_ISCHR(m);
    if (S_ISDIR(m)) {
        cli_warn(c, "%s is a directory -- ignored", path);
    } else if (device && !stays) {
        cli_error(c, "%s is a device: use -c or -o (a device is never replaced)", path);
    } else if (!device && !S_ISREG(m) && !stays) {
        cli_warn(c, "%s is not a directory or a regular file - ignored", path);
    } else if (S_ISREG(m) && !stays && !c->force && j->st.st_nlink > 1) {
        cli_warn(c, "%s has %lu other link%s -- file ignored", path,
                 (unsigned long)(j->st.st_nlink - 1), j->st.st_nlink > 2 ? "s" : "");
    } else if (S_ISREG(m) && !stays && (m & (S_ISUID | S_ISGID))) {
        /* gzip will not make a file from a set-ID one, -f or not (its output
         * would carry the bits); a sticky one only with -f, the output then
         * without the bit */
        cli_warn(c, "%s is set-%s-ID on execution - ignored", path, m & S_ISUID ? "user" : "group");
    } else if (S_ISREG(m) && !stays && !c->force && (m & S_ISVTX)) {
        cli_warn(c, "%s has the sticky bit set - file ignored", path);
    } else {
        j->in_fd = fd;
        j->in_path = path;
        return 0;
    }
    close(fd);
    return -1;
}

/* gzip compares suffixes without regard to case (so .GZ and .Z count). */
bool cli_has_suffix(const char *name, const char *suf)
{
    size_t n = strlen(name), s = strlen(suf);
    return n > s && strcasecmp(name + n - s, suf) == 0;
}

/* The input is a regular file (named, or stdin redirected from one) and st
 * is that file. */
static bool cli_is_input(const struct cli_job *j, const struct stat *st)
{
    return S_ISREG(j->st.st_mode) && S_ISREG(st->st_mode) && st->st_dev == j->st.st_dev &&
           st->st_ino == j->st.st_ino;
}

bool cli_out_is_input(struct cli *c, const struct cli_job *j, const char *out_path)
{
    struct stat ost;
    if (stat(out_path, &ost) != 0 || !cli_is_input(j, &ost))
        return false;
    cli_error(c, "%s: input and output are the same file", out_path);
    return true;
}

bool cli_same_file(const struct cli_job *j, int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && cli_is_input(j, &st);
}

const char *cli_base(const char *path)
{
    const char *b = strrchr(path, '/');
    return b != NULL ? b + 1 : path;
}
