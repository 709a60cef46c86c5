/* engine.h — compress one data chunk into a spliceable piece of deflate.
 *
 * A piece is raw deflate that decodes to exactly the chunk, needs no
 * dictionary (chunks are independent), ends byte-aligned and is not final,
 * so pieces concatenate into one deflate stream.  With libdeflate (the
 * default) the piece is libdeflate's output made non-final by splice_fix();
 * with zlib it is a raw deflate stream ended by a sync flush.
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

/* The engine compiled in ("libdeflate 1.14", "zlib 1.2.13"). */
const char *eng_name(void);

/* Highest level the engine takes: 12 for libdeflate, 9 for zlib. */
int eng_max_level(void);

/* A compressor at level 0..eng_max_level(), or NULL with *err set. */
struct eng *eng_new(int level, struct sp_err *err);

/* Output capacity eng_compress() needs for n input bytes. */
size_t eng_bound(struct eng *e, size_t n);

/* Compress in[0..n), n >= 1, into out (cap >= eng_bound(e, n)).
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
