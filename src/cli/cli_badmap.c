/* cli_badmap.c — --bad-map FILE: the unreadable (or damaged) ranges in GNU
 * ddrescue's mapfile format, so that ddrescue can retry just those.
 *
 * The map covers [0, total) of the image in order, each line "0xPOS 0xSIZE
 * S" with S '+' (finished: read, or not needed: free space and holes
 * count as finished since the image needs nothing from them) or '-' (a bad
 * sector), after the comment header and the status line ddrescue writes
 * ("0xPOS  +  1": finished, pass 1).  Positions are offsets in the image,
 * which are the device's when the backup read it from its start.  So
 *
 *     spigz -d -o disk.img backup.gz
 *     ddrescue -r3 /dev/sdX disk.img spigz.map
 *
 * reads from the failing disk only what the backup lacks, into the image.
 *
 * The map never overwrites what it maps or what spigz reads or writes: it
 * is opened before any work (cli_badmap_begin), refused when its name leads
 * to the input, the output or the compared target (the same file, or the
 * same block device), to anything but a regular file, or to an existing
 * file without -f; it is written under a temporary name beside it and
 * renamed when whole, so a failed or interrupted write leaves nothing.
 * Its failures are errors (status 1): status 2 from --rescue means the
 * backup was made and some sectors could not be read, which a missing map
 * must not be mistaken for.
 */
#include "config.h"
#include "cli.h"
#include "cli_path.h"
#include "io.h"
#include "range.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The map being made: its temporary file in its directory. */
static struct {
    int fd;                  /* the temporary file, -1: none */
    int dfd;                 /* its directory */
    char tmp[NAME_MAX + 1];  /* the temporary name there */
    char base[NAME_MAX + 1]; /* the name it gets */
    bool replace;            /* -f and something is there: ... */
    struct stat was;         /* ... this, which alone is replaced */
} cb_map = {.fd = -1, .dfd = -1};

/* Why the map may not go where d leads, or NULL. */
static const char *cb_refused(const struct cli *c, const struct cli_job *j,
                              const struct stat *tst, const struct cli_dest *d)
{
    struct stat out;
    const struct stat *st = d->exists ? &d->st : NULL;
    if (st != NULL && j != NULL && cli_same_object(&j->st, st))
        return "is the input: the map would overwrite it";
    if (st != NULL && tst != NULL && cli_same_object(tst, st))
        return "is the compared target: the map would overwrite it";
    if (cli_out_is(&d->dir, d->base, st) ||
        (st != NULL && c->to_stdout && fstat(STDOUT_FILENO, &out) == 0 &&
         cli_same_object(&out, st)))
        return "is the output: the map would overwrite it";
    if (st != NULL && S_ISDIR(st->st_mode))
        return "is a directory";
    if (st != NULL && !S_ISREG(st->st_mode))
        return "is not a regular file: a map is not written into a device or FIFO";
    if ((d->exists || d->dangling) && !c->force)
        return "already exists; not overwritten (-f replaces it)";
    return NULL;
}

int cli_badmap_begin(struct cli *c, const struct cli_job *j, const struct stat *tst)
{
    if (c->bad_map == NULL)
        return 0;
    cli_badmap_end();
    struct cli_dest d;
    if (cli_dest_named(c->bad_map, &d) != 0) {
        cli_error(c, "%s: %s", c->bad_map, strerror(errno));
        return -1;
    }
    const char *why = cb_refused(c, j, tst, &d);
    if (why != NULL) {
        cli_error(c, "%s: %s", c->bad_map, why);
        cli_dest_close(&d);
        return -1;
    }
    sigset_t old;
    cli_signals_hold(&old);
    cb_map.fd = cli_tmp_create(d.dfd, d.base, cb_map.tmp, sizeof cb_map.tmp);
    if (cb_map.fd >= 0) {
        mode_t um = umask(0); /* the mode fopen("w") would give */
        umask(um);
        (void)fchmod(cb_map.fd, 0666 & ~um);
        cb_map.dfd = d.dfd;
        d.dfd = -1;
        memcpy(cb_map.base, d.base, sizeof cb_map.base);
        cb_map.replace = d.exists || d.dangling;
        cb_map.was = d.st;
        cli_tmp_track(1, cb_map.dfd, cb_map.tmp);
    }
    cli_signals_release(&old);
    int e = errno;
    cli_dest_close(&d);
    if (cb_map.fd < 0) {
        cli_error(c, "%s: %s", c->bad_map, strerror(e));
        return -1;
    }
    return 0;
}

void cli_badmap_end(void)
{
    if (cb_map.dfd < 0)
        return;
    sigset_t old;
    cli_signals_hold(&old);
    if (cb_map.fd >= 0) {
        close(cb_map.fd);
        (void)unlinkat(cb_map.dfd, cb_map.tmp, 0);
    }
    cli_tmp_untrack(1);
    cli_signals_release(&old);
    close(cb_map.dfd);
    cb_map.fd = cb_map.dfd = -1;
}

/* The map's text, written with write(2) through a buffer: the first error
 * stays in err. */
struct cb_out {
    int fd, err;
    size_t n;
    char b[8192];
};

static void cb_flush(struct cb_out *o)
{
    if (o->err == 0 && io_write(o->fd, o->b, o->n, NULL) != 0)
        o->err = errno;
    o->n = 0;
}

