/* cli.c — what the commands share: messages, exit status, signals, the
 * lifecycle of a named output, and gzip's rules for inputs.  See cli.h. */
#include "config.h"
#include "cli.h"
#include "cli_report.h"
#include "lay.h"
#include "cli_path.h"
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

/* --format=json: messages are JSON objects too, one a line on stderr
 * beside the per-file reports, so a script reads stderr as JSON lines. */
static bool cli_json_msgs;

void cli_messages_json(bool on)
{
    cli_json_msgs = on;
}

static void cli_vmsg(const char *level, const char *fmt, va_list ap)
{
    if (!cli_json_msgs) {
        fprintf(stderr, "%s: ", cli_prog);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        return;
    }
    char m[4096];
    vsnprintf(m, sizeof m, fmt, ap);
    fprintf(stderr, "{\"level\":\"%s\",\"program\":", level);
    cli_json_string(stderr, cli_prog);
    fputs(",\"message\":", stderr);
    cli_json_string(stderr, m);
    fputs("}\n", stderr);
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
    cli_vmsg("info", fmt, ap);
    va_end(ap);
}

void cli_error(struct cli *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_vmsg("error", fmt, ap);
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
    cli_vmsg("warning", fmt, ap);
    va_end(ap);
}

/* ---- named outputs: a temporary name, renamed when complete ---- */

/* A named output is written under a temporary name in its directory
 * (".NAME.XXXXXX") and renamed to its name only once it is complete, its
 * metadata set and, when the input goes, synced: so a run that fails, is
 * killed or loses power never leaves a partial file under the name, and -f
 * keeps the old file until the new one is whole.  The directory is opened
 * once: the temporary file is created, renamed and removed through that
 * descriptor (cli_path.h).  The temporary names (the output's and
 * --bad-map's) are published to the signal handler with the signals
 * blocked, so the handler never removes a file spigz did not create.  An
 * existing device or FIFO named with -o is written into as it is, and never
 * removed. */
#define CLI_TMP_SLOTS 2
static struct {
    volatile sig_atomic_t live;
    int dfd;
    char name[NAME_MAX + 1];
} cli_tmps[CLI_TMP_SLOTS];
static struct {
    bool live;               /* between cli_out_create and cli_out_done */
    char path[PATH_MAX];     /* the name the output gets, as shown */
    int dfd;                 /* its directory (-1: none open) */
    char base[NAME_MAX + 1]; /* its name there */
    char tmp[NAME_MAX + 1];  /* the temporary name there */
    struct stat dir;         /* dfd's: names are compared by it */
    bool exists;             /* something was at the name: st */
    struct stat st;
    bool special;            /* an existing device or FIFO, written in place */
    bool device;             /* ... a block device */
    bool replace;            /* -f: the name may exist already */
} cli_out = {.dfd = -1};
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

/* The first thread in the handler ends the run; a second one (two
 * workers' writes past a file size limit each get their own SIGXFSZ)
 * waits for it: racing it, it found the partial output already removed,
 * said nothing of it, and killed the process first. */
static atomic_int cli_sig_taken;

