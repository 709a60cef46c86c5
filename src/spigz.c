/* spigz.c — the command line: gzip's and pigz's conventions, spigz's core.
 *
 * This is the only file that prints or exits.  It parses options, applies
 * gzip's file handling (FILE -> FILE.gz, input removed only once the output is
 * complete and flushed, refusals as warnings), maps core errors to gzip's
 * exit status (0 ok, 1 error, 2 warning) and removes a partial output on
 * error or on SIGINT/SIGTERM/SIGHUP.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "compress.h"
#include "engine.h"

#define EXIT_OK 0
#define EXIT_ERR 1
#define EXIT_WARN 2

struct cli {
    bool to_stdout, keep, force, quiet, no_name_set, store_name;
    int verbose;
    int level;
    unsigned threads;
    uint64_t chunk_kib;
    uint64_t zmin_kib;
    const char *suffix;
    const char *output;   /* -o */
    int status;           /* worst status so far */
};

static const char *cli_prog = "spigz";

/* ---- messages and status ---- */

static void cli_status(struct cli *c, int st)
{
    if (st == EXIT_ERR || (st == EXIT_WARN && c->status == EXIT_OK))
        c->status = st;
}

static void cli_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void cli_msg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", cli_prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void cli_error(struct cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cli_error(struct cli *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", cli_prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    cli_status(c, EXIT_ERR);
}

static void cli_warn(struct cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cli_warn(struct cli *c, const char *fmt, ...)
{
    cli_status(c, EXIT_WARN);
    if (c->quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", cli_prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
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
    (void)!write(STDERR_FILENO, cli_prog, strlen(cli_prog));
    (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)sig;
    _exit(EXIT_ERR);
}

static void cli_signals_install(void)
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

/* Create the output file; from here until cli_out_done() a signal removes it.
 * O_EXCL: never clobber a file we did not decide to replace. */
static int cli_out_create(struct cli *c, const char *path)
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

/* The output is kept (ok) or removed; signals no longer touch it. */
static void cli_out_done(bool ok)
{
    sigset_t old;
    cli_signals_block(&old);
    if (!ok && cli_out_live)
        unlink(cli_out_path);
    cli_out_live = 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ---- usage ---- */

static void cli_help(void)
{
    printf(
"Usage: %s [OPTION]... [FILE]...\n"
"Compress FILEs, devices or standard input to standard gzip, fast on images\n"
"that are mostly zeros: zero runs cost almost nothing, holes are never read.\n"
"With no FILE, or when FILE is -, read standard input and write standard output.\n"
"\n"
"  -c, --stdout, --to-stdout  write to standard output, keep input files\n"
"  -o, --output OUT     write to OUT (one input), keep the input\n"
"  -k, --keep           keep (don't delete) input files\n"
"  -f, --force          overwrite outputs; compress links, links to files and\n"
"                       to terminals\n"
"  -0 ... -9            compression level (default 6); -10 ... -12 with\n"
"                       libdeflate; --fast is -1, --best is -9\n"
"  -p, --processes N    compression threads (default: online CPUs)\n"
"  -b, --blocksize KiB  data chunk size in KiB (default 1024)\n"
"      --zero-run KiB   shortest zero run coded as a zero run (default %u)\n"
"  -n, --no-name        do not store the file name and time stamp\n"
"  -N, --name           store the file name and time stamp (default for files)\n"
"  -S, --suffix SUF     use suffix SUF instead of .gz\n"
"  -v, --verbose        report each file's compression\n"
"  -q, --quiet          suppress warnings\n"
"  -h, --help           show this help and exit\n"
"  -V, --version        show the version and the data engine and exit\n"
"\n"
"Block and character devices are read by name and never removed; they need\n"
"-c or -o.  Exit status: 0 success, 1 error, 2 warning.\n",
        cli_prog, (unsigned)(CMP_ZMIN_DEFAULT >> 10));
}

static void cli_version(void)
{
    printf("%s %s\ndata engine: %s; zlib %s\n", PACKAGE_NAME, PACKAGE_VERSION,
           eng_name(), zlibVersion());
}

static void cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", cli_prog);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry '%s --help' for more information.\n", cli_prog);
    va_end(ap);
    exit(EXIT_ERR);
}

/* ---- option parsing ---- */

static uint64_t cli_number(const char *opt, const char *s, uint64_t lo, uint64_t hi)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 || v < lo || v > hi)
        cli_usage_error("invalid %s value '%s' (expected %llu..%llu)", opt, s,
                        (unsigned long long)lo, (unsigned long long)hi);
    return v;
}

