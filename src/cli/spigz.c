/* spigz.c — main: the program's name, the options (cli_options.c), then
 * each input in turn, the directories of -r walked.  See cli.h for what the
 * command line guarantees; the cmd_*.c files handle one input each.
 */
#include "config.h"
#include "cli.h"
#include "cli_options.h"
#include "cli_path.h"
#include "compress.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* gzip refuses to write compressed data to a terminal, or to read it from one. */
static bool cli_terminal_refused(const struct cli *c, char **files, int nfiles)
{
    if (c->force)
        return false;
    bool uses_stdin = nfiles == 0;
    for (int i = 0; i < nfiles; i++)
        uses_stdin = uses_stdin || strcmp(files[i], "-") == 0;
    if (c->mode == MODE_ESTIMATE)
        return false; /* reads anything, writes only a report */
    if (c->mode == MODE_EXPORT) {
        bool refused = c->output == NULL && c->to_stdout && isatty(STDOUT_FILENO);
        if (refused)
            cli_msg("an index is not written to a terminal. Use -f to force it.");
        return refused;
    }
    if (c->mode == MODE_COMPRESS) {
        bool uses_stdout = c->output == NULL && (c->to_stdout || uses_stdin);
        if (uses_stdout && isatty(STDOUT_FILENO)) {
            cli_msg("compressed data not written to a terminal. Use -f to force compression.");
            fprintf(stderr, "For help, type: %s -h\n", cli_prog);
            return true;
        }
    } else if (uses_stdin && isatty(STDIN_FILENO)) {
        cli_msg("compressed data not read from a terminal. Use -f to force decompression.");
        fprintf(stderr, "For help, type: %s -h\n", cli_prog);
        return true;
    }
    return false;
}

/* A closed 0, 1 or 2 would be reused by the first open(): the input would
 * become "stdout".  Occupy them with /dev/null opened so that using them fails
 * as it would have: opened for the other direction, reads and writes fail
 * with EBADF, as on a closed descriptor. */
static void cli_reserve_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            int nfd = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
            if (nfd >= 0 && nfd != fd)
                close(nfd);
        }
}

/* The program's name, and what it means: unspigz, gunzip (any "un..."
 * name, as pigz's unpigz) decompress; spigzcat, zcat (any "...cat")
 * decompress to stdout. */
static void cli_name(struct cli *c, const char *argv0)
{
    const char *b = argv0 != NULL && argv0[0] != '\0' ? cli_base(argv0) : "spigz";
    cli_prog = b;
    size_t n = strlen(b);
    if (strncmp(b, "un", 2) == 0 || strcmp(b, "gunzip") == 0)
        c->mode = MODE_DECOMPRESS;
    if (n >= 3 && strcmp(b + n - 3, "cat") == 0) {
        c->mode = MODE_DECOMPRESS;
        c->to_stdout = true;
    }
}

typedef void (*cli_run_fn)(struct cli *, const char *);

/* The names in the directory open on dfd, but . and .., read to the end
 * before any is processed (as gzip's savedir): entries the run itself
 * creates (outputs, temporary names) are never walked into.  Returns a
 * malloc'd array of malloc'd names and sets *count, or NULL with errno set.
 * dfd stays open (a duplicate is read). */
