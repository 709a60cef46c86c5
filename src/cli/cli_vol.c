/* cli_vol.c — see cli_vol.h. */
#include "config.h"
#include "cli_vol.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli_gzx.h"
#include "cli_progress.h"

int cli_vol_open(struct cli *c, const char *name, int fd, bool hold_ahead, struct vol **out,
                 struct sp_err *err)
{
    struct sp_progress prog = {0};
    struct vol_opts o = {.cache_bytes = c->cache_bytes, .prog = &prog, .hold_ahead = hold_ahead};
    struct cli_gzx place;
    if (cli_gzx_place(name, c->index_file, &place, &o) != 0) {
        sp_err_set(err, SP_ERR_SYS, errno, "--index-file %s", c->index_file);
        return -1;
    }
    struct cli_prog *d = cli_prog_start(cli_progress_wanted(c), name, &prog,
                                        CLI_PROG_DECOMPRESS);
    int rc = vol_open(fd, &o, out, err);
    cli_prog_stop(d);
    cli_gzx_done(&place);
    if (rc != 0)
        return -1;
    const char *note = vol_note(*out);
    if (note[0] != '\0' && (c->verbose > 0 || (strstr(note, "not saved") != NULL && !c->quiet)))
        cli_msg("%s: gzip index %s", name, note); /* not saved: built again next time */
    return 0;
}

/* lay_kernel_parts()'s reads: the content through the volume.  The first
 * failure is kept in the sp_err the context carries. */
struct cv_read {
    struct vol *vol;
    struct sp_err *err;
};

static int cv_read(void *ctx, void *buf, size_t n, uint64_t off)
{
    struct cv_read *t = ctx;
    struct sp_err e = {0};
    int64_t got = vol_pread(t->vol, buf, n, off, &e);
    if (got < 0 && t->err->kind == SP_OK)
        *t->err = e;
    return got == (int64_t)n ? 0 : -1;
}

int cli_vol_parts(struct vol *v, struct lay_kpart **p, size_t *n, struct sp_err *table_err)
{
    memset(table_err, 0, sizeof *table_err);
    struct cv_read t = {.vol = v, .err = table_err};
    return lay_kernel_parts(cv_read, &t, vol_size(v), p, n);
}
