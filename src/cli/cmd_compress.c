/* cmd_compress.c — compress one input, gzip's way: FILE -> FILE.gz (input
 * removed once the output is complete), -c, -o OUT, stdin. */
#include "config.h"
#include "cli.h"
#include "cli_path.h"
#include "cli_manifest.h"
#include "cli_progress.h"
#include "cli_report.h"
#include "compress.h"
#include "lay.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void cc_report(struct cli *c, const struct cli_job *j, const struct cmp_stats *s,
                      const char *what)
{
    struct cli_report r = {.mode = MODE_COMPRESS, .in_name = j->in_name,
                           .out_name = j->out_name, .in_bytes = s->in_bytes,
                           .out_bytes = s->out_bytes, .zero_bytes = s->zero_bytes,
                           .hole_bytes = s->hole_bytes, .free_bytes = s->free_bytes,
                           .bad_bytes = s->bad_bytes, .seconds = j->seconds};
    cli_report(c, &r, j->displayed);
    if (!c->verbose)
        return;
    /* gzip's ratio: deflate bytes only, not its header and trailer. */
    double deflated = (double)(s->out_bytes - s->frame_bytes);
    double pct = s->in_bytes == 0 ? 0.0
        : 100.0 * ((double)s->in_bytes - deflated) / (double)s->in_bytes;
    if (j->in_path == NULL) { /* gzip -v from stdin: the ratio alone */
        fprintf(stderr, "%5.1f%%\n", pct);
        return;
    }
    fprintf(stderr, "%s:\t%5.1f%% -- %s %s", j->in_name, pct, what, j->out_name);
    if (c->verbose > 1)
        fprintf(stderr, " (%llu bytes in, %llu out, %llu zero of which %llu holes, %llu free)",
                (unsigned long long)s->in_bytes, (unsigned long long)s->out_bytes,
                (unsigned long long)s->zero_bytes, (unsigned long long)s->hole_bytes,
                (unsigned long long)s->free_bytes);
    fputc('\n', stderr);
}

/* gzip stores the modification time when it fits MTIME's 32 bits, and
 * warns (status 2) when it does not: 0 is stored then, "no time". */
static uint32_t cc_mtime(struct cli *c, const struct cli_job *j)
{
    time_t t = j->st.st_mtime;
    if (t <= 0 || (uint64_t)t > UINT32_MAX) { /* 0 means "no time" in the header */
        cli_warn(c, "%s: warning: file timestamp out of range for gzip format", j->in_name);
        return 0;
    }
    return (uint32_t)t;
}

/* --rescue: what could not be read, reported (status 2) and mapped. */
static void cc_bad(struct cli *c, const struct cli_job *j, const struct cmp_stats *st)
{
    cli_bad_report(c, j->in_name, st->bad, st->nbad,
                   "could not be read and are zeros in the backup", true);
    if (c->bad_map != NULL) {
        char what[300];
        snprintf(what, sizeof what, "%s --rescue: the sectors of %.200s that could not be read",
                 cli_prog, j->in_name);
        (void)cli_badmap_write(c, st->in_bytes, st->bad, st->nbad, what);
    }
}

/* A plain backup (no --free=zero, which refuses it) of a disk, a partition
 * or an image file holding a filesystem mounted read-write: the bytes
 * change while they are read, so the image may not be one the filesystem
 * was ever in.  partclone refuses, dd says nothing; spigz backs it up, as
 * asked, and says so: a warning naming the mount, status 2.  Regular files
 * under 1 MiB hold no filesystem worth a loop mount, and are not looked
 * at: gzip's use on many small files pays nothing for this. */
#define CC_IMAGE_MIN ((off_t)1 << 20)
static void cc_mounted(struct cli *c, const struct cli_job *j)
{
    if (c->free_zero ||
        !(S_ISBLK(j->st.st_mode) || (S_ISREG(j->st.st_mode) && j->st.st_size >= CC_IMAGE_MIN)))
        return;
    char why[600];
    if (lay_mounted_rw(j->in_fd, why, sizeof why))
        cli_warn(c, "%s: warning: %s: the backup may be inconsistent (the filesystem changes "
                    "while it is read; unmount it or mount it read-only first)",
                 j->in_name, why);
}