enum { OPT_NONE, OPT_ARG };

struct cli_long {
    const char *name;
    char key;      /* equivalent short option, or a private code */
    int arg;
};

#define KEY_ZERO_RUN 1
#define KEY_FAST 2
#define KEY_BEST 3

static const struct cli_long cli_longs[] = {
    {"stdout", 'c', OPT_NONE},     {"to-stdout", 'c', OPT_NONE},
    {"output", 'o', OPT_ARG},      {"keep", 'k', OPT_NONE},
    {"force", 'f', OPT_NONE},      {"processes", 'p', OPT_ARG},
    {"blocksize", 'b', OPT_ARG},   {"zero-run", KEY_ZERO_RUN, OPT_ARG},
    {"no-name", 'n', OPT_NONE},    {"name", 'N', OPT_NONE},
    {"suffix", 'S', OPT_ARG},      {"verbose", 'v', OPT_NONE},
    {"quiet", 'q', OPT_NONE},      {"help", 'h', OPT_NONE},
    {"version", 'V', OPT_NONE},    {"fast", KEY_FAST, OPT_NONE},
    {"best", KEY_BEST, OPT_NONE},
};

static bool cli_takes_arg(char key)
{
    return key == 'o' || key == 'p' || key == 'b' || key == 'S' || key == KEY_ZERO_RUN;
}

static void cli_apply(struct cli *c, char key, const char *arg)
{
    switch (key) {
    case 'c': c->to_stdout = true; break;
    case 'o': c->output = arg; break;
    case 'k': c->keep = true; break;
    case 'f': c->force = true; break;
    case 'p': c->threads = (unsigned)cli_number("-p", arg, 1, 1024); break;
    case 'b': c->chunk_kib = cli_number("-b", arg, 32, 512u << 10); break;
    case KEY_ZERO_RUN: c->zmin_kib = cli_number("--zero-run", arg, 4, 1u << 20); break;
    case 'n': c->store_name = false; c->no_name_set = true; break;
    case 'N': c->store_name = true; c->no_name_set = true; break;
    case 'S': c->suffix = arg; break;
    case 'v': c->verbose++; c->quiet = false; break;
    case 'q': c->quiet = true; c->verbose = 0; break;
    case 'h': cli_help(); exit(EXIT_OK);
    case 'V': cli_version(); exit(EXIT_OK);
    case KEY_FAST: c->level = 1; break;
    case KEY_BEST: c->level = 9; break;
    case 'd': case 't': case 'l':
        cli_usage_error("-%c: decompression is not available in this version", key);
    default:
        cli_usage_error("invalid option -- '%c'", key);
    }
}

/* "--name[=value]": returns the index of the next argument. */
static int cli_parse_long(struct cli *c, int argc, char **argv, int i)
{
    const char *s = argv[i] + 2;
    const char *eq = strchr(s, '=');
    size_t len = eq != NULL ? (size_t)(eq - s) : strlen(s);
    const struct cli_long *hit = NULL;
    for (size_t k = 0; k < sizeof cli_longs / sizeof cli_longs[0]; k++)
        if (strlen(cli_longs[k].name) == len && strncmp(cli_longs[k].name, s, len) == 0)
            hit = &cli_longs[k];
    if (hit == NULL)
        cli_usage_error("unrecognized option '%s'", argv[i]);
    const char *arg = NULL;
    if (hit->arg == OPT_ARG) {
        if (eq != NULL)
            arg = eq + 1;
        else if (i + 1 < argc)
            arg = argv[++i];
        else
            cli_usage_error("option '--%s' requires an argument", hit->name);
    } else if (eq != NULL) {
        cli_usage_error("option '--%s' doesn't allow an argument", hit->name);
    }
    cli_apply(c, hit->key, arg);
    return i + 1;
}

