/* cmd_compare.c — --compare BACKUP TARGET: decode the backup against a
 * file, device or FIFO (osink's compare mode) and report where they
 * differ, with cmp's statuses. */
#include "config.h"
#include "cli.h"
#include "cmd_decompress.h"
#include "dec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The differences found, as a message, -v's list and the map.  True when
 * there are any. */
static bool cd_compare_report(struct cli *c, const struct cli_job *j, const char *tname,
                              const struct osink *o, const struct dec_stats *st)
{
    const struct osink_diff *d = o->diff;
    if (d->n == 0) {
        if (c->verbose)
            cli_msg("%s: identical to %s (%llu bytes)", tname, j->in_name,
                    (unsigned long long)st->out_bytes);
    } else {
        char first[200] = "";
        size_t at = 0;
        for (size_t i = 0; i < d->n && i < 3 && at < sizeof first - 24; i++)
            at += (size_t)snprintf(first + at, sizeof first - at, "%s%llu", i > 0 ? ", " : "",
                                   (unsigned long long)d->r[i].off);
        if (!c->quiet)
            cli_msg("%s: differs from %s: %llu bytes in %zu range%s (first at %s)", tname,
                    j->in_name, (unsigned long long)d->bytes, d->n, d->n == 1 ? "" : "s",
                    first);
        for (size_t i = 0; c->verbose && !c->quiet && i < d->n && (i < 100 || c->verbose > 1);
             i++)
            cli_msg("%s: differs %llu+%llu", tname, (unsigned long long)d->r[i].off,
                    (unsigned long long)d->r[i].len);
    }
    if (o->cmp_size != UINT64_MAX && o->cmp_size > st->out_bytes && c->verbose)
        cli_msg("%s: %llu bytes past the image's end, not compared", tname,
                (unsigned long long)(o->cmp_size - st->out_bytes));
    if (c->bad_map != NULL) {
        char what[300];
        snprintf(what, sizeof what, "%s --compare: where %.100s differs from %.100s", cli_prog,
                 tname, j->in_name);
        (void)cli_badmap_write(c, st->out_bytes, d->r, d->n, what);
    }
    return d->n > 0;
}

void cmd_compare(struct cli *c, const char *path)
{
    const char *tname = c->compare_target;
    struct cli_job j = {.in_name = path, .dir_fd = -1};
    if (strcmp(path, "-") == 0) {
        j.in_name = "stdin";
        j.in_fd = STDIN_FILENO;
        if (fstat(STDIN_FILENO, &j.st) != 0) {
            cli_error(c, "stdin: %s", strerror(errno));
            return;
        }
    } else if (cli_open_input(c, path, &j) != 0) {
        return;
    }
    j.out_name = tname;
    int tfd = open(tname, O_RDONLY | O_CLOEXEC);
    struct osink o;
    struct sp_err err = {0};
    struct stat tst;
    bool differs = false;
    if (tfd < 0 || fstat(tfd, &tst) != 0) {
        cli_error(c, "%s: %s", tname, strerror(errno));
    } else if (cli_badmap_begin(c, &j, &tst) != 0) {
        /* said */
    } else if (osink_open_compare(&o, tfd, &err) != 0) {
        cli_error(c, "%s: %s", tname, err.msg);
    } else {
        struct dec_stats st = {0};
        if (cd_run(c, &j, &o, &st) == 0)
            differs = cd_compare_report(c, &j, tname, &o, &st);
        osink_close(&o);
    }
    if (tfd >= 0)
        close(tfd);
    cli_close_input(&j);
    /* cmp's statuses: 0 the same, 1 different, 2 trouble.  Trouble is any
     * error (the target or the backup unreadable, the backup damaged) or
     * warning (its index unusable), and wins over a difference, as in cmp:
     * the comparison may not be what it seems. */
    c->status = c->status != EXIT_OK ? 2 : differs ? 1 : EXIT_OK;
}
