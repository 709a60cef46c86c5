/* engine.h — compress one data chunk into a spliceable piece of deflate.
 *
 * A piece is raw deflate that decodes to exactly the chunk, needs no
 * dictionary (chunks are independent), ends byte-aligned and is not final,
 * so pieces concatenate into one deflate stream.
 *
 * Which compressor makes a level's pieces (eng_level_desc() says it in
 * words, -V prints it) is fixed when spigz is built, never chosen at run
 * time, so that the same level always gives the same bytes:
 *   0        stored blocks (libdeflate level 0, or zlib's)
 *   1..3     ISA-L's stateless deflate: its level 2; its level 2 with
 *            smaller Huffman blocks; its level 3 with smaller blocks.
 *            Ended by its full flush (byte-aligned, non-final: no walk
 *            needed).  A build configured --without-isal has no levels 1
 *            to 3 (the CLI refuses them) rather than other bytes under
 *            their names.
 *   4..12    libdeflate at the same level
 * libdeflate's output is a complete stream made non-final by splice_fix().
 * Without libdeflate (--without-libdeflate) every level but 1 to 3 is zlib
 * at the same level (0..9), ended by a sync flush.  doc/DESIGN.md section 4
 * gives the reasons for the map, its appendix A.4 the measurements.
 *
 * Contract: one struct eng per thread (it holds the compressor's state);
 * eng_new() and eng_free() may run on any thread.  eng_compress() never
 * prints; it returns -1 with *err set when the engine fails.
 */
#ifndef SPIGZ_ENGINE_H
#define SPIGZ_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct eng;

/* The libraries compiled in, for messages ("ISA-L 2.30.0, libdeflate 1.14"). */
const char *eng_name(void);

/* Highest level spigz takes: 12 with libdeflate, 9 with zlib. */
int eng_max_level(void);

/* What makes level's pieces, in words ("ISA-L 2.30.0 level 2"); NULL for a
 * level this build lacks (1 to 3 without ISA-L) or out of range. */
const char *eng_level_desc(int level);

/* A compressor at a level eng_level_desc() names, or NULL with *err set. */
struct eng *eng_new(int level, struct sp_err *err);

/* Output capacity eng_compress() needs for n input bytes. */
size_t eng_bound(struct eng *e, size_t n);

/* Compress in[0..n), 1 <= n <= UINT32_MAX, into out (cap >= eng_bound(e, n)).
 * Returns 0 and the piece length in *outlen, or -1. */
int eng_compress(struct eng *e, const uint8_t *in, size_t n,
                 uint8_t *out, size_t cap, size_t *outlen, struct sp_err *err);

/* The size of in[0..n) compressed as eng_compress() would, give or take the
 * few bytes of making it spliceable (skipped: that walk costs ~8%), for
 * the estimate's pieces.  Returns 0 with *outlen, or -1. */
int eng_size(struct eng *e, const uint8_t *in, size_t n,
             uint8_t *out, size_t cap, size_t *outlen, struct sp_err *err);

/* CRC-32 of p[0..n), continuing from crc (the fastest implementation at hand). */
uint32_t eng_crc32(uint32_t crc, const uint8_t *p, size_t n);

void eng_free(struct eng *e);

/* ---- decoding a piece (parallel restore) ---- */

struct eng_dec;

struct eng_dec *eng_dec_new(struct sp_err *err);

/* Decode the complete raw deflate stream in[0..n) into out[0..want).
 * Returns 0 only when it decodes to exactly want bytes consuming exactly n
 * bytes; -1 for anything else (invalid data, wrong length, trailing bytes). */
int eng_dec_exact(struct eng_dec *d, const uint8_t *in, size_t n, uint8_t *out, size_t want);

void eng_dec_free(struct eng_dec *d);

#endif