static char **cli_dir_names(int dfd, size_t *count)
{
    int rfd = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
    DIR *d = rfd >= 0 ? fdopendir(rfd) : NULL;
    if (d == NULL) {
        int e = errno;
        if (rfd >= 0)
            close(rfd);
        errno = e;
        return NULL;
    }
    char **v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    int saved = 0;
    while ((errno = 0, e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (n == cap) {
            char **w = cap > SIZE_MAX / 2 / sizeof *v ? NULL
                                                       : realloc(v, (cap ? 2 * cap : 64) * sizeof *v);
            if (w == NULL) {
                errno = ENOMEM;
                break;
            }
            v = w;
            cap = cap ? 2 * cap : 64;
        }
        if ((v[n] = strdup(e->d_name)) == NULL)
            break;
        n++;
    }
    saved = errno;
    closedir(d);
    if (saved != 0) {
        while (n > 0)
            free(v[--n]);
        free(v);
        errno = saved;
        return NULL;
    }
    *count = n;
    return v != NULL ? v : calloc(1, sizeof *v);
}

/* -r: the files under the directory open on dfd (shown as dir), depth first,
 * in directory order (as gzip -r).  Everything is reached through directory
 * descriptors: a subdirectory is opened from its parent's descriptor and
 * never through a link (O_NOFOLLOW), a file is handed on with the
 * descriptor of its directory (c->at_dir), so a directory swapped for a link
 * mid-walk leads nowhere outside the tree.  Links are passed on as files:
 * the usual rules refuse them (or, with -f, follow them to files; a link
 * to a directory is "a directory", ignored).  One descriptor per level:
 * the depth is bounded by the open-file limit (EMFILE, reported). */
static void cli_walk(struct cli *c, cli_run_fn run, int dfd, const char *dir)
{
    size_t n = 0;
    char **names = cli_dir_names(dfd, &n);
    if (names == NULL) {
        cli_error(c, "%s: %s", dir, strerror(errno));
        return;
    }
    size_t dlen = strlen(dir);
    const char *sep = dlen > 0 && dir[dlen - 1] == '/' ? "" : "/";
    for (size_t i = 0; i < n && !c->stop; i++) {
        char *p = malloc(dlen + strlen(names[i]) + 2);
        if (p == NULL) {
            cli_error(c, "%s: out of memory", dir);
            break;
        }
        sprintf(p, "%s%s%s", dir, sep, names[i]);
        struct stat st;
        bool isdir = fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
        int sub = isdir ? cli_dir_down(dfd, names[i], false) : -1;
        if (isdir && sub < 0 && errno != ENOTDIR && errno != ELOOP) {
            cli_error(c, "%s: %s", p, strerror(errno));
        } else if (sub >= 0) {
            cli_walk(c, run, sub, p);
            close(sub);
        } else { /* a file, or no longer a directory: taken as it is now */
            c->at_dir = dfd;
            run(c, p);
        }
        free(p);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* A directory operand of -r is walked; one that is a link only where links
 * are followed (-f, or an input that stays: -c, -t, -l...), as gzip 1.12
 * (without them, the operand goes to run, which refuses the link as a
 * file).  Anything else is a file operand. */
static void cli_one(struct cli *c, cli_run_fn run, const char *path)
{
    int dfd = -1;
    if (path != NULL && c->recursive && strcmp(path, "-") != 0)
        dfd = cli_dir_down(AT_FDCWD, path, c->force || cli_input_stays(c));
    if (dfd < 0) {
        run(c, path);
        return;
    }
    c->walking++;
    cli_walk(c, run, dfd, path);
    c->walking--;
    close(dfd);
}

int main(int argc, char **argv)
{
    cli_reserve_std_fds();
    struct cli c = {.level = 6, .store_name = true, .store_time = true, .index = true,
                    .suffix = ".gz",
                    .chunk_kib = CMP_CHUNK_DEFAULT >> 10,
                    .zmin_kib = CMP_ZMIN_DEFAULT >> 10, .sparse = OSINK_SPARSE_AUTO,
                    .seed = 1};
    cli_name(&c, argc > 0 ? argv[0] : NULL);
    char **files = calloc((size_t)argc + 1, sizeof *files);
    if (files == NULL) {
        cli_msg("out of memory");
        return EXIT_ERR;
    }
    int nfiles = cli_options(&c, argc, argv, files);
    cli_messages_json(c.format == FORMAT_JSON);
    if (cli_terminal_refused(&c, files, nfiles)) {
        free(files);
        return EXIT_ERR;
    }
    cli_signals_install();
    cli_run_fn run = c.mode == MODE_COMPRESS ? cmd_compress
                     : c.mode == MODE_ESTIMATE ? cmd_estimate
                     : c.mode == MODE_EXPORT ? cmd_export : cmd_decompress;
    c.operands = nfiles;
    if (c.mode == MODE_COMPARE) {
        c.compare_target = files[1];
        cmd_compare(&c, files[0]);
        nfiles = 0;
    } else if (c.mode == MODE_MOUNT) {
        cmd_mount(&c, files[0], files[1]);
        nfiles = 0;
    } else if (nfiles == 0) {
        run(&c, NULL);
    }
    for (int i = 0; i < nfiles && !c.stop; i++)
        cli_one(&c, run, files[i]);
    if (c.mode == MODE_LIST && !c.stop) /* gzip ends at once on such an error */
        cmd_list_totals(&c);
    cli_badmap_end(); /* a map begun for a run that failed before writing it */
    free(files);
    if (fflush(stdout) != 0 || ferror(stdout))
        cli_error(&c, "stdout: %s", strerror(errno != 0 ? errno : EIO));
    return c.status;
}