/* Run the core on one input; prints its error.  Returns 0 or -1. */
static int cc_run(struct cli *c, struct cli_job *j, struct cmp_stats *st)
{
    struct cmp_opts o;
    cmp_opts_default(&o);
    o.level = c->level;
    o.threads = c->threads;
    o.chunk = (size_t)c->chunk_kib << 10;
    o.zmin = c->zmin_kib << 10;
    o.index = c->index;
    o.rsyncable = c->rsyncable;
    /* Name and time for regular files only, not for devices or pipes;
     * stdin redirected from a file gets its time (not its name), as gzip.
     * -n leaves out both, -m the time only (MTIME 0), as gzip. */
    if (S_ISREG(j->st.st_mode)) {
        o.name = c->store_name && j->in_path != NULL ? cli_base(j->in_path) : NULL;
        o.mtime = c->store_time ? cc_mtime(c, j) : 0;
    }
    cc_mounted(c, j);
    struct lay_map map;
    struct cli_notes notes = {0};
    if (cli_free_map(c, j, &map, &notes) != 0) {
        cli_notes_free(&notes);
        return -1;
    }
    struct mf man = {0};
    if (c->index && cli_manifest_make(c, j, &map, &man) != 0) {
        cli_error(c, "%s: out of memory for the manifest", j->in_name);
        lay_free(&map);
        cli_notes_free(&notes);
        return -1;
    }
    o.manifest = c->index ? &man : NULL;
    o.zero_ranges = map.free;
    o.nzero_ranges = map.nfree;
    o.notes = (const char *const *)notes.v;
    o.nnotes = notes.n;
    o.rescue = c->rescue;
    o.nocache = c->nocache;
    struct sp_err err = {0};
    struct sp_progress prog = {.in_total = c->size != 0 ? c->size : cli_prog_total(j->in_fd),
                               .skip_total = map.free_bytes};
    double t0 = cli_report_now();
    struct cli_prog *shown =
        cli_prog_start(cli_progress_wanted(c), j->in_name, &prog, CLI_PROG_COMPRESS);
    o.progress = shown != NULL ? &prog : NULL;
    int rc = cmp_run(j->in_fd, j->out_fd, &o, st, &err);
    cli_prog_stop(shown);
    j->seconds = cli_report_now() - t0;
    j->displayed = shown != NULL;
    lay_free(&map);
    mf_free(&man);
    cli_notes_free(&notes);
    if (rc != 0) {
        const char *who = err.kind == SP_ERR_WRITE ? j->out_name : j->in_name;
        cli_error(c, "%s: %s", who, err.msg);
        cli_stop_on(c, &err);
        return -1;
    }
    if (st->size_changed)
        cli_warn(c, "%s: file size changed while compressing; input kept", j->in_name);
    cc_bad(c, j, st);
    return 0;
}

static void cc_to_file(struct cli *c, struct cli_job *j, const char *out_path, bool remove)
{
    j->out_name = out_path;
    bool named = c->output != NULL;
    if (cli_out_is_input(c, j, out_path, named))
        return;
    if ((j->out_fd = cli_out_create(c, j, out_path, named)) < 0)
        return;
    struct cmp_stats st = {0};
    bool ok = cli_badmap_begin(c, j, NULL) == 0 && cc_run(c, j, &st) == 0;
    /* A file that changed while read, or could not all be read, holds
     * bytes the output lacks. */
    remove = remove && ok && !st.size_changed && st.nbad == 0;
    if (cli_out_finish(c, j, ok, remove, NULL))
        cc_report(c, j, &st, remove ? "replaced with" : "created");
    free(st.bad);
}

static void cc_to_stdout(struct cli *c, struct cli_job *j)
{
    j->out_name = "stdout";
    j->out_fd = STDOUT_FILENO;
    if (cli_same_file(j, STDOUT_FILENO)) {
        cli_same_error(c, j->in_name, &j->st);
        return;
    }
    struct cmp_stats st = {0};
    if (cli_badmap_begin(c, j, NULL) == 0 && cc_run(c, j, &st) == 0)
        cc_report(c, j, &st, "replaced with");
    free(st.bad);
}

/* The suffix that marks name as compressed already, as gzip sees it: the
 * chosen one, or one of gzip's own. */
static const char *cc_compressed_suffix(const struct cli *c, const char *name)
{
    static const char *const known[] = {".gz", ".z", ".taz", ".tgz", "-gz", "-z", "_z"};
    if (cli_has_suffix(name, c->suffix))
        return c->suffix;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (cli_has_suffix(name, known[i]))
            return known[i];
    return NULL;
}

static void cc_stdin(struct cli *c)
{
    struct cli_job j = {.in_name = "stdin", .in_fd = STDIN_FILENO, .dir_fd = -1};
    if (fstat(STDIN_FILENO, &j.st) != 0) {
        cli_error(c, "stdin: %s", strerror(errno));
        return;
    }
    if (c->output != NULL)
        cc_to_file(c, &j, c->output, false);
    else
        cc_to_stdout(c, &j);
}

void cmd_compress(struct cli *c, const char *path)
{
    if (path == NULL || strcmp(path, "-") == 0) {
        cc_stdin(c);
        return;
    }
    /* The input's own checks first (missing, a directory, links, set-ID
     * bits), then its name, as gzip: -f compresses FILE.gz all the same
     * (FILE.gz.gz). */
    struct cli_job j = {.in_name = path, .dir_fd = -1};
    if (cli_open_input(c, path, &j) != 0)
        return;
    const char *suf = cli_input_stays(c) || c->force ? NULL : cc_compressed_suffix(c, path);
    if (suf != NULL) {
        /* gzip reports this (with the name's own spelling of the suffix),
         * inside a directory given with -r only with -v, but does not count
         * it as a warning. */
        if (c->verbose || (!c->quiet && !c->walking))
            cli_msg("%s already has %s suffix -- unchanged", path,
                    path + strlen(path) - strlen(suf));
        cli_close_input(&j);
        return;
    }
    if (c->to_stdout) {
        cc_to_stdout(c, &j);
    } else if (c->output != NULL) {
        cc_to_file(c, &j, c->output, false);
    } else {
        size_t n = strlen(path) + strlen(c->suffix) + 1;
        char *out = malloc(n);
        if (out == NULL) {
            cli_error(c, "%s: out of memory", path);
        } else {
            snprintf(out, n, "%s%s", path, c->suffix);
            cc_to_file(c, &j, out, !c->keep);
            free(out);
        }
    }
    cli_close_input(&j);
}
