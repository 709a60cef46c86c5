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
    /* --free=zero: input bytes passed over unread because a filesystem
     * calls them free (`skipped`, advanced by the reader), of `skip_total`
     * (set by the CLI before the run: the free map's bytes).  The display
     * then times the run by the bytes that must be read. */
    _Atomic uint64_t skipped;
    _Atomic uint64_t skip_total;
    /* Set (1) by the sink while it flushes a device's cache at the end of a
     * restore: the display says "syncing" rather than a rate of 0. */
    _Atomic int syncing;
};

enum prog_counter { PROG_IN, PROG_OUT, PROG_ZEROS, PROG_BAD, PROG_SKIP };

static inline void prog_add(struct sp_progress *p, enum prog_counter c, uint64_t n)
{
    if (p == NULL || n == 0)
        return;
    _Atomic uint64_t *a = c == PROG_IN ? &p->in : c == PROG_OUT ? &p->out
                        : c == PROG_ZEROS ? &p->zeros : c == PROG_BAD ? &p->bad : &p->skipped;
    atomic_fetch_add_explicit(a, n, memory_order_relaxed);
}

static inline uint64_t prog_get(struct sp_progress *p, enum prog_counter c)
{
    _Atomic uint64_t *a = c == PROG_IN ? &p->in : c == PROG_OUT ? &p->out
                        : c == PROG_ZEROS ? &p->zeros : c == PROG_BAD ? &p->bad : &p->skipped;
    return atomic_load_explicit(a, memory_order_relaxed);
}

/* Seconds until the run ends, or -1 while unknown: what is left of total
 * at the recent rate; with skip_total (--free=zero), the bytes left to
 * read at the rate they are being read (read_rate), the free ones left
 * aside: they cost nothing, and timed with them the ETA swings from
 * seconds to minutes as a run goes from free space into files and back.
 * A pure function, for the display and its test. */
static inline double prog_eta(uint64_t total, uint64_t done, uint64_t skip_total,
                              uint64_t skipped, double rate, double read_rate)
{
    if (total == 0)
        return -1;
    if (done >= total)
        return 0;
    uint64_t left = total - done;
    if (skip_total > 0) {
        uint64_t free_left = skip_total > skipped ? skip_total - skipped : 0;
        left = left > free_left ? left - free_left : 0;
        rate = read_rate;
    }
    if (left == 0)
        return 0;
    return rate > 0 ? (double)left / rate : -1;
}

#endif