static void cb_put(struct cb_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cb_put(struct cb_out *o, const char *fmt, ...)
{
    if (sizeof o->b - o->n < 512)
        cb_flush(o);
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(o->b + o->n, sizeof o->b - o->n, fmt, ap);
    va_end(ap);
    if (k > 0)
        o->n += (size_t)k < sizeof o->b - o->n ? (size_t)k : sizeof o->b - o->n - 1;
}

static void cb_line(struct cb_out *o, uint64_t pos, uint64_t size, char status)
{
    cb_put(o, "0x%08llX  0x%08llX  %c\n", (unsigned long long)pos, (unsigned long long)size,
           status);
}

/* The mapfile's text into o. */
static void cb_text(struct cb_out *o, uint64_t total, const struct sp_range *bad, size_t n,
                    const char *what)
{
    char when[64] = "";
    time_t now = time(NULL);
    struct tm tm;
    if (localtime_r(&now, &tm) != NULL)
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    cb_put(o, "# Mapfile. Created by %s %s\n# %.300s\n# Start time:   %s\n"
              "# Current time: %s\n# Finished\n",
           PACKAGE_NAME, PACKAGE_VERSION, what, when, when);
    cb_put(o, "# current_pos  current_status  current_pass\n");
    cb_put(o, "0x%08llX     +               1\n", (unsigned long long)total);
    cb_put(o, "#      pos        size  status\n");
    uint64_t at = 0;
    for (size_t i = 0; i < n && bad[i].off < total; i++) {
        uint64_t end = bad[i].len > total - bad[i].off ? total : bad[i].off + bad[i].len;
        if (bad[i].off > at)
            cb_line(o, at, bad[i].off - at, '+');
        if (end > bad[i].off)
            cb_line(o, bad[i].off, end - bad[i].off, '-');
        at = end;
    }
    if (at < total)
        cb_line(o, at, total - at, '+');
    cb_flush(o);
}

bool cli_badmap_write(struct cli *c, uint64_t total, const struct sp_range *bad, size_t n,
                      const char *what)
{
    if (cb_map.fd < 0) { /* a path that did not call cli_badmap_begin: a bug */
        cli_error(c, "%s: the map was not opened before the run: not written", c->bad_map);
        return false;
    }
    struct cb_out *o = calloc(1, sizeof *o);
    if (o == NULL) {
        cli_error(c, "%s: out of memory", c->bad_map);
        cli_badmap_end();
        return false;
    }
    o->fd = cb_map.fd;
    cb_text(o, total, bad, n, what);
    int e = o->err;
    free(o);
    if (e == 0 && fsync(cb_map.fd) != 0)
        e = errno;
    if (close(cb_map.fd) != 0 && e == 0)
        e = errno;
    cb_map.fd = -1;
    sigset_t old;
    cli_signals_hold(&old);
    if (e == 0 && cli_rename_at(cb_map.dfd, cb_map.tmp, cb_map.base,
                                cb_map.replace ? &cb_map.was : NULL) != 0)
        e = errno;
    if (e != 0)
        (void)unlinkat(cb_map.dfd, cb_map.tmp, 0);
    cli_tmp_untrack(1);
    cli_signals_release(&old);
    close(cb_map.dfd);
    cb_map.dfd = -1;
    if (e == EEXIST)
        cli_error(c, "%s already exists; not overwritten (-f replaces it)", c->bad_map);
    else if (e != 0)
        cli_error(c, "%s: %s", c->bad_map, strerror(e));
    return e == 0;
}

/* A range whose end is unknown (unz.h: len = UINT64_MAX - off): the input
 * ended, no block was found after damage, or the output is shifted from
 * there.  Ranges are sorted and disjoint: only the last can be one. */
static bool cb_open_ended(const struct sp_range *r)
{
    return r->len == UINT64_MAX - r->off;
}

static void cb_say(struct cli *c, bool warn, const char *name, const char *line)
{
    if (warn)
        cli_warn(c, "%s: %s", name, line);
    else
        cli_msg("%s: %s", name, line);
}

void cli_bad_report(struct cli *c, const char *name, const struct sp_range *bad, size_t n,
                    const char *what, bool warn)
{
    if (n == 0 || (!warn && c->verbose == 0))
        return;
    bool open = cb_open_ended(&bad[n - 1]);
    size_t known = n - open;
    uint64_t sum = 0;
    for (size_t i = 0; i < known; i++)
        sum += bad[i].len;
    char line[320];
    if (known > 0) {
        snprintf(line, sizeof line, "%llu bytes in %zu range%s %s (first at offset %llu)",
                 (unsigned long long)sum, known, known == 1 ? "" : "s", what,
                 (unsigned long long)bad[0].off);
        cb_say(c, warn, name, line);
    }
    if (open) { /* its length is not a number to print */
        snprintf(line, sizeof line, "%severything from offset %llu on is damaged or "
                 "missing: its length is unknown", known > 0 ? "and " : "",
                 (unsigned long long)bad[known].off);
        cb_say(c, warn, name, line);
    }
    if (c->verbose == 0 || c->quiet)
        return;
    size_t shown = n < 100 || c->verbose > 1 ? n : 100;
    for (size_t i = 0; i < shown; i++) {
        if (cb_open_ended(&bad[i]))
            cli_msg("%s: bad %llu+ (to the end, length unknown)", name,
                    (unsigned long long)bad[i].off);
        else
            cli_msg("%s: bad %llu+%llu", name, (unsigned long long)bad[i].off,
                    (unsigned long long)bad[i].len);
    }
    if (shown < n)
        cli_msg("%s: ... %zu more (-vv lists all, --bad-map writes them)", name, n - shown);
}

struct sp_range *cli_ranges_union(const struct sp_range *a, size_t na, const struct sp_range *b,
                                  size_t nb, size_t *n)
{
    *n = na + nb;
    if (*n == 0)
        return NULL;
    struct sp_range *r = malloc(*n * sizeof *r);
    if (r == NULL)
        return NULL;
    if (na > 0)
        memcpy(r, a, na * sizeof *r);
    if (nb > 0)
        memcpy(r + na, b, nb * sizeof *r);
    *n = sp_ranges_normalize(r, *n);
    return r;
}
