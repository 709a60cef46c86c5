/* vol.c — the volume facade over the random-access backends (vol.h). */
#include "vol.h"

#include <stdlib.h>

#include "ra.h"

struct vol {
    struct ra *ra;
};

int vol_open(int fd, const struct vol_opts *o, struct vol **out, struct sp_err *err)
{
    struct ra_opts ro = {.cache_bytes = o ? o->cache_bytes : 0};
    char why[200];
    struct ra *r = NULL;
    int rc = ra_open(fd, &ro, &r, why, sizeof why, err);
    if (rc < 0)
        return -1;
    if (rc == 0) {
        sp_err_set(err, SP_ERR_FORMAT, 0, "cannot be read at random: %s", why);
        return -1;
    }
    struct vol *v = calloc(1, sizeof *v);
    if (!v) {
        ra_close(r);
        sp_err_set(err, SP_ERR_NOMEM, 0, "out of memory");
        return -1;
    }
    v->ra = r;
    *out = v;
    return 0;
}

uint64_t vol_size(const struct vol *v) { return ra_size(v->ra); }

int64_t vol_pread(struct vol *v, void *buf, size_t len, uint64_t off, struct sp_err *err)
{
    return ra_pread(v->ra, buf, len, off, err);
}

int vol_extent(const struct vol *v, uint64_t off, uint64_t *len, bool *zero)
{
    return ra_extent(v->ra, off, len, zero);
}

const char *vol_kind(const struct vol *v)
{
    (void)v;
    return "spigz index";
}

void vol_close(struct vol *v)
{
    if (!v)
        return;
    ra_close(v->ra);
    free(v);
}
