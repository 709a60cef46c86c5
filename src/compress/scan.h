/* scan.h — the segmenter: zero runs and content-defined chunking.
 *
 * The input is a sequence of 4 KiB blocks on the absolute offset grid (the
 * last one may be short).  A block is zero when all its bytes are (the block
 * and its zero test are core's: block.h).  A maximal run of zero blocks at
 * least `zmin` bytes long is a zero run and takes the zero path, in pieces of
 * at most `zmax` bytes counted from the run's start; shorter zero runs stay
 * inside the data.  Data between zero runs is cut into chunks of `chunk`
 * bytes counted from the data's start, the last one shorter.
 *
 * Every decision depends only on the bytes, never on how they arrived (pipe
 * reads, file windows, holes reported by SEEK_HOLE), so the output is the same
 * for every kind of input and every thread count.
 *
 * Contract: a struct seg belongs to one thread (the reader).  Chunk buffers
 * come from sink.get and are handed back, filled, through sink.data; the
 * segmenter never frees them.  Calls must present the stream in order; every
 * call but the last must leave the position a multiple of SCAN_BLOCK.
 */
#ifndef SPIGZ_SCAN_H
#define SPIGZ_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "block.h" /* SCAN_BLOCK and the zero test */

struct seg_sink {
    void *ctx;
    /* A buffer of at least `chunk` bytes to fill, or NULL to stop. */
    uint8_t *(*get)(void *ctx);
    /* A chunk of len bytes (1 <= len <= chunk) is complete, in buf. */
    int (*data)(void *ctx, uint8_t *buf, size_t len);
    /* The next len bytes (>= 1) are a piece of a zero run. */
    int (*zero)(void *ctx, uint64_t len);
};

/* --rsyncable: data chunks end where the content says (a gear hash of the
 * last 64 bytes, its top SEG_RS_BITS(chunk) bits zero) once they are at
 * least chunk/4 long, and at chunk at the latest; so an insertion or a
 * deletion changes the chunks near it only, and the rest of a later backup
 * compresses to the same bytes (what rsync and deduplicating stores need).
 * The boundaries are a function of the bytes alone, as every rule here. */
struct seg_rsync {
    uint64_t gear[256];  /* fixed pseudo-random values, one per byte value */
    uint64_t hash;
    unsigned bits;       /* the average chunk is about chunk/4 + 2^bits */
};

struct seg {
    size_t chunk;        /* data chunk size, a multiple of SCAN_BLOCK */
    uint64_t zmin, zmax; /* zero-run threshold and piece size */
    struct seg_sink sink;
    uint8_t *buf;        /* chunk being filled, or NULL */
    size_t fill;
    uint64_t zpend;      /* zero bytes seen but not yet assigned */
    bool zrun;           /* the pending zeros are a zero run (>= zmin) */
    uint64_t pos;        /* bytes presented so far */
    uint64_t zero_bytes; /* bytes sent down the zero path */
    bool blank;          /* shape only: no bytes are copied (seg_blank) */
    struct seg_rsync *rs; /* --rsyncable, or NULL */
};

void seg_init(struct seg *s, size_t chunk, uint64_t zmin, uint64_t zmax,
              const struct seg_sink *sink);

/* Cut data chunks where the content says (see struct seg_rsync); rs is the
 * caller's, alive as long as s.  Call after seg_init, before any input. */
void seg_rsyncable(struct seg *s, struct seg_rsync *rs);

/* Classify p[0..n) block by block and route it.  Returns 0, or -1 when a
 * sink callback asked to stop. */
int seg_feed(struct seg *s, const uint8_t *p, size_t n);

/* n bytes known to be zero without reading them (a hole, or blocks already
 * classified as zero). */
int seg_zeros(struct seg *s, uint64_t n);

/* n bytes of blocks already classified as data (none of them all zero,
 * except a final partial block). */
int seg_data(struct seg *s, const uint8_t *p, size_t n);

/* n bytes of data blocks whose content is not wanted: the chunks come out
 * with the same lengths as seg_data() would give, but their buffers are
 * never written (sink.get may return any non-NULL pointer).  For the
 * estimate, which knows the shape of the input before reading its data.  A
 * segmenter fed by seg_blank() must not be fed by seg_data() or seg_feed(). */
int seg_blank(struct seg *s, uint64_t n);

/* End of input: flush what is pending.  Returns 0 or -1. */
int seg_end(struct seg *s);

#endif
