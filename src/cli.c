/* cli.c — what the commands share: messages, exit status, signals, the
 * lifecycle of a named output, and gzip's rules for inputs.  See cli.h. */
#include "config.h"
#include "cli.h"
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

/* ---- partial output removal on signals ---- */

static char cli_out_path[PATH_MAX];
static volatile sig_atomic_t cli_out_live;

static void cli_on_signal(int sig)
{
    static const char msg[] = ": interrupted, partial output removed\n";
    if (cli_out_live)
        unlink(cli_out_path);
    cli_prog_interrupted(); /* end a progress line first */
    (void)!write(STDERR_FILENO, cli_prog, strlen(cli_prog));
    (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)sig;
    _exit(EXIT_ERR);
}

void cli_signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = cli_on_signal;
    sigfillset(&sa.sa_mask);
    int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        /* Keep "ignored" when the shell ignored it (nohup, background jobs). */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(sigs[i], &sa, NULL);
    }
}

static void cli_signals_block(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

/* O_EXCL: never clobber a file we did not decide to replace; the path is
 * published to the handler with the signals blocked, so it never removes a
 * file spigz did not create. */
int cli_out_create(struct cli *c, const char *path)
{
    sigset_t old;
    if (strlen(path) >= sizeof cli_out_path) {
        cli_error(c, "%s: file name too long", path);
        return -1;
    }
    if (c->force && unlink(path) != 0 && errno != ENOENT) {
        cli_error(c, "%s: cannot replace: %s", path, strerror(errno));
        return -1;
    }
    cli_signals_block(&old);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
        memcpy(cli_out_path, path, strlen(path) + 1);
        cli_out_live = 1;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (fd < 0) {
        if (errno == EEXIST)
            cli_warn(c, "%s already exists; not overwritten", path);
        else
            cli_error(c, "%s: %s", path, strerror(errno));
    }
    return fd;
}

void cli_out_done(bool ok)
{
    sigset_t old;
    cli_signals_block(&old);
    if (!ok && cli_out_live)
        unlink(cli_out_path);
    cli_out_live = 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Give the output the input's times (or mtime), mode and owner, as gzip. */
static void cli_copy_meta(int fd, const struct stat *st, const struct timespec *mtime)
{
    struct timespec ts[2] = {st->st_atim, mtime != NULL ? *mtime : st->st_mtim};
    (void)futimens(fd, ts);
    (void)!fchown(fd, st->st_uid, st->st_gid);
    (void)fchmod(fd, st->st_mode & 07777);
}

bool cli_out_finish(struct cli *c, struct cli_job *j, bool ok, bool remove_input,
                    const struct timespec *mtime)
{
    if (ok && j->in_path != NULL && S_ISREG(j->st.st_mode))
        cli_copy_meta(j->out_fd, &j->st, mtime);
    if (ok && remove_input && fsync(j->out_fd) != 0) {
        cli_error(c, "%s: %s", j->out_name, strerror(errno));
        ok = false;
    }
    if (close(j->out_fd) != 0 && ok) {
        cli_error(c, "%s: %s", j->out_name, strerror(errno));
        ok = false;
    }
    cli_out_done(ok);
    if (ok && remove_input && unlink(j->in_path) != 0)
        cli_warn(c, "%s: cannot remove: %s", j->in_path, strerror(errno));
    return ok;
}

/* ---- inputs ---- */

bool cli_input_stays(const struct cli *c)
{
    return c->to_stdout || c->output != NULL || c->mode == MODE_TEST || c->mode == MODE_LIST ||
           c->mode == MODE_ESTIMATE;
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

bool cli_out_is_input(struct cli *c, const struct cli_job *j, const char *out_path)
{
    struct stat ost;
    if (j->in_path == NULL || stat(out_path, &ost) != 0 || ost.st_dev != j->st.st_dev ||
        ost.st_ino != j->st.st_ino)
        return false;
    cli_error(c, "%s: input and output are the same file", out_path);
    return true;
}

bool cli_same_file(const struct cli_job *j, int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
           st.st_dev == j->st.st_dev && st.st_ino == j->st.st_ino;
}

const char *cli_base(const char *path)
{
    const char *b = strrchr(path, '/');
    return b != NULL ? b + 1 : path;
}
