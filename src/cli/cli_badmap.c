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
 */
#include "config.h"
#include "cli.h"
#include "range.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void cb_line(FILE *f, uint64_t pos, uint64_t size, char status)
{
    fprintf(f, "0x%08llX  0x%08llX  %c\n", (unsigned long long)pos, (unsigned long long)size,
            status);
}

bool cli_badmap_write(struct cli *c, const char *path, uint64_t total,
                      const struct sp_range *bad, size_t n, const char *what)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        cli_error(c, "%s: %s", path, strerror(errno));
        return false;
    }
    char when[64] = "";
    time_t now = time(NULL);
    struct tm tm;
    if (localtime_r(&now, &tm) != NULL)
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    fprintf(f, "# Mapfile. Created by %s %s\n# %s\n# Start time:   %s\n"
               "# Current time: %s\n# Finished\n",
            PACKAGE_NAME, PACKAGE_VERSION, what, when, when);
    fprintf(f, "# current_pos  current_status  current_pass\n");
    fprintf(f, "0x%08llX     +               1\n", (unsigned long long)total);
    fprintf(f, "#      pos        size  status\n");
    uint64_t at = 0;
    for (size_t i = 0; i < n && bad[i].off < total; i++) {
        uint64_t end = bad[i].len > total - bad[i].off ? total : bad[i].off + bad[i].len;
        if (bad[i].off > at)
            cb_line(f, at, bad[i].off - at, '+');
        if (end > bad[i].off)
            cb_line(f, bad[i].off, end - bad[i].off, '-');
        at = end;
    }
    if (at < total)
        cb_line(f, at, total - at, '+');
    bool ok = fflush(f) == 0 && !ferror(f) && fsync(fileno(f)) == 0;
    int e = errno;
    if (fclose(f) != 0 && ok) {
        ok = false;
        e = errno;
    }
    if (!ok)
        cli_error(c, "%s: %s", path, strerror(e));
    return ok;
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
