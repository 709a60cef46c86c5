/* out.c — see out.h. */
#include "config.h"
#include "out.h"
#include "io.h"
#include "pipe.h"

#include <errno.h>
#include <string.h>

static const uint8_t out_zero_page[OUT_BUF];

void out_init(struct out *o, int fd)
{
    o->fd = fd;
    o->total = 0;
    o->n = 0;
    o->failed = 0;
    memset(&o->err, 0, sizeof o->err);
    sp_pipe_widen(fd, 1u << 20); /* `spigz -c | ssh ...`: pipe.h */
}

static int out_raw(struct out *o, const uint8_t *p, size_t n)
{
    if (io_write(o->fd, p, n, NULL) == 0)
        return 0;
    o->failed = 1;
    sp_err_set(&o->err, SP_ERR_WRITE, errno, "write error");
    return -1;
}

int out_flush(struct out *o)
{
    if (o->failed)
        return -1;
    size_t n = o->n;
    o->n = 0;
    return out_raw(o, o->buf, n);
}

int out_write(struct out *o, const void *p, size_t n)
{
    if (o->failed)
        return -1;
    o->total += n;
    if (n <= OUT_BUF - o->n) {
        memcpy(o->buf + o->n, p, n);
        o->n += n;
        return 0;
    }
    if (out_flush(o) != 0)
        return -1;
    if (n < OUT_BUF) {
        memcpy(o->buf, p, n);
        o->n = n;
        return 0;
    }
    return out_raw(o, p, n);
}

int out_zeros(struct out *o, uint64_t n)
{
    while (n > 0) {
        size_t step = n < OUT_BUF ? (size_t)n : OUT_BUF;
        if (out_write(o, out_zero_page, step) != 0)
            return -1;
        n -= step;
    }
    return 0;
}