/* "-kc9", "-p2", "-p 2", "-11": digits run together form one level, as pigz. */
static int cli_parse_short(struct cli *c, int argc, char **argv, int i)
{
    const char *s = argv[i] + 1;
    while (*s != '\0') {
        if (*s >= '0' && *s <= '9') {
            int lvl = 0;
            while (*s >= '0' && *s <= '9' && lvl < 100)
                lvl = lvl * 10 + (*s++ - '0');
            if (lvl > eng_max_level())
                cli_usage_error("level %d is not available (engine %s: 0..%d)",
                                lvl, eng_name(), eng_max_level());
            c->level = lvl;
            continue;
        }
        char key = *s++;
        if (!cli_takes_arg(key)) {
            cli_apply(c, key, NULL);
            continue;
        }
        if (*s != '\0')
            cli_apply(c, key, s);
        else if (i + 1 < argc)
            cli_apply(c, key, argv[++i]);
        else
            cli_usage_error("option requires an argument -- '%c'", key);
        break;
    }
    return i + 1;
}

/* Options anywhere before "--", as gzip; returns the files in files[]. */
static int cli_parse(struct cli *c, int argc, char **argv, char **files)
{
    int n = 0;
    bool opts = true;
    for (int i = 1; i < argc;) {
        const char *a = argv[i];
        if (opts && strcmp(a, "--") == 0) {
            opts = false;
            i++;
        } else if (opts && a[0] == '-' && a[1] == '-') {
            i = cli_parse_long(c, argc, argv, i);
        } else if (opts && a[0] == '-' && a[1] != '\0') {
            i = cli_parse_short(c, argc, argv, i);
        } else {
            files[n++] = argv[i++];
        }
    }
    return n;
}

static unsigned cli_online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 1024 ? 1024 : (unsigned)n;
}

/* ---- one input ---- */

struct cli_job {
    const char *in_name;   /* as shown in messages */
    const char *out_name;  /* as shown in messages */
    int in_fd, out_fd;
    bool is_device;
    struct stat st;        /* of the input */
};

static void cli_verbose_report(struct cli *c, const struct cli_job *j,
                               const struct cmp_stats *s, const char *what)
{
    if (!c->verbose)
        return;
    /* gzip's ratio: deflate bytes only, not its header and trailer. */
    double deflated = (double)(s->out_bytes - s->frame_bytes);
    double pct = s->in_bytes == 0 ? 0.0
        : 100.0 * ((double)s->in_bytes - deflated) / (double)s->in_bytes;
    fprintf(stderr, "%s:\t%5.1f%%", j->in_name, pct);
    if (what != NULL)
        fprintf(stderr, " -- %s %s", what, j->out_name);
    if (c->verbose > 1)
        fprintf(stderr, " (%llu bytes in, %llu out, %llu zero of which %llu holes)",
                (unsigned long long)s->in_bytes, (unsigned long long)s->out_bytes,
                (unsigned long long)s->zero_bytes, (unsigned long long)s->hole_bytes);
    fputc('\n', stderr);
}

/* Run the core on one input; prints its error.  Returns 0 or -1. */
static int cli_compress(struct cli *c, struct cli_job *j, const char *name,
                        uint32_t mtime, struct cmp_stats *st)
{
    struct cmp_opts o;
    cmp_opts_default(&o);
    o.level = c->level;
    o.threads = c->threads;
    o.chunk = (size_t)c->chunk_kib << 10;
    o.zmin = c->zmin_kib << 10;
    o.name = name;
    o.mtime = mtime;
    struct sp_err err = {0};
    if (cmp_run(j->in_fd, j->out_fd, &o, st, &err) != 0) {
        const char *who = err.kind == SP_ERR_WRITE ? j->out_name : j->in_name;
        cli_error(c, "%s: %s", who, err.msg);
        return -1;
    }
    if (st->size_changed)
        cli_warn(c, "%s: file size changed while compressing; input kept", j->in_name);
    return 0;
}

/* gzip stores the modification time when it fits MTIME's 32 bits. */
static uint32_t cli_mtime(const struct stat *st)
{
    if (st->st_mtime <= 0 || (uint64_t)st->st_mtime > UINT32_MAX)
        return 0;
    return (uint32_t)st->st_mtime;
}

static const char *cli_base(const char *path)
{
    const char *b = strrchr(path, '/');
    return b != NULL ? b + 1 : path;
}

/* Give the output the input's times, mode and owner, as gzip does. */
static void cli_copy_meta(int fd, const struct stat *st)
{
    struct timespec ts[2] = {st->st_atim, st->st_mtim};
    (void)futimens(fd, ts);
    (void)!fchown(fd, st->st_uid, st->st_gid);
    (void)fchmod(fd, st->st_mode & 07777);
}

static bool cli_has_suffix(const char *name, const char *suf)
{
    size_t n = strlen(name), s = strlen(suf);
    return n > s && strcmp(name + n - s, suf) == 0;
}

