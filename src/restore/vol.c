/* vol.c — the volume facade over the random-access backends (vol.h). */
#include "vol.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gzx.h"
#include "io.h"
#include "ra.h"

struct vol {
    struct ra *ra;
    struct gzx *gzx;
    char note[320];
};

/* The gzip index for fd: loaded, else built (and saved).  0, or -1. */
static int vol_gzx(struct vol *v, int fd, const struct vol_opts *o, struct sp_err *err)
{
    struct gzx_opts go = {.cache_bytes = o ? o->cache_bytes : 0, .prog = o ? o->prog : NULL,
                          .hold_ahead = o && o->hold_ahead};
    char why[200] = "";
    bool named = o != NULL && o->idx_name != NULL;
    if (named) {
        int rc = gzx_load(fd, &go, o->idx_dirfd, o->idx_name, &v->gzx, why, sizeof why, err);
        if (rc < 0)
            return -1;
        if (rc == 1) {
            snprintf(v->note, sizeof v->note, "loaded from the saved index");
            return 0;
        }
    }
    if (gzx_build(fd, &go, &v->gzx, err) != 0)
        return -1;
    if (named)
        snprintf(v->note, sizeof v->note, "built (%s)", why);
    else
        snprintf(v->note, sizeof v->note, "built");
    if (!named || !o->idx_save)
        return 0;
    struct sp_err se = {0};
    size_t n = strlen(v->note);
    if (gzx_save(v->gzx, o->idx_dirfd, o->idx_name, &se) == 0)
        snprintf(v->note + n, sizeof v->note - n, "; saved as %s", o->idx_name);
    else
        snprintf(v->note + n, sizeof v->note - n, "; not saved: %s", se.msg);
    return 0;
}

/* fd's file starts with gzip's magic. */
static bool vol_is_gzip(int fd)
{
    uint8_t m[2];
    return io_pread_exact(fd, m, 2, 0) == 0 && m[0] == 0x1f && (m[1] == 0x8b || m[1] == 0x9e);
}

int vol_open(int fd, const struct vol_opts *o, struct vol **out, struct sp_err *err)
{
    struct ra_opts ro = {.cache_bytes = o ? o->cache_bytes : 0, .hold_ahead = o && o->hold_ahead};
    char why[200];
    struct vol *v = calloc(1, sizeof *v);
    if (v == NULL) {
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
        return -1;
    }
    int rc = ra_open(fd, &ro, &v->ra, why, sizeof why, err);
    if (rc == 0 && !vol_is_gzip(fd)) {
        sp_err_set(err, SP_ERR_FORMAT, 0, "cannot be read at random: %s", why);
        rc = -1;
    } else if (rc == 0) {
        rc = vol_gzx(v, fd, o, err) == 0 ? 1 : -1;
    }
    if (rc < 0) {
        vol_close(v);
        return -1;
    }
    *out = v;
    return 0;
}

uint64_t vol_size(const struct vol *v) { return v->ra ? ra_size(v->ra) : gzx_size(v->gzx); }

int64_t vol_pread(struct vol *v, void *buf, size_t len, uint64_t off, struct sp_err *err)
{
    return v->ra ? ra_pread(v->ra, buf, len, off, err) : gzx_pread(v->gzx, buf, len, off, err);
}

int vol_extent(struct vol *v, uint64_t off, uint64_t *len, bool *zero)
{
    return v->ra ? ra_extent(v->ra, off, len, zero) : gzx_extent(v->gzx, off, len, zero);
}

const char *vol_kind(const struct vol *v)
{
    return v->ra ? "spigz index" : "gzip index";
}

const char *vol_note(const struct vol *v)
{
    return v->note;
}

void vol_hold_ahead(struct vol *v, bool hold)
{
    if (v->ra)
        ra_hold_ahead(v->ra, hold);
    else
        gzx_hold_ahead(v->gzx, hold);
}

void vol_close(struct vol *v)
{
    if (!v)
        return;
    ra_close(v->ra);
    gzx_close(v->gzx);
    free(v);
}
