/* range.h — a byte range, as the layout readers hand free space to the
 * reader (--free=zero).  Lists of them are sorted, disjoint and not
 * adjacent, each len > 0, unless said otherwise. */
#ifndef SPIGZ_RANGE_H
#define SPIGZ_RANGE_H

#include <stdint.h>

struct sp_range {
    uint64_t off, len;
};

#endif