/* The suffix that marks name as compressed already, as gzip sees it: the
 * chosen one, or one of gzip's own. */
static const char *cli_compressed_suffix(const struct cli *c, const char *name)
{
    static const char *const known[] = {".gz", ".z", ".taz", ".tgz", "-gz", "-z", "_z"};
    if (cli_has_suffix(name, c->suffix))
        return c->suffix;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (cli_has_suffix(name, known[i]))
            return known[i];
    return NULL;
}

/* True when fd is the very file j reads: writing it would destroy the input
 * (spigz -f -o FILE FILE, spigz -c FILE >> FILE). */
static bool cli_same_file(const struct cli_job *j, int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
           st.st_dev == j->st.st_dev && st.st_ino == j->st.st_ino;
}

/* Decide whether a named input may be compressed, gzip's way.  Opens it. */
static int cli_open_input(struct cli *c, const char *path, struct cli_job *j)
{
    /* Like gzip: links are followed when the input stays (-c, -o) or with -f;
     * devices are often links (/dev/mapper/..., /dev/disk/by-id/...). */
    bool named_out = c->to_stdout || c->output != NULL;
    int flags = O_RDONLY | O_CLOEXEC | (c->force || named_out ? 0 : O_NOFOLLOW);
    int fd = open(path, flags | O_NONBLOCK);
    if (fd < 0) {
        cli_error(c, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &j->st) != 0) {
        cli_error(c, "%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    /* O_NONBLOCK only kept open() from waiting on a FIFO writer. */
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    mode_t m = j->st.st_mode;
    const char *why = NULL;
    if (S_ISDIR(m))
        why = "is a directory -- ignored";
    else if (S_ISBLK(m) || S_ISCHR(m))
        why = named_out ? NULL : "is a device: use -c or -o (a device is never replaced)";
    else if (!S_ISREG(m))
        why = named_out ? NULL : "is not a directory or a regular file - ignored";
    else if (!named_out && !c->force && j->st.st_nlink > 1) {
        cli_warn(c, "%s has %lu other link%s -- file ignored", path,
                 (unsigned long)(j->st.st_nlink - 1), j->st.st_nlink > 2 ? "s" : "");
        close(fd);
        return -1;
    }
    if (why != NULL) {
        if (S_ISBLK(m) || S_ISCHR(m))
            cli_error(c, "%s %s", path, why);
        else
            cli_warn(c, "%s %s", path, why);
        close(fd);
        return -1;
    }
    j->is_device = S_ISBLK(m) || S_ISCHR(m);
    j->in_fd = fd;
    return 0;
}

/* Compress to a named output (FILE.gz, or -o OUT). */
static void cli_to_file(struct cli *c, struct cli_job *j, const char *out_path,
                        bool remove_input, const char *in_path)
{
    j->out_name = out_path;
    struct stat ost;
    if (in_path != NULL && stat(out_path, &ost) == 0 && ost.st_dev == j->st.st_dev &&
        ost.st_ino == j->st.st_ino) {
        cli_error(c, "%s: input and output are the same file", out_path);
        return;
    }
    j->out_fd = cli_out_create(c, out_path);
    if (j->out_fd < 0)
        return;
    bool regular = in_path != NULL && S_ISREG(j->st.st_mode);
    bool store = regular && c->store_name;
    struct cmp_stats st;
    bool ok = cli_compress(c, j, store ? cli_base(in_path) : NULL,
                           store ? cli_mtime(&j->st) : 0, &st) == 0;
    if (ok && regular)
        cli_copy_meta(j->out_fd, &j->st);
    /* A file that changed while read may hold bytes the output lacks. */
    if (ok && st.size_changed)
        remove_input = false;
    if (ok && remove_input && fsync(j->out_fd) != 0) {
        cli_error(c, "%s: %s", out_path, strerror(errno));
        ok = false;
    }
    if (close(j->out_fd) != 0 && ok) {
        cli_error(c, "%s: %s", out_path, strerror(errno));
        ok = false;
    }
    cli_out_done(ok);
    if (!ok)
        return;
    if (remove_input && unlink(in_path) != 0) {
        cli_warn(c, "%s: cannot remove: %s", in_path, strerror(errno));
        remove_input = false;
    }
    cli_verbose_report(c, j, &st, remove_input ? "replaced with" : "created");
}

static void cli_to_stdout(struct cli *c, struct cli_job *j, const char *in_path)
{
    j->out_name = "stdout";
    j->out_fd = STDOUT_FILENO;
    if (in_path != NULL && cli_same_file(j, STDOUT_FILENO)) {
        cli_error(c, "%s: input and output are the same file", j->in_name);
        return;
    }
    bool store = in_path != NULL && S_ISREG(j->st.st_mode) && c->store_name;
    struct cmp_stats st;
    if (cli_compress(c, j, store ? cli_base(in_path) : NULL,
                     store ? cli_mtime(&j->st) : 0, &st) == 0)
        cli_verbose_report(c, j, &st, "replaced with");
}

static void cli_stdin(struct cli *c)
{
    struct cli_job j = {.in_name = "stdin", .in_fd = STDIN_FILENO};
    if (fstat(STDIN_FILENO, &j.st) != 0) {
        cli_error(c, "stdin: %s", strerror(errno));
        return;
    }
    if (c->output != NULL)
        cli_to_file(c, &j, c->output, false, NULL);
    else
        cli_to_stdout(c, &j, NULL);
}

static void cli_file(struct cli *c, const char *path)
{
    if (strcmp(path, "-") == 0) {
        cli_stdin(c);
        return;
    }
    bool named_out = c->to_stdout || c->output != NULL;
    const char *suf = named_out ? NULL : cli_compressed_suffix(c, path);
    if (suf != NULL) {
        /* gzip reports this but does not count it as a warning. */
        if (!c->quiet)
            cli_msg("%s already has %s suffix -- unchanged", path, suf);
        return;
    }
    struct cli_job j = {.in_name = path};
    if (cli_open_input(c, path, &j) != 0)
        return;
    if (c->to_stdout) {
        cli_to_stdout(c, &j, path);
    } else if (c->output != NULL) {
        cli_to_file(c, &j, c->output, false, path);
    } else {
        size_t n = strlen(path) + strlen(c->suffix) + 1;
        char *out = malloc(n);
        if (out == NULL) {
            cli_error(c, "%s: out of memory", path);
        } else {
            snprintf(out, n, "%s%s", path, c->suffix);
            cli_to_file(c, &j, out, !c->keep, path);
            free(out);
        }
    }
    close(j.in_fd);
}

/* A closed 0, 1 or 2 would be reused by the first open(): the input would
 * become "stdout".  Occupy them with /dev/null opened so that using them fails
 * as it would have (reads give EOF, writes EBADF). */
static void cli_reserve_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            int nfd = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
            if (nfd >= 0 && nfd != fd)
                close(nfd);
        }
}

