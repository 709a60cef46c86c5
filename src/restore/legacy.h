/* legacy.h — the two formats older than gzip that GNU gzip still decompresses:
 * pack(1) (magic 1f 1e: one Huffman code) and compress(1)'s LZW (magic
 * 1f 9d, .Z), both decoded here (see legacy.c for why not by libarchive).
 *
 * Both follow GNU gzip 1.12: pack's tree checks, its length check and its
 * reading ahead (it decodes with up to 12 bits in hand, so the byte after a
 * member's last code may be taken, as gzip takes it); LZW reads to the end of
 * the input (the format has no end marker: gzip takes nothing after it).
 *
 * Input through the callbacks (lg_io), output through `put`, in pieces of at
 * most LG_OUT bytes.  Contract: pure functions of their input, any thread,
 * one call per lg_io at a time; never print.  Return 0, or -1 with *err set:
 * SP_ERR_DATA for invalid input (gzip's words where it has them),
 * SP_ERR_FORMAT for input gzip refuses without decoding (LZW of more than
 * 16 bits), or the callbacks' failure.
 */
#ifndef SPIGZ_LEGACY_H
#define SPIGZ_LEGACY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"

#define LG_OUT 65536

struct lg_io {
    /* The next input byte (0..255), -1 at the end of the input, -2 on a
     * read error. */
    int (*getc)(void *ctx);
    /* Output n bytes; 0, or -1 to stop. */
    int (*put)(void *ctx, const uint8_t *p, size_t n);
    void *ctx;
};

/* A pack member, its two magic bytes already taken.  *out_len: the bytes it
 * decoded (also on failure). */
int lg_unpack(const struct lg_io *io, uint64_t *out_len, struct sp_err *err);

/* An LZW stream, its two magic bytes already taken, to the end of the
 * input.  *warn_flags: the reserved flag bits that were set (gzip warns
 * "unknown flags" and goes on). */
int lg_unlzw(const struct lg_io *io, uint64_t *out_len, unsigned *warn_flags,
             struct sp_err *err);

#endif
