/* splice.h — make a complete raw deflate stream spliceable into a longer one.
 *
 * libdeflate compresses a whole buffer into a complete raw deflate stream whose
 * last block has BFINAL set and whose end is padded with zero bits to a byte.
 * spigz concatenates many such chunks into ONE deflate stream, so each chunk
 * must end non-final and byte-aligned.  Deflate blocks carry no length (but
 * stored ones), so the only way to find the last block's header and the exact
 * bit where the stream ends is to walk the Huffman-coded block structure.
 *
 * Contract
 *  - splice_walk() reads buf[0..len) only (never past len); it decodes every
 *    block header and every symbol but produces no output.  It validates the
 *    structure (Huffman code lengths, symbol ranges, stored LEN/NLEN, running
 *    past the end) and fails on anything a strict inflater would reject; it does
 *    not check distances against the window (a stream made by a compressor from
 *    one buffer never needs a dictionary).
 *  - splice_fix() rewrites buf in place and appends at most SPLICE_EXTRA bytes:
 *    the last block's BFINAL bit is cleared and an empty stored block
 *    (3 header bits, padding, 00 00 ff ff) follows the end bit, exactly as
 *    zlib's Z_SYNC_FLUSH ends.  The result decodes to the same bytes and leaves
 *    a decoder at a byte boundary expecting another block.
 *  - Pure functions of their arguments: any thread may call them at once on
 *    distinct buffers.  No allocation.
 */
#ifndef SPIGZ_SPLICE_H
#define SPIGZ_SPLICE_H

#include <stddef.h>
#include <stdint.h>

/* Bytes splice_fix() may append: up to 1 byte when the 3 stored-block header
 * bits do not fit in the last byte's padding, then LEN and NLEN (4 bytes). */
#define SPLICE_EXTRA 5

struct splice_info {
    uint64_t last_hdr_bit; /* bit offset of the final block's BFINAL bit */
    uint64_t end_bit;      /* bit offset just past the final block's end-of-block code */
    uint32_t nblocks;      /* number of blocks walked */
};

/* Walk the raw deflate stream buf[0..len).  Returns 0 and fills *info when
 * buf holds exactly one complete deflate stream (its final block ends in the
 * last byte, the remaining bits of that byte being zero padding); returns -1
 * when the stream is malformed, truncated, or followed by extra bytes. */
int splice_walk(const uint8_t *buf, size_t len, struct splice_info *info);

/* Make buf[0..len) (a complete stream as splice_walk() accepts) non-final and
 * byte-aligned.  cap must be at least len + SPLICE_EXTRA.  On success stores
 * the new length in *newlen and returns 0; returns -1 (buf unchanged) when
 * splice_walk() fails or cap is too small. */
int splice_fix(uint8_t *buf, size_t len, size_t cap, size_t *newlen);

#endif