int main(int argc, char **argv)
{
    cli_reserve_std_fds();
    struct cli c = {.level = 6, .store_name = true, .suffix = ".gz",
                    .chunk_kib = CMP_CHUNK_DEFAULT >> 10,
                    .zmin_kib = CMP_ZMIN_DEFAULT >> 10};
    char **files = calloc((size_t)argc + 1, sizeof *files);
    if (files == NULL) {
        cli_msg("out of memory");
        return EXIT_ERR;
    }
    int nfiles = cli_parse(&c, argc, argv, files);
    if (c.threads == 0)
        c.threads = cli_online_cpus();
    c.chunk_kib = (c.chunk_kib + 3) & ~(uint64_t)3; /* whole 4 KiB blocks */
    c.zmin_kib = (c.zmin_kib + 3) & ~(uint64_t)3;
    if (c.suffix[0] == '\0' || strchr(c.suffix, '/') != NULL)
        cli_usage_error("invalid suffix '%s'", c.suffix);
    if (c.output != NULL && (c.to_stdout || nfiles > 1))
        cli_usage_error("-o takes one input and excludes -c");
    bool uses_stdout = c.output == NULL && (c.to_stdout || nfiles == 0 ||
                       (nfiles == 1 && strcmp(files[0], "-") == 0));
    if (uses_stdout && !c.force && isatty(STDOUT_FILENO)) {
        cli_msg("compressed data not written to a terminal. Use -f to force compression.");
        fprintf(stderr, "For help, type: %s -h\n", cli_prog);
        free(files);
        return EXIT_ERR;
    }
    cli_signals_install();
    if (nfiles == 0)
        cli_stdin(&c);
    for (int i = 0; i < nfiles; i++)
        cli_file(&c, files[i]);
    free(files);
    if (fflush(stdout) != 0)
        cli_error(&c, "stdout: %s", strerror(errno));
    return c.status;
}
