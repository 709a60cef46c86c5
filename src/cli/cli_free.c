/* cli_free.c — --free=zero: the input's layout map before it is read, and
 * what spigz says of it.
 *
 * Each region read whole because something is inconsistent or unclean is a
 * warning (status 2: the backup is whole, but not the one asked for); one
 * read whole because spigz does not read its filesystem's map (btrfs, LVM,
 * LUKS, no filesystem) is said with -v only.  -v also gives each region's
 * filesystem, label, size, used and skipped bytes.
 */
#include "config.h"
#include "cli.h"
#include "cli_progress.h"
#include "io.h"
#include "lay.h"
#include "text.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cli_notes_free(struct cli_notes *nt)
{
    for (size_t i = 0; i < nt->n; i++)
        free(nt->v[i]);
    nt->n = 0;
}

void cli_notes_say(const struct cli *c, const char *name, char *const *notes, size_t n)
{
    for (size_t i = 0; i < n && !c->quiet; i++)
        cli_msg("%s: when this backup was made: %s", name, notes[i]);
}

/* A warning about the input (status 2), kept as a note too. */
static void cf_warn(struct cli *c, const struct cli_job *j, struct cli_notes *nt,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void cf_warn(struct cli *c, const struct cli_job *j, struct cli_notes *nt,
                    const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    txt_clean(text); /* names and labels from the disk: printable, and a note */
    cli_warn(c, "%s: %s", j->in_name, text);
    if (nt != NULL && nt->n < sizeof nt->v / sizeof nt->v[0] && (nt->v[nt->n] = strdup(text)))
        nt->n++;
}

#define CF_DOUBTS 16 /* regions read whole for a doubt, said one by one */

static const char *cf_bytes(uint64_t v, char *buf, size_t n)
{
    cli_prog_size(buf, n, (double)v);
    return buf;
}

/* The region's name in messages: "partition 2 (gpt, type ..., at N)", or
 * "the whole input"; with readings that disagree, which reading. */
static void cf_region(const struct lay_map *m, const struct lay_part *p, char *buf, size_t n)
{
    const struct lay_layout *L = p->layout < m->nlayouts ? &m->layouts[p->layout] : NULL;
    char who[32] = "";
    if (m->nlayouts > 1)
        snprintf(who, sizeof who, "reading %u: ", p->layout + 1);
    if (L == NULL || L->table[0] == '\0' || p->number == 0)
        snprintf(buf, n, "%sthe whole input", who);
    else
        snprintf(buf, n, "%spartition %u (%s, type %s, at %llu)", who, p->number, L->table,
                 p->ptype, (unsigned long long)p->off);
}

/* Readings of the layout that disagree: a warning naming them. */
static void cf_layouts(struct cli *c, const struct cli_job *j, const struct lay_map *m,
                       struct cli_notes *nt)
{
    if (m->nlayouts < 2)
        return;
    char list[1024] = "";
    size_t at = 0;
    for (size_t i = 0; i < m->nlayouts && at < sizeof list; i++) {
        const struct lay_layout *L = &m->layouts[i];
        int w = snprintf(list + at, sizeof list - at, "%s%zu. %s (%zu %s)", i ? "; " : "", i + 1,
                         L->name, L->nparts, L->table[0] == '\0' ? "region" :
                         L->nparts == 1 ? "partition" : "partitions");
        at += w > 0 ? (size_t)w : 0;
    }
    cf_warn(c, j, nt, "its layout reads %zu ways: %s.  Only what every reading calls free is "
                      "skipped; the rest is read (a layout left from before a repartitioning "
                      "is the common cause: wipefs lists the signatures)", m->nlayouts, list);
}

/* What one region, or one volume in it (r names it), holds and why. */
static void cf_part(struct cli *c, const struct cli_job *j, const char *r,
                    const struct lay_part *p, struct cli_notes *nt, size_t *doubts, size_t *more)
{
    char a[32], b[32], d[32], fs[100];
    if (p->fs[0] != '\0')
        snprintf(fs, sizeof fs, "%s%s%s%s", p->fs, p->label[0] ? " \"" : "", p->label,
                 p->label[0] ? "\"" : "");
    else
        snprintf(fs, sizeof fs, "no filesystem");
    if (p->mapped && c->verbose)
        cli_msg("%s: %s: %s, %s, %s used, %s skipped as free", j->in_name, r, fs,
                cf_bytes(p->len, a, sizeof a), cf_bytes(p->used, b, sizeof b),
                cf_bytes(p->len - p->used, d, sizeof d));
    /* --exclude=volatile: what it saved, said unasked (the user chose
     * to leave bytes out); kept when another file names them */
    if (p->mapped && p->excluded > 0 && !c->quiet)
        cli_msg("%s: %s: %s of Windows' volatile files (%s) stored as zeros "
                "(--exclude=volatile)", j->in_name, r, cf_bytes(p->excluded, a, sizeof a),
                p->excl_names);
    if (p->mapped && p->excl_refused)
        cf_warn(c, j, nt, "%s: %s: its volatile files (%s) share clusters with other "
                          "files (run chkdsk): kept as they are", r, fs, p->excl_names);
    if (p->mapped && p->disputed > 0)
        cf_warn(c, j, nt, "%s: %s: its allocation map calls free %s its files use, read as "
                          "data: the filesystem is damaged (run its fsck)", r, fs,
                cf_bytes(p->disputed, a, sizeof a));
    /* a forged table can list hundreds of doubtful entries: the first
     * CF_DOUBTS are said one by one (all with -vv), the rest counted */
    if (!p->mapped && p->doubt && ((*doubts)++ < CF_DOUBTS || c->verbose > 1))
        cf_warn(c, j, nt, "%s: %s, read whole: %s", r, fs, p->why);
    else if (!p->mapped && p->doubt)
        (*more)++;
    else if (!p->mapped && c->verbose)
        cli_msg("%s: %s: %s, %s, read whole: %s", j->in_name, r, fs,
                cf_bytes(p->len, a, sizeof a), p->why);
}

static void cf_report(struct cli *c, const struct cli_job *j, const struct lay_map *m,
                      struct cli_notes *nt)
{
    cf_layouts(c, j, m, nt);
    if (m->forced[0] != '\0')
        cf_warn(c, j, nt, "mapped while it may change (--force-mounted): %s", m->forced);
    char r[160], rv[320], a[32], b[32];
    size_t doubts = 0, more = 0;
    for (size_t i = 0; i < m->nparts; i++) {
        const struct lay_part *p = &m->parts[i];
        cf_region(m, p, r, sizeof r);
        cf_part(c, j, r, p, nt, &doubts, &more);
        for (size_t k = p->vol_first; k < p->vol_first + p->nvols && k < m->nvols; k++) {
            snprintf(rv, sizeof rv, "%s: LV %s", r, m->vols[k].vol);
            cf_part(c, j, rv, &m->vols[k], nt, &doubts, &more);
        }
    }
    if (more > 0)
        cf_warn(c, j, nt, "%zu more regions read whole for a doubt (-vv lists them)", more);
    if (c->verbose > 1)
        cli_msg("%s: %s free in %zu ranges; %s of metadata read to find it", j->in_name,
                cf_bytes(m->free_bytes, a, sizeof a), m->nfree, cf_bytes(m->meta_read, b, sizeof b));
}

int cli_free_map(struct cli *c, const struct cli_job *j, struct lay_map *m,
                 struct cli_notes *notes)
{
    memset(m, 0, sizeof *m);
    if (!c->free_zero)
        return 0;
    struct stat st;
    off_t base = -1;
    uint64_t size = 0;
    if (fstat(j->in_fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)))
        base = lseek(j->in_fd, 0, SEEK_CUR);
    uint64_t bytes;
    if (base >= 0 && io_size(j->in_fd, &st, &bytes) == 0 && bytes >= (uint64_t)base)
        size = bytes - (uint64_t)base;
    else
        base = -1;
    if (base < 0) {
        cli_error(c, "%s: --free=zero needs a seekable input (a disk, a partition or an image "
                     "file), not a pipe", j->in_name);
        return -1;
    }
    struct lay_opts lo = {.force_mounted = c->force_mounted,
                          .exclude_volatile = c->exclude_volatile};
    struct sp_err err = {0};
    if (lay_build(j->in_fd, (uint64_t)base, size, &lo, m, &err) != 0) {
        cli_error(c, "%s: --free=zero: %s", j->in_name, err.msg);
        cli_stop_on(c, &err);
        return -1;
    }
    cf_report(c, j, m, notes);
    return 0;
}
