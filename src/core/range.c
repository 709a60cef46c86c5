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
