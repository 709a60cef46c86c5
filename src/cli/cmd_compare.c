/* cmd_compare.c — --compare BACKUP TARGET: decode the backup against a
 * file, device or FIFO (osink's compare mode) and report where they
 * differ, with cmp's statuses. */
#include "config.h"
#include "cli.h"
#include "cmd_decompress.h"
#include "dec.h"
#include "cli_report.h"
#include "text.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What the comparison found: the differences the backup answers for,
 * and those inside what its free map calls free (--free=zero: the backup
 * holds zeros there by design, the disk whatever its filesystem left). */
struct cc_found {
    const struct sp_range *r;
    size_t n;
    uint64_t bytes;
    uint64_t free_bytes;    /* bytes the free map calls free: not compared */
    uint64_t free_differ;   /* of the differences, bytes inside them */
    bool free_map;          /* the backup's free map was applied */
    bool free_unmapped;     /* a --free=zero backup without its map */
};

/* --format=json: one object for the comparison. */
static void cd_compare_json(const struct cli_job *j, const char *tname,
                            const struct dec_stats *st, const struct cc_found *f, int status)
{
    fputs("{\"backup\":", stdout);
    cli_json_string(stdout, j->in_name);
    fputs(",\"target\":", stdout);
    cli_json_string(stdout, tname);
    printf(",\"status\":%d,\"identical\":%s,\"compared\":%llu,\"differing_bytes\":%llu,"
           "\"differing_ranges\":%zu,\"first\":[", status, status == 0 ? "true" : "false",
           (unsigned long long)(st->out_bytes - f->free_bytes), (unsigned long long)f->bytes, f->n);
    for (size_t i = 0; i < f->n && i < 100; i++)
        printf("%s[%llu,%llu]", i ? "," : "", (unsigned long long)f->r[i].off,
               (unsigned long long)f->r[i].len);
    printf("],\"free_not_compared\":%llu,\"free_differing\":%llu,\"free_map\":%s}\n",
           (unsigned long long)f->free_bytes, (unsigned long long)f->free_differ,
           f->free_map ? "true" : f->free_unmapped ? "false" : "null");
}

/* The differences found, as a message, -v's list and the map.  True when
 * there are any. */
static bool cd_compare_report(struct cli *c, const struct cli_job *j, const char *tname,
                              const struct osink *o, const struct dec_stats *st,
                              const struct cc_found *f)
{
    char a[TXT_SIZE_LEN], b[TXT_SIZE_LEN];
    if (f->free_map && !c->quiet && c->format == FORMAT_TEXT)
        cli_msg("%s: %s that %s's free map calls free (--free=zero: zeros in the backup) not "
                "compared%s%s%s", tname, txt_size(a, sizeof a, (double)f->free_bytes), j->in_name,
                f->free_differ > 0 && c->verbose ? "; " : "",
                f->free_differ > 0 && c->verbose ? txt_size(b, sizeof b, (double)f->free_differ)
                                                 : "",
                f->free_differ > 0 && c->verbose ? " of it not zero on the target" : "");
    if (f->free_unmapped && !c->quiet)
        cli_msg("%s: %s was made with --free=zero but its free map was not kept: free blocks "
                "are compared too (they are zeros in the backup)", tname, j->in_name);
    if (c->format != FORMAT_TEXT) {
        /* said by the JSON object */
    } else if (f->n == 0) {
        if (c->verbose)
            cli_msg("%s: identical to %s (%llu bytes%s)", tname, j->in_name,
                    (unsigned long long)st->out_bytes, f->free_map ? ", free blocks aside" : "");
    } else {
        char first[200] = "";
        size_t at = 0;
        for (size_t i = 0; i < f->n && i < 3 && at < sizeof first - 24; i++)
            at += (size_t)snprintf(first + at, sizeof first - at, "%s%llu", i > 0 ? ", " : "",
                                   (unsigned long long)f->r[i].off);
        if (!c->quiet)
            cli_msg("%s: differs from %s: %llu bytes in %zu range%s (first at %s)", tname,
                    j->in_name, (unsigned long long)f->bytes, f->n, f->n == 1 ? "" : "s",
                    first);
        for (size_t i = 0; c->verbose && !c->quiet && i < f->n && (i < 100 || c->verbose > 1);
             i++)
            cli_msg("%s: differs %llu+%llu", tname, (unsigned long long)f->r[i].off,
                    (unsigned long long)f->r[i].len);
    }
    if (o->cmp_size != UINT64_MAX && o->cmp_size > st->out_bytes && c->verbose &&
        c->format == FORMAT_TEXT)
        cli_msg("%s: %llu bytes past the image's end, not compared", tname,
                (unsigned long long)(o->cmp_size - st->out_bytes));
    if (c->bad_map != NULL) {
        char what[300];
        snprintf(what, sizeof what, "%s --compare: where %.100s differs from %.100s", cli_prog,
                 tname, j->in_name);
        (void)cli_badmap_write(c, st->out_bytes, f->r, f->n, what);
    }
    return f->n > 0;
}

/* The differences less the free map's ranges (in the output's offsets:
 * the content's less --range's start).  0, or -1 out of memory. */
static int cd_compare_found(const struct cli *c, const struct osink_diff *d,
                            const struct dec_stats *st, struct cc_found *f,
                            struct sp_range **owned)
{
    *f = (struct cc_found){.r = d->r, .n = d->n, .bytes = d->bytes,
                           .free_unmapped = st->free_unmapped};
    *owned = NULL;
    if (st->free == NULL)
        return 0;
    uint64_t origin = c->range ? c->range_off : 0, end = origin + st->out_bytes;
    for (size_t i = 0; i < st->nfree; i++) { /* the free bytes inside the output */
        uint64_t a = st->free[i].off > origin ? st->free[i].off : origin;
        uint64_t z = st->free[i].off + st->free[i].len < end ? st->free[i].off + st->free[i].len
                                                             : end;
        f->free_bytes += z > a ? z - a : 0;
    }
    size_t n;
    if (sp_ranges_subtract(d->r, d->n, st->free, st->nfree, origin, owned, &n,
                           &f->free_differ) != 0)
        return -1;
    f->r = *owned;
    f->n = n;
    f->bytes = d->bytes - f->free_differ;
    f->free_map = true;
    return 0;
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
    bool differs = false, ran = false;
    struct cc_found found = {0};
    if (tfd < 0 || fstat(tfd, &tst) != 0) {
        cli_error(c, "%s: %s", tname, strerror(errno));
    } else if (cli_badmap_begin(c, &j, &tst) != 0) {
        /* said */
    } else if (osink_open_compare(&o, tfd, &err) != 0) {
        cli_error(c, "%s: %s", tname, err.msg);
    } else {
        struct dec_stats st = {0};
        struct cc_found f;
        struct sp_range *owned = NULL;
        if (cd_run(c, &j, &o, &st) != 0) {
            /* said */
        } else if (cd_compare_found(c, o.diff, &st, &f, &owned) != 0) {
            cli_error(c, "%s: out of memory", tname);
        } else {
            differs = cd_compare_report(c, &j, tname, &o, &st, &f);
            ran = true;
            found = f;
        }
        if (ran && c->format == FORMAT_JSON)
            cd_compare_json(&j, tname, &st, &found,
                            c->status != EXIT_OK ? 2 : differs ? 1 : EXIT_OK);
        free(owned);
        free(st.free);
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
