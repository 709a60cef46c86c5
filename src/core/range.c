/* range.c — see range.h. */
#include "range.h"

#include <stdlib.h>

static int sp_range_cmp(const void *a, const void *b)
{
    const struct sp_range *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

size_t sp_ranges_normalize(struct sp_range *r, size_t n)
{
    if (n > 1)
        qsort(r, n, sizeof *r, sp_range_cmp);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        /* off + len never wraps: a range of unknown end has len = max - off */
        if (m > 0 && r[i].off <= r[m - 1].off + r[m - 1].len) {
            uint64_t end = r[i].off + r[i].len;
            if (end > r[m - 1].off + r[m - 1].len)
                r[m - 1].len = end - r[m - 1].off;
        } else {
            r[m++] = r[i];
        }
    }
    return m;
}

int sp_ranges_subtract(const struct sp_range *a, size_t na, const struct sp_range *b, size_t nb,
                       uint64_t shift, struct sp_range **out, size_t *nout, uint64_t *removed)
{
    /* a piece of a ends at a range of b or at a's own end: at most na + nb */
    size_t m = 0, j = 0;
    struct sp_range *r = malloc((na + nb + 1) * sizeof *r);
    if (r == NULL)
        return -1;
    *removed = 0;
    for (size_t i = 0; i < na; i++) {
        uint64_t off = a[i].off, end = a[i].off + a[i].len;
        while (j < nb && b[j].off + b[j].len <= shift + off)
            j++; /* b's ranges wholly before this one (a is sorted too) */
        for (size_t k = j; k < nb && off < end && b[k].off < shift + end; k++) {
            uint64_t bo = b[k].off > shift ? b[k].off - shift : 0;
            uint64_t be = b[k].off + b[k].len - shift;
            if (bo > off)
                r[m++] = (struct sp_range){off, bo - off};
            uint64_t cut_off = bo > off ? bo : off, cut_end = be < end ? be : end;
            *removed += cut_end - cut_off;
            off = cut_end;
        }
        if (off < end)
            r[m++] = (struct sp_range){off, end - off};
    }
    *out = r;
    *nout = m;
    return 0;
}

int sp_ranges_push(struct sp_range **r, size_t *n, size_t *cap, uint64_t off, uint64_t len)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 256;
        struct sp_range *e = realloc(*r, c * sizeof *e);
        if (e == NULL)
            return -1;
        *r = e;
        *cap = c;
    }
    (*r)[(*n)++] = (struct sp_range){off, len};
    return 0;
}
