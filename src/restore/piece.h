/* piece.h — checking and decoding one piece of a spigz file through its
 * index (doc/FORMAT.md; the safety argument: doc/DESIGN.md sections 8-9).
 *
 * A piece is trusted only after its bytes prove what the index says of it:
 *  - a zero piece must be byte for byte the canonical encoding of its
 *    length (zrun.h); then its content is zeros and it is never inflated;
 *  - a data piece must walk as complete non-final blocks ending exactly at
 *    its last byte (so decoding it alone is decoding it in the stream),
 *    decode alone to exactly its length and match its CRC-32.
 * The parallel restore (dec.c) and the random-access reader (ra.c) both
 * check pieces here: one implementation.
 *
 * Contract: no state, no allocation, never prints; any thread may call
 * these at once with its own buffers and decoder.  The index is one that
 * idx_load() validated (its lengths add up), read-only.  Reads are pread(2)
 * on the caller's descriptor, which the caller owns.
 */
#ifndef SPIGZ_PIECE_H
#define SPIGZ_PIECE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "err.h"
#include "idx.h"

/* The scratch a zero piece's bytes are compared in, step by step: no
 * buffer as large as the piece (a zero piece may stand for terabytes). */
#define PC_SCRATCH ((size_t)256 << 10)

/* Piece k's content length, compressed length, and file offset. */
static inline uint64_t pc_ulen(const struct idx *x, uint64_t k)
{
    return x->p[k + 1].uoff - x->p[k].uoff;
}

static inline uint64_t pc_clen(const struct idx *x, uint64_t k)
{
    return x->p[k + 1].coff - x->p[k].coff;
}

static inline uint64_t pc_file_off(const struct idx *x, uint64_t k)
{
    return x->base + x->header_len + x->p[k].coff;
}

/* The first piece ending after content offset `from` (x->n when from is at
 * or past the end). */
uint64_t pc_find(const struct idx *x, uint64_t from);

/* pread exactly n bytes.  0, or -1 with *e set: SP_ERR_READ for a read
 * error, SP_ERR_DATA when the file ended early (it shrank since the index
 * was read). */
int pc_pread(int fd, uint8_t *p, size_t n, uint64_t off, struct sp_err *e);

/* Zero piece k: are its bytes the canonical encoding of its length?  Read
 * and compared in steps of PC_SCRATCH bytes, scratch holding that many.
 * 1 yes, 0 no, -1 read error (*e set). */
int pc_zero_ok(int fd, const struct idx *x, uint64_t k, uint8_t *scratch, struct sp_err *e);

/* Data piece k's compressed bytes into in (at least pc_clen + 2 bytes),
 * closed by an empty final block (03 00) so that it decodes alone.
 * 0, or -1 with *e set (pc_pread). */
int pc_read_data(int fd, const struct idx *x, uint64_t k, uint8_t *in, struct sp_err *e);

/* Data piece k, in[0..in_len) as pc_read_data() left it: walked, decoded
 * with d into out (pc_ulen bytes) and checked against its CRC-32. */
enum pc_verdict {
    PC_OK = 0,
    PC_BAD_DATA, /* not complete non-final blocks ending at its last byte,
                    or does not decode to exactly its length */
    PC_BAD_CRC   /* decodes, but not to the bytes the index's CRC-32 says */
};
enum pc_verdict pc_data_check(struct eng_dec *d, const struct idx *x, uint64_t k,
                              const uint8_t *in, size_t in_len, uint8_t *out);

#endif
