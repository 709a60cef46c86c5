/* gzip.h — the gzip member framing (RFC 1952) around spigz's deflate stream.
 *
 * Contract: pure functions filling caller buffers; any thread.
 */
#ifndef SPIGZ_GZIP_H
#define SPIGZ_GZIP_H

#include <stddef.h>
#include <stdint.h>

/* Largest header gz_header() writes: 10 bytes + name + NUL. */
#define GZ_HEADER_MAX(namelen) (10 + (namelen) + 1)

/* Write a member header into buf: deflate, no FHCRC, FNAME when name is
 * non-NULL (stored as given, NUL-terminated), MTIME as given (0: none), XFL
 * from the level as gzip sets it, OS = Unix.  Returns the length. */
size_t gz_header(uint8_t *buf, const char *name, uint32_t mtime, int level);

/* The end of the deflate stream (an empty final fixed block) and the
 * trailer: CRC-32 and ISIZE (length mod 2^32), little-endian.  10 bytes. */
#define GZ_END_LEN 10
void gz_end(uint8_t buf[GZ_END_LEN], uint32_t crc, uint64_t length);

#endif
