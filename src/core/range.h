/* range.h — a byte range, as the layout readers hand free space to the
 * reader (--free=zero).  Lists of them are sorted, disjoint and not
 * adjacent, each len > 0, unless said otherwise. */
#ifndef SPIGZ_RANGE_H
#define SPIGZ_RANGE_H

#include <stddef.h>
#include <stdint.h>

struct sp_range {
    uint64_t off, len;
};

/* Sort r[0..n) by offset and join the ranges that overlap or touch, in
 * place; returns how many are left.  Any thread, on its own list; r may be
 * NULL when n is 0.  For lists gathered from several places (workers, the
 * salvage's producer and writer, two lists' union). */
size_t sp_ranges_normalize(struct sp_range *r, size_t n);

/* Append {off, len} to the growing list *r (n used of cap; the capacity
 * doubles from 256).  0, or -1 out of memory (the list as it was). */
int sp_ranges_push(struct sp_range **r, size_t *n, size_t *cap, uint64_t off, uint64_t len);

/* a[0..na) less b[0..nb), b's offsets taken less shift (b in a content
 * whose byte `shift` is a's byte 0; b's bytes before shift are ignored):
 * *out malloc'd (the caller frees), *nout ranges, *removed the bytes of a
 * that b covered.  Both lists sorted and disjoint.  0, or -1 out of memory.
 * For --compare: the differences less what the backup's free map calls
 * free. */
int sp_ranges_subtract(const struct sp_range *a, size_t na, const struct sp_range *b, size_t nb,
                       uint64_t shift, struct sp_range **out, size_t *nout, uint64_t *removed);

#endif
