/* progress.h — counters the core advances while it works, for a display.
 *
 * The core (compress.c, dec.c, unz.c, estimate.c) only adds to the counters;
 * it never prints.  The CLI sets the totals before the run starts and reads
 * the counters from its own display thread (cli_progress.c), as often as it
 * likes: each counter is a relaxed atomic, so a reading is a recent value of
 * each, not a consistent snapshot of all (good enough for a display).
 *
 * Contract: a NULL struct sp_progress * means nobody watches; prog_add()
 * accepts it.  Any thread may call prog_add().  The struct is owned by the
 * caller of the run and must outlive it.
 */
#ifndef SPIGZ_PROGRESS_H
#define SPIGZ_PROGRESS_H

#include <stdatomic.h>
#include <stdint.h>

struct sp_progress {
    /* Input consumed: uncompressed bytes when compressing or estimating
     * (holes count when skipped), compressed bytes when decompressing. */
    _Atomic uint64_t in;
    _Atomic uint64_t out;   /* output bytes: compressed, or restored */
    _Atomic uint64_t zeros; /* uncompressed bytes that were zero runs */
    _Atomic uint64_t bad;   /* input bytes that could not be read (--rescue) */
    /* The whole of `in`, 0 when unknown (a pipe).  Set by the CLI before
     * the run, or by the core before its first prog_add() when it learns it
     * (the estimate, from the device's size); read-only after. */
    _Atomic uint64_t in_total;
    /* The whole of `out`, 0 when unknown.  Set by the core when it learns it
     * before any output (a restore through a spigz index: the image's or
     * the range's length), reset to 0 if that path is abandoned; the display
     * then measures the run by `out`, the bytes that take the time. */
    _Atomic uint64_t out_total;
};

enum prog_counter { PROG_IN, PROG_OUT, PROG_ZEROS, PROG_BAD };

static inline void prog_add(struct sp_progress *p, enum prog_counter c, uint64_t n)
{
    if (p == NULL || n == 0)
        return;
    _Atomic uint64_t *a = c == PROG_IN ? &p->in : c == PROG_OUT ? &p->out
                        : c == PROG_ZEROS ? &p->zeros : &p->bad;
    atomic_fetch_add_explicit(a, n, memory_order_relaxed);
}

static inline uint64_t prog_get(struct sp_progress *p, enum prog_counter c)
{
    _Atomic uint64_t *a = c == PROG_IN ? &p->in : c == PROG_OUT ? &p->out
                        : c == PROG_ZEROS ? &p->zeros : &p->bad;
    return atomic_load_explicit(a, memory_order_relaxed);
}

#endif
