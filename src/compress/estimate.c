/* estimate.c — see estimate.h for the method; doc/DESIGN.md for the why.
 *
 * The run: est_setup() opens the input, the engine and the pool; the shape
 * pass (est_shape.c: probe or full read) feeds the segmenter in blank or
 * real mode, its sink recording data chunks and pricing zero pieces and
 * the index exactly; the sample pass (est_sample.c) compresses chunks on
 * the pool and keeps (length, compressed length) pairs; est_finish()
 * (est_predict.c) turns them into the prediction.  What the files share is
 * in est_int.h.
 */
#include "config.h"
#include "est_int.h"
#include "engine.h"

#include <stdlib.h>
#include <string.h>

/* ---- the run ---- */

static int est_setup(struct est *e)
{
    struct est_result *r = e->r;
    size_t wsize = EST_WINDOW / 8; /* reads: 8 MiB, as the compressor */
    if (in_open(&e->in, e->in.fd, wsize, e->err) != 0)
        return -1;
    if (e->o->nzero_ranges > 0)
        in_set_zero_ranges(&e->in, e->o->zero_ranges, e->o->nzero_ranges);
    r->stream = e->in.kind == IN_STREAM || (e->in.kind == IN_BLK && !e->in.size_known);
    r->split_exact = e->o->full || r->stream;
    if (e->o->progress != NULL && e->in.size_known)
        atomic_store(&e->o->progress->in_total, e->in.size);
    e->grain_bytes = 1u << 20;
    e->grain = calloc(EST_GRAINS, sizeof *e->grain);
    e->chunk_buf = malloc(e->o->chunk);
    e->eng = eng_new(e->o->level, e->err);
    if (e->eng == NULL)
        return -1;
    e->tmp_cap = eng_bound(e->eng, (size_t)EST_GROUP * SCAN_BLOCK);
    e->tmp = malloc(e->tmp_cap);
    e->grp_buf[0] = malloc((size_t)EST_GROUP * SCAN_BLOCK);
    e->grp_buf[1] = malloc((size_t)EST_GROUP * SCAN_BLOCK);
    if (e->grain == NULL || e->chunk_buf == NULL || e->tmp == NULL || e->grp_buf[0] == NULL ||
        e->grp_buf[1] == NULL)
        return est_nomem(e);
    est_shape_init(e);
    return est_pool_open(e);
}

static void est_free(struct est *e)
{
    if (e->pool != NULL)
        est_pool_close(e, true);
    est_workers_free(e);
    if (e->eng != NULL)
        eng_free(e->eng);
    free(e->tmp);
    free(e->grp_buf[0]);
    free(e->grp_buf[1]);
    free(e->grain);
    free(e->chunk_buf);
    free(e->ch);
    free(e->cal);
    free(e->px);
}

int est_run(int fd, const struct est_opts *o, struct est_result *r, struct sp_err *err)
{
    struct est e;
    memset(&e, 0, sizeof e);
    memset(r, 0, sizeof *r);
    e.o = o;
    e.r = r;
    e.err = err;
    e.in.fd = fd;
    double t0 = est_now(CLOCK_MONOTONIC);
    int rc = est_setup(&e);
    if (rc == 0)
        rc = est_shape(&e);
    double read_wall = e.read_wall, read_cpu = e.read_cpu;
    uint64_t read_timed = e.read_timed;
    if (rc == 0 && !r->stream)
        rc = est_sample_chunks(&e);
    if (rc == 0)
        rc = est_time_reads(&e);
    if (e.pool != NULL) {
        int prc = est_pool_close(&e, rc != 0);
        rc = rc != 0 ? rc : prc;
    }
    if (r->split_exact && read_timed > 0) { /* the full pass is the better guide */
        e.read_wall = read_wall;
        e.read_cpu = read_cpu;
        e.read_timed = read_timed;
    }
    if (rc == 0)
        rc = est_finish(&e);
    r->took = est_now(CLOCK_MONOTONIC) - t0;
    est_free(&e);
    if (rc != 0)
        est_result_free(r);
    return rc;
}

void est_result_free(struct est_result *r)
{
    free(r->map);
    r->map = NULL;
    r->cells = 0;
}
