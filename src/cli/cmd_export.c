/* cmd_export.c — --export-index=FORMAT FILE: write a spigz file's index in
 * another tool's format (src/core/xidx.h, doc/FORMAT.md section 6), so that
 * gztool and Python's indexed_gzip (and what imports their indexes) seek in
 * the backup without decoding it to build their own.
 *
 * The index goes to the name those tools look for by default: FILE.gzi for
 * gztool (FILE.gz -> FILE.gzi, as gztool names it), FILE.gzidx for
 * indexed_gzip (which has no default: FILE.gz -> FILE.gzidx), or to -o OUT,
 * or to stdout with -c.  An existing index is kept without -f, as any
 * output; a half-written one never stays (cli_out_create's temporary name);
 * an output that is the input itself (-o, or stdout appending to it) is
 * refused.
 * A spigz file with a valid index that starts the file exports its pieces
 * (the tools count offsets from the file's first byte).  Any other gzip file
 * (gzip's, pigz's, several joined, a spigz file after other members)
 * exports its gzip index (restore/gzx.h: the one saved beside it as
 * FILE.gz.gzx when it matches, else built by decoding the file once, in
 * memory), windows and all.  Anything else is an error naming the file and
 * the reason, status 1. */
#include "config.h"
#include "cli.h"
#include "cli_gzx.h"
#include "gzx.h"
#include "idx.h"
#include "xidx.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* FILE.gz -> FILE.gzi (gztool), FILE.gzidx (indexed_gzip); a name without
 * the suffix gets the index's added.  malloc'd, or NULL. */
static char *ce_index_name(const struct cli *c, const char *path)
{
    const char *add = c->export_fmt == XIDX_GZTOOL ? ".gzi" : ".gzidx";
    size_t n = strlen(path);
    if (cli_has_suffix(path, c->suffix))
        n -= strlen(c->suffix);
    char *out = malloc(n + strlen(add) + 1);
    if (out != NULL)
        snprintf(out, n + strlen(add) + 1, "%.*s%s", (int)n, path, add);
    return out;
}

/* The gzip index of the input open on j (a regular file read from its
 * start): the saved one beside it if it matches, else built.  0, or -1
 * (printed). */
static int ce_gzx(struct cli *c, const struct cli_job *j, struct gzx **g)
{
    struct sp_err err = {0};
    struct cli_gzx place;
    struct vol_opts o = {0};
    char why[200];
    if (j->in_fd != STDIN_FILENO && cli_gzx_place(j->in_name, c->index_file, &place, &o) == 0) {
        int r = o.idx_name == NULL ? 0 : gzx_load(j->in_fd, NULL, o.idx_dirfd, o.idx_name, g,
                                                 why, sizeof why, &err);
        cli_gzx_done(&place);
        if (r == 1)
            return 0;
        if (r < 0) {
            cli_error(c, "%s: %s", j->in_name, err.msg);
            return -1;
        }
    }
    if (gzx_build(j->in_fd, NULL, g, &err) == 0)
        return 0;
    if (err.kind == SP_ERR_FORMAT)
        cli_error(c, "%s: no index to export (%s)", j->in_name, err.msg);
    else
        cli_error(c, "%s: %s", j->in_name, err.msg);
    return -1;
}

/* The index of the input open on j: a spigz index starting the file into
 * x, else a gzip index into *g (gzx.h).  0, or -1 (printed). */
static int ce_load(struct cli *c, const struct cli_job *j, struct idx *x, struct gzx **g,
                   uint64_t *size)
{
    struct stat st;
    off_t here = lseek(j->in_fd, 0, SEEK_CUR);
    *g = NULL;
    if (fstat(j->in_fd, &st) != 0 || !S_ISREG(st.st_mode) || here < 0) {
        cli_error(c, "%s: not a regular file: an index is exported from a gzip file", j->in_name);
        return -1;
    }
    *size = (uint64_t)st.st_size;
    char why[160];
    struct sp_err err = {0};
    int r = idx_load(j->in_fd, (uint64_t)here, (uint64_t)st.st_size, x, why, sizeof why, &err);
    if (r < 0) {
        cli_error(c, "%s: %s", j->in_name, err.msg);
        return -1;
    }
    if (r == 1 && x->base == 0)
        return 0;
    if (r == 1)
        idx_free(x); /* members before the data member: the whole file's gzip index */
    if (here != 0) {
        cli_error(c, "%s: no index to export (%s)", j->in_name,
                  "the input does not start at the file's first byte");
        return -1;
    }
    return ce_gzx(c, j, g);
}

/* Write x (or g) into j->out_fd; prints the error. */
static bool ce_write(struct cli *c, const struct cli_job *j, const struct idx *x,
                     const struct gzx *g, uint64_t size)
{
    struct sp_err err = {0};
    int rc = g != NULL ? xidx_write_gzx(g, size, c->export_fmt, j->out_fd, &err)
                       : xidx_write(x, size, c->export_fmt, j->out_fd, &err);
    if (rc == 0)
        return true;
    cli_error(c, "%s: %s", err.kind == SP_ERR_WRITE ? j->out_name : j->in_name, err.msg);
    return false;
}

static void ce_export(struct cli *c, struct cli_job *j)
{
    struct idx x;
    struct gzx *g;
    uint64_t size;
    if (ce_load(c, j, &x, &g, &size) != 0)
        return;
    char *name = NULL;
    bool named = c->output != NULL;
    if (c->to_stdout) {
        j->out_name = "stdout";
        j->out_fd = STDOUT_FILENO;
        if (cli_same_file(j, STDOUT_FILENO))
            cli_same_error(c, j->in_name, &j->st);
        else
            (void)ce_write(c, j, &x, g, size);
    } else if ((name = named ? strdup(c->output) : ce_index_name(c, j->in_name)) == NULL) {
        cli_error(c, "%s: out of memory", j->in_name);
    } else if (cli_out_is_input(c, j, name, named)) {
        /* said */
    } else if ((j->out_name = name, j->out_fd = cli_out_create(c, j, name, named)) >= 0) {
        bool ok = ce_write(c, j, &x, g, size);
        if (cli_out_finish(c, j, ok, false, NULL) && c->verbose)
            fprintf(stderr, "%s:\t%llu points -- %s index %s\n", j->in_name,
                    (unsigned long long)(g != NULL ? gzx_npoints(g) : x.n + 1),
                    xidx_fmt_name(c->export_fmt), name);
    }
    free(name);
    if (g != NULL)
        gzx_close(g);
    else
        idx_free(&x);
}

void cmd_export(struct cli *c, const char *path)
{
    struct cli_job j = {.in_name = "stdin", .in_fd = STDIN_FILENO, .dir_fd = -1};
    if (path == NULL || strcmp(path, "-") == 0) {
        if (!c->to_stdout && c->output == NULL) {
            cli_error(c, "stdin: --export-index from stdin needs -c or -o");
            return;
        }
        if (fstat(STDIN_FILENO, &j.st) != 0) { /* for the same-file checks */
            cli_error(c, "stdin: %s", strerror(errno));
            return;
        }
        ce_export(c, &j);
        return;
    }
    j.in_name = path;
    if (cli_open_input(c, path, &j) != 0)
        return;
    ce_export(c, &j);
    cli_close_input(&j);
}
