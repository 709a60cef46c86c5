/* zrun.h — deflate blocks for runs of zero bytes, at the format's limit.
 *
 * A run of n zeros is coded as:
 *   1. a dynamic block whose literal/length code gives symbol 285 (length 258)
 *      a 1-bit code and whose distance code gives distance 1 a 1-bit code, so
 *      each 258 zeros cost 2 bits (deflate's 1032:1 bound); it starts with one
 *      literal zero, since the byte before the run is not zero in general;
 *   2. a fixed block for the remaining 0..257 zeros (one match, or literals);
 *   3. an empty stored block, so the run ends byte-aligned.
 * All codes are complete.  No block is final.  Both ends are byte-aligned, so
 * runs splice between any chunks.  The 2-bit match codes are both zero bits:
 * the middle of the encoding is literally zero bytes, which the writer emits
 * from a zero page instead of storing ~1 MB per GiB.
 *
 * Contract: pure function of n (1 <= n < 2^64), any thread, no allocation.
 * Output for n: head[0..head_len), then `zeros` zero bytes, then
 * tail[0..tail_len).  Total n/1032 + at most 22 bytes (2 bits per 258 zeros,
 * and the edges: 18 bytes for a run of 1, 21.5 to 22 from 100 bytes to 1 GiB).
 */
#ifndef SPIGZ_ZRUN_H
#define SPIGZ_ZRUN_H

#include <stdint.h>

#define ZRUN_EDGE_MAX 48 /* head and tail bound: ~14 + ~12 bytes, with margin */

struct zrun {
    uint8_t head[ZRUN_EDGE_MAX];
    unsigned head_len;
    uint64_t zeros;
    uint8_t tail[ZRUN_EDGE_MAX];
    unsigned tail_len;
};

/* Encode a run of n >= 1 zero bytes (n == 0 gives an empty encoding). */
void zrun_encode(uint64_t n, struct zrun *z);

/* Total encoded size in bytes. */
uint64_t zrun_size(const struct zrun *z);

#endif