static void cli_on_signal(int sig)
{
    if (atomic_exchange(&cli_sig_taken, 1) != 0)
        for (;;)
            pause();
    bool rm = false;
    for (int i = 0; i < CLI_TMP_SLOTS; i++)
        if (cli_tmps[i].live && unlinkat(cli_tmps[i].dfd, cli_tmps[i].name, 0) == 0 && i == 0)
            rm = true;
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

void cli_signals_hold(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < CLI_NSIGS; i++)
        sigaddset(&set, cli_sigs[i]);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

void cli_signals_release(const sigset_t *old)
{
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

void cli_tmp_track(int slot, int dfd, const char *name)
{
    cli_tmps[slot].dfd = dfd;
    memcpy(cli_tmps[slot].name, name, strlen(name) + 1);
    cli_tmps[slot].live = 1;
}

void cli_tmp_untrack(int slot)
{
    cli_tmps[slot].live = 0;
}

/* A block device given with -o, before anything is written to it: refused
 * when it, a partition of it or the disk it is part of is mounted (read-only
 * too: a read-only mount caches what we would overwrite), and opened with
 * O_EXCL, which the kernel refuses (EBUSY) while anything holds the device:
 * a mount, swap, device-mapper, md, LVM.  The exclusive open also keeps a
 * mount from starting while the image is written.  The refusal names what
 * is mounted where when a mount is the reason (looked up through opath,
 * the device as checked, when the exclusive open failed). */
static bool cli_out_device_free(struct cli *c, const char *path, int fd, int opath)
{
    char why[4096];
    bool busy = fd < 0 && errno == EBUSY;
    if ((busy || fd >= 0) && lay_mounted(fd >= 0 ? fd : opath, false, why, sizeof why)) {
        cli_error(c, "%s: %s: not written", path, why);
        return false;
    }
    if (busy) {
        cli_error(c, "%s: in use by the system (swap, or held by device-mapper, md or LVM; "
                     "or mounted where no process shows it): not written", path);
        return false;
    }
    return true;
}

/* Open for writing the object the O_PATH descriptor opath holds, through
 * /proc/self/fd (the object itself, whatever its name leads to now); where
 * /proc is missing, by the name, the result then checked to be that object. */
static int cli_reopen(int opath, const char *path, int flags, const struct stat *was)
{
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", opath);
    int fd = open(self, flags);
    if (fd < 0 && errno == ENOENT)
        fd = open(path, flags);
    struct stat now;
    if (fd >= 0 && (fstat(fd, &now) != 0 || now.st_dev != was->st_dev ||
                    now.st_ino != was->st_ino || now.st_rdev != was->st_rdev ||
                    (now.st_mode & S_IFMT) != (was->st_mode & S_IFMT))) {
        close(fd);
        errno = ESTALE;
        return -2;
    }
    return fd;
}

/* An existing device or FIFO given with -o: written into, never replaced;
 * opened as the object that was checked against the input. */
static int cli_out_special(struct cli *c, const struct cli_job *j, const char *path,
                           const struct cli_dest *d)
{
    bool blk = S_ISBLK(d->st.st_mode);
    if (cli_same_object(&j->st, &d->st)) {
        cli_same_error(c, path, &d->st);
        return -1;
    }
    int flags = O_WRONLY | O_CLOEXEC | O_NOCTTY | (blk ? O_EXCL : 0);
    int fd = cli_reopen(d->opath, path, flags, &d->st);
    if (fd == -2) {
        cli_error(c, "%s: replaced while it was being opened: not written", path);
        return -1;
    }
    if (blk && !cli_out_device_free(c, path, fd, d->opath)) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (fd < 0) {
        cli_error(c, "%s: %s", path, strerror(errno));
        return -1;
    }
    cli_out.live = cli_out.special = cli_out.exists = true;
    cli_out.st = d->st;
    cli_out.device = blk;
    memcpy(cli_out.path, path, strlen(path) + 1); /* for the signal handler */
    return fd;
}

bool cli_stdout_device_busy(struct cli *c)
{
    struct stat st;
    if (fstat(STDOUT_FILENO, &st) != 0 || !S_ISBLK(st.st_mode))
        return false;
    char why[4096];
    int fd = open("/proc/self/fd/1", O_WRONLY | O_EXCL | O_CLOEXEC | O_NOCTTY);
    bool held = fd < 0 && errno == EBUSY;
    if (fd >= 0)
        close(fd);
    if (lay_mounted(STDOUT_FILENO, false, why, sizeof why)) {
        cli_error(c, "stdout: %s: not written", why);
        return true;
    }
    if (held)
        cli_error(c, "stdout: the device is in use by the system (swap, or held by "
                     "device-mapper, md or LVM; or mounted where no process shows it): "
                     "not written");
    return held;
}

/* Forget the output (its directory closed); a temporary file still there
 * (an output never finished) is removed first. */
static void cli_out_close(void)
{
    if (cli_out.live && !cli_out.special) {
        sigset_t old;
        cli_signals_hold(&old);
        (void)unlinkat(cli_out.dfd, cli_out.tmp, 0);
        cli_tmp_untrack(0);
        cli_signals_release(&old);
    }
    if (cli_out.dfd >= 0)
        close(cli_out.dfd);
    memset(&cli_out, 0, sizeof cli_out);
    cli_out.dfd = -1;
}

/* Where the output goes: -o's name resolved (cli_dest_named), or a name
 * beside the input, in its directory. */
static int cli_out_dest(const struct cli_job *j, const char *path, bool named,
                        struct cli_dest *d)
{
    if (!named && j->in_path != NULL && j->dir_fd >= 0)
        return cli_dest_at(j->dir_fd, cli_base(path), path, d);
    return cli_dest_named(path, d);
}

/* What is at the output's name, gzip's way: without -f anything there is
 * kept ("already exists", a directory and a dangling link too); with -f
 * anything but a directory is replaced (a FIFO, a device node or a link
 * given as a name made from the input's: the name, not what it leads to).
 * True when the output may be made. */
static bool cli_out_allowed(struct cli *c, const struct cli_dest *d, bool named, const char *path)
{
    if (d->exists && S_ISDIR(d->st.st_mode) && (named || c->force)) {
        cli_error(c, "%s: is a directory", path);
        return false;
    }
    if (named && d->exists && !S_ISREG(d->st.st_mode)) { /* a socket */
        cli_error(c, "%s: not a regular file, device or FIFO: not written", path);
        return false;
    }
    if ((d->exists || d->dangling) && !c->force) {
        /* gzip says so even with -q */
        cli_status(c, EXIT_WARN);
        cli_msg("%s already exists; not overwritten", path);
        return false;
    }
    return true;
}

/* The temporary file in d's directory, published to the signal handler. */
static int cli_out_tmp(struct cli *c, struct cli_dest *d)
{
    cli_out.dfd = d->dfd;
    d->dfd = -1;
    memcpy(cli_out.base, d->base, sizeof cli_out.base);
    memcpy(cli_out.path, d->shown, sizeof cli_out.path);
    cli_out.dir = d->dir;
    cli_out.exists = d->exists || d->dangling;
    cli_out.st = d->st;
    cli_out.replace = cli_out.exists;
    sigset_t old;
    cli_signals_hold(&old);
    int fd = cli_tmp_create(cli_out.dfd, cli_out.base, cli_out.tmp, sizeof cli_out.tmp);
    if (fd >= 0) {
        cli_tmp_track(0, cli_out.dfd, cli_out.tmp);
        cli_out.live = true;
    }
    cli_signals_release(&old);
    if (fd < 0) {
        cli_error(c, "%s: %s", cli_out.path, strerror(errno));
        cli_out_close();
    }
    return fd;
}

int cli_out_create(struct cli *c, const struct cli_job *j, const char *path, bool named)
{
    cli_out_close();
    if (strlen(path) >= sizeof cli_out.path) {
        cli_error(c, "%s: file name too long", path);
        return -1;
    }
    struct cli_dest d;
    if (cli_out_dest(j, path, named, &d) != 0) { /* said before any work */
        cli_error(c, "%s: %s", path, strerror(errno));
        return -1;
    }
    int fd = -1;
    mode_t m = d.st.st_mode;
    if (named && d.exists && (S_ISCHR(m) || S_ISBLK(m) || S_ISFIFO(m)))
        fd = cli_out_special(c, j, path, &d);
    else if (named && d.exists && cli_same_object(&j->st, &d.st))
        cli_same_error(c, path, &d.st);
    else if (cli_out_allowed(c, &d, named, path))
        fd = cli_out_tmp(c, &d);
    cli_dest_close(&d);
    return fd;
}

bool cli_out_is(const struct stat *dir, const char *base, const struct stat *st)
{
    if (!cli_out.live)
        return false;
    if (st != NULL && cli_out.exists && cli_same_object(st, &cli_out.st))
        return true;
    return !cli_out.special && dir != NULL && dir->st_dev == cli_out.dir.st_dev &&
           dir->st_ino == cli_out.dir.st_ino && strcmp(base, cli_out.base) == 0;
}

bool cli_out_done(struct cli *c, bool ok)
{
    if (!cli_out.live)
        return false;
    if (cli_out.special) {
        cli_out.live = false;
        return ok;
    }
    sigset_t old;
    cli_signals_hold(&old);
    if (ok && cli_rename_at(cli_out.dfd, cli_out.tmp, cli_out.base,
                            cli_out.replace ? &cli_out.st : NULL) != 0) {
        if (errno == EEXIST && cli_out.replace) /* swapped since it was checked */
            cli_error(c, "%s: another file was put at this name while the output was "
                         "written: kept, the output discarded", cli_out.path);
        else if (errno == EEXIST)
            cli_warn(c, "%s already exists; not overwritten", cli_out.path);
        else
            cli_error(c, "%s: %s", cli_out.path, strerror(errno));
        ok = false;
    }
    if (!ok)
        (void)unlinkat(cli_out.dfd, cli_out.tmp, 0);
    cli_tmp_untrack(0);
    cli_out.live = false;
    cli_signals_release(&old);
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

/* Remove the input, relative to its directory, if its name is still the
 * file that was read (a file saved over it meanwhile stays). */
static void cli_input_remove(struct cli *c, const struct cli_job *j)
{
    int r = cli_unlink_same(j->dir_fd, j->in_base, j->name_dev, j->name_ino);
    if (r < 0)
        cli_warn(c, "%s: cannot remove: %s", j->in_path, strerror(errno));
    else if (r > 0)
        cli_warn(c, "%s: not removed: the name no longer leads to the file that was read",
                 j->in_path);
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
        cli_dir_sync(cli_out.dfd) != 0) {
        cli_error(c, "%s: cannot sync its directory: %s", cli_out.path, strerror(errno));
        ok = false;
    }
    if (ok && remove_input) {
        if (cli_dir_sync(cli_out.dfd) != 0)
            cli_warn(c, "%s: cannot sync its directory (%s): %s kept", cli_out.path,
                     strerror(errno), j->in_path);
        else
            cli_input_remove(c, j);
    }
    cli_out_close();
    return ok;
}

/* ---- inputs ---- */

bool cli_input_stays(const struct cli *c)
{
    return c->to_stdout || c->output != NULL || c->mode == MODE_TEST || c->mode == MODE_LIST ||
           c->mode == MODE_ESTIMATE || c->mode == MODE_EXPORT;
}

/* Automatic progress yields to output written on the terminal (-dc). */
static bool cli_stdout_shared(const struct cli *c)
{
    return c->progress != PROGRESS_ON && c->to_stdout && c->output == NULL &&
           (c->mode == MODE_COMPRESS || c->mode == MODE_DECOMPRESS) && isatty(STDOUT_FILENO);
}

bool cli_progress_wanted(const struct cli *c)
{
    if (c->quiet || c->progress == PROGRESS_OFF || cli_stdout_shared(c))
        return false;
    return c->progress == PROGRESS_ON || isatty(STDERR_FILENO);
}

/* The input's directory: the walk's (c->at_dir), or the one its path names,
 * opened once; j->dir_fd and j->in_base.  0 or -1 (errno set). */
static int cli_input_dir(const struct cli *c, const char *path, struct cli_job *j)
{
    j->dir_fd = AT_FDCWD;
    j->in_base = path;
    if (c->walking == 0)
        return cli_dir_of(path, &j->dir_fd, &j->in_base);
    j->in_base = cli_base(path);
    j->dir_fd = fcntl(c->at_dir, F_DUPFD_CLOEXEC, 0);
    return j->dir_fd < 0 ? -1 : 0;
}

/* gzip's refusals for an input open on fd (j->st): true when it is taken. */
static bool cli_input_ok(struct cli *c, const char *path, const struct cli_job *j, bool stays)
{
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
        return true;
    }
    return false;
}

int cli_open_input(struct cli *c, const char *path, struct cli_job *j)
{
    /* Like gzip: links are followed when the input stays (-c, -o) or with -f;
     * devices are often links (/dev/mapper/..., /dev/disk/by-id/...). */
    bool stays = cli_input_stays(c);
    int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | (c->force || stays ? 0 : O_NOFOLLOW);
    if (cli_input_dir(c, path, j) != 0) {
        cli_error(c, "%s: %s", path, strerror(errno));
        return -1;
    }
    /* The name's own identity first: a link followed (-f) is removed as
     * itself; anything else must be the file opened. */
    struct stat name;
    bool named = fstatat(j->dir_fd, j->in_base, &name, AT_SYMLINK_NOFOLLOW) == 0;
    int fd = openat(j->dir_fd, j->in_base, flags);
    if (fd < 0 || fstat(fd, &j->st) != 0) {
        cli_error(c, "%s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        j->in_path = path;
        j->in_fd = -1;
        cli_close_input(j);
        return -1;
    }
    bool link = named && S_ISLNK(name.st_mode);
    j->name_dev = link ? name.st_dev : j->st.st_dev;
    j->name_ino = link ? name.st_ino : j->st.st_ino;
    /* O_NONBLOCK only kept open() from waiting on a FIFO writer. */
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    j->in_fd = fd;
    j->in_path = path;
    if (cli_input_ok(c, path, j, stays))
        return 0;
    cli_close_input(j);
    return -1;
}

void cli_close_input(struct cli_job *j)
{
    if (j->in_path == NULL)
        return;
    if (j->in_fd >= 0)
        close(j->in_fd);
    if (j->dir_fd >= 0)
        close(j->dir_fd);
    j->in_fd = j->dir_fd = -1;
}

/* gzip compares suffixes without regard to case (so .GZ and .Z count). */
bool cli_has_suffix(const char *name, const char *suf)
{
    size_t n = strlen(name), s = strlen(suf);
    return n > s && strcasecmp(name + n - s, suf) == 0;
}

bool cli_out_is_input(struct cli *c, const struct cli_job *j, const char *out_path, bool named)
{
    struct stat ost;
    int r = named || j->in_path == NULL || j->dir_fd < 0
                ? stat(out_path, &ost)
                : fstatat(j->dir_fd, cli_base(out_path), &ost, 0);
    if (r != 0 || !cli_same_object(&j->st, &ost))
        return false;
    cli_same_error(c, out_path, &ost);
    return true;
}

void cli_same_error(struct cli *c, const char *name, const struct stat *st)
{
    cli_error(c, "%s: input and output are the same %s", name,
              S_ISBLK(st->st_mode) ? "device" : "file");
}

bool cli_same_file(const struct cli_job *j, int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && cli_same_object(&j->st, &st);
}
